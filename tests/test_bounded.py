"""Property test: random and boundary configs each end, within a time and a
memory bound, in a result whose report invariants hold or in a clean error
(ConfigError or DataError naming the field, file or line) — never a hang, a panic or
another exception.

Hypothesis draws the configs from a fixed seed (``derandomize``), so a failure names a
reproducible config; the memory bound is the replay's own budget
(``execution.max_memory_gb``), checked per replay as the growth of the process's peak
RSS over its RSS before the replay (VmHWM, reset through /proc/self/clear_refs); the
time bound is checked per replay, in CPU time (with a loose wall-time hang guard).
"""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import aisimulate
from aisimulate import ConfigError, DataError

I64 = 2**63 - 1

# A draw is an ordinary config (most of them run), then, most of the time, one field set
# to a boundary value: 0, 1, the documented limits and just past them, int64's top, tiny
# and huge floats, a wrong type.
_BOUNDARY = [0, 1, -1, 2**24 + 1, 2**30, 2**30 + 1, 2**53 + 1, 2**62, I64, 0.0, 1e-300, 1e-9,
             0.001, 1e9, 1e9 + 1, 1e12, 1e300, -1.0, "x", None, True, [], {}]
_FIELDS = [
    "engine.scheduler.max_num_seqs", "engine.scheduler.max_num_batched_tokens",
    "engine.scheduler.block_size", "engine.scheduler.num_gpu_blocks", "engine.scheduler.max_model_len",
    "engine.scheduler.gpu_memory_utilization", "engine.perf.base_ms", "engine.perf.per_prefill_token_ms",
    "engine.perf.per_decode_seq_ms", "engine.tokenization.send_ms", "engine.detokenization.base_us",
    "engine.detokenization.per_token_us", "engine.workers.aggregated.count", "engine.workers.aggregated.tp",
    "traffic.source.num_requests", "traffic.source.isl", "traffic.source.osl",
    "traffic.load.concurrency", "traffic.load.inter_turn_delay_ms", "traffic.load.request_timeout_ms",
    "traffic.load.response_overhead.base_ms", "traffic.load.response_overhead.jitter_ms",
    "traffic.stop.max_requests", "traffic.stop.max_duration_s", "execution.seed",
]


@st.composite
def _spec(draw) -> dict:
    blocks = draw(st.integers(200, 5000))
    block_size = draw(st.sampled_from([8, 16, 32]))
    seqs = draw(st.integers(1, 64))
    if draw(st.booleans()):
        perf = {"source": "linear", "base_ms": draw(st.floats(0.1, 5)),
                "per_prefill_token_ms": draw(st.floats(0, 0.05)), "per_decode_seq_ms": draw(st.floats(0, 0.5))}
    else:
        perf = {"source": "roofline"}
    engine = {"model": "Qwen/Qwen3-8B", "system": "h100_sxm", "perf": perf,
              "scheduler": {"num_gpu_blocks": blocks, "block_size": block_size, "max_num_seqs": seqs,
                            "max_num_batched_tokens": draw(st.integers(max(seqs, 64), 8192)),
                            "max_model_len": min(blocks * block_size, 40960),
                            "enable_prefix_caching": draw(st.booleans())}}
    if draw(st.booleans()):
        engine["workers"] = {"aggregated": {"count": draw(st.integers(1, 3))}}
    else:
        engine["workers"] = {"disaggregated": {"prefill": {"count": 1}, "decode": {"count": draw(st.integers(1, 2))},
                                               "kv_transfer": {"bandwidth_gb_per_s": draw(st.floats(1, 100))}}}
    if draw(st.booleans()):
        engine["tokenization"] = {"send_ms": draw(st.floats(0, 1))}
        engine["detokenization"] = {"base_us": draw(st.floats(0, 300)), "per_token_us": draw(st.floats(0, 5))}
    length = lambda lo, hi: st.one_of(st.integers(lo, hi), st.fixed_dictionaries(  # noqa: E731
        {"kind": st.just("uniform"), "min": st.just(lo), "max": st.integers(lo, hi)}))
    if draw(st.booleans()):
        source = {"type": "synthetic", "num_requests": draw(st.integers(1, 40)),
                  "isl": draw(length(1, 2000)), "osl": draw(length(0, 200))}
    else:
        source = {"type": "sessions", "num_sessions": draw(st.integers(1, 5)),
                  "turns": draw(length(1, 4)), "isl": draw(length(1, 500)), "osl": draw(length(0, 50))}
    if draw(st.booleans()):
        load = {"mode": "concurrency", "concurrency": draw(st.integers(1, 8)),
                "response_overhead": {"base_ms": draw(st.floats(0, 2)), "per_output_token_us": 3.65,
                                      "jitter_ms": draw(st.floats(0, 1))},
                "request_timeout_ms": draw(st.sampled_from([0, 50, 60000]))}
    else:
        load = {"mode": "rate", "rate_rps": draw(st.floats(1, 200)),
                "arrival": draw(st.sampled_from(["poisson", "constant", "gamma"]))}
    spec = {"engine": engine, "traffic": {"source": source, "load": load}}
    if draw(st.integers(0, 3)):  # three draws in four poison one field
        _set(spec, draw(st.sampled_from(_FIELDS)), draw(st.sampled_from(_BOUNDARY)))
    return spec


def _set(spec: dict, dotted: str, value) -> None:
    node = spec
    *parts, last = dotted.split(".")
    for p in parts:
        node = node.setdefault(p, {}) if isinstance(node.get(p, {}), dict) else {}
    node[last] = value


#: Each replay's memory bound: the budget _bounded gives it (execution.max_memory_gb: 1).
MEMORY_BOUND_BYTES = 1 << 30


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))


def _reset_peak_rss() -> int | None:
    """Reset the process's peak RSS (VmHWM) to its current RSS (Linux: writing 5 to
    /proc/self/clear_refs) and return that RSS in bytes; None where it cannot be reset."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_kb("VmRSS") * 1024
    except OSError:
        return None


#: Each replay's bound in CPU seconds of this process (the core's threads included): the
#: draws are small or refused, so one takes well under a second of CPU. CPU time, not
#: wall time, so that a machine whose cores are busy with other work does not fail it.
TIME_BOUND_S = 60

#: A hang guard in wall seconds (a replay that waits without using CPU is not bounded by
#: :data:`TIME_BOUND_S`): loose, so that a busy machine never reaches it.
HANG_BOUND_S = 600


def _bounded(spec: dict) -> dict:
    """The drawn spec with a 1 GB budget and at most 64 requests: a random config may be
    valid and simply large; the property is that it ends, not that it is small."""
    spec = dict(spec, execution={"max_memory_gb": 1.0})
    stop = dict(spec["traffic"].get("stop") or {})
    if not (isinstance(stop.get("max_requests"), int) and 0 < stop["max_requests"] <= 64):
        stop["max_requests"] = 64
    spec["traffic"] = dict(spec["traffic"], stop=stop)
    return spec


def _check_report(rep) -> None:
    s = rep.summary
    statuses = [r["status"] for r in rep.requests]
    assert s["completed"] + s["rejected"] + s["failed"] + s["canceled"] == len(statuses)  # INV-1
    assert s["completed"] == statuses.count("completed")
    for r in rep.requests:
        if r["status"] == "completed":  # INV-3, INV-4: a timeline in order
            assert r["send_ms"] <= r["arrival_ms"] <= r["end_ms"] <= r["release_ms"]
            if r["first_token_ms"] is not None:
                assert r["arrival_ms"] <= r["first_token_ms"] <= r["end_ms"]
            assert r["output_tokens"] >= 0 and r["input_tokens"] >= 1
    for k, v in s.items():  # no NaN or infinity in a report
        if isinstance(v, float):
            assert math.isfinite(v), (k, v)
        elif isinstance(v, dict):
            assert all(not isinstance(x, float) or math.isfinite(x) for x in v.values()), (k, v)


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_spec())
def test_any_config_ends_in_a_result_or_a_clean_error(spec):
    spec = _bounded(spec)
    rss0 = _reset_peak_rss()
    start, cpu = time.monotonic(), time.process_time()
    try:
        rep = aisimulate.replay(spec)
    except (ConfigError, DataError) as exc:
        event(f"error on {getattr(exc, 'field', '') or 'a data file'}")
        assert str(exc)
        assert len(str(exc)) < 4200  # messages quote at most a short part of a value
    else:
        event("ran")
        _check_report(rep)
    assert time.process_time() - cpu < TIME_BOUND_S, spec
    assert time.monotonic() - start < HANG_BOUND_S, spec
    if rss0 is not None:  # the replay's own peak: the process's high-water mark since the reset
        assert _status_kb("VmHWM") * 1024 - rss0 <= MEMORY_BOUND_BYTES, spec
