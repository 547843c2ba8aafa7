"""Running one replay in the native core so that it can be watched and stopped.

The core's ``Replay`` call runs on a worker thread (gopy releases the GIL for the call);
the calling thread waits on it in short, interruptible joins, updates a progress bar
from ``pybind.Progress`` between them, and on Ctrl-C (``KeyboardInterrupt``) — or any
other exception raised while waiting, such as the CLI's SIGTERM handler — calls
``pybind.Stop``: the event loop returns at its next look (every 1,024 timestamps,
well under a millisecond of host time), and the exception reaches the caller within
:data:`STOP_WAIT_S`. A stopped replay leaves nothing behind: its columns go to an
unnamed temporary file (``tempfile.TemporaryFile``, reached by the core through
``/proc/self/fd``), which the operating system frees however the process ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Callable, Iterator

from . import lazy, native, testpoint
from ..errors import ConfigError, DataError, SimulationError

#: How long an interrupted replay is waited for before the interrupt is re-raised
#: (the core stops within a few ms; the report it may be building is dropped).
STOP_WAIT_S = 0.3

#: How long a stopped replay that streams its records (``on_poll``) is waited for: its
#: core writes chunk files into a scratch folder until it returns, and the caller can
#: only remove the folder after that. The core stops within a few ms of being scheduled;
#: on a machine loaded past its cores that took more than :data:`STOP_WAIT_S` (a
#: ``replay --output-dir`` stopped by SIGTERM at load average 6 on 2 cores left its
#: ``aisimulate-stream-*`` folder behind).
STREAM_STOP_WAIT_S = 5.0

#: Seconds a replay or save runs before its progress bar appears.
PROGRESS_DELAY_S = 2.0

#: How often (s) the waiting thread wakes to update the bar and take a Ctrl-C.
_POLL_S = 0.05


def progress_wanted(progress: bool | None) -> bool:
    """``progress`` resolved: ``None`` means on when stderr is a terminal or the code
    runs in a Jupyter/IPython kernel, off otherwise (pipes, files, CI logs)."""
    if progress is not None:
        from .args import flag

        return bool(flag("progress", progress, auto=True))
    if in_kernel():
        return True
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def in_kernel() -> bool:
    """Whether this code runs in a Jupyter/IPython kernel (a notebook): an IPython
    shell with a kernel is active — not merely ipykernel imported, as in a process that
    drives notebooks (nbclient under pytest)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython too broken to ask: not a kernel we can draw in
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def make_bar(*, total: int | None, desc: str, unit: str):
    """A tqdm bar that appears after :data:`PROGRESS_DELAY_S`: a widget in a notebook
    with ipywidgets (tqdm.notebook), else text on stderr (tqdm's standard bar, also in a
    notebook without ipywidgets, rather than tqdm.auto's warning)."""
    if in_kernel():
        try:
            lazy.module("ipywidgets")  # tqdm.notebook draws with it
            notebook_tqdm = lazy.module("tqdm.notebook").tqdm

            return notebook_tqdm(total=total or None, desc=desc, unit=unit, delay=PROGRESS_DELAY_S,
                                 leave=False)
        except ImportError:
            pass
    tqdm = lazy.module("tqdm").tqdm

    return tqdm(total=total or None, desc=desc, unit=unit, delay=PROGRESS_DELAY_S, leave=False,
                file=sys.stderr, **bar_width(sys.stderr))


#: A text bar's width on a terminal that reports 0 columns.
FALLBACK_COLUMNS = 80


def bar_width(file: Any) -> dict[str, Any]:
    """tqdm's width arguments for a text bar on ``file``: the terminal's width as it
    changes, except on a terminal that reports 0 columns (a serial console, some CI
    and container terminals), where tqdm would draw a bar of −1 columns, nothing:
    :data:`FALLBACK_COLUMNS` then. Not a terminal: tqdm's own rule."""
    try:
        columns = os.get_terminal_size(file.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return {"dynamic_ncols": True}
    return {"dynamic_ncols": True} if columns > 0 else {"ncols": FALLBACK_COLUMNS}


@contextlib.contextmanager
def save_progress(progress: bool | None, total: int, desc: str = "save") -> Iterator[Callable[[int], None]]:
    """The progress of writing ``total`` records (a save, an export, the work after a
    streamed replay): yields ``advance(k)``, which moves a bar (:func:`make_bar`) when
    ``progress`` is wanted (:func:`progress_wanted`) and there is work, else does
    nothing; the bar is closed on leaving."""
    if not (progress_wanted(progress) and total):
        yield lambda k: None
        return
    bar = make_bar(total=total, desc=desc, unit="rec")
    try:
        yield bar.update
    finally:
        bar.close()


def columns_file():
    """An open temporary file and the path the core opens it by: unnamed (reached
    through ``/proc/self/fd``) when the core runs in this process on Linux, else a
    named file (the third item) that the caller removes in a ``finally`` — not Linux,
    or a forked process whose native calls run in a fresh interpreter, which cannot
    see this process's descriptors."""
    if not native.forked():
        fh = _unnamed_file()
        if fh is not None:
            return fh, f"/proc/self/fd/{fh.fileno()}", None
    tempfile = lazy.module("tempfile")  # on first use: import aisimulate stays light

    fd, path = tempfile.mkstemp(prefix="aisimulate-", suffix=".cols")
    return os.fdopen(fd, "w+b"), path, path


def _unnamed_file():
    """An unnamed file open for reading and writing in the temporary folder
    (``O_TMPFILE``, what ``tempfile.TemporaryFile`` makes on Linux) that the core can
    open through ``/proc/self/fd``, or ``None`` where there is none (not Linux, no
    ``/proc``, a file system without ``O_TMPFILE``). The folder is the first of
    ``$TMPDIR``, ``$TEMP``, ``$TMP`` and ``/tmp`` that is set, as ``tempfile`` looks;
    the ``tempfile`` module itself costs ~8 ms of CPU to import (random, shutil,
    hashlib), a tenth of a small replay's whole process."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return None
    folder = next((os.environ[k] for k in ("TMPDIR", "TEMP", "TMP") if os.environ.get(k)), "/tmp")
    try:
        fd = os.open(folder, flag | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    return open(fd, "w+b")


def replay_native(spec_json: str, options: dict[str, Any], *, progress: bool | None,
                  on_error: Callable[[BaseException], BaseException] | None = None,
                  on_poll: Callable[[], None] | None = None) -> tuple[dict, bytes]:
    """Run ``pybind.Replay`` on a worker thread and return its ``report`` head and the
    column bytes. ``on_poll`` is called on the waiting thread between waits (it takes
    streamed records, :mod:`aisimulate.run.stream`); an exception from it stops the replay
    and is raised.

    Raises:
        KeyboardInterrupt: Ctrl-C while it ran (the replay is stopped; no result).
        ConfigError, DataError, SimulationError: from the core (through ``on_error``
            when given, which may return a replacement).
    """
    if native.forked():  # no run control across a fresh interpreter: the plain call
        fh, path, named = columns_file()
        try:
            head = native.call("Replay", spec_json, "report", json.dumps(options), path)
            fh.seek(0)
            return head, _read(fh)
        except (ConfigError, DataError, SimulationError) as exc:
            raise (on_error(exc) if on_error else exc) from None
        finally:
            fh.close()
            os.unlink(named)
    mod = native.pybind()
    run_id = mod.NewRun()
    fh, path, named = columns_file()
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            head = native.call("Replay", spec_json, "report",
                                json.dumps({**options, "run_id": run_id}), path)
            fh.seek(0)
            result["value"] = (head, _read(fh))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            result["error"] = exc
        finally:
            fh.close()
            if named:
                try:
                    os.unlink(named)
                except OSError:
                    pass

    worker = threading.Thread(target=work, name="aisimulate-replay", daemon=True)
    bar = None
    try:
        worker.start()
        show = progress_wanted(progress)
        while True:  # at least once: a replay done before the first wait still shows its bar
            worker.join(_POLL_S)
            running = worker.is_alive()
            if show:
                bar = _update(bar, mod, run_id)
            if on_poll is not None:
                on_poll()
            if not running:
                break
            testpoint.reached("replay")
        if "error" in result:
            err = result["error"]
            raise (on_error(err) if on_error else err) from None
        return result["value"]
    except BaseException:
        if worker.is_alive():  # interrupted while waiting: stop the core, then re-raise
            mod.Stop(run_id)
            worker.join(STOP_WAIT_S if on_poll is None else STREAM_STOP_WAIT_S)
        raise
    finally:
        if bar is not None:
            bar.close()
        mod.Forget(run_id)


def call_stoppable(name: str, payload: str, key: str, options: dict[str, Any]) -> dict[str, Any]:
    """``native.call(name, payload, key, options)`` on a worker thread with a run of its
    own (``options["run_id"]``), waited for as :func:`replay_native` waits: Ctrl-C (or
    any exception) on the calling thread stops the run (``pybind.Stop``; the core looks
    every few ms) and is re-raised. For ``Check``, whose trace read takes ~0.3 s per
    million rows.

    Raises:
        KeyboardInterrupt: Ctrl-C while it ran (the call is stopped; no result).
        ConfigError, DataError, SimulationError: from the core.
    """
    if native.forked():  # no run control across a fresh interpreter: the plain call
        return native.call(name, payload, key, json.dumps(options))
    mod = native.pybind()
    run_id = mod.NewRun()
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["value"] = native.call(name, payload, key, json.dumps({**options, "run_id": run_id}))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=work, name=f"aisimulate-{name.lower()}", daemon=True)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(_POLL_S)
            if worker.is_alive():
                testpoint.reached("check")
        if "error" in result:
            raise result["error"] from None
        return result["value"]
    except BaseException:
        if worker.is_alive():  # interrupted while waiting: stop the core, then re-raise
            mod.Stop(run_id)
            worker.join(STOP_WAIT_S)
        raise
    finally:
        mod.Forget(run_id)


def _read(fh) -> bytearray:
    """The whole file, read into one buffer sized once (``read()`` of a large file
    grows its result as it goes)."""
    size = os.fstat(fh.fileno()).st_size
    buf = bytearray(size)
    view, got = memoryview(buf), 0
    while got < size:
        k = fh.readinto(view[got:])
        if not k:
            break
        got += k
    return buf


def _update(bar, mod, run_id: str):
    p = json.loads(mod.Progress(run_id)).get("progress")
    if not p or not p.get("started"):
        return bar
    if bar is None:
        bar = make_bar(total=p["expected"], desc="replay", unit="req")
    bar.update(p["finished"] - bar.n)
    bar.set_postfix_str(f"sent {p['sent']}, sim {p['now_ms'] / 1000:.1f} s", refresh=False)
    return bar
