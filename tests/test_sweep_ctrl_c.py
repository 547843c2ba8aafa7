"""Ctrl-C during ``aisimulate sweep``: a terminal sends SIGINT to the whole foreground
process group, the sweep's worker processes too. Whatever the moment (while the first
point runs in the CLI's own process, while the workers are still importing, while they
run points), the output is one line, the exit code 130, no output file is written and
no worker is left behind (DEFECTS18 #2: worker tracebacks, one "interrupted" line per
worker and loky's "leaked semlock objects" warning)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO

# Each point: 600,000 requests of Llama-3.1-8B on 2 x H100 (about 2 s of CPU here), so
# the first point, run in the CLI's process and timed, sends the other seven to the pool.
SPEC = {
    "engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
               "workers": {"aggregated": {"count": 2, "tp": 1}}},
    "traffic": {"source": {"type": "synthetic", "num_requests": 600_000,
                           "isl": {"kind": "uniform", "min": 100, "max": 3000},
                           "osl": {"kind": "uniform", "min": 10, "max": 500}},
                "load": {"mode": "concurrency", "concurrency": 64}},
}


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _workers(pid: int) -> list[int]:
    """The loky worker processes among ``pid``'s children."""
    found = []
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        try:
            cmd = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"popen_loky" in cmd:
            found.append(int(child))
    return found


def _wait(cond, proc: subprocess.Popen):
    deadline = time.monotonic() + 300
    while True:
        assert proc.poll() is None, proc.communicate()
        got = cond()
        if got:
            return got
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


# when: the CLI's process has used 1.5 s of CPU (imports take ~0.5 s: it runs the first
# point), or a worker has used this much CPU: 0 (just started), 0.1 and 0.3 s (importing
# numpy, pandas, the native core: ~0.6 s), 1.5 s (running a point)
@pytest.mark.parametrize("moment", ["first point", 0.0, 0.1, 0.3, 1.5])
def test_ctrl_c_during_a_sweep_is_one_line_and_exit_130(tmp_path, moment):
    cfg = tmp_path / "long.yaml"
    cfg.write_text(yaml.safe_dump(SPEC))
    out = tmp_path / "sw.csv"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    proc = subprocess.Popen([sys.executable, "-m", "aisimulate", "sweep", str(cfg), "--grid",
                             "execution.seed=1,2,3,4,5,6,7,8", "--jobs", "2", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)  # its own process group, as a shell's job
    workers: list[int] = []
    try:
        if moment == "first point":
            _wait(lambda: _cpu_s(proc.pid) >= 1.5, proc)
        else:
            workers = _wait(lambda: _workers(proc.pid), proc)
            _wait(lambda: max((_cpu_s(w) for w in workers if not _gone(w)), default=0) >= moment, proc)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:  # a failed test leaves nothing running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        for w in workers:
            if not _gone(w):
                os.kill(w, signal.SIGKILL)
    assert (proc.returncode, stderr, stdout) == (130, "aisimulate: error: interrupted\n", "")
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["long.yaml"]  # no temporary file either
    deadline = time.monotonic() + 30
    while not all(_gone(w) for w in workers):  # the parent stopped them
        assert time.monotonic() < deadline, workers
        time.sleep(0.05)


def test_a_ctrl_c_while_workers_start_is_taken_when_they_have_started():
    # Blocking SIGINT in the main thread is not enough: another thread (the Go runtime's,
    # here a sleeping one) receives it and Python's handler still interrupts the main
    # thread, between a worker's start and the data loky sends it (the worker then
    # printed "LokyProcess-1 failed with traceback: … EOFError"). The interrupt is taken
    # once the workers have started.
    import threading

    from aisimulate._sweep import local

    threading.Thread(target=time.sleep, args=(3,), daemon=True).start()  # SIGINT not blocked there
    inside = []
    with pytest.raises(KeyboardInterrupt):
        with local._sigint_blocked():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.3)  # an interrupt taken in here would skip the next line
            inside.append("started")
    assert inside == ["started"]
