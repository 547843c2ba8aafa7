"""The ``aisimulate`` command (also ``python -m aisimulate``).

Subcommands: ``replay`` (run a config and print the predicted metrics), ``validate``
(check a config without running it), ``models`` and ``systems`` (what a config can
name), ``sweep`` (a grid or scenario list, one row per point) and ``compare`` (against
an AIPerf measurement; both in :mod:`aisimulate.cli.sweep`). Each reads its config from a path or, with ``-``, from stdin; ``--set
dotted.field=VALUE`` (repeatable) changes one field before the config is compiled.

stdout carries only the result (the table, JSON or CSV); diagnostics go to stderr.
Exit codes:

- 0: success;
- 1: a simulation error (any other error from the core; an internal error is one line,
  and ``AISIMULATE_DEBUG=1`` adds the Go stack), a missing native build, the output
  folder cannot be written, stdout cannot take the result (a full disk, a closed
  pipe), or every point of a sweep failed (the table of their reasons is still
  printed; some points failing is exit 0, with each failure named on stderr);
- 2: bad input: a config error (the message names the dotted field, or the file and
  line), a workload data error (file and line), or bad command-line arguments,
  including an output path that cannot be written or would overwrite a file the run
  reads (checked before the replay, :mod:`aisimulate.cli.outputs`);
- 130: interrupted (Ctrl-C), 143: terminated (SIGTERM): one line; the replay is stopped at
  once and no output file is left half-written.

Adding a subcommand: write ``_cmd_NAME(args) -> int`` and an ``_add_NAME(sub)`` that
creates its parser with ``set_defaults(run=_cmd_NAME)``; register it in
:data:`SUBCOMMANDS`. :func:`add_config_arguments` and :func:`config_from_args` give it
the same CONFIG / ``--config`` / ``--set`` handling as ``replay``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
import warnings
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Callable, Sequence

from .. import check, replay
from .._startup import EXIT_INTERRUPTED, release
from .outputs import _UsageError, check_apart, check_output_dir, check_output_file
from ..config import Spec, load_config, parse_config_text, read_config_bytes
from ..errors import BackendVersionWarning, ConfigError, DataError, SimulationError

PROG = "aisimulate"
#: Environment variable that makes the CLI print the Go stack of an internal error.
DEBUG_ENV = "AISIMULATE_DEBUG"

_EXAMPLES = """\
examples:
  aisimulate replay examples/quickstart.yaml
  aisimulate replay examples/quickstart.yaml --set engine.workers.aggregated.count=4 \\
      --set traffic.load.concurrency=64 --format json
  cat replay.yaml | aisimulate replay - --format csv > results.csv
  aisimulate replay other.yaml --format csv --no-header >> results.csv   # the same columns
  aisimulate replay replay.yaml --output-dir out/run1
  aisimulate replay replay.yaml --output-dir out/run1 --export aiperf,vllm
  aisimulate replay replay.yaml --trace-out run1.trace.json     # open in ui.perfetto.dev
  aisimulate validate replay.yaml
  aisimulate models
  aisimulate systems --format json
  aisimulate schema > aisimulate.schema.json
  aisimulate sweep examples/quickstart.yaml --grid engine.workers.aggregated.tp=1,2,4 --out results.parquet
  aisimulate compare --aiperf profile_export.jsonl --config deploy.yaml
  aisimulate search question.yaml --gpus 8 --slo ttft_ms=500,tpot_ms=30 --out runs/search
"""




# --- shared argument handling -----------------------------------------------------------

def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """Give a subcommand the CONFIG positional, ``--config`` and ``--set``."""
    p.add_argument("config", nargs="?", metavar="CONFIG",
                   help="replay config (YAML or JSON), or - to read it from stdin; relative "
                        "paths in it resolve against its folder (stdin: the working directory)")
    p.add_argument("--config", dest="config_opt", metavar="FILE",
                   help="the same as CONFIG (kept for scripts written before CONFIG was positional)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="FIELD=VALUE",
                   help="set a dotted config field before the config is checked, e.g. "
                        "--set engine.workers.aggregated.count=4; VALUE is read as YAML "
                        "(4 is a number, true a boolean, {kind: uniform, min: 1, max: 8} a "
                        "mapping); a relative file path in VALUE resolves against the working "
                        "directory (those in the config file against its folder); repeatable")


def parse_sets(sets: Sequence[str]) -> dict[str, Any]:
    """``["a.b=4", …]`` → ``{"a.b": 4, …}``, each value read as a YAML scalar or flow
    collection (a later ``--set`` of the same field wins).

    Raises:
        _UsageError: an item without ``=`` or with an empty field, or a value that is not
            valid YAML.
    """
    out: dict[str, Any] = {}
    for item in sets:
        field, sep, text = item.partition("=")
        field = field.strip()
        if not sep or not field:
            raise _UsageError(f"--set {item!r}: expected FIELD=VALUE, e.g. "
                             "engine.workers.aggregated.count=4")
        try:
            value = parse_config_text(text, name=f"--set {field}") if text.strip() else ""
        except ConfigError as exc:
            raise _UsageError(f"--set {field}: {exc.reason}") from None
        out[field] = value
    return out


def config_from_args(args: argparse.Namespace) -> Spec:
    """Compile the config a subcommand was given (CONFIG or ``--config``, ``-`` for stdin)
    with its ``--set`` overrides.

    Raises:
        _UsageError: no config, or both CONFIG and ``--config``, or a bad ``--set``.
        ConfigError: from :func:`aisimulate.load_config`.
    """
    src, overrides = config_source_from_args(args)
    return load_config(src, overrides=overrides)


def config_source_from_args(args: argparse.Namespace) -> tuple[str | dict[str, Any], dict[str, Any]]:
    """The config a subcommand was given, not yet compiled: its path (CONFIG or
    ``--config``), or for ``-`` the mapping read from stdin; and the ``--set``
    overrides.

    Raises:
        _UsageError: no config, or both CONFIG and ``--config``, or a bad ``--set``.
        ConfigError: stdin is closed, or does not hold a mapping.
    """
    if args.config and args.config_opt:
        raise _UsageError("give the config once: as CONFIG or as --config, not both")
    path = args.config or args.config_opt
    if not path:
        raise _UsageError(f"a config is required: aisimulate {getattr(args, 'command', 'replay')} CONFIG (or --config FILE, "
                          "or - to read it from stdin)")
    overrides = parse_sets(args.sets)
    if path != "-":
        return path, overrides
    if sys.stdin is None:
        raise ConfigError("", "stdin is closed", file="<stdin>")
    data = parse_config_text(read_config_bytes(sys.stdin.buffer, "<stdin>"), name="<stdin>")
    if data is None:
        raise ConfigError("", "the config is empty", file="<stdin>")
    if not isinstance(data, dict):
        raise ConfigError("", "the config must be a mapping at the top level", file="<stdin>")
    return data, overrides


def add_progress_argument(p: argparse.ArgumentParser) -> None:
    """Give a subcommand ``--quiet`` (no progress bar)."""
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bar (by default one appears on stderr, when it is a "
                        "terminal, for work that runs longer than 2 s)")


def progress_of(args: argparse.Namespace) -> bool | None:
    """The ``progress=`` argument for the API: off with ``--quiet``, else automatic."""
    return False if getattr(args, "quiet", False) else None


def _error(message: str) -> None:
    if sys.stderr is not None:  # None when started with stderr closed
        print(f"{PROG}: error: {message}", file=sys.stderr)


class _StdoutError(Exception):
    """stdout cannot take the result (exit 1, one line, never a traceback)."""


def _write(text: str) -> None:
    """Write a result to stdout.

    Raises:
        _StdoutError: stdout is closed (``>&-``), full (``/dev/full``, a full disk) or a
            pipe closed early (``| head``).
    """
    out = sys.stdout
    if out is None:
        raise _StdoutError("cannot write the result: stdout is closed")
    try:
        out.write(text)
        out.flush()
    except OSError as exc:
        # Python flushes stdout again at exit; point it at /dev/null so that the failed
        # write is not reported a second time as an ignored exception.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        except (OSError, ValueError):
            pass
        raise _StdoutError(f"cannot write the result to stdout: {exc.strerror or exc}") from None


# --- replay -----------------------------------------------------------------------------

def _add_replay(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser(
        "replay", help="replay a workload against a modelled deployment",
        description="Replay a workload against a modelled deployment and print the "
                    "predicted metrics (TTFT, TPOT, ITL, E2E in ms, throughput, GPU hours).",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(r)
    r.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="stdout: a readable table (default), JSON of metadata and summary, "
                        "or CSV (a header and one row: the summary, latency stats flattened "
                        "as metric.stat; the same columns for every run, empty where a run "
                        "has no value)")
    r.add_argument("--no-header", action="store_true",
                   help="with --format csv, print the row without the header line (to append "
                        "rows of more runs to one file)")
    r.add_argument("--output-dir", metavar="DIR",
                   help="also write DIR/prediction.json (metadata, summary, record count) and "
                        "the per-request table (see --records), atomically: a previous "
                        "aisimulate result there is replaced only once the new one is "
                        "complete; other files of those names are refused (see --force)")
    r.add_argument("--records", action="append", metavar="FORMATS",
                   help="the per-request table's formats with --output-dir, comma-separated "
                        "or repeated: parquet (default), csv, jsonl")
    r.add_argument("--export", action="append", metavar="FORMATS",
                   help="with --output-dir, also write the run in other tools' formats, "
                        "comma-separated or repeated: aiperf (profile_export.jsonl, "
                        "profile_export_aiperf.json and .csv, as AIPerf writes them), vllm "
                        "(vllm_bench_result.json: the flat keys of vllm bench serve "
                        "--save-result); part of the same atomic result")
    r.add_argument("--force", action="store_true",
                   help="with --output-dir, replace files of the result's names that no "
                        "earlier aisimulate result in DIR wrote (without it such a file, e.g. a "
                        "real AIPerf profile_export.jsonl, is refused: exit 2); with --trace-out, "
                        "replace an existing file (a single file records nothing of who wrote "
                        "it); the files the replay reads are never replaced")
    r.add_argument("--trace-out", metavar="FILE",
                   help="also write a Chrome/Perfetto trace (JSON; open it in ui.perfetto.dev): "
                        "one track per worker with every engine pass and its KV blocks, each "
                        "request as an async span")
    r.add_argument("--slo", action="append", metavar="BOUNDS",
                   help="per-request bounds in ms for goodput, e.g. ttft_ms=200,tpot_ms=50 "
                        "(any of ttft_ms, tpot_ms, e2e_ms; comma-separated or repeated, each "
                        "bound once): the summary gains the good "
                        "requests, goodput (req/s) and SLO attainment")
    r.add_argument("--gpu-hour-price", type=float, metavar="PRICE",
                   help="the price of one GPU for an hour (any currency): the table adds the "
                        "GPUs' cost over the measured window and the cost per million output "
                        "tokens; --format json adds them as \"cost\"")
    add_progress_argument(r)
    r.set_defaults(run=_cmd_replay)


def _cmd_replay(args: argparse.Namespace) -> int:
    spec = config_from_args(args)
    formats = parse_records(args.records)
    exports = parse_exports(args.export)
    if exports and not args.output_dir:
        raise _UsageError("--export writes into the result folder: give --output-dir DIR too")
    if args.records is not None and not args.output_dir:
        raise _UsageError("--records chooses the files of the result folder: give --output-dir DIR too")
    if args.no_header and args.format != "csv":
        raise _UsageError(f"--no-header applies to --format csv, not --format {args.format}")
    price = args.gpu_hour_price
    if price is not None and not (math.isfinite(price) and price > 0):
        raise _UsageError(f"--gpu-hour-price must be a finite number > 0, got {price:g}")
    if price is not None and args.format == "csv":
        raise _UsageError("--gpu-hour-price applies to --format table or json (a CSV row has gpu_hours and "
                          "total_output_tokens to price)")
    if args.force and not (args.output_dir or args.trace_out):
        raise _UsageError("--force applies to the files of --output-dir and --trace-out: give one of them too")
    _check_replay_outputs(args, spec, formats, exports)
    # The records stream into the folder as requests finish (aisimulate.run.stream)
    # instead of being held and saved after the replay.
    stream = bool(args.output_dir)
    written: dict = {}
    try:
        report = replay(spec, progress=progress_of(args), slo=parse_slos(args.slo),
                        timeline=args.trace_out is not None,
                        **({"output_dir": args.output_dir, "formats": formats, "exports": exports,
                            "force": args.force}
                           if stream else {}))
    except OSError as exc:
        if not stream:
            raise
        from ..io.files import IncompleteSaveError

        # an IncompleteSaveError's strerror says what was removed; before that, nothing was
        done = "" if isinstance(exc, IncompleteSaveError) else " (nothing was replaced)"
        _error(f"cannot write {exc.filename or args.output_dir}: {exc.strerror or exc}{done}")
        return 1
    if stream:  # what save() returns: the tables, the exports, prediction.json last
        from ..io.files import result_files

        written = {n: os.path.join(args.output_dir, n) for n in result_files(formats, exports)}
    if args.trace_out:
        try:
            print(f"wrote {report.to_chrome_trace(args.trace_out)}", file=sys.stderr)
        except OSError as exc:
            _error(f"cannot write {args.trace_out}: {exc.strerror or exc}")
            return 1
    for path in written.values():
        print(f"wrote {path}", file=sys.stderr)
    if args.format == "json":
        if price is None:
            _write(report.to_json())
        else:  # prediction.json's object and the cost
            _write(json.dumps({"metadata": report.metadata, "summary": report.summary,
                               "cost": report.cost(price)}, sort_keys=True, indent=2, allow_nan=False) + "\n")
    elif args.format == "csv":
        _write(summary_csv(report.summary, header=not args.no_header))
    else:
        _write(report.table(price_per_gpu_hour=price) + "\n")
    return 0


def _check_replay_outputs(args: argparse.Namespace, spec: Spec, formats: Sequence[str],
                          exports: Sequence[str]) -> None:
    """Before the replay: ``--output-dir`` and ``--trace-out`` can be written, and
    neither overwrites a file the replay reads (the config, the trace, a model or
    system file) nor each other.

    Raises:
        _UsageError: naming the option and both paths.
    """
    from ..io.files import input_files, result_files

    inputs = input_files(spec.data, spec.source)
    names = result_files(formats, exports)
    if args.output_dir is not None:
        check_output_dir("--output-dir", args.output_dir, names, inputs, force=args.force)
    if args.trace_out is not None:
        check_output_file("--trace-out", args.trace_out, inputs, force=args.force)
        if args.output_dir:
            check_apart("--trace-out", args.trace_out,
                        {f"the result file {name} of --output-dir {args.output_dir}":
                         os.path.join(args.output_dir, name) for name in names})


def _slo_bounds(text: str) -> list[tuple[str, float]]:
    """``ttft_ms=200,tpot_ms=50`` → ``[("ttft_ms", 200.0), ("tpot_ms", 50.0)]``.

    Raises:
        _UsageError: an item without ``=`` or a value that is not a number (a bad
            name or range is the API's ConfigError, naming ``slo.<name>``).
    """
    out: list[tuple[str, float]] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            out.append((key.strip(), float(value)))
        except ValueError:
            raise _UsageError(f"--slo {item!r}: expected METRIC=MS, e.g. ttft_ms=200,tpot_ms=50") from None
    return out


def parse_slos(items: Sequence[str] | None) -> dict[str, float] | None:
    """Every ``--slo`` given (the option is repeatable, each value a comma list) as one
    set of bounds: ``["ttft_ms=200", "e2e_ms=3000"]`` → ``{"ttft_ms": 200.0, "e2e_ms": 3000.0}``.

    Raises:
        _UsageError: an item without ``=`` or a value that is not a number, or a bound
            given twice, within one value or across them (:func:`_given_once`).
    """
    if not items:
        return None
    bounds = [bound for item in items for bound in _slo_bounds(item)]
    _given_once("--slo", [key for key, _ in bounds], items, "bound")
    return dict(bounds)


#: ``--export`` formats.
EXPORTS = ("aiperf", "vllm")


def parse_exports(texts: Sequence[str] | None) -> list[str]:
    """``--export aiperf,vllm`` or ``--export aiperf --export vllm`` → ``["aiperf",
    "vllm"]`` (``[]`` without the option).

    Raises:
        _UsageError: as :func:`_parse_names`.
    """
    return [] if texts is None else _parse_names("--export", texts, EXPORTS)


def parse_records(texts: Sequence[str] | None) -> list[str]:
    """``--records parquet,csv`` or ``--records parquet --records csv`` → ``["parquet",
    "csv"]`` (``["parquet"]`` without the option).

    Raises:
        _UsageError: as :func:`_parse_names`.
    """
    from ..io.tables import FILES

    return ["parquet"] if texts is None else _parse_names("--records", texts, FILES)


def _parse_names(flag: str, texts: Sequence[str], choices: Sequence[str] | None = None,
                 what: str = "format") -> list[str]:
    """The names in ``flag``'s values ``texts`` (each comma-separated; the option may be
    repeated), in order. With ``choices`` (formats, lower case) a name is taken in any
    case, as the API takes it (:func:`aisimulate.binding.args.names`, ``any_case``), and an
    empty list or a name not among them is refused; without (columns,
    fields) every name is taken as written. A name given twice, within one value or
    across repeated options, is refused by :func:`aisimulate.binding.args.names` (exit 2, as a
    key given twice in ``--slo``: not quietly dropped).

    Raises:
        _UsageError: naming ``flag`` and the value or the name.
    """
    from ..binding import args as _args

    names: list[str] = []
    try:
        for text in texts:
            these = [n.strip() for n in text.split(",") if n.strip()]
            if choices is not None:  # lower-cased as the API does it; none, or one unknown: refused
                try:
                    these = _args.names(flag, these, choices, what, any_case=True)
                except _args.GivenTwice:
                    raise
                except ValueError:
                    these = []
                if not these:
                    raise _UsageError(f"{flag} {text!r}: choose one or more of {', '.join(choices)}, "
                                      "comma-separated")
            names += these
    except _args.GivenTwice as exc:
        raise _twice(flag, exc.name, texts, what) from None
    return _given_once(flag, names, texts, what, choices)


def _twice(flag: str, name: str, texts: Sequence[str], what: str) -> _UsageError:
    return _UsageError(f"{flag} {name}: given twice in {','.join(texts)!r}: give each {what} once")


def _given_once(flag: str, names: list[str], texts: Sequence[str], what: str,
                choices: Sequence[str] | None = None) -> list[str]:
    """``names`` (from ``flag``'s values ``texts``) as :func:`aisimulate.binding.args.names`
    takes them, the one check of a name given twice.

    Raises:
        _UsageError: a name given twice, naming ``flag``, the name and ``texts``.
    """
    from ..binding import args as _args

    try:
        return _args.names(flag, names, choices, what)
    except _args.GivenTwice as exc:
        raise _twice(flag, exc.name, texts, what) from None


def flatten_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The summary as one flat row: scalars as they are, each stats dict as
    ``metric.stat`` columns (``ttft_ms.p50``), a null stats dict as empty cells; nested
    mappings (``goodput``) as ``key.sub``; lists are left out."""
    row: dict[str, Any] = {}

    def put(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                put(f"{prefix}.{k}", v)
        elif not isinstance(value, list):
            row[prefix] = value

    for key, value in summary.items():
        if key == "saturation":  # one column: the diagnosis line (empty when it kept up)
            row[key] = value.get("diagnosis") if isinstance(value, Mapping) else None
        elif value is None and key in _SUMMARY_STATS:
            from ..report import STAT_FIELDS
            for stat in STAT_FIELDS:
                row[f"{key}.{stat}"] = None
        else:
            put(key, value)
    row.setdefault("saturation", None)  # a column of every row: empty when the deployment kept up
    return row


#: The summary's statistics (each a stats dict, or null when no request has a value).
_SUMMARY_STATS = ("e2e_ms", "input_sequence_length", "itl_ms", "output_sequence_length",
                  "output_token_throughput_per_user", "tpot_ms", "ttft_ms", "ttst_ms")


def _summary_columns() -> tuple[str, ...]:
    """The summary's numbers (:data:`aisimulate._sweep.point.SUMMARY_SCALARS`), its
    statistics flattened as ``metric.stat``, the goodput's columns (present with an
    SLO: ``--slo``) and the load columns (``in_flight.mean``, ``in_flight.peak``,
    ``worker_utilization.mean/min/max``, the ``saturation`` line, empty when the
    deployment kept up)."""
    from .._sweep.point import LOAD_COLUMNS, SUMMARY_SCALARS
    from ..report import SLO_FIELDS, STAT_FIELDS

    goodput = ["goodput.good_requests", "goodput.goodput_rps", "goodput.slo_attainment",
               *(f"goodput.slo.{f}" for f in SLO_FIELDS)]
    cols = [*SUMMARY_SCALARS, *(f"{k}.{s}" for k in _SUMMARY_STATS for s in STAT_FIELDS), *goodput,
            *LOAD_COLUMNS]
    return tuple(sorted(cols))  # the order of the summary's keys, as earlier releases


def summary_csv(summary: Mapping[str, Any], header: bool = True) -> str:
    """``--format csv``: a header line (unless ``header`` is false) and one value line,
    RFC 4180, with the same columns for every run (:func:`_summary_columns`: a null
    statistic, a goodput without an SLO, a bound not given are empty cells, as is a
    number that is not finite — never "nan")."""
    import math

    row = flatten_summary(summary)
    cols = _summary_columns()
    cols += tuple(sorted(set(row) - set(cols)))  # a field this list lacks: kept, last
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if header:
        w.writerow(cols)
    cell = lambda v: "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else v  # noqa: E731
    w.writerow(cell(row.get(c)) for c in cols)
    return buf.getvalue()


# --- validate ---------------------------------------------------------------------------

def _add_validate(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser(
        "validate", help="check a config without running it",
        description="Check a config without replaying it: every field, the model and GPU "
                    "system it names, the KV capacity of each pool, and the workload file (a "
                    "trace is read to its end by the replay's reader; its first bad row is "
                    "named, file:line), and the memory budget as the replay holds it (its "
                    "estimate, and the later session turns read ahead to start the first "
                    "sessions). "
                    "Prints what would run (or, with --format json, the canonical spec with "
                    "every default filled).",
        epilog="examples:\n  aisimulate validate replay.yaml\n"
               "  aisimulate validate replay.yaml --set engine.workers.aggregated.tp=8 --format json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(v)
    v.add_argument("--format", choices=("table", "json"), default="table",
                   help="stdout: a one-paragraph description (default) or the canonical spec as JSON")
    add_progress_argument(v)  # nothing of validate shows one yet: taken as by every command
    v.set_defaults(run=_cmd_validate)


def _cmd_validate(args: argparse.Namespace) -> int:
    spec = config_from_args(args)
    meta = check(spec)
    if args.format == "json":
        _write(json.dumps(spec.data, indent=2, sort_keys=True) + "\n")
        return 0
    name = args.config or args.config_opt
    lines = [f"{'<stdin>' if name == '-' else name}: valid"]
    pools = meta.get("pools") or []
    for p in pools:
        dp = f" × DP{p['data_parallel_size']}" if p.get("data_parallel_size", 1) > 1 else ""
        ep = " (EP)" if p.get("enable_expert_parallel") else ""
        per = "data-parallel rank" if dp else "worker"
        lines.append(f"  {p['name']} pool: {p['workers']} worker(s) × TP{p['tp']}{dp}{ep} "
                     f"({p['gpus']} GPU(s)), {p['num_gpu_blocks']} KV blocks per {per}, "
                     f"perf model {p['perf_model']}")
    experts = f"{meta['expert_dtype']} experts, " if meta.get("expert_dtype") else ""
    others = " other" if experts else ""
    lines.append(f"  model {meta.get('model')} ({experts}{meta.get('weight_dtype')}{others} weights, "
                 f"{meta.get('kv_cache_dtype')} KV cache) on {meta.get('system')}; "
                 f"max_model_len {meta.get('max_model_len')}, block_size {meta.get('block_size')}")
    _write("\n".join(lines) + "\n")
    return 0


# --- models, systems --------------------------------------------------------------------

def _add_listing(sub: argparse._SubParsersAction, name: str, what: str) -> None:
    p = sub.add_parser(
        name, help=f"list the {what} a config can name",
        description=f"List the {what} a config can name: the core's built-ins and those "
                    "found in the data folders (AISIMULATE_DATA, the checkout's "
                    "../shared/data, the package's own data), with where each comes from.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--all", action="store_true",
                   help="also list entries that cannot be used, with the reason")
    add_progress_argument(p)  # no bar here: -q leaves out the table's note of where it searched
    p.set_defaults(run=_cmd_models if name == "models" else _cmd_systems)


def _table(rows: list[dict[str, Any]], columns: Sequence[tuple[str, str, Callable[[Any], str]]]) -> str:
    cells = [[fmt(r.get(key)) for _, key, fmt in columns] for r in rows]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, (h, _, _) in enumerate(columns)]
    out = ["  ".join(h.ljust(w) for (h, _, _), w in zip(columns, widths)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(out) + "\n"


def _emit(rows: list[dict[str, Any]], fmt: str, columns) -> None:
    if fmt == "json":
        _write(json.dumps(rows, indent=2) + "\n")
    elif fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        keys = list(dict.fromkeys(k for r in rows for k in r))
        w = csv.DictWriter(buf, keys, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        _write(buf.getvalue())
    else:
        _write(_table(rows, columns))


def _text(v: Any) -> str:
    return "" if v is None else str(v)


def _cmd_models(args: argparse.Namespace) -> int:
    from ..catalogue import list_models, searched_hint

    rows = list_models(supported_only=not args.all)
    _emit(rows, args.format, [("name", "name", _text), ("architecture", "architecture", _text),
                              ("layers", "layers", _text), ("weights", "weight_dtype", _text),
                              ("experts", "expert_dtype", _text),
                              ("max_len", "max_position_embeddings", _text),
                              ("source", "source", _text)]
          + ([("reason", "reason", _text)] if args.all else []))
    if args.format == "table" and not args.quiet:  # a note for a reader; -q silences it
        print(searched_hint("models"), file=sys.stderr)
    return 0


def _cmd_systems(args: argparse.Namespace) -> int:
    from ..catalogue import list_systems, searched_hint

    rows = [s for s in list_systems() if args.all or s["supported"]]
    gib = lambda v: "" if not v else f"{v / 2**30:.0f}"  # noqa: E731
    gb = lambda v: "" if not v else f"{v / 1e9:.0f}"  # noqa: E731
    tflops = lambda v: "" if not v else f"{v / 1e12:.0f}"  # noqa: E731
    _emit(rows, args.format, [("name", "name", _text), ("hbm_gib", "mem_capacity_bytes", gib),
                              ("hbm_gb_per_s", "mem_bw_bytes_per_s", gb),
                              ("bf16_tflops", "bf16_flops", tflops), ("fp8_tflops", "fp8_flops", tflops),
                              ("kernel_tables", "kernel_tables", lambda v: "yes" if v else "no"),
                              ("source", "source", _text)]
          + ([("reason", "reason", _text)] if args.all else []))
    if args.format == "table" and not args.quiet:  # a note for a reader; -q silences it
        print(searched_hint("systems"), file=sys.stderr)
    return 0


# --- schema -----------------------------------------------------------------------------

def _add_schema(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "schema", help="print the config's JSON Schema",
        description="Print the JSON Schema of a replay config (generated from the core's "
                    "types; the same as docs/config.schema.json), for editors to complete "
                    "and check configs: e.g. a '# yaml-language-server: $schema=PATH' line "
                    "at the top of a YAML config.",
        epilog="examples:\n  aisimulate schema > aisimulate.schema.json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_progress_argument(p)  # nothing here shows one: taken as by every command
    p.set_defaults(run=_cmd_schema)


def _cmd_schema(args: argparse.Namespace) -> int:
    from ..binding import native as _native

    # the core's text as it is (not re-encoded: Python would print 0.000001 as 1e-06),
    # byte for byte docs/config.schema.json
    _write(_native.call_text("Schema", "", "schema"))
    return 0


# --- main -------------------------------------------------------------------------------

#: Subcommand registrars, in ``--help`` order.
SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_replay,
    _add_validate,
    lambda sub: _add_listing(sub, "models", "models"),
    lambda sub: _add_listing(sub, "systems", "GPU systems"),
    _add_schema,
    lambda sub: __import__("aisimulate.cli.sweep", fromlist=["_add_sweep"])._add_sweep(sub),
    lambda sub: __import__("aisimulate.cli.sweep", fromlist=["_add_compare"])._add_compare(sub),
    lambda sub: __import__("aisimulate.cli.bench", fromlist=["add_bench"]).add_bench(sub),
    lambda sub: __import__("aisimulate.cli.search", fromlist=["add_search"]).add_search(sub),
]


class _Version(argparse._VersionAction):
    """``--version``: the package's version, read when asked for (reading it loads
    importlib.metadata, ~25 ms of CPU that every other command would pay)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import __version__

        self.version = f"%(prog)s {__version__}"
        super().__call__(parser, namespace, values, option_string)


def parser() -> argparse.ArgumentParser:
    """The ``aisimulate`` argument parser with every subcommand."""
    p = argparse.ArgumentParser(prog=PROG, description="GPU-free simulator of LLM inference serving.",
                                epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return p


#: Exit code after SIGTERM (128 + SIGTERM).
EXIT_TERMINATED = 143


class _Terminated(BaseException):
    """Raised in the main thread by the SIGTERM handler, so that ``finally`` blocks
    run (a replay is stopped, temporary files are removed) before the exit."""


def _on_sigterm(signum, frame):  # pragma: no cover - exercised in a subprocess test
    raise _Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    args = parser().parse_args(argv)  # exits 2 on bad arguments
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        with warnings.catch_warnings():
            shown = warnings.showwarning

            def show(message, category, *rest, **kw):  # ours as one line, like an error
                if issubclass(category, BackendVersionWarning) and sys.stderr is not None:
                    print(f"{PROG}: warning: {message}", file=sys.stderr)
                else:
                    shown(message, category, *rest, **kw)
            warnings.showwarning = show
            return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    try:
        release()  # from here Ctrl-C is a KeyboardInterrupt, taken below
        return args.run(args)
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except _Terminated:
        _error("terminated")
        return EXIT_TERMINATED
    except _UsageError as exc:
        _error(str(exc))
        return 2
    except (ConfigError, DataError) as exc:
        _error(str(exc))
        return 2
    except SimulationError as exc:
        if exc.kind == "panic":
            # one line; the Go stack only on request (it is for the bug report)
            debug = os.environ.get(DEBUG_ENV)
            _error(f"internal error (a bug in aisimulate; please report it with the config): {exc}"
                   + ("" if debug else f" [set {DEBUG_ENV}=1 for the Go stack]"))
            if debug and exc.detail and sys.stderr is not None:
                sys.stderr.write(exc.detail)
            return 1
        _error(f"simulation failed: {exc}")
        return 1
    except _StdoutError as exc:
        _error(str(exc))
        return 1
    except ImportError as exc:  # a missing optional extra: an environment to fix, as a bad argument is
        _error(str(exc))
        return 2
    except KeyboardInterrupt:
        # Ctrl-C: the replay or sweep has stopped and nothing was written (outputs are
        # renamed into place only when complete); one line, the shell's 128 + SIGINT
        _error("interrupted")
        return EXIT_INTERRUPTED


def _started_processes() -> bool:
    """Whether this process may have started worker processes (a sweep's loky pool or
    Ray), whose clean-up runs at the interpreter's exit."""
    return "ray" in sys.modules or "joblib.externals.loky" in sys.modules


def console_main() -> None:  # pragma: no cover - the installed `aisimulate` script
    """Entry point of the ``aisimulate`` console script (and ``python -m aisimulate``)."""
    try:
        code = main()
    except KeyboardInterrupt:
        # Ctrl-C after the command's own handling: once it has returned (restoring the
        # SIGTERM handler), or from argparse; its result, if any, is already whole
        _error("interrupted")
        code = EXIT_INTERRUPTED
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED) and not _started_processes():
        # Stopped: every file is already removed or left whole (the finally blocks ran),
        # so leave at once. The interpreter's own shutdown would first free everything
        # a big replay built (garbage collection over pyarrow, pandas, the report's
        # columns): 0.5–1 s on a loaded machine, after the user asked to stop. Not after
        # a sweep that started processes: Ray's exit handler stops the local cluster it
        # may have started; loky's kills the pool's workers (they ignore SIGINT: they
        # would live on, holding stdout and stderr open) and its semaphores are released
        # by their exit finalizers (skipped, its resource tracker warns of "leaked
        # semlock objects").
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    console_main()
