"""Ctrl-C latency of the ``aisimulate`` command while it writes a large result.

Runs ``aisimulate replay SPEC --output-dir D --records R --export E -q`` on a synthetic
replay of N requests (default 10^6) once per delay; each run is sent SIGINT that many
seconds after the first temporary file appears in D (the save after the replay when R
has no parquet; the records streamed during the replay when it has) and prints the wall
ms from the signal to the process's exit, its exit code and last stderr line, the
1-minute load average, and what was left in D (nothing, for an interrupted run). The
target is 0.5 s; state the machine's load with the numbers.

    .venv/bin/python scripts/bench_cli_stop.py --records csv,jsonl --export aiperf --after 0.3,1,2,3,4
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def spec(n: int) -> dict:
    return {"engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
                       "perf": {"source": "roofline"}, "workers": {"aggregated": {"count": 8, "tp": 1}}},
            "traffic": {"source": {"type": "synthetic", "num_requests": n, "isl": 512, "osl": 128},
                        "load": {"mode": "rate", "rate_rps": 500, "arrival": "poisson"}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--records", default="csv,jsonl", help="--records of the replay")
    ap.add_argument("--export", default="aiperf", help="--export of the replay")
    ap.add_argument("--after", default="0.3,1,2,3,4,5",
                    help="seconds after the first temporary file appears, comma-separated")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aisimulate-bench-stop-"))
    cfg = work / "spec.json"
    cfg.write_text(json.dumps(spec(args.requests)))
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    print(f"aisimulate replay ({args.requests:,} requests) --records {args.records} --export {args.export}: "
          "ms from SIGINT to exit", flush=True)
    for k, after in enumerate(float(a) for a in args.after.split(",")):
        out = work / f"out{k}"
        proc = subprocess.Popen([sys.executable, "-m", "aisimulate", "replay", str(cfg), "--output-dir", str(out),
                                 "--records", args.records, "--export", args.export, "-q"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        while not glob.glob(str(out / ".*.tmp")):
            if proc.poll() is not None:
                sys.exit(f"the replay ended before writing: {proc.stderr.read()}")
            time.sleep(0.002)
        time.sleep(after)
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.wait()
        ms = (time.perf_counter() - sent) * 1000
        last = (proc.stderr.read().strip().splitlines() or [""])[-1]
        left = sorted(os.listdir(out)) if out.is_dir() else []
        note = "finished before the signal" if proc.returncode == 0 else f"left {left}" if left else "nothing left"
        print(f"  {after:4.1f} s after the first file: {ms:7.1f} ms, exit {proc.returncode} ({last!r}), "
              f"load {os.getloadavg()[0]:.1f}, {note}", flush=True)
        shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
