"""search(backend="ray") on a real local Ray (one node, 2 CPUs, in a subprocess: Ray reads
its settings when imported and its processes end with the script): a question that
replays a trace file (shipped to the workers through the object store) gives the answer
the local backend gives."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'aisimulate[ray]')")

SCRIPT = r'''
import json, os, sys
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every Ray process on 127.0.0.1
os.environ.setdefault("RAY_raylet_start_wait_time_s", "180")  # a busy 2-core machine is slow to start
os.environ.setdefault("RAY_agent_register_timeout_ms", "600000")  # as tests/test_sweep_ray.py says why
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
sys.path.insert(0, TESTS)
from pathlib import Path
import ray
import aisimulate
from conftest import write_mooncake

trace = write_mooncake(Path(TMP) / "t.jsonl", [{"timestamp": 40 * i, "input_length": 300 + 37 * (i % 11),
                                                 "output_length": 10 + i % 7} for i in range(120)])
q = {"engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm"},
     "traffic": {"source": {"type": "mooncake", "path": str(trace)}, "load": {"mode": "trace"}}}
kw = dict(gpus=2, slo={"ttft_ms": 120, "tpot_ms": 15}, max_num_seqs=[16, 128], max_num_batched_tokens=[1024],
          weights=[None], progress=False)
ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
remote = json.loads(aisimulate.search(q, backend="ray", **kw).to_json())
local = json.loads(aisimulate.search(q, **kw).to_json())
for a in (remote, local):
    a.pop("elapsed_s")
print(json.dumps({"same": remote == local, "n": len(local["results"]), "best": (local["best"] or {}).get("key")}))
'''


def test_ray_backend_gives_the_local_answer(tmp_path):
    script = f"TESTS = {str(REPO / 'tests')!r}\nTMP = {str(tmp_path)!r}\n" + SCRIPT
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900,
                          env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["same"] and out["n"] > 4 and out["best"]
