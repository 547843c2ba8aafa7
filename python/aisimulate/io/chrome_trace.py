"""A replay as a Chrome / Perfetto trace (``--trace-out FILE``, ``report.to_chrome_trace``):
open it in ui.perfetto.dev (or chrome://tracing) to see every engine pass and every
request on the virtual clock.

The file is Chrome's JSON Trace Event Format (``{"traceEvents": [...]}``; ``ts`` and
``dur`` in µs of the virtual clock):

- one process per worker pool (``aggregated``, ``prefill``, ``decode``), one thread (a
  track) per worker: each engine pass is a complete event (``ph: "X"``) named ``prefill``,
  ``decode`` or ``mixed`` by what it computed, with ``args`` ``prefill_tokens``,
  ``prefill_requests``, ``decode_requests``, ``running``, ``waiting``, ``kv_blocks_used``,
  ``kv_blocks_cached`` and ``kv_blocks_total`` (the report's timeline columns);
- a counter per worker (``ph: "C"``, ``kv blocks wN``): blocks in use and cached at the
  start of each pass;
- the ``client`` process: each request as an async span (``ph: "b"`` / ``"e"``, id its
  ``request_id``) from its send to the end of its response, with a nested ``ttft`` span
  up to its first token; ``args`` ``status``, ``input_tokens``, ``output_tokens``,
  ``worker``.

It needs the pass timeline: ``aisimulate.replay(spec, timeline=True)``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ..report import ReplayReport

__all__ = ["write_chrome_trace", "POOL_PIDS", "CLIENT_PID"]

#: Process id of each pool's track group, and of the client's.
POOL_PIDS = {"aggregated": 1, "prefill": 2, "decode": 3}
CLIENT_PID = 10


def _us(ms: float) -> str:
    """A virtual-clock time in ms as µs with ns resolution (3 decimals)."""
    return f"{ms * 1000.0:.3f}"


def _pass_name(prefill_tokens: int, decode_requests: int) -> str:
    if prefill_tokens and decode_requests:
        return "mixed"
    return "prefill" if prefill_tokens else "decode"


def _write_events(report: "ReplayReport", f: TextIO) -> int:
    tl = report.timeline
    if tl is None:
        raise ValueError("a trace needs the pass timeline: replay with timeline=True "
                         "(aisimulate.replay(spec, timeline=True))")
    n = 0
    first = [True]

    def emit(line: str) -> None:
        nonlocal n
        f.write(line if first[0] else ",\n" + line)
        first[0] = False
        n += 1

    f.write('{"displayTimeUnit": "ms", "otherData": {"clock": "aisimulate virtual clock, µs from the start '
            'of the replay"}, "traceEvents": [\n')
    cols = {k: v.tolist() for k, v in tl.items()}
    pools = sorted(set(cols["pool"]), key=lambda p: POOL_PIDS.get(p, 9))
    workers = sorted(set(zip(cols["pool"], cols["worker"])), key=lambda pw: (POOL_PIDS.get(pw[0], 9), pw[1]))
    for pool in pools:
        pid = POOL_PIDS.get(pool, 9)
        emit(f'{{"ph": "M", "name": "process_name", "pid": {pid}, "args": {{"name": "{pool} workers"}}}}')
        emit(f'{{"ph": "M", "name": "process_sort_index", "pid": {pid}, "args": {{"sort_index": {pid}}}}}')
    for pool, w in workers:
        emit(f'{{"ph": "M", "name": "thread_name", "pid": {POOL_PIDS.get(pool, 9)}, "tid": {w + 1}, '
             f'"args": {{"name": "worker {w}"}}}}')
    emit(f'{{"ph": "M", "name": "process_name", "pid": {CLIENT_PID}, "args": {{"name": "client"}}}}')
    emit(f'{{"ph": "M", "name": "process_sort_index", "pid": {CLIENT_PID}, "args": {{"sort_index": {CLIENT_PID}}}}}')
    for pool, w, start, end, pt, pr, dr, run, wait, used, cached, total in zip(
            cols["pool"], cols["worker"], cols["start_ms"], cols["end_ms"], cols["prefill_tokens"],
            cols["prefill_requests"], cols["decode_requests"], cols["running"], cols["waiting"],
            cols["kv_blocks_used"], cols["kv_blocks_cached"], cols["kv_blocks_total"]):
        pid = POOL_PIDS.get(pool, 9)
        emit(f'{{"ph": "X", "name": "{_pass_name(pt, dr)}", "cat": "pass", "pid": {pid}, "tid": {w + 1}, '
             f'"ts": {_us(start)}, "dur": {_us(end - start)}, "args": {{"prefill_tokens": {pt}, '
             f'"prefill_requests": {pr}, "decode_requests": {dr}, "running": {run}, "waiting": {wait}, '
             f'"kv_blocks_used": {used}, "kv_blocks_cached": {cached}, "kv_blocks_total": {total}}}}}')
        emit(f'{{"ph": "C", "name": "kv blocks w{w}", "pid": {pid}, "ts": {_us(start)}, '
             f'"args": {{"used": {used}, "cached": {cached}}}}}')
    cols = report.record_columns()
    statuses = list(cols["_statuses"])
    worker = cols.get("worker")
    for rid, st, isl, osl, send, first_tok, end, wk in zip(
            cols["request_id"].tolist(), cols["status"].tolist(), cols["input_tokens"].tolist(),
            cols["output_tokens"].tolist(), cols["send_ms"].tolist(), cols["first_token_ms"].tolist(),
            cols["end_ms"].tolist(), worker.tolist() if worker is not None else [-1] * len(cols["request_id"])):
        status = statuses[st] if 0 <= st < len(statuses) else "unknown"
        wtxt = "null" if wk < 0 else str(wk)
        emit(f'{{"ph": "b", "name": "request", "cat": "request", "id": {rid}, "pid": {CLIENT_PID}, '
             f'"ts": {_us(send)}, "args": {{"request_id": {rid}, "status": "{status}", '
             f'"input_tokens": {isl}, "output_tokens": {osl}, "worker": {wtxt}}}}}')
        if not math.isnan(first_tok):
            emit(f'{{"ph": "b", "name": "ttft", "cat": "request", "id": {rid}, "pid": {CLIENT_PID}, '
                 f'"ts": {_us(send)}}}')
            emit(f'{{"ph": "e", "name": "ttft", "cat": "request", "id": {rid}, "pid": {CLIENT_PID}, '
                 f'"ts": {_us(first_tok)}}}')
        emit(f'{{"ph": "e", "name": "request", "cat": "request", "id": {rid}, "pid": {CLIENT_PID}, '
             f'"ts": {_us(end)}}}')
    f.write("\n]}\n")
    return n


def write_chrome_trace(report: "ReplayReport", path: str | os.PathLike[str]) -> Path:
    """Write the trace to ``path`` atomically (a temporary name in the same folder,
    renamed when complete), creating its folder when missing.

    Returns:
        the path written.

    Raises:
        ValueError: the report has no timeline, or ``path`` is empty.
        ConfigError: ``path`` is a folder, or a file the replay read (its config, trace,
            model or system file).
        OSError: the file cannot be written (no file is left behind).
    """
    from .files import refuse_overwrite, write_replacing

    text = os.fspath(path)
    if not str(text).strip():
        raise ValueError("the trace file name is empty")
    final = Path(text)
    if final.is_dir():
        raise ConfigError("", f"the trace file {final} is a folder: give a file name")
    refuse_overwrite(final, report.input_files(), "choose another trace file")
    final.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            _write_events(report, f)

    write_replacing(final, f".{final.name}.aisimulate-", write)
    return final
