#!/usr/bin/env python3
"""The closed-loop cycle of an accuracy output's rows: engine work per prompt, measured and predicted.

Usage:
    python scripts/row_cycles.py --rows OUT/vllm_dense_dev/rows.csv [--model SUBSTRING]

For every group of rows that differ only in OSL (same model, system, TP, ISL,
concurrency, precision, deployment, load generator), prints each OSL's cycle
TTFT + (OSL − 1)·TPOT, measured and predicted, their ratio, and the fit of
python/aisimulate/tools/accuracy/cycles.py: the decode-only pass d (the slope over OSL)
and the range of the engine work per prompt W (its prefill-carrying passes) that the
intercept allows whatever the queueing pattern. Exit 0, or 2 on bad input.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from aisimulate.tools.accuracy.cycles import GROUP_KEYS, group_cycles  # noqa: E402


def _mid(fit) -> float:
    return (fit.work_low_ms + fit.work_high_ms) / 2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", required=True, help="rows.csv of scripts/accuracy.py")
    ap.add_argument("--model", default="", help="only rows whose model contains this")
    args = ap.parse_args(argv)
    try:
        with open(args.rows, newline="") as f:
            rows = [r for r in csv.DictReader(f) if args.model in r.get("model", "")]
        groups = group_cycles(rows)
    except (OSError, KeyError, ValueError) as e:
        print(f"row_cycles: {e}", file=sys.stderr)
        return 2
    names = [k for k in GROUP_KEYS if k not in ("precision", "deployment", "load_generator")]
    for g in groups:
        head = " ".join(f"{k}={v}" for k, v in zip(GROUP_KEYS, g.key) if k in names)
        cyc = "  ".join(
            f"OSL {o}: {m:.0f} / {p:.0f} ({100 * (p / m - 1):+.1f} %)"
            for o, m, p in zip(g.osls, g.measured_ms, g.predicted_ms)
        )
        print(f"{head}\n  cycle measured / predicted ms: {cyc}")
        print(
            f"  d {g.measured.decode_pass_ms:.2f} / {g.predicted.decode_pass_ms:.2f} ms;"
            f" W {g.measured.work_low_ms:.0f}–{g.measured.work_high_ms:.0f}"
            f" / {g.predicted.work_low_ms:.0f}–{g.predicted.work_high_ms:.0f} ms"
            f" (midpoints {100 * (_mid(g.measured) / _mid(g.predicted) - 1):+.0f} %)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
