"""The client path through the Python API: values, errors, sessions."""

from __future__ import annotations

import math

import pytest

import aisimulate
from aisimulate import ConfigError

from conftest import write_mooncake


@pytest.mark.parametrize("where,key,value", [
    ("engine.tokenization", "send_ms", -0.1),
    ("engine.tokenization", "send_ms", math.nan),
    ("engine.tokenization", "per_token_us", -1),
    ("engine.tokenization", "per_token_us", math.inf),
    ("engine.detokenization", "base_us", math.inf),
    ("engine.detokenization", "per_token_us", "2"),
    ("traffic.load.response_overhead", "base_ms", -1),
    ("traffic.load.response_overhead", "per_output_token_us", True),
    ("traffic.load", "inter_turn_delay_ms", -5),
])
def test_bad_client_costs_name_the_field(base_spec, where, key, value):
    node = base_spec
    for part in where.split("."):
        node = node.setdefault(part, {})
    node[key] = value
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(base_spec)
    assert e.value.field == f"{where}.{key}"


def test_worked_example_3_release_and_next_send(tmp_path, base_spec):
    # concurrency 1; detokenization 500 µs + 100 µs/token; overhead 1.0 ms + 100 µs/token.
    # r1 alone (ISL 1000, OSL 3) is received at 18.80 ms; release = 18.80 + 1.0 + 0.3.
    trace = write_mooncake(tmp_path / "t.jsonl", [
        {"timestamp": 0, "input_length": 1000, "output_length": 3, "hash_ids": [1, 2]},
        {"timestamp": 0, "input_length": 100, "output_length": 2, "hash_ids": [3]},
    ])
    base_spec["engine"]["scheduler"] = {"max_num_batched_tokens": 512, "max_num_seqs": 4,
                                        "block_size": 16, "num_gpu_blocks": 1000, "max_model_len": 16000}
    base_spec["engine"]["detokenization"] = {"base_us": 500, "per_token_us": 100}
    base_spec["traffic"] = {
        "source": {"type": "mooncake", "path": str(trace)},
        "load": {"mode": "concurrency", "concurrency": 1,
                 "response_overhead": {"base_ms": 1.0, "per_output_token_us": 100}},
    }
    r1, r3 = aisimulate.replay(base_spec).requests
    assert r1["end_ms"] == pytest.approx(18.80, abs=1e-9)
    assert r1["release_ms"] == pytest.approx(20.10, abs=1e-9)
    assert r3["send_ms"] == r1["release_ms"]


def test_sessions_reuse_the_conversation(base_spec):
    base_spec["traffic"] = {
        "source": {"type": "sessions", "num_sessions": 3, "turns": 4, "isl": 300, "osl": 10},
        "load": {"mode": "concurrency", "concurrency": 3, "inter_turn_delay_ms": 2.5},
    }
    report = aisimulate.replay(base_spec)
    reqs = sorted(report.requests, key=lambda r: (r["session_id"], r["turn"]))
    assert len(reqs) == 12
    for prev, cur in zip(reqs, reqs[1:]):
        if prev["session_id"] != cur["session_id"]:
            continue
        assert cur["send_ms"] == pytest.approx(prev["release_ms"] + 2.5, abs=1e-9)
        assert cur["input_tokens"] == prev["input_tokens"] + 10 + 300
        assert cur["cached_tokens"] > 0


def test_pd_table_shows_each_pool(base_spec):
    base_spec["engine"]["workers"] = {"disaggregated": {
        "prefill": {"count": 1}, "decode": {"count": 1},
        "kv_transfer": {"bandwidth_gb_per_s": 50, "latency_ms": 0.2}}}
    report = aisimulate.replay(base_spec)
    table = report.table()
    assert "P/D prefill 1 × TP1 + decode 1 × TP1" in table
    pools = report.metadata["pools"]
    # each pool holds one GPU for the whole run: half of the total GPU hours
    assert pools[0]["gpu_hours"] == pytest.approx(report.summary["gpu_hours"] / 2)
    assert "Prefill pool:" in table and "Decode pool:" in table
    assert all(r["transfer_ms"] is not None for r in report.requests if r["output_tokens"] > 0)
