"""Bounded work for every input: extreme inputs end in a result or a clean
error naming the field, file or line — never a hang, a panic or a wrapped clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import aisimulate
from aisimulate import ConfigError, DataError, cli
from aisimulate.cli import replay as replay_command

from conftest import REPO, write_mooncake
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
    assert first["reason"] == f"prompt ({inp}) + output ({out}) tokens exceed max_model_len (16000)"
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


# --- untrusted YAML and JSON: every bound is a ConfigError (item 5) -------------------

def _alias_bomb(levels: int = 10) -> str:
    text, prev = "a: &a [x, x, x, x, x, x, x, x, x]\n", "a"
    for i in range(levels):
        text += f"b{i}: &b{i} [{', '.join([f'*{prev}'] * 9)}]\n"
        prev = f"b{i}"
    return text  # 9^11 ≈ 3e10 values from ~500 bytes


@pytest.mark.parametrize("name,text,needle", [
    ("bomb", _alias_bomb(), "holds more than 100,000 values once its aliases are expanded"),
    ("recursive", "a: &a [1, *a]\n", "a value contains itself"),
    ("deep list", "engine: " + "[" * 1000 + "]" * 1000 + "\n", "nested more than 64 levels deep"),
    ("deep map", "engine: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n", "nested more than 64 levels deep"),
    ("deep block", "".join(" " * i + "a:\n" for i in range(300)) + " " * 300 + "a: 1\n",
     "nested more than 64 levels deep"),
    ("huge integer", "execution: {seed: " + "9" * 5000 + "}\n",
     "an integer of 5,000 characters is too large (at most 100 digits)"),
])
def test_yaml_bounds(tmp_path, name, text, needle):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(cfg)
    assert needle in str(e.value)
    assert e.value.file == str(cfg) and e.value.line is not None


def test_a_wide_mapping_is_refused_at_once_as_a_data_file_not_an_alias_bomb(tmp_path, monkeypatch):
    """A 60,000-key mapping (no alias) was refused as "an alias bomb?" once the pure-Python
    composer had built every node (2.7 s of CPU, 6-9 s on a busy machine). The values are
    counted over libyaml's parse events first, so it is refused before anything is
    composed, at the value past the bound: the document's mapping, "engine" and its
    mapping are values 1-3, so line L (key k{L-2} and its value) holds values 2L and
    2L + 1, and value 100,001 is the value on line 50,000."""
    from aisimulate import _yaml

    cfg = tmp_path / "wide.yaml"
    cfg.write_text("engine:\n" + "".join(f"  k{i}: {i}\n" for i in range(60_000)), encoding="utf-8")

    def composed(*_):
        raise AssertionError("the document was composed: the bound was not decided from the parse events")

    monkeypatch.setattr(_yaml.StrictLoader, "compose_document", composed)
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(cfg)
    assert str(e.value) == (f"{cfg}:50000: invalid YAML: holds more than 100,000 values (keys, values and "
                            "list items; a config is far smaller: is this a data file?)")
    monkeypatch.undo()
    # without libyaml the composer decides, with the same message (a bound of 1,000 here)
    monkeypatch.setattr(_yaml.yaml, "__with_libyaml__", False)
    monkeypatch.setattr(_yaml, "MAX_CONFIG_VALUES", 1_000)
    cfg.write_text("engine:\n" + "".join(f"  k{i}: {i}\n" for i in range(600)), encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(cfg)
    assert "holds more than 1,000 values (keys, values and list items; a config is far smaller" in str(e.value)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_alias_bomb(3), encoding="utf-8")  # 9^4 = 6,561 values
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(bomb)
    assert "holds more than 1,000 values once its aliases are expanded (an alias bomb?)" in str(e.value)


def test_anchors_within_the_bounds_still_work(tmp_path):
    # one anchored block used twice, as users write shared settings
    text = ("engine: {model: Qwen/Qwen3-32B, system: h100_sxm, scheduler: {num_gpu_blocks: 1000},\n"
            "         perf: &p {source: linear, base_ms: 2, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}}\n"
            "traffic: {source: {type: synthetic, num_requests: 2, isl: &n 10, osl: *n},\n"
            "          load: {mode: concurrency, concurrency: 1}}\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text, encoding="utf-8")
    spec = aisimulate.load_config(cfg)
    assert spec.data["traffic"]["source"]["osl"] == {"kind": "fixed", "value": 10}


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_config_is_a_config_error(device):
    # used to read forever (or run out of memory)
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(device)
    assert "larger than 1 MiB" in str(e.value) or "not UTF-8" in str(e.value)


def test_a_large_file_as_config_is_refused_before_parsing(tmp_path):
    cfg = tmp_path / "big.yaml"
    cfg.write_text("pad: [" + ",".join(["1"] * 600_000) + "]\n", encoding="utf-8")  # 1.2 MB
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(cfg)
    assert str(e.value) == (f"{cfg}: the config is larger than 1 MiB: not a replay config "
                            "(a trace goes in traffic.source.path)")


def test_deep_json_is_a_config_error(tmp_path):
    cfg = tmp_path / "deep.json"
    cfg.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(cfg)
    assert "nested more than 64 levels deep" in str(e.value)


def test_dict_bounds(base_spec):
    cyclic = {"engine": {}}
    cyclic["engine"]["self"] = cyclic
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(cyclic)
    assert "nested more than 64 levels deep (or the value contains itself)" in str(e.value)
    shared = [1] * 10
    for _ in range(12):  # 10^13 values by reference
        shared = [shared] * 10
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config({"engine": shared})
    assert "holds more than 100,000 values" in str(e.value)
    base_spec["execution"] = {"seed": 10**5000}
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(base_spec)
    assert str(e.value) == "execution.seed: an integer of more than 100 digits is too large"


# --- messages that name the right thing (item 10) -------------------------------------

def test_a_data_file_as_config_gives_a_short_message(tmp_path):
    csv = tmp_path / "trace.csv"
    csv.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" +
                   "".join(f"2023-11-16 18:15:{i % 60:02d},{i + 1},7\n" for i in range(20_000)),
                   encoding="utf-8")  # 700 KB, one YAML string
    proc = run_cli("replay", "--config", str(csv))
    assert_input_error(proc, "the config must be a mapping at the top level, got the string")
    assert len(proc.stderr) < 400, proc.stderr


def test_a_tiny_gpu_memory_utilization_is_named(base_spec):
    del base_spec["engine"]["scheduler"]["num_gpu_blocks"]
    base_spec["engine"]["model"] = "Qwen/Qwen3-8B"
    base_spec["engine"]["scheduler"]["gpu_memory_utilization"] = 1e-9
    with pytest.raises(ConfigError) as e:
        aisimulate.replay(base_spec)
    assert e.value.field == "engine.scheduler.gpu_memory_utilization"  # was blamed on tp


@pytest.mark.parametrize("cv", [1e-200, 1e200])
def test_gamma_cv_bounds_say_why(base_spec, cv):
    base_spec["traffic"]["load"] = {"mode": "rate", "rate_rps": 10, "arrival": "gamma", "cv": cv}
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(base_spec)
    assert e.value.field == "traffic.load.cv"
    assert f"must be in [0.001, 1000], got {cv:g}" in str(e.value)


def test_huge_names_are_refused_in_a_short_message(base_spec):
    base_spec["engine"]["model"] = "m" * 1_000_000
    with pytest.raises(ConfigError) as e:
        aisimulate.load_config(base_spec)
    assert str(e.value) == "engine.model: is 1000000 bytes long, more than any name or path (at most 4096)"


@pytest.mark.parametrize("redirect", ["/dev/full", "closed"])
def test_stdout_that_cannot_take_the_result(tmp_path, base_spec, redirect):
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    env_cmd = [sys.executable, "-m", "aisimulate", "replay", "--config", str(cfg)]
    if redirect == "closed":
        cmd = ["bash", "-c", 'exec "$@" >&-', "x", *env_cmd]
        proc = subprocess.run(cmd, capture_output=False, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO / "python")), timeout=120)
        want = "aisimulate: error: cannot write the result: stdout is closed\n"
    else:
        with open("/dev/full", "w") as full:
            proc = subprocess.run(env_cmd, stdout=full, stderr=subprocess.PIPE, text=True,
                                  env=dict(os.environ, PYTHONPATH=str(REPO / "python")), timeout=120)
        want = "aisimulate: error: cannot write the result to stdout: No space left on device\n"
    assert proc.returncode == 1
    assert proc.stderr == want  # one line, no traceback, no "Exception ignored"


def test_a_core_panic_is_one_line_on_the_cli(monkeypatch, capsys, tmp_path, base_spec):
    from aisimulate import SimulationError

    def boom(src, **options):  # replay(spec, progress=…, slo=…, timeline=…)
        raise SimulationError("aisimulate core panic: runtime error: index out of range [3] with length 3",
                              kind="panic", detail="goroutine 1 [running]:\nmain.f()\n")
    monkeypatch.setattr(replay_command, "replay", boom)
    monkeypatch.delenv("AISIMULATE_DEBUG", raising=False)
    cfg = str(write_config(tmp_path / "r.yaml", base_spec))
    assert cli.main(["replay", cfg]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "goroutine" not in err
    assert "index out of range [3] with length 3 [set AISIMULATE_DEBUG=1 for the Go stack]" in err
    monkeypatch.setenv("AISIMULATE_DEBUG", "1")
    assert cli.main(["replay", cfg]) == 1
    assert "goroutine 1 [running]" in capsys.readouterr().err
