"""Command line: ``python -m aisimulate replay --config FILE [--output-dir DIR]
[--format table|json]``.

stdout carries only the result (the table, or the JSON of metadata and summary);
diagnostics go to stderr. Exit codes:

- 0: success;
- 1: a simulation error (any other error from the core), a missing native build, or
  the output folder cannot be written;
- 2: bad input: a config error (the message names the dotted field, or the file and
  line), a workload data error (file and line), or bad command-line arguments.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import __version__, replay
from .errors import ConfigError, DataError, SimulationError

PROG = "aisimulate"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="GPU-free simulator of LLM inference serving.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    r = sub.add_parser("replay", help="replay a workload against a modelled deployment",
                       description="Replay a workload against a modelled deployment and "
                                   "print the predicted metrics.")
    r.add_argument("--config", required=True, metavar="FILE",
                   help="replay config (YAML or JSON); relative paths in it are resolved "
                        "against its folder")
    r.add_argument("--output-dir", metavar="DIR",
                   help="also write DIR/prediction.json and DIR/requests.jsonl")
    r.add_argument("--format", choices=("table", "json"), default="table",
                   help="stdout format: a readable table (default) or JSON of metadata "
                        "and summary")
    return p


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    args = _parser().parse_args(argv)  # exits 2 on bad arguments
    if args.command != "replay":  # pragma: no cover - argparse enforces the choice
        return 2
    try:
        report = replay(args.config)
    except (ConfigError, DataError) as exc:
        _error(str(exc))
        return 2
    except SimulationError as exc:
        _error(f"simulation failed: {exc}")
        return 1
    except ImportError as exc:
        _error(str(exc))
        return 1

    if args.output_dir:
        try:
            written = report.save(args.output_dir)
        except OSError as exc:
            _error(f"cannot write to {args.output_dir}: {exc.strerror or exc}")
            return 1
        for path in written.values():
            print(f"wrote {path}", file=sys.stderr)

    if args.format == "json":
        sys.stdout.write(report.to_json())
    else:
        sys.stdout.write(report.table() + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
