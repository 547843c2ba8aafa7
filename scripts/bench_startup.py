#!/usr/bin/env python3
"""Start-up cost of aisimulate: ``import aisimulate`` over a bare
interpreter, and a whole-process replay of a tiny config (``python -m aisimulate replay``
of 2 requests, whose simulation takes well under a millisecond: the process's time is
start-up: the interpreter, the imports, the native core and the config compile; then the
same config written as YAML, which adds PyYAML's import).

Usage: .venv/bin/python scripts/bench_startup.py [-n RUNS]

Each figure is the median over RUNS fresh processes (alternating, so a change in the
machine's load touches all alike) of the wall time and of the CPU time (user + sys, from
getrusage of the child; less sensitive to other processes on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TINY = {"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm"},
        "traffic": {"source": {"type": "synthetic", "num_requests": 2, "isl": 16, "osl": 2},
                    "load": {"mode": "concurrency", "concurrency": 1}}}


def _once(argv: list[str]) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached after the first run
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20, help="fresh processes per figure (default 20)")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "tiny.json"
        cfg.write_text(json.dumps(TINY))
        yml = Path(tmp) / "tiny.yaml"  # the same config as YAML: PyYAML's import on top
        yml.write_text(json.dumps(TINY))
        cases = {"bare python": [py, "-c", "pass"],
                 "import aisimulate": [py, "-c", "import aisimulate"],
                 "replay of 2 requests": [py, "-m", "aisimulate", "replay", str(cfg)],
                 "the same, YAML config": [py, "-m", "aisimulate", "replay", str(yml)]}
        for argv in cases.values():  # warm the page cache and the bytecode
            _once(argv)
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
        for _ in range(args.n):
            for k, argv in cases.items():
                times[k].append(_once(argv))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    load = os.getloadavg()[0]
    print(f"start-up, median of {args.n} fresh processes each (load average {load:.1f} on "
          f"{os.cpu_count()} cores)")
    print(f"{'':24} {'wall ms':>9} {'CPU ms':>9} {'wall over bare':>15} {'CPU over bare':>14}")
    bw, bc = med["bare python"]
    for k, (w, c) in med.items():
        print(f"{k:24} {w * 1e3:9.1f} {c * 1e3:9.1f} {(w - bw) * 1e3:15.1f} {(c - bc) * 1e3:14.1f}")


if __name__ == "__main__":
    main()
