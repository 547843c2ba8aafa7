#!/usr/bin/env python3
"""Capacity-planning searches (aisimulate search): candidates by fate, time, candidates/s.

Usage: .venv/bin/python scripts/bench_search.py [--only llama|qwen] [--jobs J] [--no-prune]

Two questions of examples/search/, each searched in this process on J cores (default:
every core), with the measured kernel tables (aic) and the default space:

- llama: Llama-3.1-70B-Instruct on up to 8 × H100 SXM, 2,000 requests arriving as a
  Poisson process at 8 req/s; SLO TTFT p90 ≤ 1,000 ms, TPOT p90 ≤ 40 ms.
- qwen: Qwen3-235B-A22B-FP8 on 8 or 16 × H200 SXM (TP × DP × EP, aggregated and P/D),
  2,000 requests at 4 req/s; SLO TTFT p90 ≤ 2,000 ms, TPOT p90 ≤ 50 ms.

For each: the candidates enumerated, simulated (replayed to the end), stopped early
(replayed until their SLO miss was certain) and pruned (by why), the wall and CPU seconds
(user + sys of this process, every thread: the replays run on the core's goroutines),
candidates per second of wall time (all, and replayed), the load average before and after
(the machine is shared: state it with the times), and the recommended deployment with its
launch commands. The target (docs/benchmarks.md): ≥ 500 replayed candidates in ≤ 60 s on
2 cores. ``--no-prune`` replays every candidate that can start (no analytic prune, no
dominated GPU count): the simulator's own rate.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

import aisimulate  # noqa: E402

QUESTIONS = {
    "llama": (REPO / "examples" / "search" / "llama-70b-h100.yaml", 8, {"ttft_ms": 1000, "tpot_ms": 40}),
    "qwen": (REPO / "examples" / "search" / "qwen3-235b-h200.yaml", [8, 16], {"ttft_ms": 2000, "tpot_ms": 50}),
}


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def run(name: str, jobs: int, prune: bool) -> None:
    path, gpus, slo = QUESTIONS[name]
    load0 = os.getloadavg()[0]
    t, c = time.perf_counter(), _cpu()
    res = aisimulate.search(path, gpus=gpus, slo=slo, jobs=jobs, progress=False, prune=prune)
    wall, cpu = time.perf_counter() - t, _cpu() - c
    load1 = os.getloadavg()[0]
    n = res.counts
    replayed = n["simulated"] + n["stopped"]
    kinds = collections.Counter(r.get("kind") for r in res.results if r["fate"] == "pruned")
    print(f"== {name}: {path.relative_to(REPO)}, gpus {gpus}, SLO {slo} (p{res.slo['percentile']:g})"
          + ("" if prune else ", no prune"))
    print(f"candidates {n['candidates']:,}: simulated {n['simulated']:,} (met the SLO {n['met']:,}), "
          f"stopped early {n['stopped']:,}, pruned {n['pruned']:,} "
          f"({', '.join(f'{k} {v:,}' for k, v in sorted(kinds.items()))})")
    print(f"wall {wall:.1f} s, CPU {cpu:.1f} s on {jobs} job(s); {n['candidates'] / wall:,.0f} candidates/s, "
          f"{replayed / wall:,.1f} replayed/s; load average {load0:.1f} before, {load1:.1f} after")
    b = res.best
    if b is None:
        print("no candidate met the SLO")
    else:
        r = b.result
        pct = ", ".join(f"{k} {v:.1f}" for k, v in (r.get("percentiles") or {}).items())
        print(f"best: {b.key} ({b.gpus} GPUs): {r['output_tps_per_gpu']:.1f} output tok/s per GPU, {pct}")
        print("\n".join("  " + line for line in b.command.splitlines()))
    print()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(QUESTIONS), help="one question only")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="candidates replayed at once")
    ap.add_argument("--no-prune", action="store_true", help="replay every candidate that can start")
    args = ap.parse_args()
    for name in [args.only] if args.only else list(QUESTIONS):
        run(name, args.jobs, not args.no_prune)
    return 0


if __name__ == "__main__":
    sys.exit(main())
