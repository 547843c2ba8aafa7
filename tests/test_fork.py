"""A process forked after the Go core started (multiprocessing's default ``fork`` start
method on Linux) used to hang in its first replay (4 of 4 children of a parent that had
run a 20,000-request replay); its native calls now run in a fresh interpreter."""

from __future__ import annotations

import multiprocessing as mp
import warnings

import pytest

import aisimulate

_PARENT = {"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm"},
           "traffic": {"source": {"type": "synthetic", "num_requests": 20_000, "isl": 512, "osl": 64},
                       "load": {"mode": "concurrency", "concurrency": 64}}}
_CHILD = {"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm"},
          "traffic": {"source": {"type": "synthetic", "num_requests": 50, "isl": 100, "osl": 10},
                      "load": {"mode": "concurrency", "concurrency": 4}}}


def _child(queue) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            queue.put(("ok", aisimulate.replay(_CHILD).to_json(),
                       [str(w.message) for w in caught]))
        except Exception as exc:  # noqa: BLE001 - reported to the parent
            queue.put(("error", f"{type(exc).__name__}: {exc}", []))


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="no fork start method")
def test_a_child_forked_after_a_replay_works():
    aisimulate.replay(_PARENT)  # the Go runtime has run threads and collections
    want = aisimulate.replay(_CHILD).to_json()
    ctx = mp.get_context("fork")
    for _ in range(2):
        queue = ctx.Queue()
        proc = ctx.Process(target=_child, args=(queue,))
        proc.start()
        proc.join(600)  # a hang guard: a busy machine is slow, not stuck
        if proc.is_alive():
            proc.kill()
            pytest.fail("the forked child hung in its replay")
        kind, got, warned = queue.get(timeout=10)
        assert kind == "ok", got
        assert got == want  # the same report as the parent's own
        assert any("forked after aisimulate's Go core started" in w for w in warned)
