#!/usr/bin/env python3
"""Compare aggregated and P/D-disaggregated deployments of one model on one trace.

Usage: PYTHONPATH=python .venv/bin/python scripts/compare_pd.py [--requests N] [--trace PATH]

Runs Qwen3-32B on H100 SXM with 8 GPUs four ways (aggregated 4 × TP2; P/D with
prefill/decode pools of 2+2, 3+1 and 1+3 TP2 workers) on the Mooncake conversation
trace and prints TTFT p50/p90, mean TPOT, throughput and GPU hours per deployment.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import aisimulate

REPO = Path(__file__).resolve().parent.parent
TRACE = REPO.parent / "shared" / "data" / "traces" / "mooncake" / "conversation_trace.jsonl"


def spec(workers: dict, trace: str, n: int) -> dict:
    return {
        "engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "perf": {"source": "roofline"},
                   "workers": workers,
                   "scheduler": {"max_num_seqs": 256, "max_num_batched_tokens": 8192, "block_size": 16}},
        "traffic": {"source": {"type": "mooncake", "path": trace}, "load": {"mode": "trace"},
                    "stop": {"max_requests": n}},
    }


def pd(p: int, d: int) -> dict:
    return {"disaggregated": {"prefill": {"count": p, "tp": 2, "placement": "least_outstanding"},
                              "decode": {"count": d, "tp": 2, "placement": "least_outstanding"},
                              "kv_transfer": {"bandwidth_gb_per_s": 50, "latency_ms": 0.2}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=0, help="stop after N requests (0 = all)")
    ap.add_argument("--trace", default=str(TRACE))
    args = ap.parse_args()
    rows = [
        ("aggregated 4×TP2", {"aggregated": {"count": 4, "tp": 2, "placement": "least_outstanding"}}),
        ("P/D 2P+2D ×TP2", pd(2, 2)),
        ("P/D 3P+1D ×TP2", pd(3, 1)),
        ("P/D 1P+3D ×TP2", pd(1, 3)),
    ]
    print(f"{'deployment':<18} {'GPUs':>4} {'done':>6} {'TTFT p50':>9} {'TTFT p90':>9} "
          f"{'TPOT mean':>9} {'req/s':>6} {'tok/s':>7} {'GPU h':>6}")
    for name, workers in rows:
        r = aisimulate.replay(spec(workers, args.trace, args.requests))
        s = r.summary
        print(f"{name:<18} {r.metadata['gpus']:>4} {s['completed']:>6} {s['ttft_ms']['p50']:>9.1f} "
              f"{s['ttft_ms']['p90']:>9.1f} {s['tpot_ms']['mean']:>9.2f} "
              f"{s['request_throughput_rps']:>6.3f} {s['output_token_throughput_tps']:>7.1f} "
              f"{s['gpu_hours']:>6.3f}")


if __name__ == "__main__":
    main()
