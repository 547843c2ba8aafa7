#!/usr/bin/env python3
"""Sweep throughput (points per second of wall time) per backend.

Usage: .venv/bin/python scripts/bench_sweep.py [--points N] [--ray] [--jobs J]

Two point sizes: "tiny" (5 requests on the linear perf model, a few ms of replay) and
"small" (quickstart's deployment: 4000 requests of 1024/128 tokens from 8–71 clients,
roofline, about 0.2 s each). Rows: serial (jobs=1, in this process), local (loky, jobs=J, every core by
default; cold = the first sweep of the process, which starts the workers; warm = the
next, which reuses them), and with --ray a local Ray cluster (head + one worker node, one
CPU each, on 127.0.0.1; cold and warm likewise). Every backend's rows are checked equal
to the serial rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

import aisimulate  # noqa: E402

TINY = {"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm",
                   "perf": {"source": "linear", "base_ms": 2.0, "per_prefill_token_ms": 0.01,
                            "per_decode_seq_ms": 0.1}, "scheduler": {"num_gpu_blocks": 1000, "max_model_len": 16000}},
        "traffic": {"source": {"type": "synthetic", "num_requests": 5, "isl": 100, "osl": 4},
                    "load": {"mode": "rate", "rate_rps": 10.0, "arrival": "constant"}}}
SMALL = str(REPO / "examples" / "quickstart.yaml")


def points(kind: str, n: int) -> list[dict]:
    if kind == "tiny":
        return [{"traffic.load.rate_rps": 1.0 + i} for i in range(n)]
    return [{"traffic.load.concurrency": 8 + i % 64, "traffic.source.num_requests": 4000 + i // 64}
            for i in range(n)]


def timed(base, pts, **kw):
    t = time.perf_counter()
    df = aisimulate.sweep(base, pts, progress=False, **kw)
    return df, time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=200, help="points per tiny sweep (small: a quarter)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--ray", action="store_true", help="also a local Ray cluster")
    args = ap.parse_args()
    cluster = None
    if args.ray:
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # loopback only
        os.environ.setdefault("RAY_raylet_start_wait_time_s", "180")
        os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no usage report sent anywhere
        import ray
        from ray.cluster_utils import Cluster

        t = time.perf_counter()
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        cluster.wait_for_nodes()
        print(f"Ray cluster (head + 1 worker node) up in {time.perf_counter() - t:.1f} s")
    print(f"{'points':<7}{'backend':<18}{'n':>6}{'wall s':>9}{'points/s':>10}  rows = serial")
    for kind, base in (("tiny", TINY), ("small", SMALL)):
        n = args.points if kind == "tiny" else max(8, args.points // 4)
        pts = points(kind, n)
        ref, t = timed(base, pts, jobs=1)
        print(f"{kind:<7}{'serial':<18}{n:>6}{t:>9.2f}{n / t:>10.1f}")
        for label, kw in ((f"local cold j={args.jobs}", {"jobs": args.jobs}),
                          (f"local warm j={args.jobs}", {"jobs": args.jobs})):
            if "cold" in label and kind != "tiny":
                continue  # the workers are up from the tiny run
            df, t = timed(base, pts, **kw)
            print(f"{kind:<7}{label:<18}{n:>6}{t:>9.2f}{n / t:>10.1f}  {df.equals(ref)}")
        if cluster is not None:
            for label in (("ray cold", "ray warm") if kind == "tiny" else ("ray warm",)):
                df, t = timed(base, pts, backend="ray")
                print(f"{kind:<7}{label:<18}{n:>6}{t:>9.2f}{n / t:>10.1f}  {df.equals(ref)}")
    if cluster is not None:
        import ray

        ray.shutdown()
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
