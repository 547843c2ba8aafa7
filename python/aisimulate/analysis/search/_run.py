"""Running a search's candidates: on this machine (one core call, the candidates on Go
goroutines sharing the perf tables) or as tasks on a Ray cluster, each result appended to
the search's journal as soon as it is known, so that an interrupted search resumes where
it stopped.

The journal (``search.jsonl`` of the result folder) is one JSON line of header (the
question's digest: a resumed search must ask the same question), then one line per
candidate's result (``core/search/run.go`` ``Result``) in the order they were settled. A
last line cut short (the process killed while writing it) is dropped when the journal is
read again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time

from ...binding import native as _native
from ...binding.calls import STOP_WAIT_S, make_bar, progress_wanted
from ...errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Sequence

__all__ = ["Journal", "run_local", "run_ray", "JOURNAL", "progress_bar"]

#: The journal's name in a result folder.
JOURNAL = "search.jsonl"
#: How the journal's refusal says to start over (the CLI says its --restart instead).
RESTART_HINT = "resume=False"
#: The journal's format version (its header's ``aisimulate_search``).
FORMAT = 1
#: How often (s) the waiting thread looks at the journal, a Ctrl-C and the bar.
_POLL_S = 0.1


def digest(request: dict[str, Any]) -> str:
    """The question's digest: the spec, the space and the SLO as the core compiled them
    (its plan's), with whether pruning and early stopping are on; the results of one
    question stand for another only when these are equal."""
    keep = {k: request[k] for k in ("spec", "space", "slo", "prune", "early_stop")}
    return hashlib.sha256(json.dumps(keep, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Journal:
    """A search's journal file: its header and the results it holds, by candidate index."""

    def __init__(self, path: str, header: dict[str, Any]) -> None:
        self.path, self.header = path, header
        self.results: dict[int, dict[str, Any]] = {}

    @classmethod
    def open(cls, path: str, header: dict[str, Any], *, resume: bool) -> "Journal":
        """The journal at ``path``, created with ``header``, or read back when it holds the
        same question (``resume``): a result line cut short at the end is dropped.

        Raises:
            ConfigError: the file holds another question's results (or is not a journal)
                and ``resume`` is true; its folder cannot be made or written in (field
                ``out``).
        """
        j = cls(path, header)
        if resume and os.path.exists(path):
            with open(path, "rb") as f:
                lines = f.read().split(b"\n")
            try:
                head = json.loads(lines[0])
            except ValueError:
                head = None
            if not isinstance(head, dict) or head.get("aisimulate_search") != FORMAT:
                raise ConfigError("out", f"{path} is not an aisimulate search journal: give another folder, "
                                         f"or {RESTART_HINT} to start over there")
            if head.get("digest") != header["digest"]:
                raise ConfigError("out", f"{path} holds the results of another question (another spec, "
                                         f"space or SLO): give another folder, or {RESTART_HINT} to start over there")
            good = len(lines[0]) + 1
            for line in lines[1:]:
                if not line.strip():
                    break
                try:
                    r = json.loads(line)
                except ValueError:
                    break  # cut short: dropped, and the file truncated to what parsed
                j.results[int(r["index"])] = r
                good += len(line) + 1
            with open(path, "r+b") as f:
                f.truncate(min(good, os.path.getsize(path)))
            return j
        folder = os.path.dirname(path)
        try:
            if folder:
                os.makedirs(folder, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(json.dumps(header, sort_keys=True) + "\n")
        except OSError as exc:  # a folder that cannot be made or written in: the caller's out
            what = ("is a file, not a folder" if folder and os.path.isfile(folder)
                    else f"cannot write the search journal there: {exc.strerror or exc}")
            raise ConfigError("out", f"{folder or path}: {what}") from None
        return j

    def read_new(self, offset: int) -> tuple[list[dict[str, Any]], int]:
        """Whole result lines written after byte ``offset`` (each recorded), and the offset
        after the last."""
        with open(self.path, "rb") as f:
            f.seek(offset)
            data = f.read()
        out = []
        end = data.rfind(b"\n") + 1
        for line in data[:end].split(b"\n"):
            if line.strip():
                r = json.loads(line)
                self.results[int(r["index"])] = r
                out.append(r)
        return out, offset + end

    def append(self, lines: Iterable[bytes]) -> None:
        """Append result lines (from another process's journal) and record them."""
        with open(self.path, "ab") as f:
            for line in lines:
                f.write(line.rstrip(b"\n") + b"\n")
                r = json.loads(line)
                self.results[int(r["index"])] = r


def progress_bar(total: int, progress: bool | None):
    """The search's progress bar over ``total`` candidates (``None`` when not wanted)."""
    return _bar(total, progress)


def _bar(total: int, progress: bool | None):
    if not (progress_wanted(progress) and total):
        return None
    return make_bar(total=total, desc="search", unit="cand")


def _counts(bar) -> dict[str, int]:
    """The results by fate a bar shows, kept on the bar (a search's several runs move one)."""
    if bar is None:
        return {}
    return bar.__dict__.setdefault("aisimulate_counts", {})


def _tick(bar, new: Sequence[dict[str, Any]], counts: dict[str, int]) -> None:
    for r in new:
        counts[r["fate"]] = counts.get(r["fate"], 0) + 1
    if bar is not None and new:
        bar.update(len(new))
        bar.set_postfix_str(", ".join(f"{k} {v}" for k, v in sorted(counts.items())), refresh=False)


def run_local(request: dict[str, Any], journal: Journal, indices: list[int], jobs: int,
              progress: bool | None, on_result: Callable[[dict[str, Any]], None] | None = None,
              bar: Any = None) -> None:
    """Replay the candidates ``indices`` in this process: one ``SearchRun`` call on a
    worker thread (the core runs them on ``jobs`` goroutines and appends each result to
    the journal), watched from this thread in short waits: the journal's new lines move
    the bar, and Ctrl-C (or any exception here) stops the core (``pybind.Stop``) and is
    raised once it has returned (the results written stand: a resume continues). ``bar``:
    a progress bar (:func:`progress_bar`) to move instead of one of its own, left open.

    Raises:
        KeyboardInterrupt: Ctrl-C while it ran.
        ConfigError, DataError, SimulationError: from the core.
    """
    if not indices:
        return
    mod = _native.pybind()
    run_id = mod.NewRun()
    rq = dict(request, indices=indices, jobs=jobs, run_id=run_id, journal=journal.path)
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["value"] = _native.call("SearchRun", json.dumps(rq), "search")
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            result["error"] = exc

    offset = os.path.getsize(journal.path)
    own = bar is None
    bar = _bar(len(indices), progress) if own else bar
    counts = _counts(bar)
    worker = threading.Thread(target=work, name="aisimulate-search", daemon=True)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(_POLL_S)
            new, offset = journal.read_new(offset)
            _tick(bar, new, counts)
            if on_result:
                for r in new:
                    on_result(r)
        new, offset = journal.read_new(offset)
        _tick(bar, new, counts)
        if on_result:
            for r in new:
                on_result(r)
        if "error" in result:
            raise result["error"] from None
    except BaseException:
        if worker.is_alive():
            mod.Stop(run_id)
            worker.join(max(STOP_WAIT_S, 10.0))  # the candidates in flight return within a pass
        raise
    finally:
        if own and bar is not None:
            bar.close()
        mod.Forget(run_id)


def _ray_task(request: dict[str, Any], shipped: dict[str, Any], indices: list[int]) -> list[bytes]:
    """A Ray task: the question's files localized on the worker, the candidates replayed
    on its cores, their result lines returned."""
    import tempfile

    from ..._sweep.ray_backend import localize

    spec = request["spec"]
    localize(spec, shipped)
    with tempfile.TemporaryDirectory(prefix="aisimulate-search-") as tmp:
        path = os.path.join(tmp, JOURNAL)
        open(path, "wb").close()
        rq = dict(request, spec=spec, indices=indices, jobs=os.cpu_count() or 1, journal=path)
        _native.call("SearchRun", json.dumps(rq), "search")
        with open(path, "rb") as f:
            return [line for line in f.read().split(b"\n") if line.strip()]


def run_ray(request: dict[str, Any], journal: Journal, indices: list[int], progress: bool | None, *,
            address: str | None, chunk: int = 16,
            on_result: Callable[[dict[str, Any]], None] | None = None, bar: Any = None) -> None:
    """Replay the candidates ``indices`` as Ray tasks of ``chunk`` candidates each (each
    on one node's cores; the question's trace and model files shipped through the object
    store as sweeps ship them: ``aisimulate._sweep.ray_backend``), appending each task's
    results to the journal as it returns. Ctrl-C cancels the tasks still running; what
    returned stands. ``bar`` as :func:`run_local`'s.

    Raises:
        ImportError: Ray is not installed.
    """
    from ...binding import lazy as _lazy
    from ..._sweep.ray_backend import Shipper

    try:
        ray = _lazy.module("ray")
    except ImportError as exc:
        raise ImportError("search(backend='ray') needs Ray: pip install 'aisimulate[ray]'") from exc
    if not ray.is_initialized():
        ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    remote = ray.remote(num_cpus=1)(_ray_task)
    shipped = Shipper(ray).ship(request["spec"])
    pending = {remote.remote(request, shipped, indices[i:i + chunk]): i for i in range(0, len(indices), chunk)}
    own = bar is None
    bar = _bar(len(indices), progress) if own else bar
    counts = _counts(bar)
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2)
            for ref in ready:
                pending.pop(ref)
                lines = ray.get(ref)
                journal.append(lines)
                new = [json.loads(line) for line in lines]
                _tick(bar, new, counts)
                if on_result:
                    for r in new:
                        on_result(r)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if own and bar is not None:
            bar.close()


def elapsed(t0: float) -> float:
    return time.perf_counter() - t0
