"""``aisimulate replay``: run a config and print the predicted metrics (a table, JSON or
CSV), optionally writing the result folder and a Chrome trace."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Sequence

from .. import replay
from .common import (EXAMPLES, PROG, UsageError, add_config_arguments, add_percentiles_argument, add_progress_argument,
                     check_gpu_hour_price, config_from_args, error, parse_exports, parse_percentiles,
                     parse_records, parse_slos, progress_of, write)
from .outputs import check_apart, check_output_dir, check_output_file
from ..report_text import none_completed, some_not_completed
from ..config import Spec


def add_replay(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser(
        "replay", help="replay a workload against a modelled deployment",
        description="Replay a workload against a modelled deployment and print the "
                    "predicted metrics (TTFT, TPOT, ITL, E2E in ms, throughput, GPU hours).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    add_percentiles_argument(r, "the table's columns become mean, these, min and max, and "
                                "every statistic of the summary (JSON, CSV, prediction.json) adds each one "
                                "beside p50/p90/p95/p99 as p99.9 and the like")
    r.add_argument("--token-gaps", action="store_true",
                   help="with --output-dir and --export aiperf, record when the client received each "
                        "chunk of each response (the tokens received at one instant are one chunk), so "
                        "that the AIPerf export writes each record's inter_chunk_latency; decodes token by token (the same results, more "
                        "time) and holds 8 bytes per output token (the result folder is then written "
                        "once the replay has ended, not streamed)")
    r.add_argument("--gpu-hour-price", type=float, metavar="PRICE",
                   help="the price of one GPU for an hour (any currency): the table adds the "
                        "GPUs' cost over the measured window and the cost per million output "
                        "tokens; --format json adds them as \"cost\" (PRICE in (0, 1e6])")
    add_progress_argument(r)
    r.set_defaults(run=_cmd_replay)


def _cmd_replay(args: argparse.Namespace) -> int:
    spec = config_from_args(args)
    formats = parse_records(args.records)
    exports = parse_exports(args.export)
    if exports and not args.output_dir:
        raise UsageError("--export writes into the result folder: give --output-dir DIR too")
    if args.records is not None and not args.output_dir:
        raise UsageError("--records chooses the files of the result folder: give --output-dir DIR too")
    if args.token_gaps and "aiperf" not in exports:  # the chunk times are written by the AIPerf export alone
        raise UsageError("--token-gaps records the chunk times that --export aiperf writes (each record's "
                         "inter_chunk_latency): give --output-dir DIR --export aiperf too")
    if args.no_header and args.format != "csv":
        raise UsageError(f"--no-header applies to --format csv, not --format {args.format}")
    price = check_gpu_hour_price(args.gpu_hour_price)
    if price is not None and args.format == "csv":
        raise UsageError("--gpu-hour-price applies to --format table or json (a CSV row has gpu_hours and "
                          "total_output_tokens to price)")
    if args.force and not (args.output_dir or args.trace_out):
        raise UsageError("--force applies to the files of --output-dir and --trace-out: give one of them too")
    percentiles = parse_percentiles(args.percentiles)
    _check_replay_outputs(args, spec, formats, exports)
    # The records stream into the folder as requests finish (aisimulate.run.stream)
    # instead of being held and saved after the replay.
    # (not with --token-gaps: the chunk times are held with the records, then saved)
    stream = bool(args.output_dir) and not args.token_gaps
    written: dict = {}
    try:
        report = replay(spec, progress=progress_of(args), slo=parse_slos(args.slo),
                        timeline=args.trace_out is not None, percentiles=percentiles,
                        token_gaps=args.token_gaps,
                        **({"output_dir": args.output_dir, "formats": formats, "exports": exports,
                            "force": args.force}
                           if stream else {}))
    except OSError as exc:
        if not stream:
            raise
        from ..io.files import IncompleteSaveError

        # an IncompleteSaveError's strerror says what was removed; before that, nothing was
        done = "" if isinstance(exc, IncompleteSaveError) else " (nothing was replaced)"
        error(f"{_output_dir_write(args.output_dir, exc)}{done}")
        return 1
    if stream:  # what save() returns: the tables, the exports, prediction.json last
        from ..io.files import result_files

        written = {n: os.path.join(args.output_dir, n) for n in result_files(formats, exports)}
    elif args.output_dir:
        try:
            written = report.save(args.output_dir, formats=formats, exports=exports, force=args.force,
                                  progress=progress_of(args))
        except OSError as exc:
            error(_output_dir_write(args.output_dir, exc))
            return 1
    if args.trace_out:
        try:
            print(f"wrote {report.to_chrome_trace(args.trace_out)}", file=sys.stderr)
        except OSError as exc:
            error(f"--trace-out {args.trace_out}: cannot write: {exc.strerror or exc}")
            return 1
    for path in written.values():
        print(f"wrote {path}", file=sys.stderr)
    why = none_completed(report)
    if why:  # a report of dashes: say why, as the per-request table would
        print(f"{PROG}: warning: {why}", file=sys.stderr)
    elif not args.quiet and (why := some_not_completed(report)):  # the table has the counts only
        print(f"{PROG}: note: {why}", file=sys.stderr)
    if not args.quiet:  # what stands in for the release named, which only metadata says otherwise
        from .notes import stand_in_notes

        for note in stand_in_notes(report.metadata, spec):
            print(f"{PROG}: note: {note}", file=sys.stderr)
    if args.format == "json":
        if price is None:
            write(report.to_json())
        else:  # prediction.json's object and the cost
            write(json.dumps({"metadata": report.metadata, "summary": report.summary,
                               "cost": report.cost(price)}, sort_keys=True, indent=2, allow_nan=False) + "\n")
    elif args.format == "csv":
        write(summary_csv(report.summary, header=not args.no_header, percentiles=percentiles or ()))
    else:
        write(report.table(price_per_gpu_hour=price) + "\n")
    return 0


def _check_replay_outputs(args: argparse.Namespace, spec: Spec, formats: Sequence[str],
                          exports: Sequence[str]) -> None:
    """Before the replay: ``--output-dir`` and ``--trace-out`` can be written, and
    neither overwrites a file the replay reads (the config, the trace, a model or
    system file) nor each other.

    Raises:
        UsageError: naming the option and both paths.
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


def flatten_summary(summary: Mapping[str, Any], percentiles: Sequence[float] = ()) -> dict[str, Any]:
    """The summary as one flat row: scalars as they are, each stats dict as
    ``metric.stat`` columns (``ttft_ms.p50``), a null stats dict as empty cells (those
    of the chosen ``percentiles`` too); nested mappings (``goodput``) as ``key.sub``;
    lists are left out."""
    from ..report import stat_fields

    row: dict[str, Any] = {}

    def put(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                put(f"{prefix}.{k}", v)
        elif not isinstance(value, list):
            row[prefix] = value

    for key, value in summary.items():
        if key == "saturation":  # one column: the diagnosis line (empty when it kept up or was not judged)
            row[key] = value.get("diagnosis") if isinstance(value, Mapping) else None
        elif value is None and key in _SUMMARY_STATS:
            for stat in stat_fields(percentiles):
                row[f"{key}.{stat}"] = None
        else:
            put(key, value)
    row.setdefault("saturation", None)  # a column of every row: empty when no saturation was found
    return row


#: The summary's statistics (each a stats dict, or null when no request has a value).
_SUMMARY_STATS = ("e2e_ms", "input_sequence_length", "itl_ms", "output_sequence_length",
                  "output_token_throughput_per_user", "tpot_ms", "ttft_ms", "ttst_ms")


def _summary_columns(percentiles: Sequence[float] = ()) -> tuple[str, ...]:
    """The summary's numbers (:data:`aisimulate._sweep.point.SUMMARY_SCALARS`), its
    statistics flattened as ``metric.stat``, the goodput's columns (present with an
    SLO: ``--slo``) and the load columns (``in_flight.mean``, ``in_flight.peak``,
    ``worker_utilization.mean/min/max``, the ``saturation`` line, empty when the
    deployment kept up or a burst was not judged)."""
    from .._sweep.point import LOAD_COLUMNS, SUMMARY_SCALARS
    from ..report import SLO_FIELDS, stat_fields

    goodput = ["goodput.good_requests", "goodput.goodput_rps", "goodput.slo_attainment",
               *(f"goodput.slo.{f}" for f in SLO_FIELDS)]
    cols = [*SUMMARY_SCALARS, *(f"{k}.{s}" for k in _SUMMARY_STATS for s in stat_fields(percentiles)), *goodput,
            *LOAD_COLUMNS]
    return tuple(sorted(cols))  # the order of the summary's keys, as earlier releases


def summary_csv(summary: Mapping[str, Any], header: bool = True, percentiles: Sequence[float] = ()) -> str:
    """``--format csv``: a header line (unless ``header`` is false) and one value line,
    RFC 4180, with the same columns for every run of the same ``percentiles``
    (:func:`_summary_columns`: a null statistic, a goodput without an SLO, a bound not
    given are empty cells, as is a number that is not finite — never "nan")."""
    import math

    row = flatten_summary(summary, percentiles)
    cols = _summary_columns(percentiles)
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


def _output_dir_write(directory: str, exc: OSError) -> str:
    """The message of a failed write under ``--output-dir``: the option, its value, and
    the file that failed when it is another path (as ``--trace-out``'s names its option)."""
    what = f" {exc.filename}" if exc.filename and str(exc.filename) != directory else ""
    return f"--output-dir {directory}: cannot write{what}: {exc.strerror or exc}"
