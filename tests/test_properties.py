"""Property test: many random small replays, every report invariant checked.

Seeded, so a failure names a reproducible config. Each replay mixes features at random:
aggregated or P/D, synthetic / sessions / Mooncake rows, open or closed loop, the client
path (send leg, detokenization, response overhead, timeouts), small KV caches that force
preemption, eviction and rejection.
"""

from __future__ import annotations

import json
import math
import random

import pytest

import aisimulate

from conftest import LINEAR_PERF, write_mooncake

N_CONFIGS = 150


def _config(seed: int, tmp_path) -> dict:
    rng = random.Random(seed)
    blocks, block_size = rng.choice([40, 80, 400]), rng.choice([8, 16])
    eng: dict = {"model": "Qwen/Qwen3-8B", "system": "h100_sxm",
                 "perf": dict(LINEAR_PERF) if rng.random() < 0.7 else {"source": "roofline"},
                 # max_model_len: the most the cache holds (the start-up KV check)
                 "scheduler": {"num_gpu_blocks": blocks, "block_size": block_size, "max_model_len": blocks * block_size,
                               "max_num_seqs": rng.choice([2, 4, 16]), "max_num_batched_tokens": rng.choice([256, 1024])}}
    if rng.random() < 0.4:
        eng["workers"] = {"disaggregated": {
            "prefill": {"count": rng.randint(1, 2)}, "decode": {"count": rng.randint(1, 2)},
            "kv_transfer": {"bandwidth_gb_per_s": rng.choice([5, 50]), "latency_ms": 0.2,
                            "kv_bytes_per_token": 100_000}}}
    else:
        eng["workers"] = {"aggregated": {"count": rng.randint(1, 3),
                                         "placement": rng.choice(["round_robin", "least_outstanding"])}}
    if rng.random() < 0.5:
        eng["tokenization"] = {"send_ms": rng.choice([0, 0.3])}
    if rng.random() < 0.5:
        eng["detokenization"] = {"base_us": rng.choice([0, 200]), "per_token_us": rng.choice([0, 50, 2000])}
    kind = rng.choice(["synthetic", "sessions", "mooncake"])
    load: dict = {"mode": rng.choice(["rate", "concurrency"])}
    if kind == "synthetic":
        src = {"type": "synthetic", "num_requests": rng.randint(1, 25),
               "isl": {"kind": "uniform", "min": 1, "max": 600}, "osl": {"kind": "uniform", "min": 1, "max": 40}}
    elif kind == "sessions":
        src = {"type": "sessions", "num_sessions": rng.randint(1, 6), "turns": {"kind": "uniform", "min": 1, "max": 4},
               "isl": {"kind": "uniform", "min": 1, "max": 200}, "osl": {"kind": "uniform", "min": 1, "max": 30}}
        load["inter_turn_delay_ms"] = rng.choice([0, 3])
    else:
        rows, t = [], 0.0
        for i in range(rng.randint(1, 20)):
            t += rng.choice([0, 1, 5, 30])
            isl = rng.randint(1, 900)  # at most ⌈isl / 512⌉ ids: a further one is refused
            row = {"timestamp": t, "input_length": isl, "output_length": rng.randint(1, 30),
                   "hash_ids": [rng.randint(0, 3) for _ in range(rng.randint(0, -(-isl // 512)))]}
            if rng.random() < 0.3:
                row["session_id"] = rng.randint(0, 2)
            rows.append(row)
        src = {"type": "mooncake", "path": str(write_mooncake(tmp_path / f"t{seed}.jsonl", rows))}
        load["mode"] = rng.choice(["trace", "rate", "concurrency"])
    if load["mode"] == "rate":
        load.update(rate_rps=rng.choice([20.0, 500.0]), arrival=rng.choice(["poisson", "constant"]))
    elif load["mode"] == "concurrency":
        load["concurrency"] = rng.randint(1, 6)
    if rng.random() < 0.5:
        load["response_overhead"] = {"base_ms": rng.choice([0, 1.4]), "per_output_token_us": rng.choice([0, 3.65])}
    if rng.random() < 0.3:
        load["request_timeout_ms"] = rng.choice([5, 40, 200])
    return {"engine": eng, "traffic": {"source": src, "load": load}, "execution": {"seed": seed}}


def _check(spec: dict, report) -> None:
    reqs, s = report.requests, report.summary
    statuses = [r["status"] for r in reqs]
    assert s["completed"] + s["rejected"] + s["failed"] + s["canceled"] == len(reqs)      # INV-1
    assert s["completed"] == statuses.count("completed")
    timeout = spec["traffic"]["load"].get("request_timeout_ms")
    for r in reqs:
        t = [r["send_ms"], r["arrival_ms"], r["first_token_ms"], r["end_ms"], r["release_ms"]]
        known = [x for x in t if x is not None]
        assert known == sorted(known), r                                                 # INV-3/4
        assert r["e2e_ms"] == pytest.approx(r["end_ms"] - r["send_ms"], abs=1e-9)
        if r["first_token_ms"] is not None:
            assert r["ttft_ms"] == pytest.approx(r["first_token_ms"] - r["send_ms"], abs=1e-9)
        if r["tpot_ms"] is not None:
            assert r["output_tokens"] >= 2
            assert r["tpot_ms"] == pytest.approx((r["e2e_ms"] - r["ttft_ms"]) / (r["output_tokens"] - 1), rel=1e-9)
        if r["status"] == "canceled":
            assert timeout is not None and r["e2e_ms"] == pytest.approx(timeout, abs=1e-6)
        elif timeout is not None:
            assert r["e2e_ms"] <= timeout + 1e-6
    done = [r for r in reqs if r["status"] == "completed"]
    if done:
        assert s["e2e_ms"]["mean"] == pytest.approx(sum(r["e2e_ms"] for r in done) / len(done), rel=1e-9)
    # AIPerf's window: first completed request sent → last completed response received
    assert s["duration_ms"] == pytest.approx(
        max(r["end_ms"] for r in done) - min(r["send_ms"] for r in done) if done else 0.0, abs=1e-9)
    text = json.dumps(s) + json.dumps(list(reqs))
    assert "NaN" not in text and "Infinity" not in text
    for v in (s.get("request_throughput_rps"), s.get("output_token_throughput_tps")):
        assert v is None or math.isfinite(v)


@pytest.mark.parametrize("chunk", range(5))
def test_random_replays_keep_every_invariant(tmp_path, chunk):
    for seed in range(chunk * N_CONFIGS // 5, (chunk + 1) * N_CONFIGS // 5):
        spec = _config(seed, tmp_path)
        try:
            report = aisimulate.replay(spec)
        except Exception as exc:  # pragma: no cover - the message carries the seed
            raise AssertionError(f"seed {seed}: {exc}\n{json.dumps(spec)}") from exc
        try:
            _check(spec, report)
        except AssertionError as exc:
            raise AssertionError(f"seed {seed}: {exc}\n{json.dumps(spec)}") from exc


def test_the_random_configs_reach_every_feature(tmp_path):
    # the property test above is only as good as what it reaches
    # (a failed handoff cannot happen once the start-up check passes: every pool holds
    # a max_model_len request; a preempted request re-finding its blocks can)
    seen = {"pd": 0, "canceled": 0, "rejected": 0, "preempted": 0, "refound": 0, "sessions": 0, "cached": 0}
    for seed in range(N_CONFIGS):
        spec = _config(seed, tmp_path)
        report = aisimulate.replay(spec)
        seen["pd"] += "disaggregated" in spec["engine"]["workers"]
        seen["canceled"] += report.summary["canceled"]
        seen["rejected"] += report.summary["rejected"]
        seen["refound"] += sum(w["preempted_hits"] for p in report.metadata["pools"] for w in p["prefix_cache"])
        seen["preempted"] += report.summary["preemptions"]
        seen["sessions"] += any(r["session_id"] is not None for r in report.requests)
        seen["cached"] += sum(r["cached_tokens"] for r in report.requests)
    assert all(v > 0 for v in seen.values()), seen
