"""``aisimulate models`` and ``aisimulate systems``: what a config can name."""

from __future__ import annotations

import argparse
import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Callable, Sequence

from .common import add_progress_argument, write


def add_listing(sub: argparse._SubParsersAction, name: str, what: str) -> None:
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
        write(json.dumps(rows, indent=2) + "\n")
    elif fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        keys = list(dict.fromkeys(k for r in rows for k in r))
        w = csv.DictWriter(buf, keys, lineterminator="\n")
        w.writeheader()
        # a list (a system's kernel_table_engines) as one cell of its items, not Python's repr
        w.writerows({k: ",".join(map(str, v)) if isinstance(v, list) else v for k, v in r.items()} for r in rows)
        write(buf.getvalue())
    else:
        write(_table(rows, columns))


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
                              ("kernel_tables", "kernel_table_engines", lambda v: ",".join(v) if v else "no"),
                              ("source", "source", _text)]
          + ([("reason", "reason", _text)] if args.all else []))
    if args.format == "table" and not args.quiet:  # a note for a reader; -q silences it
        print(searched_hint("systems"), file=sys.stderr)
    return 0
