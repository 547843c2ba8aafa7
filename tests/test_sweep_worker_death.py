"""A sweep whose worker process dies reports that point as failed and never waits forever.
The victim point kills its own worker process (SIGKILL) every time it runs: a
sitecustomize module, first on the path of the pool's fresh workers, wraps the worker's
point function so that the point naming the victim trace writes a line to a file and
kills the process before it replays. The death lands there whatever the machine's load
(a watcher that looked for the victim's open trace could miss a replay that ended
first)."""

from __future__ import annotations

import os

import pytest

import aisimulate
import aisimulate._sweep.local as local
from conftest import REPO

_SITE = """\
import os, signal, sys
if any("popen_loky" in a for a in sys.orig_argv):
    import aisimulate._sweep.local as local
    _VICTIM, _KILLS = os.environ["SWEEP_TEST_VICTIM"], os.environ["SWEEP_TEST_KILLS"]
    _run_point = local.run_point
    def run_point(i, spec, slo, keep_report):
        if spec["traffic"]["source"].get("path") == _VICTIM:
            with open(_KILLS, "a") as f:
                f.write(f"{os.getpid()}\\n")
            os.kill(os.getpid(), signal.SIGKILL)
        return _run_point(i, spec, slo, keep_report)
    local.run_point = run_point
"""


def _shut_the_pool() -> None:
    """Stop the reusable pool's workers, so that the next sweep starts fresh ones (with
    this environment) and later tests do not get this test's."""
    local._executor(2).shutdown(wait=True, kill_workers=True)


@pytest.fixture
def dying_workers(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITE)
    victim, kills = tmp_path / "victim.jsonl", tmp_path / "kills.txt"
    monkeypatch.setenv("PYTHONPATH", f"{site}:{REPO / 'python'}")
    monkeypatch.setenv("SWEEP_TEST_VICTIM", str(victim))
    monkeypatch.setenv("SWEEP_TEST_KILLS", str(kills))
    _shut_the_pool()
    yield victim, kills
    _shut_the_pool()


def _trace(path, rows: int):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f'{{"timestamp": {i * 5}, "input_length": 64, "output_length": 4}}\n'
                     for i in range(rows))
    return str(path)


def test_a_killed_worker_fails_its_point_only(tmp_path, base_spec, monkeypatch, dying_workers):
    monkeypatch.setattr(local, "SERIAL_BELOW_S", 0)  # the pool, whatever the point sizes
    victim, kills = dying_workers
    small = _trace(tmp_path / "small.jsonl", 20)
    _trace(victim, 20)
    base_spec["traffic"] = {"source": {"type": "mooncake", "path": small}, "load": {"mode": "trace"}}
    df = aisimulate.sweep(base_spec, [{"traffic.source.path": p} for p in (small, str(victim), small, small)],
                          jobs=2)
    assert list(df["status"]) == ["ok", "error", "ok", "ok"]
    assert df["reason"][1].startswith("WorkerDied: the worker process running this point died")
    assert "SIGKILL" in df["reason"][1]
    assert list(df["completed"][[0, 2, 3]]) == [20, 20, 20]
    # its worker killed in the pool with other work in flight, then once more when rerun alone
    pids = kills.read_text().split()
    assert len(pids) == 2 and len(set(pids)) == 2 and str(os.getpid()) not in pids
