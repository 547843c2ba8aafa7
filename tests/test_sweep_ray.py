"""sweep(backend="ray") on a real local Ray cluster: a head node and one worker node (each a
raylet with its own worker processes, 1 CPU each), started by ray.cluster_utils.Cluster on
the loopback address. A 50-point sweep — synthetic loads, points replaying a trace file
shipped through the object store, an infeasible deployment — gives rows identical to the
local backend; a point whose Ray worker is killed on every try (it kills its own process, so
the death lands there on a busy machine too) is recorded as failed.

The cluster runs in a subprocess (Ray reads its address settings when imported, and the
cluster's processes end with it); the script prints one JSON object checked here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'aisimulate[ray]')")

SCRIPT = r'''
import json, os, sys, time
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # bind every Ray process to 127.0.0.1
os.environ.setdefault("RAY_raylet_start_wait_time_s", "180")  # a busy 2-core machine is slow to start
# A raylet waits this long for its node's dashboard agent (a Python process) to report
# its ports, then aborts (ray/raylet/node_manager.cc, WaitForDashboardAgentPorts): a busy
# 2-core machine starts the agent in more than Ray's default, and the node never joined.
os.environ.setdefault("RAY_agent_register_timeout_ms", "600000")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no usage report sent anywhere
sys.path.insert(0, TESTS)
t0 = time.perf_counter()
import ray
from ray.cluster_utils import Cluster
import aisimulate
from conftest import BASE_SPEC, write_mooncake
from pathlib import Path

def trace(name, rows):
    return str(write_mooncake(Path(TMP) / name, [{"timestamp": 2 * i, "input_length": 80 + 7 * (i % 5),
                                                   "output_length": 3 + i % 4} for i in range(rows)]))

small, victim = trace("small.jsonl", 30), trace("victim.jsonl", 30)
# In Ray's worker processes (default_worker.py), which inherit this environment: a point
# that replays the victim trace (its shipped copy) writes a line and SIGKILLs its own
# process before it runs, so the death lands on it whatever the machine's load.
kills_file = Path(TMP) / "kills.txt"
(Path(TMP) / "site").mkdir()
(Path(TMP) / "site" / "sitecustomize.py").write_text(f"""
import os, signal, sys
if any(a.endswith("default_worker.py") for a in sys.orig_argv):
    import aisimulate._sweep.ray_backend as rb
    _run_point = rb.run_point
    def run_point(i, spec, slo, keep_report):
        if str(spec["traffic"]["source"].get("path", "")).endswith("/victim.jsonl"):
            with open({str(kills_file)!r}, "a") as f:
                f.write(f"{{os.getpid()}}\\n")
            os.kill(os.getpid(), signal.SIGKILL)
        return _run_point(i, spec, slo, keep_report)
    rb.run_point = run_point
""")
os.environ["PYTHONPATH"] = os.pathsep.join([str(Path(TMP) / "site"), *filter(None, [os.environ.get("PYTHONPATH")])])
points = []
for i in range(50):
    if i % 5 == 0:  # replay the trace file: it must reach the worker node
        points.append({"traffic.source": {"type": "mooncake", "path": small},
                       "traffic.load": {"mode": "trace", "speedup": 1.0 + i / 10}})
    else:
        points.append({"traffic.source.num_requests": 3 + i % 7, "traffic.load.rate_rps": 2.0 + i})
points[7] = {"engine.model": "meta-llama/Llama-3.1-70B-Instruct", "engine.scheduler": {}}  # infeasible

cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
cluster.add_node(num_cpus=1)
ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
cluster.wait_for_nodes()
out = {"nodes": len([n for n in ray.nodes() if n["Alive"]]), "startup_s": time.perf_counter() - t0}
t = time.perf_counter()
rows_ray = aisimulate.sweep(BASE_SPEC, points, backend="ray")
out["ray_s"] = time.perf_counter() - t
rows_local = aisimulate.sweep(BASE_SPEC, points, jobs=2)
out["identical"] = bool(rows_ray.equals(rows_local))
if not out["identical"]:
    diff = rows_ray.compare(rows_local)
    out["diff"] = diff.to_string()
out["statuses"] = rows_ray["status"].value_counts().to_dict()
out["trace_completed"] = rows_ray["completed"][0]

# the victim point kills its Ray worker process on every try (the sitecustomize above)
dead = aisimulate.sweep(BASE_SPEC, [{"traffic.source": {"type": "mooncake", "path": p},
                                      "traffic.load": {"mode": "trace"}} for p in (small, victim)],
                        backend="ray", max_retries=1)
out["dead_status"], out["dead_reason"] = list(dead["status"]), dead["reason"][1]
out["kills"] = len(set(kills_file.read_text().split()))
ray.shutdown()
cluster.shutdown()
out["total_s"] = time.perf_counter() - t0
print(json.dumps(out, default=str))
'''


def test_ray_cluster_sweep_matches_local_and_records_a_dead_worker(tmp_path):
    from conftest import REPO

    script = f"TESTS = {str(REPO / 'tests')!r}\nTMP = {str(tmp_path)!r}\n" + textwrap.dedent(SCRIPT)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(out, indent=1))  # shown with pytest -s: timings of this machine
    assert out["nodes"] == 2
    assert out["identical"], f"Ray rows differ from local rows: {out.get('diff')}"
    assert out["statuses"] == {"ok": 49, "infeasible": 1}
    assert out["trace_completed"] == 30
    assert out["dead_status"] == ["ok", "error"]
    assert out["dead_reason"].startswith("WorkerDied: the Ray task of this point failed 2 time(s)")
    assert out["kills"] == 2  # the worker processes of the first try and of its one retry
