#!/usr/bin/env python3
"""Ten million requests through the Python API: time and memory of whole processes.

Usage: .venv/bin/python scripts/bench_10m.py [--requests N] [--only TEXT]

Each run is a fresh process replaying N requests (default 10,000,000) of 512/128 tokens
on 8 × Llama-3.1-8B TP1 (H100, roofline): a closed loop of 4,096 clients and a Poisson
load of 300 req/s, each once with every record kept in the report (``aisimulate.replay``)
and once streamed into a result folder (``aisimulate.replay(spec, output_dir=DIR)``:
Parquet row groups written as requests finish, nothing held). Printed per run: the
process's CPU seconds (user + sys, from its rusage: on a shared machine wall time
measures the other tenants), wall seconds, peak RSS (VmHWM), the output tokens, CPU µs
per output token, and the load average when it ended. Targets: under 60 s
and under 4 GiB each. ``make bench-10m`` runs it (opt-in: about 5 minutes of CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, os, resource, sys, time
import aisimulate
spec, out = json.loads(sys.argv[1]), sys.argv[2] or None
t = time.perf_counter()
rep = aisimulate.replay(spec, progress=False, **({"output_dir": out} if out else {}))
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_SELF)
with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
s = rep.summary
print(json.dumps({"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "peak_mib": hwm / 1024,
                  "requests": s["completed"] + s["rejected"] + s["failed"] + s["canceled"],
                  "tokens": s["total_output_tokens"], "load": os.getloadavg()[0]}))
"""


def spec(n: int, load: dict) -> dict:
    return {"engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
                       "perf": {"source": "roofline"}, "workers": {"aggregated": {"count": 8, "tp": 1}},
                       "scheduler": {"max_num_seqs": 512, "max_num_batched_tokens": 8192}},
            "traffic": {"source": {"type": "synthetic", "num_requests": n, "isl": 512, "osl": 128},
                        "load": load},
            "execution": {"max_memory_gb": 8}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--only", default="", help="run only the workloads whose name contains this text")
    args = ap.parse_args()
    loads = {"closed 4096": {"mode": "concurrency", "concurrency": 4096},
             "poisson 300/s": {"mode": "rate", "rate_rps": 300, "arrival": "poisson"}}
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    print(f"{'workload':<16} {'records':<9} {'requests':>11} {'CPU s':>7} {'wall s':>7} {'peak MiB':>9} "
          f"{'CPU µs/token':>12} {'load':>5}", flush=True)
    for name, load in loads.items():
        for mode in ("held", "streamed"):
            if args.only not in f"{name} {mode}":
                continue
            with tempfile.TemporaryDirectory(prefix="aisimulate-bench-") as tmp:
                out = str(Path(tmp) / "result") if mode == "streamed" else ""
                proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec(args.requests, load)), out],
                                      capture_output=True, text=True, env=env, check=True)
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"{name:<16} {mode:<9} {r['requests']:>11,} {r['cpu']:>7.1f} {r['wall']:>7.1f} "
                  f"{r['peak_mib']:>9,.0f} {r['cpu'] * 1e6 / r['tokens']:>12.3f} {r['load']:>5.1f}", flush=True)


if __name__ == "__main__":
    main()
