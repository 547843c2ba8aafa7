"""What every command of ``aisimulate`` shares: the config arguments (CONFIG, ``--config``,
``--set``), ``--quiet``, the parsing of ``--slo``, ``--records`` and ``--export`` and of a
list of names given once each, and the one-line error and the result written to stdout
(:class:`UsageError`: exit 2; :class:`StdoutError`: exit 1)."""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Sequence

from ..config import Spec, load_config, parse_config_text, read_config_bytes
from ..errors import ConfigError


PROG = "aisimulate"


class CommandError(Exception):
    """Base of the command line's errors: each is one line for stderr, and compares
    equal by type and message, as the package's errors do (docs: aisimulate.errors)."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.args == self.args

    def __hash__(self) -> int:
        return hash((type(self), self.args))


class UsageError(CommandError):
    """A bad command-line value (exit 2, like a config error)."""


#: The examples of ``aisimulate --help`` and ``aisimulate replay --help``.
EXAMPLES = """\
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


#: Environment variable that makes the CLI print the Go stack of an internal error.
DEBUG_ENV = "AISIMULATE_DEBUG"


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
                        "directory (those in the config file against its folder); repeatable, "
                        "each field once (a field given twice is exit 2; a field inside a mapping "
                        "an earlier --set gave changes that field of it)")


def parse_sets(sets: Sequence[str]) -> dict[str, Any]:
    """``["a.b=4", …]`` → ``{"a.b": 4, …}``, each value read as a YAML scalar or flow
    collection, set in the order given: a field inside a mapping an earlier ``--set``
    gave (``engine.scheduler={…}`` then ``engine.scheduler.block_size=32``) changes that
    field of it; nothing given is silently replaced.

    Raises:
        UsageError: an item without ``=`` or with an empty field, a value that is not
            valid YAML, a field given twice, or a field that would replace a field inside
            it given earlier (``engine.scheduler.block_size=32`` then ``engine.scheduler={…}``).
    """
    out: dict[str, Any] = {}
    for item in sets:
        field, sep, text = item.partition("=")
        field = field.strip()
        if not sep or not field:
            raise UsageError(f"--set {item!r}: expected FIELD=VALUE, e.g. "
                             "engine.workers.aggregated.count=4")
        if field in out:
            raise UsageError(f"--set {field}: given twice ({field}={_shown(sets, field)}); give each field once")
        inner = next((f for f in out if f.startswith(field + ".")), None)
        if inner is not None:
            raise UsageError(f"--set {field}: would replace the earlier --set {inner}; give {field} first, "
                             f"then the fields inside it")
        try:
            value = parse_config_text(text, name=f"--set {field}") if text.strip() else ""
        except ConfigError as exc:
            raise UsageError(f"--set {field}: {exc.reason}") from None
        out[field] = value
    return out


def _shown(sets: Sequence[str], field: str) -> str:
    """The values ``sets`` gives ``field``, joined by " and " (each as typed)."""
    return " and ".join(t.strip() for f, _, t in (s.partition("=") for s in sets) if f.strip() == field)


def config_from_args(args: argparse.Namespace) -> Spec:
    """Compile the config a subcommand was given (CONFIG or ``--config``, ``-`` for stdin)
    with its ``--set`` overrides.

    Raises:
        UsageError: no config, or both CONFIG and ``--config``, or a bad ``--set``.
        ConfigError: from :func:`aisimulate.load_config`.
    """
    src, overrides = config_source_from_args(args)
    return load_config(src, overrides=overrides)


def config_source_from_args(args: argparse.Namespace) -> tuple[str | dict[str, Any], dict[str, Any]]:
    """The config a subcommand was given, not yet compiled: its path (CONFIG or
    ``--config``), or for ``-`` the mapping read from stdin; and the ``--set``
    overrides.

    Raises:
        UsageError: no config, or both CONFIG and ``--config``, or a bad ``--set``.
        ConfigError: stdin is closed, or does not hold a mapping.
    """
    if args.config and args.config_opt:
        raise UsageError("give the config once: as CONFIG or as --config, not both")
    path = args.config or args.config_opt
    if not path:
        raise UsageError(f"a config is required: aisimulate {getattr(args, 'command', 'replay')} CONFIG (or --config FILE, "
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


def check_gpu_hour_price(price: float | None) -> float | None:
    """``--gpu-hour-price`` (replay's and search's): a number in (0,
    :data:`~aisimulate.report.MAX_PRICE_PER_GPU_HOUR`], or ``None``."""
    from ..report import MAX_PRICE_PER_GPU_HOUR, is_gpu_hour_price

    if price is not None and not is_gpu_hour_price(price):
        raise UsageError(f"--gpu-hour-price must be a number in (0, {MAX_PRICE_PER_GPU_HOUR:.0f}], got {price:g}")
    return price


def add_progress_argument(p: argparse.ArgumentParser) -> None:
    """Give a subcommand ``--quiet`` (no progress bar)."""
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bar (by default one appears on stderr, when it is a "
                        "terminal, for work that runs longer than 2 s)")


def add_percentiles_argument(p: argparse.ArgumentParser, effect: str) -> None:
    """Give a subcommand ``--percentiles`` (replay, sweep, compare: one name, one form,
    read by :func:`parse_percentiles`); ``effect`` says what the chosen ones change."""
    p.add_argument("--percentiles", action="append", metavar="LIST",
                   help="percentiles to report, e.g. 50,90,99,99.9 (each in (0, 100]; comma-separated "
                        "or repeated): " + effect)


def progress_of(args: argparse.Namespace) -> bool | None:
    """The ``progress=`` argument for the API: off with ``--quiet``, else automatic."""
    return False if getattr(args, "quiet", False) else None


def error(message: str) -> None:
    if sys.stderr is not None:  # None when started with stderr closed
        print(f"{PROG}: error: {message}", file=sys.stderr)


class StdoutError(CommandError):
    """stdout cannot take the result (exit 1, one line, never a traceback)."""


def write(text: str) -> None:
    """Write a result to stdout.

    Raises:
        StdoutError: stdout is closed (``>&-``), full (``/dev/full``, a full disk) or a
            pipe closed early (``| head``).
    """
    out = sys.stdout
    if out is None:
        raise StdoutError("cannot write the result: stdout is closed")
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
        raise StdoutError(f"cannot write the result to stdout: {exc.strerror or exc}") from None


def _slo_bounds(text: str) -> list[tuple[str, float]]:
    """``ttft_ms=200,tpot_ms=50`` → ``[("ttft_ms", 200.0), ("tpot_ms", 50.0)]``.

    Raises:
        UsageError: an item without ``=`` or a value that is not a number (a bad
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
            raise UsageError(f"--slo {item!r}: expected METRIC=MS, e.g. ttft_ms=200,tpot_ms=50") from None
    return out


def parse_slos(items: Sequence[str] | None) -> dict[str, float] | None:
    """Every ``--slo`` given (the option is repeatable, each value a comma list) as one
    set of bounds: ``["ttft_ms=200", "e2e_ms=3000"]`` → ``{"ttft_ms": 200.0, "e2e_ms": 3000.0}``.

    Raises:
        UsageError: an item without ``=`` or a value that is not a number, a bound
            given twice, within one value or across them (:func:`_given_once`), or the
            refusal of :func:`aisimulate.run.replay.check_slo` (the API's rule and
            message: a metric that is no SLO bound, a bound ≤ 0), naming the option.
    """
    if not items:
        return None
    from ..run.replay import check_slo

    bounds = [bound for item in items for bound in _slo_bounds(item)]
    _given_once("--slo", [key for key, _ in bounds], items, "bound")
    try:
        check_slo(dict(bounds))
    except ConfigError as exc:
        name = exc.field.removeprefix("slo").removeprefix(".")
        raise UsageError(f"--slo{' ' + name if name else ''}: {exc.reason}") from None
    return dict(bounds)


def parse_percentiles(items: Sequence[str] | None) -> list[float] | None:
    """Every ``--percentiles`` given (repeatable, each a comma list) as the chosen
    percentiles: ``["50,90", "99.9"]`` → ``[50.0, 90.0, 99.9]`` (ascending, repeats
    dropped; ``None`` without the option), checked by
    :func:`aisimulate.run.replay.check_percentiles` (the API's rule and message).

    Raises:
        UsageError: an item that is not a number, or the check's refusal (one outside
            (0, 100]), naming the option.
    """
    if not items:
        return None
    from ..run.replay import check_percentiles

    values = []
    for item in ",".join(items).split(","):
        try:
            values.append(float(item))
        except ValueError:
            raise UsageError(f"--percentiles {item.strip()!r}: want numbers in (0, 100] separated by commas, "
                             "e.g. 50,90,99,99.9") from None
    try:
        return check_percentiles(values)
    except ConfigError as exc:
        raise UsageError(f"--percentiles: {exc.reason}") from None


#: ``--export`` formats.
EXPORTS = ("aiperf", "vllm")


def parse_exports(texts: Sequence[str] | None) -> list[str]:
    """``--export aiperf,vllm`` or ``--export aiperf --export vllm`` → ``["aiperf",
    "vllm"]`` (``[]`` without the option).

    Raises:
        UsageError: as :func:`parse_names`.
    """
    return [] if texts is None else parse_names("--export", texts, EXPORTS)


def parse_records(texts: Sequence[str] | None) -> list[str]:
    """``--records parquet,csv`` or ``--records parquet --records csv`` → ``["parquet",
    "csv"]`` (``["parquet"]`` without the option).

    Raises:
        UsageError: as :func:`parse_names`.
    """
    from ..io.tables import FILES

    return ["parquet"] if texts is None else parse_names("--records", texts, FILES)


def parse_names(flag: str, texts: Sequence[str], choices: Sequence[str] | None = None,
                 what: str = "format") -> list[str]:
    """The names in ``flag``'s values ``texts`` (each comma-separated; the option may be
    repeated), in order. With ``choices`` (formats, lower case) a name is taken in any
    case, as the API takes it (:func:`aisimulate.binding.args.names`, ``any_case``), and an
    empty list or a name not among them is refused; without (columns,
    fields) every name is taken as written. A name given twice, within one value or
    across repeated options, is refused by :func:`aisimulate.binding.args.names` (exit 2, as a
    key given twice in ``--slo``: not quietly dropped).

    Raises:
        UsageError: naming ``flag`` and the value or the name.
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
                    raise UsageError(f"{flag} {text!r}: choose one or more of {', '.join(choices)}, "
                                      "comma-separated")
            names += these
    except _args.GivenTwice as exc:
        raise _twice(flag, exc.name, texts, what) from None
    return _given_once(flag, names, texts, what, choices)


def _twice(flag: str, name: str, texts: Sequence[str], what: str) -> UsageError:
    return UsageError(f"{flag} {name}: given twice in {','.join(texts)!r}: give each {what} once")


def _given_once(flag: str, names: list[str], texts: Sequence[str], what: str,
                choices: Sequence[str] | None = None) -> list[str]:
    """``names`` (from ``flag``'s values ``texts``) as :func:`aisimulate.binding.args.names`
    takes them, the one check of a name given twice.

    Raises:
        UsageError: a name given twice, naming ``flag``, the name and ``texts``.
    """
    from ..binding import args as _args

    try:
        return _args.names(flag, names, choices, what)
    except _args.GivenTwice as exc:
        raise _twice(flag, exc.name, texts, what) from None
