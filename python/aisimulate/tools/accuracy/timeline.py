"""A replay step by step: each request's path to its first token through the engine's passes.

The time from a request's send to its first token at the client splits, on the pass
timeline of its worker (``aisimulate.replay(spec, timeline=True)``), into

- ``intake_ms``: send → arrival at the engine (the client's send leg, the front end's
  input processing);
- ``inflight_ms``: the rest of the pass that was running when it arrived (0 when the
  worker was idle);
- ``passes`` / ``passes_ms``: the passes after that one, up to and including the pass
  whose end produced its first token (the passes it queued through and its own
  prefill chunks), and their summed duration;
- ``idle_ms``: time between those passes when the worker ran none;
- ``delivery_ms``: that pass's end → the first token at the client (output handling).

so that ``ttft_ms = intake_ms + inflight_ms + passes_ms + idle_ms + delivery_ms``.
``scripts/row_timeline.py`` prints it for one silicon row of the accuracy harness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np


@dataclass(frozen=True)
class FirstTokenPath:
    """One request's path to its first token (module docstring)."""
    request_id: int
    send_ms: float
    arrival_ms: float
    first_token_ms: float
    intake_ms: float
    inflight_ms: float
    passes: int
    passes_ms: float
    idle_ms: float
    delivery_ms: float
    #: index into the worker's passes of the first pass after the one in flight
    first_pass: int

    @property
    def ttft_ms(self) -> float:
        return self.first_token_ms - self.send_ms


def _worker_passes(timeline: Mapping[str, Any], pool: str, worker: int) -> tuple[np.ndarray, np.ndarray]:
    sel = (np.asarray(timeline["pool"]) == pool) & (np.asarray(timeline["worker"]) == worker)
    starts = np.asarray(timeline["start_ms"], dtype=float)[sel]
    ends = np.asarray(timeline["end_ms"], dtype=float)[sel]
    order = np.argsort(starts, kind="stable")
    return starts[order], ends[order]


def first_token_path(request: Mapping[str, Any], starts: np.ndarray, ends: np.ndarray) -> FirstTokenPath:
    """The path of one completed request through one worker's passes (``starts`` and
    ``ends`` sorted by start).

    Raises:
        ValueError: the request has no first token, or no pass ends by its first token."""
    if request.get("first_token_ms") is None:
        raise ValueError(f"request {request.get('request_id')}: no first token")
    send, arrival, first = float(request["send_ms"]), float(request["arrival_ms"]), float(request["first_token_ms"])
    # the last pass that started before the arrival (one starting at it may hold the
    # request): in flight if it ends after it
    i = int(np.searchsorted(starts, arrival, side="left")) - 1
    inflight = max(0.0, float(ends[i]) - arrival) if i >= 0 else 0.0
    k0 = i + 1
    # the pass that produced the first token: the last one ending by it
    kf = int(np.searchsorted(ends, first, side="right")) - 1
    if kf < k0:
        raise ValueError(f"request {request.get('request_id')}: no pass ends between its arrival and its first token")
    passes_ms = float(np.sum(ends[k0:kf + 1] - starts[k0:kf + 1]))
    after_inflight = max(arrival, float(ends[i])) if i >= 0 else arrival
    idle = float(ends[kf]) - after_inflight - passes_ms
    return FirstTokenPath(request_id=int(request["request_id"]), send_ms=send, arrival_ms=arrival,
                          first_token_ms=first, intake_ms=arrival - send, inflight_ms=inflight,
                          passes=kf - k0 + 1, passes_ms=passes_ms, idle_ms=max(0.0, idle),
                          delivery_ms=first - float(ends[kf]), first_pass=k0)


def first_token_paths(requests: Sequence[Mapping[str, Any]], timeline: Mapping[str, Any]) -> list[FirstTokenPath]:
    """:func:`first_token_path` of every completed request, each on its own worker's
    passes (an aggregated worker: ``pool`` "aggregated", the request's ``worker``)."""
    cache: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
    out = []
    for r in requests:
        if r.get("status") != "completed":
            continue
        key = ("aggregated", int(r.get("worker") or 0))
        if key not in cache:
            cache[key] = _worker_passes(timeline, *key)
        out.append(first_token_path(r, *cache[key]))
    return out


def mean_path(paths: Sequence[FirstTokenPath]) -> dict[str, float]:
    """The means of a set of paths' parts (and of their TTFT)."""
    n = len(paths)
    if n == 0:
        raise ValueError("no paths")
    fields = ("ttft_ms", "intake_ms", "inflight_ms", "passes", "passes_ms", "idle_ms", "delivery_ms")
    return {f: sum(float(getattr(p, f)) for p in paths) / n for f in fields}
