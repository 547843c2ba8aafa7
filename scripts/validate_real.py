#!/usr/bin/env python3
"""Validate against real open-loop vLLM runs: predicted vs measured, run by run.

Usage:
    python scripts/validate_real.py [--data ../shared/data/real] [--perf aic,roofline]
        [--sources llmservingsim,apex_plus] [--out DIR] [--jobs N]

Replays every run of ``real/llmservingsim`` (vLLM 0.19.0, per-request timestamps) and
``real/apex_plus`` (vLLM 0.6.0, per-run means) with each perf source, prints per run the
measured and predicted TTFT mean/p50/p90, TPOT (each source's own definition), E2E mean
and throughput, then the MAPE per metric per (data set, perf source) — all runs, and the
runs whose perf tables are for their GPU and vLLM version — and writes DIR/runs.csv.
Runs the model cannot serve are listed as skipped with the reason. How a run becomes a
replay: python/aisimulate/tools/real/__init__.py. Exit 0 on success, 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from aisimulate.tools import accuracy  # noqa: E402
from aisimulate.tools import real  # noqa: E402

SOURCES = ("llmservingsim", "apex_plus")
PERFS = ("aic", "roofline")


def _list(choices: tuple[str, ...]):
    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if not items or bad:
            raise argparse.ArgumentTypeError(f"{text!r}: want a comma-separated subset of {', '.join(choices)}")
        return items
    return parse


def _cell(v: float | None, unit: str = "") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(accuracy.SHARED_DATA / "real"), help="the real runs folder (default ../shared/data/real)")
    ap.add_argument("--perf", type=_list(PERFS), default=list(PERFS), help="perf sources, comma separated (default aic,roofline)")
    ap.add_argument("--sources", type=_list(SOURCES), default=list(SOURCES), help="data sets (default both)")
    ap.add_argument("--database", default=str(accuracy.DEFAULT_DATABASE), help="aic perf tables root")
    ap.add_argument("--model-configs", default=str(accuracy.DEFAULT_MODEL_CONFIGS), help="folder of Org--Name_config.json files")
    ap.add_argument("--out", default="out/validate-real", help="output folder (default out/validate-real)")
    ap.add_argument("--jobs", type=accuracy.args.positive_int, default=os.cpu_count() or 1, help="parallel processes (≥ 1)")
    args = ap.parse_args(argv)
    for label, path in (("--data", args.data), ("--database", args.database), ("--model-configs", args.model_configs)):
        if not Path(path).is_dir():
            print(f"validate_real: {label} {path}: folder not found", file=sys.stderr)
            return 2
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"validate_real: --out {out}: {exc}", file=sys.stderr)
        return 2
    t0 = time.time()
    runs: list[real.RealRun] = []
    with tempfile.TemporaryDirectory(prefix="validate_real_") as tmp:
        try:
            if "llmservingsim" in args.sources:
                runs += real.llmservingsim_runs(Path(args.data) / "llmservingsim", args.model_configs)
            if "apex_plus" in args.sources:
                runs += real.apex_runs(Path(args.data) / "apex_plus", args.model_configs, trace_dir=tmp)
        except (OSError, ValueError) as exc:
            print(f"validate_real: {exc}", file=sys.stderr)
            return 2
        results = real.evaluate(runs, args.perf, args.database, jobs=args.jobs)
    real.write_results(results, out / "runs.csv")

    head = ["TTFT mean", "p50", "p90", "TPOT", "E2E mean", "req/s"]
    for perf in args.perf:
        print(f"\nperf source: {perf}   (measured / predicted, ms; error %)")
        print(f"{'run':44} " + " ".join(f"{h:>22}" for h in head))
        for r in results:
            if r.perf != perf:
                continue
            label = f"{r.source}:{r.name}"[:44]
            if r.status != "ok":
                print(f"{label:44} skipped: {r.reason}")
                continue
            cells = []
            for m in real.METRICS:
                if m not in r.measured:
                    cells.append(f"{'—':>22}")
                    continue
                cells.append(f"{_cell(r.measured[m]):>7} /{_cell(r.predicted.get(m)):>7} {r.error_pct(m):+6.1f}%")
            print(f"{label:44} " + " ".join(cells) + ("" if r.exact_tables else "  (tables not exact)"))
    for exact in (False, True):
        print("\nMAPE % per data set and perf source" + (" — runs with exact tables" if exact else " — all runs"))
        print(f"{'data set':16}{'perf':10}{'runs':>5} " + " ".join(f"{h:>10}" for h in head))
        for row in real.mape_by_source(results, exact_only=exact):
            print(f"{row['source']:16}{row['perf']:10}{row['runs']:>5} " +
                  " ".join(f"{_cell(row[m]):>10}" for m in real.METRICS))
    skipped = sum(r.status != "ok" for r in results)
    print(f"\nskipped: {skipped} of {len(results)}; wall time {time.time() - t0:.1f} s; {out / 'runs.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
