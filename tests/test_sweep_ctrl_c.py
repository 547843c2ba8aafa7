"""Ctrl-C during ``aisimulate sweep``: a terminal sends SIGINT to the whole foreground
process group, the sweep's worker processes too. Whatever the moment (while the first
point runs in the CLI's own process, while the workers are still importing, while they
run points), the output is one line, the exit code 130, no output file is written and
no worker is left behind (no worker tracebacks, no "interrupted" line per worker, no
loky "leaked semlock objects" warning).

Each moment is a named point that the process reaches and waits at, whatever the
machine's load: the CLI's first point waits in its replay (``AISIMULATE_TEST_PAUSE``,
:mod:`aisimulate.binding.testpoint`); a worker waits where a sitecustomize module (first on the
path of every process of the sweep, acting in loky's workers only) stops it: as it
starts, at its import of a named module, or in its first replay. The point writes a line
to a file; the test sends the interrupt once the line is there."""

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

# In a loky worker only (its command line runs popen_loky_posix): wait at the point
# SWEEP_TEST_WORKER_POINT names, after writing "worker:POINT PID" to the pause file.
# "start": before anything is imported; a module name: when it is first looked up;
# "replay": the aisimulate point in its first replay (which writes "replay PID").
_SITE = """\
import importlib.abc, importlib.util, os, sys, threading, time, weakref
_POINT = os.environ.get("SWEEP_TEST_WORKER_POINT", "")
def _wait_here():
    with open(os.environ["AISIMULATE_TEST_PAUSE_FILE"], "a") as f:
        f.write(f"worker:{_POINT} {os.getpid()}\\n")
    while True:  # SIGINT is blocked, then ignored, in a worker: the sweep kills it
        time.sleep(0.01)
class _Stop(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == _POINT:
            _wait_here()
        return None
# In the command's own process, the exit runs in the order a busy machine can give it:
# the thread that feeds loky's call queue ends once the thread that managed the pool is
# gone and freed (by loky's exit handler), and the exit goes on only when that feeder
# has ended or has started to free a semaphore, which it does slowly (5 s). A queue
# whose last reference the feeder held was freed on it, and the command exited under
# it, leaving a semaphore registered (loky's resource tracker: "There appear to be 1
# leaked semlock objects to clean up at shutdown").
_FREEING = threading.Event()
def _slow_feed(module):
    feed = module.Queue._feed
    def _feed(*args):
        managers = [weakref.ref(t) for t in threading.enumerate() if t.name == "ExecutorManagerThread"]
        feed(*args)
        while any(m() is not None for m in managers):
            time.sleep(0.01)
    module.Queue._feed = staticmethod(_feed)
def _slow_cleanup(module):
    cleanup = module.SemLock._cleanup
    def _cleanup(name):
        if threading.current_thread().name == "QueueFeederThread":
            _FREEING.set()
            time.sleep(5)
        cleanup(name)
    module.SemLock._cleanup = staticmethod(_cleanup)
def _late_exit(module):
    python_exit = module._python_exit
    def _python_exit():
        python_exit()
        feeders = [t for t in threading.enumerate() if t.name == "QueueFeederThread"]
        while not _FREEING.is_set() and any(t.is_alive() for t in feeders):
            time.sleep(0.01)
    module._python_exit = _python_exit
_PATCHES = {"joblib.externals.loky.backend.queues": _slow_feed,
            "joblib.externals.loky.backend.synchronize": _slow_cleanup,
            "joblib.externals.loky.process_executor": _late_exit}
class _Patch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        patch = _PATCHES.pop(name, None)
        if patch is None:
            return None
        spec = importlib.util.find_spec(name)  # the path finders' (this one skips it now)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            patch(module)
        spec.loader.exec_module = exec_module
        return spec
if not any("popen_loky" in a for a in sys.orig_argv):
    sys.meta_path.insert(0, _Patch())
if _POINT and any("popen_loky" in a for a in sys.orig_argv):
    if _POINT == "start":
        _wait_here()
    elif _POINT == "replay":
        os.environ["AISIMULATE_TEST_PAUSE"] = "replay"
    else:
        sys.meta_path.insert(0, _Stop())
"""


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


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _wait_for_line(path: Path, prefix: str, proc: subprocess.Popen) -> list[str]:
    """The pause file's lines once one starts with ``prefix`` (a process reached its
    point and waits there). A hang guard only: the point is reached, however slowly."""
    deadline = time.monotonic() + 600
    while True:
        assert proc.poll() is None, proc.communicate()
        lines = path.read_text().splitlines(keepends=True) if path.exists() else []
        whole = [line for line in lines if line.endswith("\n")]
        if any(line.startswith(prefix) for line in whole):
            return whole
        assert time.monotonic() < deadline, whole
        time.sleep(0.02)


# where the interrupt lands: the CLI's first point, replaying in its own process; a
# worker just started (nothing imported), importing joblib (loky's worker code), numpy,
# the sweep's point code (unpickling the task), the native core (the Go runtime starts);
# a worker replaying a point
@pytest.mark.parametrize("moment", ["first point", "start", "joblib", "numpy", "aisimulate._sweep.local",
                                    "aisimulate._core._aisimcore", "replay"])
def test_ctrl_c_during_a_sweep_is_one_line_and_exit_130(tmp_path, moment):
    cfg = tmp_path / "long.yaml"
    cfg.write_text(yaml.safe_dump(SPEC))
    out = tmp_path / "sw.csv"
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITE)
    pause = tmp_path / "site" / "pause.txt"
    env = dict(os.environ, PYTHONPATH=f"{site}:{REPO / 'python'}", AISIMULATE_TEST_PAUSE_FILE=str(pause))
    if moment == "first point":
        env["AISIMULATE_TEST_PAUSE"] = "replay"
    else:
        env["SWEEP_TEST_WORKER_POINT"] = moment
    proc = subprocess.Popen([sys.executable, "-m", "aisimulate", "sweep", str(cfg), "--grid",
                             "execution.seed=1,2,3,4,5,6,7,8", "--jobs", "2", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)  # its own process group, as a shell's job
    workers: list[int] = []
    try:
        lines = _wait_for_line(pause, "replay " if moment in ("first point", "replay") else "worker:", proc)
        workers = _workers(proc.pid)
        if moment == "first point":
            assert lines == [f"replay {proc.pid}\n"]  # the CLI's own replay, before any worker
        else:  # the first line is a worker's (and there is no line from the CLI)
            assert int(lines[0].split()[1]) in workers and f"replay {proc.pid}\n" not in lines
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:  # a failed test leaves nothing running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        for w in workers:
            if not _gone(w):
                os.kill(w, signal.SIGKILL)
    assert (proc.returncode, stderr, stdout) == (130, "aisimulate: error: interrupted\n", "")
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.yaml", "site"]  # no temporary file either
    deadline = time.monotonic() + 600  # a hang guard: the parent stopped them
    while not all(_gone(w) for w in workers):
        assert time.monotonic() < deadline, workers
        time.sleep(0.05)


def test_a_ctrl_c_while_workers_start_is_taken_when_they_have_started():
    # Blocking SIGINT in the main thread is not enough: another thread (the Go runtime's)
    # receives it and Python's handler still interrupts the main thread, between a
    # worker's start and the data loky sends it (the worker then printed "LokyProcess-1
    # failed with traceback: … EOFError"). The interrupt is taken once the workers have
    # started. Here a thread started before the block (so SIGINT is not blocked there)
    # raises SIGINT in itself, inside the block: its C handler has run when raise_signal
    # returns, and Python's handler then runs on the main thread at its next instruction.
    import threading

    from aisimulate._sweep import local

    go = threading.Event()

    def other():
        go.wait()
        signal.raise_signal(signal.SIGINT)

    thread = threading.Thread(target=other, daemon=True)
    thread.start()
    inside = []
    with pytest.raises(KeyboardInterrupt):
        with local._sigint_blocked():
            go.set()
            thread.join()  # the signal has been received
            inside.append("started")  # an interrupt taken in the block would skip this line
    assert inside == ["started"]
