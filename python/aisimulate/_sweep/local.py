"""Run sweep points on this machine's cores.

Points run in loky's reusable process pool (``joblib.externals.loky``, the executor
behind joblib): its workers are started with fork+exec of a fresh interpreter (the Go
runtime of the native core is never forked), they never re-run the caller's
``__main__`` module (so a script without an ``if __name__ == "__main__":`` guard works),
and they stay alive between points and between sweeps (``reuse``), so the core is
loaded once per worker.

Tiny grids run serially: the first point runs in this process and is timed; when the
whole grid would take less than a threshold that way, the rest follow it here, since
starting worker processes would cost more than it saves. The threshold is
:data:`SERIAL_BELOW_S`, or twice the worker start-up last measured in this process if
that is more (with 2 workers, a cold pool only wins once the serial time exceeds twice
its start-up); while the pool is warm (used in the last :data:`IDLE_TIMEOUT_S`) it is a
tenth of :data:`SERIAL_BELOW_S`. Otherwise points go to the pool in chunks of about
:data:`CHUNK_TARGET_S` of work each.

Ctrl-C. A terminal sends SIGINT to its whole foreground process group, so the workers
get it too; they ignore it and the caller stops them (it kills the pool), so a Ctrl-C
prints one line whatever the workers were doing. The workers are started with SIGINT
blocked (the signal mask survives fork and exec), so it is not taken while they are
still importing, and their initializer then ignores it for good.

A worker that dies (killed, out of memory, a crash in native code) breaks every task
in flight; their points are then re-run one at a time, alone in the pool, so the point
that kills its worker is identified and recorded as failed, and no other point is lost
or waited for forever.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from collections import deque
from typing import Any, Callable, Mapping, Sequence

from ..binding import lazy as _lazy
from .point import PointResult, run_point

__all__ = ["run_local", "SERIAL_BELOW_S", "CHUNK_TARGET_S"]

#: Below this estimated serial time (s) a sweep runs in the calling process (0: always
#: the pool). Starting two loky workers and loading the native core in them took
#: 1.2–8 s on the 2-core development machine, depending on its load (docs/benchmarks.md,
#: "Sweeps").
SERIAL_BELOW_S = 2.0

#: Worker start-up (s): an estimate until this process has started the pool once, then
#: the last measurement. _last_pool_s: when the pool last finished work (monotonic s).
_startup_s = 1.0
_last_pool_s = -math.inf


def serial_threshold() -> float:
    """The estimated serial time (s) below which a sweep stays in this process."""
    if SERIAL_BELOW_S <= 0:
        return 0.0
    if time.monotonic() - _last_pool_s < 0.9 * IDLE_TIMEOUT_S:  # the workers are still up
        return SERIAL_BELOW_S / 10
    return max(SERIAL_BELOW_S, 2 * _startup_s)

#: Seconds an idle worker waits for more points before exiting.
IDLE_TIMEOUT_S = 300

#: Target work per task sent to a worker (s): amortizes the ~1 ms of pickling and
#: scheduling per task while keeping several tasks per worker for balance.
CHUNK_TARGET_S = 0.25


def _run_chunk(chunk: Sequence[tuple[int, Mapping[str, Any]]], row, keep_report) -> list[PointResult]:
    """Worker side: run each point of the chunk (module level, so loky can pickle it)."""
    return [run_point(i, spec, row, keep_report) for i, spec in chunk]


def _died(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    detail = next((line for line in text if "exit code" in line), text[0] if text else "")
    return f"WorkerDied: the worker process running this point died ({detail.strip()})"


def run_local(tasks: list[tuple[int, Mapping[str, Any]]], jobs: int, row, keep_report: bool,
              on_result: Callable[[PointResult], None]) -> None:
    """Run ``tasks`` (point index, compiled spec) on up to ``jobs`` processes, calling
    ``on_result`` once per point, in completion order, from this thread. An exception
    raised by ``on_result`` (``errors="raise"``) or a KeyboardInterrupt stops the sweep:
    the workers are killed and the exception propagates."""
    if not tasks:
        return
    todo = deque(tasks)
    if jobs <= 1 or len(tasks) == 1:
        for i, spec in todo:
            on_result(run_point(i, spec, row, keep_report))
        return
    i, spec = todo.popleft()
    t0 = time.perf_counter()
    on_result(run_point(i, spec, row, keep_report))
    per_point = max(time.perf_counter() - t0, 1e-4)
    if per_point * len(todo) < serial_threshold():
        for i, spec in todo:
            on_result(run_point(i, spec, row, keep_report))
        return
    size = max(1, min(math.ceil(CHUNK_TARGET_S / per_point), math.ceil(len(todo) / (4 * jobs))))
    chunks = deque()
    while todo:
        chunks.append([todo.popleft() for _ in range(min(size, len(todo)))])
    _pool(chunks, jobs, row, keep_report, on_result, per_point)


def _ignore_sigint() -> None:
    """Worker initializer: SIGINT (a terminal's Ctrl-C reaches the whole process group)
    is ignored; the caller reports the interrupt and kills the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _sigint_blocked():
    """Hold SIGINT off while loky starts worker processes from this thread: they inherit
    the blocked mask through fork and exec, so a Ctrl-C while they import is never taken
    there (it stays pending until :func:`_ignore_sigint` discards it); loky's manager
    thread, which starts replacement workers, is created in here and inherits it too.
    Here the interrupt is taken when the block ends, never between a worker's start and
    the data loky then sends it (the worker would print an EOFError traceback): another
    thread of this process (the Go runtime's) may still receive the signal, so the
    Python handler is deferred too, not the mask alone."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread takes SIGINT in Python
        return
    # the standard library's resource tracker, which loky starts with the first worker,
    # unblocks SIGINT in the calling thread after starting itself (Python 3.11's
    # multiprocessing/resource_tracker.py, ensure_running: SIG_UNBLOCK, not the mask
    # it found): start it first, so that later calls find it running and leave the mask
    _lazy.module("multiprocessing.resource_tracker").ensure_running()
    caught: list = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(frame))
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a pending SIGINT lands in caught
        signal.signal(signal.SIGINT, previous)
        if caught:  # taken now, as it would have been
            if callable(previous):
                previous(signal.SIGINT, caught[-1])
            else:
                os.kill(os.getpid(), signal.SIGINT)


#: The call queues of the pools this process made, each held until the thread that
#: feeds it has ended (:func:`_hold_queue`).
_QUEUES: list = []


def _hold_queue(ex) -> None:
    """Hold the pool's call queue until its feeder thread has ended, and let go of the
    queues whose feeder has.

    loky feeds a pool's call queue to its workers from a daemon thread that nothing
    joins in the process that made the queue (loky/backend/queues.py,
    ``Queue._start_thread``, as multiprocessing's ``Queue`` does). Once the pool is shut
    down (Ctrl-C kills it; loky's exit handler stops it), that thread can hold the last
    reference to the queue, which it then frees as it ends, unlinking and unregistering
    the queue's three semaphores: a process that exited meanwhile froze it between the
    two, and loky's resource tracker printed "There appear to be 1 leaked semlock
    objects" (Ctrl-C of ``aisimulate sweep`` on a loaded machine, about one run in 30;
    tests/test_sweep_ctrl_c.py orders the exit so that it happens every time). Held here, a queue is freed on this thread, or at exit by multiprocessing's exit
    handler, never on its feeder."""
    def feeding(q) -> bool:
        thread = getattr(q, "_thread", None)
        return thread.is_alive() if isinstance(thread, threading.Thread) else not getattr(q, "_closed", False)

    _QUEUES[:] = [q for q in _QUEUES if feeding(q)]
    queue = getattr(ex, "_call_queue", None)
    if queue is not None and not any(q is queue for q in _QUEUES):
        _QUEUES.append(queue)


def _executor(jobs: int):
    get_reusable_executor = _lazy.module("joblib.externals.loky").get_reusable_executor

    # A broken executor (a worker died) is replaced by a fresh one on this call; idle
    # workers live IDLE_TIMEOUT_S, so back-to-back sweeps reuse them.
    with _sigint_blocked():
        ex = get_reusable_executor(max_workers=jobs, reuse=True, timeout=IDLE_TIMEOUT_S,
                                   initializer=_ignore_sigint)
    _hold_queue(ex)
    return ex


def _submit(ex, chunk, row, keep_report):
    with _sigint_blocked():  # submit starts the workers (and the manager thread) when missing
        return ex.submit(_run_chunk, chunk, row, keep_report)


def _pool(chunks: deque, jobs: int, row, keep_report: bool,
          on_result: Callable[[PointResult], None], per_point: float) -> None:
    futures = _lazy.module("concurrent.futures")
    FIRST_COMPLETED, wait = futures.FIRST_COMPLETED, futures.wait
    BrokenProcessPool = _lazy.module("concurrent.futures.process").BrokenProcessPool

    TerminatedWorkerError = _lazy.module("joblib.externals.loky.process_executor").TerminatedWorkerError

    global _startup_s, _last_pool_s
    suspects: deque = deque()  # points in flight when a worker died: rerun one by one
    inflight: dict = {}
    cold = time.monotonic() - _last_pool_s >= 0.9 * IDLE_TIMEOUT_S
    t0, first = time.perf_counter(), True
    ex = _executor(jobs)
    try:
        while chunks or suspects or inflight:
            # a suspect runs alone, so a death is attributed to it exactly
            if suspects and not inflight:
                chunk = [suspects.popleft()]
                inflight[_submit(ex, chunk, row, keep_report)] = (chunk, True)
            while not suspects and chunks and len(inflight) < 2 * jobs:
                chunk = chunks.popleft()
                inflight[_submit(ex, chunk, row, keep_report)] = (chunk, False)
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            broken = None
            for fut in done:
                chunk, alone = inflight.pop(fut)
                try:
                    results = fut.result()
                except (TerminatedWorkerError, BrokenProcessPool) as exc:
                    if alone:
                        on_result(PointResult(chunk[0][0], "error", _died(exc)))
                    else:
                        suspects.extend(chunk)
                    broken = exc
                    continue
                if first and cold:  # the first result of a cold pool: its start-up
                    _startup_s = max(0.0, time.perf_counter() - t0 - per_point * len(chunk))
                first = False
                for r in results:
                    on_result(r)
            if broken is not None:
                # every task still in flight died with the pool: all are suspects
                for fut, (chunk, _) in list(inflight.items()):
                    try:
                        for r in fut.result():
                            on_result(r)
                    except (TerminatedWorkerError, BrokenProcessPool):
                        suspects.extend(chunk)
                inflight.clear()
                ex = _executor(jobs)
        _last_pool_s = time.monotonic()
    except BaseException:
        for fut in inflight:
            fut.cancel()
        ex.shutdown(wait=False, kill_workers=True)
        raise
