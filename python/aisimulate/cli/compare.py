"""``aisimulate compare``: a config's prediction against an AIPerf measurement, per metric
and per request (:func:`aisimulate.compare`)."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys

from ..errors import DataError
from .common import (UsageError, add_config_arguments, add_percentiles_argument, add_progress_argument,
                     config_source_from_args, error, parse_percentiles, progress_of, write)
from .frames import TABLE_SUFFIXES, write_frame
from .outputs import check_apart, check_output_file, figure_suffixes, write_figure


def add_compare(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "compare", help="compare a config's prediction with an AIPerf measurement",
        description="Replay the requests of a measured AIPerf run (profile_export.jsonl: their "
                    "ISL/OSL and send times, or a closed loop with --concurrency) on the "
                    "deployment of CONFIG and report, per metric (TTFT, TPOT, ITL, E2E), the "
                    "measured and predicted mean/p50/p90/p99 (or the mean and --percentiles) and, "
                    "over requests, MAPE, bias and Pearson r.",
        epilog="examples:\n  aisimulate compare --aiperf artifacts/run/profile_export.jsonl --config deploy.yaml\n"
               "  aisimulate compare deploy.yaml --aiperf profile_export.jsonl --concurrency 32 "
               "--plot pred_vs_meas.png --format json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(c)
    c.add_argument("--aiperf", required=True, metavar="PROFILE_EXPORT.jsonl",
                   help="AIPerf's per-request export of the measured run, or the artifact "
                        "folder AIPerf wrote it in")
    c.add_argument("--concurrency", type=int, metavar="N",
                   help="replay as a closed loop of N clients instead of at the measured send times")
    c.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="stdout: a table (default), JSON of counts and metrics, or CSV of the metrics")
    c.add_argument("--plot", metavar="PNG",
                   help="also save the predicted-vs-measured figure (.png, .pdf, .svg … as "
                        "matplotlib writes them; a missing folder is created)")
    c.add_argument("--requests-out", metavar="CSV",
                   help="also write the per-request pairs: .csv, .parquet or .jsonl (a missing "
                        "folder is created)")
    c.add_argument("--force", action="store_true",
                   help="replace with --plot / --requests-out an existing file (one of the "
                        "AIPerf artifact folder read, too); without it that is exit 2; the AIPerf "
                        "export read is never replaced")
    add_percentiles_argument(c, "the measured and predicted mean and these are compared, in place "
                                "of p50/p90/p99, in the table, JSON and CSV (columns measured_p99.9 "
                                "and the like)")
    add_progress_argument(c)
    c.set_defaults(run=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..compare import compare, profile_export_path

    # the config is compiled by compare() once its traffic is swapped for the measured
    # requests: a config of the deployment alone is valid here
    src, overrides = config_source_from_args(args)
    percentiles = parse_percentiles(args.percentiles)
    try:  # AIPerf's artifact folder: its per-request export
        args.aiperf = profile_export_path(args.aiperf)
    except DataError as exc:
        raise UsageError(f"--aiperf: {exc}") from None
    if not os.path.isfile(args.aiperf):
        give = "give AIPerf's profile_export.jsonl or the artifact folder that holds it"
        if args.aiperf == "-":  # compare reads the export twice (records, then replay): no stream
            raise UsageError(f"--aiperf -: the export is not read from stdin: {give}")
        if os.path.exists(args.aiperf):  # a device or a pipe (/dev/zero, <(…))
            raise UsageError(f"--aiperf {args.aiperf}: not a regular file: {give}")
        raise UsageError(f"--aiperf: file not found: {args.aiperf}")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency {args.concurrency}: must be ≥ 1")
    inputs = [os.path.abspath(args.aiperf)] + ([os.path.abspath(src)] if isinstance(src, str) else [])
    # the artifact folder is the measurement: its other files (AIPerf's summary CSV/JSON,
    # profile_export_raw.jsonl) are not replaced without --force
    measured = {"read_folders": [os.path.dirname(os.path.abspath(args.aiperf))], "force": args.force}
    if args.plot is not None:  # before the replay: a bad path is exit 2, not a traceback after it
        check_output_file("--plot", args.plot, inputs, figure_suffixes(), **measured)
    if args.requests_out is not None:
        check_output_file("--requests-out", args.requests_out, inputs, TABLE_SUFFIXES, **measured)
        if args.plot is not None:
            check_apart("--requests-out", args.requests_out, {"the file of --plot": args.plot})
    result = compare(src, args.aiperf, concurrency=args.concurrency, overrides=overrides,
                     progress=progress_of(args), percentiles=percentiles)
    try:
        if args.plot:
            write_figure(result.plot(), args.plot)
            print(f"wrote {args.plot}", file=sys.stderr)
        if args.requests_out:
            os.makedirs(os.path.dirname(os.path.abspath(args.requests_out)), exist_ok=True)
            write_frame(result.requests, args.requests_out)
            print(f"wrote {args.requests_out}", file=sys.stderr)
    except OSError as exc:
        error(f"cannot write {exc.filename or args.plot or args.requests_out}: {exc.strerror or exc}")
        return 1
    if args.format == "json":
        write(json.dumps(result.to_dict(), indent=2) + "\n")
    elif args.format == "csv":
        buf = io.StringIO()
        result.metrics.to_csv(buf, index_label="metric")
        write(buf.getvalue())
    else:
        write(result.table() + "\n")
    return 0
