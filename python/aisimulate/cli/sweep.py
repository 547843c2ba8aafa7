"""``aisimulate sweep``: a config replayed over a grid or a list of scenarios, one row per
point (:func:`aisimulate.sweep`), printed as a table, CSV or JSON and written with
``--out``."""

from __future__ import annotations

import argparse
import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Sequence

from .._sweep.points import expand
from ..config import parse_config_text, read_config_bytes
from ..errors import ConfigError
from ..io.files import input_files
from .common import (UsageError, add_config_arguments, add_percentiles_argument, config_from_args, error,
                     parse_names, parse_percentiles, parse_slos, progress_of, write)
from .frames import check_out, json_lines, write_frame
from .outputs import check_output_file

_SWEEP_EXAMPLES = """\
examples:
  aisimulate sweep examples/quickstart.yaml --grid engine.workers.aggregated.tp=1,2,4 \\
      --grid traffic.load.concurrency=16,64 --out results.parquet
  aisimulate sweep deploy.yaml --grid engine.workers.aggregated.count,engine.workers.aggregated.tp=8:1,4:2,2:4 \\
      --slo ttft_ms=500 --slo tpot_ms=30 --format csv > results.csv
  aisimulate sweep deploy.yaml --points scenarios.yaml --backend ray --ray-address auto
"""

#: The table's cell of a value a point has not (a failed point's metrics).
_DASH = "—"

#: Failed points whose reason the table format prints (stderr) before "… and N more".
_REASONS_SHOWN = 10

#: Columns of the sweep's stdout table (the point's fields, status and these; with
#: --columns, those instead; with --percentiles, :func:`table_columns`).
TABLE_COLUMNS = ("gpus", "completed", "ttft_ms.p50", "ttft_ms.p90", "tpot_ms.mean", "e2e_ms.p90",
                 "output_token_throughput_tps", "output_tps_per_gpu", "output_tps_per_user")


def table_columns(percentiles: Sequence[float] | None) -> tuple[str, ...]:
    """The table's columns: :data:`TABLE_COLUMNS`, or with ``--percentiles`` the chosen
    ones in place of its percentiles (TTFT's and E2E's: ``ttft_ms.p99.9``), as a
    replay's table shows the chosen ones in place of p50/p90/p95/p99."""
    if not percentiles:
        return TABLE_COLUMNS
    from ..io.names import percentile_key

    keys = [percentile_key(p) for p in percentiles]
    return ("gpus", "completed", *(f"ttft_ms.{k}" for k in keys), "tpot_ms.mean", *(f"e2e_ms.{k}" for k in keys),
            "output_token_throughput_tps", "output_tps_per_gpu", "output_tps_per_user")


def _value(text: str, where: str) -> Any:
    try:
        return parse_config_text(text, name=where) if text.strip() else ""
    except ConfigError as exc:
        raise UsageError(f"{where}: {exc.reason}") from None


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` outside brackets and quotes: a YAML flow mapping or
    list (``{kind: uniform, min: 1, max: 8}``) or a quoted string stays one value."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth = max(depth - 1, 0)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def _grid_value(text: str, field: str) -> Any:
    if not text.strip():
        raise UsageError(f"--grid {field}: a value is empty (two commas in a row, or one at an end)")
    return _value(text, f"--grid {field}")


def parse_grid(items: Sequence[str]) -> dict[Any, list[Any]]:
    """``--grid FIELD=V1,V2`` (values read as YAML) or coupled
    ``--grid F1,F2=a1:a2,b1:b2`` → the grid :func:`aisimulate.sweep` takes. A comma or
    colon inside a flow mapping or list (``{kind: uniform, min: 1, max: 8}``) or quotes
    does not split values.

    Raises:
        UsageError: an item without ``=``, an empty field, value list or value, a field
            given twice, or a coupled value with the wrong number of parts.
    """
    parsed = [(item, *item.partition("=")) for item in items]
    for item, fields, sep, values in parsed:
        if not sep or not all(f.strip() for f in fields.split(",")) or not values.strip():
            raise UsageError(f"--grid {item!r}: expected FIELD=V1,V2,… (or F1,F2=a1:a2,b1:b2)")
    # a field in two --grid options (its values would be ambiguous): exit 2, naming it
    parse_names("--grid", [fields for _, fields, _, _ in parsed], what="field")
    grid: dict[Any, list[Any]] = {}
    for item, fields, sep, values in parsed:
        names = [f.strip() for f in fields.split(",")]
        parts = _split(values, ",")
        if len(names) == 1:
            grid[names[0]] = [_grid_value(v, names[0]) for v in parts]
            continue
        rows = []
        for v in parts:
            comps = _split(v, ":")
            if len(comps) != len(names):
                raise UsageError(f"--grid {fields}: {v!r} needs {len(names)} values separated by ':'")
            rows.append(tuple(_grid_value(c, n) for c, n in zip(comps, names)))
        grid[tuple(names)] = rows
    return grid


def add_sweep(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "sweep", help="replay a config over a grid or a list of scenarios",
        description="Replay CONFIG once per point of a grid (--grid, cartesian product) or a "
                    "scenario list (--points) and print one row per point: its fields, status "
                    "(ok, infeasible, error), reason and the metrics. Points run on every core, "
                    "or as tasks on a Ray cluster (--backend ray).",
        epilog=_SWEEP_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(s)
    s.add_argument("--grid", action="append", default=[], metavar="FIELD=V1,V2",
                   help="a dotted field and its values (read as YAML); repeatable (cartesian "
                        "product); F1,F2=a1:a2,b1:b2 couples fields; a mapping value keeps its "
                        "commas: F={kind: uniform, min: 1, max: 8},512; a relative file path resolves "
                        "against the working directory, as in --set")
    s.add_argument("--points", metavar="FILE",
                   help="a YAML or JSON list of scenarios, each a mapping of dotted fields to values; "
                        "a relative file path among them resolves against the working directory, "
                        "as in --set")
    s.add_argument("--out", metavar="FILE",
                   help="also write every column to FILE: .parquet, .csv or .jsonl (written whole or not at all; "
                        "a missing folder is created)")
    s.add_argument("--force", action="store_true",
                   help="with --out, replace an existing file (without it that is exit 2: a "
                        "single file records nothing of who wrote it); the files the sweep "
                        "reads are never replaced")
    s.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="stdout: a table of the main columns (default), or every column as CSV / JSON lines")
    s.add_argument("--slo", action="append", default=[], metavar="METRIC=MS",
                   help="an SLO threshold: ttft_ms, tpot_ms or e2e_ms (fills goodput_rps, slo_attainment; "
                        "without it they are empty in --format csv/json and --out, so sweeps append to one file)")
    add_percentiles_argument(s, "each point's replay reports them beside p50/p90/p95/p99: a "
                                "metric.pN column per latency metric for each one not among those "
                                "(ttft_ms.p99.9) in --format csv/json and --out, and the table shows "
                                "TTFT's and E2E's chosen ones in place of its p50/p90 columns")
    s.add_argument("--columns", metavar="C1,C2",
                   help="metric columns to keep, in this order, each once, in every --format and --out "
                        "(default: all, and the table's main ones; goodput_rps and slo_attainment are "
                        "empty without --slo)")
    s.add_argument("--errors", choices=("record", "raise"), default="record",
                   help="record a failing point as a row (default) or stop at the first")
    s.add_argument("--jobs", type=int, metavar="N", help="local worker processes (default: every core; not with --backend ray)")
    s.add_argument("--backend", choices=("local", "ray"), default="local")
    s.add_argument("--ray-address", metavar="ADDR", help="with --backend ray: the Ray cluster (auto, ray://host:10001, host:6379)")
    s.add_argument("--quiet", "-q", "--no-progress", dest="quiet", action="store_true",
                   help="no progress bar (by default one appears on stderr when it is a "
                        "terminal); --no-progress is the same")
    s.set_defaults(run=_cmd_sweep)


def _check_sets_apart(sets: Sequence[str], points: Any, option: str) -> None:
    """Refuse a ``--set`` field that a point sets too, or that lies inside a mapping a
    point sets: the point would replace it without a word (a point's field inside a
    mapping ``--set`` gave changes that field of it, as a later ``--set`` does).

    Raises:
        UsageError: naming the point's field and the ``--set``.
    """
    given = [s.partition("=")[0].strip() for s in sets]
    seen: dict[str, None] = {}
    for p in expand(points):
        seen.update(dict.fromkeys(p))
    for field in seen:
        for f in given:
            if f == field or f.startswith(field + "."):
                raise UsageError(f"{option} {field}: also given by --set {f}, which each point would replace; "
                                 f"a swept field takes its values from {option.split()[0]} alone")


def _read_points(path: str) -> list[Any]:
    try:
        with open(path, "rb") as fh:  # bounded, like a config: a device never ends
            data = parse_config_text(read_config_bytes(fh, path, "scenario list"), name=path)
    except OSError as exc:
        raise UsageError(f"--points: cannot read {path}: {exc.strerror or exc}") from None
    if data is None or data == []:  # an empty file is YAML's null
        raise ConfigError("", "the scenario list is empty: list at least one {field: value} mapping", file=path)
    if not isinstance(data, list):
        raise ConfigError("", "a scenario list (a YAML/JSON list of mappings) is expected", file=path)
    try:  # each scenario a mapping of dotted fields: say which file holds a bad one
        expand(data)
    except ConfigError as exc:
        raise UsageError(f"--points {path}: {exc}") from None
    return data


def _name_points(points: Any, rows: Sequence[int], statuses: Sequence[str], reasons: Sequence[Any]) -> None:
    """On stderr, each of the points at ``rows`` by its own fields as given, with its
    status and reason (the first :data:`_REASONS_SHOWN`)."""
    # each point's own fields as given: the frame's columns are NaN where a point
    # does not set a field, and an integer field with a NaN reads as a float
    pts = expand(points)
    for k, i in enumerate(rows):
        if k == _REASONS_SHOWN:
            print(f"  … and {len(rows) - k} more (--format csv has every reason)", file=sys.stderr)
            break
        point = ", ".join(f"{f}={_shown(v)}" for f, v in pts[i].items())
        print(f"  {point}: {statuses[i]}: {reasons[i]}", file=sys.stderr)


def _shown(value: Any) -> str:
    """A point's value as a --grid / --set would give it (``2``, ``h100_sxm``, ``{"a": 1}``)."""
    return value if isinstance(value, str) else json.dumps(value)


def _slo_columns_kept(df):
    """``df`` with the SLO columns (goodput_rps, slo_attainment) in their place, empty
    when the sweep had no ``--slo``: sweeps with and without it write the same columns,
    so their CSV rows append to one file."""
    from .._sweep.point import SLO_COLUMNS
    from ..report import LATENCY_METRICS, STAT_FIELDS

    cols = list(df.columns)
    first_stat = f"{LATENCY_METRICS[0]}.{STAT_FIELDS[0]}"  # the SLO columns come before it
    if first_stat not in cols or all(c in cols for c in SLO_COLUMNS):
        return df
    at = cols.index(first_stat)
    out = df.copy()
    for k, name in enumerate(SLO_COLUMNS):
        out.insert(at + k, name, float("nan"))
    return out


def _parse_columns(text: str | None) -> list[str] | None:
    """``--columns C1,C2`` → ``["C1", "C2"]`` (``None`` without the option; an unknown
    column is the API's ConfigError).

    Raises:
        UsageError: a column named twice.
    """
    return None if text is None else parse_names("--columns", [text], what="column")


def _counts_as_integers(df):
    """``df`` with its count columns (:data:`COUNT_COLUMNS`) as pandas' nullable Int64:
    a failed point's NaN made them float64 (``completed`` 20.0); printed, they are
    whole numbers and a failed point's cell empty (CSV), null (JSON). The API's frame,
    and ``--out`` Parquet with it, keeps float64 and NaN (``math.isnan`` works on it)."""
    from .._sweep.point import COUNT_COLUMNS

    out = df.copy()
    for c in COUNT_COLUMNS:
        if c in out.columns:
            out[c] = out[c].astype("float64").astype("Int64")  # an all-None object column too
    return out


def _in_order(df, columns: Sequence[str]):
    """``df`` with the metric columns of ``--columns`` in its order, an SLO column the
    sweep has not (no ``--slo``) empty."""
    out = df.copy()
    for name in columns:
        if name not in out.columns:  # an SLO column without --slo
            out[name] = float("nan")
    metrics = set(columns)
    return out[[c for c in df.columns if c not in metrics] + list(columns)]


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..sweep import UnknownFieldError, point_inputs, sweep
    from .._sweep.point import SLO_COLUMNS

    spec = config_from_args(args)
    if bool(args.grid) == bool(args.points):
        raise UsageError("give the points as --grid FIELD=V1,V2 (repeatable) or as --points FILE, one of the two")
    points = parse_grid(args.grid) if args.grid else _read_points(args.points)
    _check_sets_apart(args.sets, points, "--grid" if args.grid else f"--points {args.points}")
    slo = parse_slos(args.slo)  # repeatable, and each may be a comma list, as replay's
    percentiles = parse_percentiles(args.percentiles)  # likewise
    columns = _parse_columns(args.columns)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: must be ≥ 1")
    # an option of the other backend would be ignored without a word
    if args.ray_address is not None and args.backend != "ray":
        raise UsageError("--ray-address applies to --backend ray only: add --backend ray (the sweep "
                          "would run on this machine) or leave --ray-address out")
    if args.jobs is not None and args.backend == "ray":
        raise UsageError("--jobs applies to the local backend only: Ray places the tasks "
                          "on the cluster's CPUs; leave --jobs out")
    if args.out is not None:  # fail before simulating, not after
        check_out(args.out)
        # never over the config, the scenario list or a file a point reads (a trace
        # or model file that --grid or --points names too)
        inputs = input_files(spec.data, spec.source) + ([os.path.abspath(args.points)] if args.points else [])
        inputs += point_inputs(spec, points)
        check_output_file("--out", args.out, inputs, force=args.force)
    try:
        # without --slo the SLO columns are empty (_slo_columns_kept): asked for, they are
        # added after the sweep, which has them only with an SLO
        asked = None if columns is None else [c for c in columns if slo or c not in SLO_COLUMNS]
        df = sweep(spec, points, jobs=args.jobs, backend=args.backend, errors=args.errors, columns=asked,
                   slo=slo, percentiles=percentiles, progress=progress_of(args), ray_address=args.ray_address)
    except UnknownFieldError as exc:  # a misspelt field of the points, found before any ran: name the option
        option = "--grid" if args.grid else f"--points {args.points}"
        raise UsageError(f"{option}: {exc.field}: {exc.reason}") from None
    # the table shows the SLO's alone when given
    kept = _slo_columns_kept(df) if columns is None else _in_order(df, columns)
    every = _counts_as_integers(kept)  # printed (and --out .csv/.jsonl): counts as integers
    if args.out:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            # Parquet keeps the types of the API's frame (counts float64, NaN for a failed point)
            write_frame(kept if check_out(args.out) == ".parquet" else every, args.out)
        except OSError as exc:
            error(f"--out {args.out}: cannot write: {exc.strerror or exc}")
            return 1
        print(f"wrote {args.out} ({len(df)} rows)", file=sys.stderr)
    failed = int((df["status"] != "ok").sum())
    fields = list(df.columns[:list(df.columns).index("status")])  # the point's own fields
    statuses, reasons = df["status"].tolist(), df["reason"].tolist()
    if failed:
        if args.format == "table":  # the table has no reason column: name each failure here
            print(f"{failed} of {len(df)} points did not run:", file=sys.stderr)
            _name_points(points, [i for i, st in enumerate(statuses) if st != "ok"], statuses, reasons)
        else:
            print(f"{failed} of {len(df)} points did not run: see the status and reason columns", file=sys.stderr)
    empty = [i for i, (st, why) in enumerate(zip(statuses, reasons)) if st == "ok" and isinstance(why, str)]
    if empty and args.format == "table":  # ran, and no request completed: its metrics are dashes
        print(f"{len(empty)} of {len(df)} points completed no request:", file=sys.stderr)
        _name_points(points, empty, statuses, reasons)
    if args.format == "csv":
        write(every.to_csv(index=False))
    elif args.format == "json":
        write(json_lines(every))
    else:
        # --columns, in its order; by default the main columns and, with --slo, its own
        shown = (table_columns(percentiles) + (SLO_COLUMNS if slo else ())) if columns is None else columns
        cols = fields + ["status"] + [c for c in shown if c in every.columns]
        with_pd = every[cols].copy()
        for c in cols[len(fields) + 1:]:
            if str(with_pd[c].dtype) == "Int64":  # a count: its digits, "—" for a failed point
                with_pd[c] = [_DASH if gone else str(v) for v, gone in zip(with_pd[c], with_pd[c].isna())]
            elif with_pd[c].isna().all():  # a metric no point has is None in an object column
                with_pd[c] = float("nan")  # shown as na_rep, never as "None"
        write(with_pd.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep=_DASH) + "\n")
    if len(df) and failed == len(df):
        # nothing was simulated: a script must not take the table of failures for a result
        error(f"every point failed ({failed} of {len(df)}): no point has a result")
        return 1
    return 0


