#!/usr/bin/env python3
"""Compare placements (round robin, least outstanding, prefix affinity, Dynamo's KV
router) of one fleet on one trace: prefix-cache hit rate, TTFT and load balance.

Usage: .venv/bin/python scripts/compare_routing.py [--workers 4 16] [--requests N]
       [--trace PATH] [--model M] [--tp T]

Runs the fleet (Llama-3.1-8B-Instruct on H100 SXM, TP1 workers by default) on the
Mooncake conversation trace under each placement and prints, per placement: the hit rate
(prefix-cache hit tokens / prompt tokens looked up, over every worker: vLLM's
PrefixCacheStats), TTFT mean, p50 and p90, and the load balance as the busiest worker's
busy time over the mean (1.00: even) and the spread of requests per worker (max / mean).
docs/routing.md shows the table this prints.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import aisimulate

REPO = Path(__file__).resolve().parent.parent
TRACE = REPO.parent / "shared" / "data" / "traces" / "mooncake" / "conversation_trace.jsonl"

PLACEMENTS = [
    ("round_robin", {"placement": "round_robin"}),
    ("least_outstanding", {"placement": "least_outstanding"}),
    ("prefix_affinity", {"placement": "prefix_affinity"}),
    ("kv_router", {"placement": "kv_router"}),
    ("kv_router, 100 ms lag", {"placement": "kv_router", "kv_router": {"kv_event_lag_ms": 100}}),
    ("kv_router, T 0.5", {"placement": "kv_router", "kv_router": {"router_temperature": 0.5}}),
]


def spec(model: str, tp: int, count: int, placement: dict, trace: str, n: int) -> dict:
    return {
        "engine": {"model": model, "system": "h100_sxm", "perf": {"source": "roofline"},
                   "workers": {"aggregated": {"count": count, "tp": tp, **placement}},
                   "scheduler": {"max_num_seqs": 256, "max_num_batched_tokens": 8192, "block_size": 16}},
        "traffic": {"source": {"type": "mooncake", "path": trace}, "load": {"mode": "trace"},
                    "stop": {"max_requests": n}},
    }


def row(name: str, count: int, rep) -> str:
    s, md = rep.summary, rep.metadata
    pc = md["prefix_cache"]
    hit = sum(p["hits"] for p in pc) / max(1, sum(p["queries"] for p in pc))
    busy = md["worker_busy_ms"]
    per = [0] * count
    for r in rep.requests:
        if r["worker"] is not None and r["worker"] >= 0:
            per[r["worker"]] += 1
    t = s["ttft_ms"]
    return (f"{count:>7} {name:<22} {hit:>8.1%} {t['mean']:>10.1f} {t['p50']:>9.1f} {t['p90']:>10.1f} "
            f"{max(busy) / (sum(busy) / len(busy)):>9.2f} {max(per) / (sum(per) / len(per)):>9.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[4, 16])
    ap.add_argument("--requests", type=int, default=0, help="stop after N requests (0 = all)")
    ap.add_argument("--trace", default=str(TRACE))
    ap.add_argument("--model", default="meta-llama/Llama-3.1-8B-Instruct")
    ap.add_argument("--tp", type=int, default=1)
    args = ap.parse_args()
    print(f"{'workers':>7} {'placement':<22} {'hit rate':>8} {'TTFT mean':>10} {'TTFT p50':>9} "
          f"{'TTFT p90':>10} {'busy max':>9} {'reqs max':>9}")
    print(f"{'':>7} {'':<22} {'':>8} {'(ms)':>10} {'(ms)':>9} {'(ms)':>10} {'/ mean':>9} {'/ mean':>9}")
    for count in args.workers:
        for name, placement in PLACEMENTS:
            rep = aisimulate.replay(spec(args.model, args.tp, count, placement, args.trace, args.requests),
                                    progress=False)
            print(row(name, count, rep), flush=True)


if __name__ == "__main__":
    main()
