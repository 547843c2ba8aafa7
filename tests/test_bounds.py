"""Bounded work for every input (issue 19): extreme inputs end in a result or a clean
error naming the field, file or line — never a hang, a panic or a wrapped clock."""

from __future__ import annotations

import json

import pytest

import aisimulate
from aisimulate import ConfigError, DataError

from conftest import write_mooncake
from test_cli import assert_input_error, run_cli, write_config

I64 = 2**63 - 1


@pytest.mark.parametrize("inp,out", [(I64, 1), (10, I64), (2**62, 2**62)])
def test_trace_row_near_int64_is_rejected_not_hung(tmp_path, base_spec, inp, out):
    # used to wrap prompt + output to a negative number and spin forever
    trace = write_mooncake(tmp_path / "t.jsonl", [
        {"timestamp": 0, "input_length": inp, "output_length": out},
        {"timestamp": 1, "input_length": 100, "output_length": 2}])
    base_spec["traffic"] = {"source": {"type": "mooncake", "path": str(trace)}, "load": {"mode": "trace"}}
    rep = aisimulate.replay(base_spec)
    first, second = rep.requests
    assert first["status"] == "rejected"
    # Qwen3-32B's max_position_embeddings is 40,960
    assert first["reason"] == f"prompt ({inp}) + output ({out}) tokens exceed max_model_len (40960)"
    assert second["status"] == "completed"


def test_clock_overflow_names_the_field_and_exits_2(tmp_path, base_spec):
    # each pass costs 1e9 ms = 1e15 ns (within the documented limit); 10,000 of them
    # would pass the clock's 2^60 ns after 1,152 passes
    base_spec["engine"]["perf"] = {"source": "linear", "base_ms": 1e9, "per_prefill_token_ms": 0,
                                   "per_decode_seq_ms": 0}
    base_spec["traffic"]["source"] = {"type": "synthetic", "num_requests": 1, "isl": 10, "osl": 10000}
    with pytest.raises(ConfigError) as e:
        aisimulate.replay(base_spec)
    assert e.value.field == "engine.perf"
    assert "past the end of the virtual clock" in str(e.value)
    proc = run_cli("replay", "--config", str(write_config(tmp_path / "r.yaml", base_spec)))
    assert_input_error(proc, "engine.perf", "a pass of worker 0 lasts 1e+06 s")


def test_trace_delay_past_the_clock_is_a_data_error(tmp_path, base_spec):
    trace = write_mooncake(tmp_path / "s.jsonl", [
        {"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 0},
        {"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 0, "delay": 9.2e12}])
    base_spec["traffic"] = {"source": {"type": "mooncake", "path": str(trace)},
                            "load": {"mode": "concurrency", "concurrency": 1}}
    with pytest.raises(DataError) as e:
        aisimulate.replay(base_spec)
    assert e.value.line == 2 and e.value.field == "delay"


def test_mooncake_with_a_byte_order_mark(tmp_path, base_spec):
    rows = [{"timestamp": 0, "input_length": 10, "output_length": 2}]
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    bom = tmp_path / "bom.jsonl"
    bom.write_text("\ufeff" + json.dumps(rows[0]) + "\n", encoding="utf-8")
    runs = []
    for p in (plain, bom):
        base_spec["traffic"] = {"source": {"type": "mooncake", "path": str(p)}, "load": {"mode": "trace"}}
        runs.append(aisimulate.replay(base_spec).summary)
    assert runs[0] == runs[1] and runs[0]["completed"] == 1
