"""Edge cases of the config compiler found by trying to break it (issue 2 review)."""

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
    (("engine", "scheduler", "max_num_batched_tokens"), 8, "engine.scheduler.max_num_batched_tokens"),
    (("engine", "workers"), {"aggregated": {"count": 10**6}}, "engine.workers.aggregated.count"),
    (("traffic", "source", "isl"), {"kind": "fixed", "value": 10, "min": 3}, "traffic.source.isl"),
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
