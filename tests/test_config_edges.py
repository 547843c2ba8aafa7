"""Edge cases of the config compiler found by trying to break it."""

from __future__ import annotations

import numpy as np
import pytest

import aisimulate
from aisimulate import ConfigError


def test_yaml_exponent_without_dot_is_a_number(tmp_path, base_spec):
    # PyYAML alone reads 1e1 as the string "1e1" (YAML 1.1); YAML 1.2 reads a number.
    path = tmp_path / "c.yaml"
    path.write_text(
        "engine: {model: Qwen/Qwen3-32B, system: h100_sxm, scheduler: {num_gpu_blocks: 1e3},\n"
        "  perf: {source: linear, base_ms: 2.0, per_prefill_token_ms: 1e-2, per_decode_seq_ms: 0.1}}\n"
        "traffic: {source: {type: synthetic, num_requests: 2, isl: 100, osl: 2},\n"
        "  load: {mode: rate, rate_rps: 1e1, arrival: constant}}\n")
    spec = aisimulate.load_config(path)
    assert spec.data["traffic"]["load"]["rate_rps"] == 10.0
    assert spec.data["engine"]["perf"]["per_prefill_token_ms"] == 0.01
    assert spec.data["engine"]["scheduler"]["num_gpu_blocks"] == 1000  # whole float → integer


def test_numpy_scalars_in_a_dict(base_spec):
    base_spec["traffic"]["source"]["num_requests"] = np.int64(3)
    base_spec["traffic"]["load"]["rate_rps"] = np.float32(4.0)
    spec = aisimulate.load_config(base_spec)
    assert spec.data["traffic"]["source"]["num_requests"] == 3
    assert spec.data["traffic"]["load"]["rate_rps"] == 4.0


@pytest.mark.parametrize("section,key", [
    ("execution", "mode"), ("engine", "backend"), ("engine.perf", "source"),
    ("engine.workers.aggregated", "placement"),
])
def test_empty_string_is_not_the_default(base_spec, section, key):
    node = base_spec
    for part in section.split("."):
        node = node.setdefault(part, {})
    node[key] = ""
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(base_spec)
    assert e.value.field == f"{section}.{key}"
    assert "must not be empty" in str(e.value)


@pytest.mark.parametrize("path,value,field", [
    (("engine", "scheduler", "num_gpu_blocks"), 10**12, "engine.scheduler.num_gpu_blocks"),
    (("engine", "scheduler", "block_size"), 10**9, "engine.scheduler.block_size"),
    # max_num_seqs given: left out, vLLM's default would shrink to max_num_batched_tokens
    (("engine", "scheduler"), {"max_num_seqs": 256, "max_num_batched_tokens": 8}, "engine.scheduler.max_num_batched_tokens"),
    (("engine", "workers"), {"aggregated": {"count": 10**6}}, "engine.workers.aggregated.count"),
    # a field of another kind names itself (it belongs to uniform, normal or lognormal)
    (("traffic", "source", "isl"), {"kind": "fixed", "value": 10, "min": 3}, "traffic.source.isl.min"),
    (("traffic", "source", "isl"), {"kind": "normal", "mean": 100}, "traffic.source.isl.min"),
])
def test_limits_and_dist_shapes(base_spec, path, value, field):
    node = base_spec
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(base_spec)
    assert e.value.field == field


def test_huge_concurrency_with_few_requests_is_fast(base_spec):
    # a closed loop starts clients only while the workload has requests
    base_spec["traffic"]["load"] = {"mode": "concurrency", "concurrency": 10_000_000}
    report = aisimulate.replay(base_spec)
    assert report.summary["completed"] == 5


def test_max_model_len_beyond_the_model(base_spec):
    base_spec["engine"]["scheduler"]["max_model_len"] = 10_000_000
    with pytest.raises(ConfigError) as e:
        aisimulate.replay(base_spec)
    assert e.value.field == "engine.scheduler.max_model_len"
    assert "40960" in str(e.value)


def test_empty_trace_is_a_data_error(tmp_path, base_spec):
    trace = tmp_path / "blank.jsonl"
    trace.write_text("\n  \n")
    base_spec["traffic"] = {"source": {"type": "mooncake", "path": str(trace)}, "load": {"mode": "trace"}}
    with pytest.raises(aisimulate.DataError) as e:
        aisimulate.replay(base_spec)
    assert "no requests" in str(e.value)
    assert e.value.file == str(trace)


@pytest.mark.parametrize("path,value,field", [
    (("engine", "tokenization"), {"send_ms": 1e13}, "engine.tokenization.send_ms"),
    (("traffic", "load", "response_overhead"), {"base_ms": 1e15, "per_output_token_us": 0},
     "traffic.load.response_overhead.base_ms"),
    (("traffic", "load", "inter_turn_delay_ms"), 1e300, "traffic.load.inter_turn_delay_ms"),
    (("traffic", "stop"), {"max_duration_s": 1e10}, "traffic.stop.max_duration_s"),
    (("traffic", "load", "rate_rps"), 1e-12, "traffic.load.rate_rps"),
    (("engine", "perf", "base_ms"), 1e15, "engine.perf.base_ms"),
])
def test_huge_finite_values_are_config_errors(base_spec, path, value, field):
    # the clock is int64 ns: a huge but finite value must not wrap it
    node = base_spec
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    with pytest.raises(ConfigError) as e:
        aisimulate.replay(base_spec)
    assert e.value.field == field


def test_pd_transfer_that_cannot_fit_the_clock(base_spec):
    # a 131,072-token prompt × 1e9 bytes at 1 MB/s: 1.3e17 ns, beyond the clock's margin
    base_spec["engine"]["model"] = "meta-llama/Llama-3.1-8B-Instruct"
    base_spec["engine"]["workers"] = {"disaggregated": {
        "prefill": {"count": 1}, "decode": {"count": 1},
        "kv_transfer": {"bandwidth_gb_per_s": 0.001, "latency_ms": 0, "kv_bytes_per_token": 1_000_000_000}}}
    with pytest.raises(ConfigError) as e:
        aisimulate.replay(base_spec)
    assert e.value.field == "engine.workers.disaggregated.kv_transfer"


def test_stop_counts_from_the_traces_first_row(tmp_path, base_spec):
    # The trace's clock starts at its first row (1000 ms → sent at 0); the row 600 ms
    # later is past a 0.5 s stop and is not sent.
    trace = tmp_path / "two.jsonl"
    trace.write_text('{"timestamp": 1000, "input_length": 100, "output_length": 5}\n'
                     '{"timestamp": 1600, "input_length": 100, "output_length": 5}\n')
    base_spec["traffic"] = {"source": {"type": "mooncake", "path": str(trace)}, "load": {"mode": "trace"},
                            "stop": {"max_duration_s": 0.5}}
    report = aisimulate.replay(base_spec)
    assert [r["send_ms"] for r in report.requests] == [0.0]
    assert report.metadata["trace_time_origin_ms"] == 1000


def test_to_pandas_dtypes_do_not_depend_on_reading_requests(base_spec):
    a, b = aisimulate.replay(base_spec), aisimulate.replay(base_spec)
    _ = b.requests
    assert list(a.to_pandas().dtypes) == list(b.to_pandas().dtypes)
