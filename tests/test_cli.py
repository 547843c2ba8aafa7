"""`aisimulate replay` (and `python -m aisimulate`): exit codes, messages, outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import csv
import io

from aisimulate import SimulationError, cli
from aisimulate.cli import replay as replay_command
from conftest import EXAMPLE1_ROWS, REPO, example1_spec, write_mooncake

def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, "-m", "aisimulate", *args], capture_output=True,
                          text=True, env=env, cwd=cwd or REPO, timeout=120)


def write_config(path: Path, spec: dict) -> Path:
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def assert_input_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("aisimulate: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    for n in needles:
        assert n in proc.stderr


def test_bad_config_exits_2_naming_the_field(tmp_path, base_spec):
    base_spec["engine"]["scheduler"]["max_num_seqs"] = 0
    proc = run_cli("replay", "--config", str(write_config(tmp_path / "r.yaml", base_spec)))
    assert_input_error(proc, "engine.scheduler.max_num_seqs")


def test_unsupported_mode_exits_2(tmp_path, base_spec):
    base_spec["execution"] = {"mode": "online"}
    proc = run_cli("replay", "--config", str(write_config(tmp_path / "r.yaml", base_spec)))
    assert_input_error(proc, "execution.mode", "not supported")


def test_missing_config_file_exits_2_naming_the_path(tmp_path):
    missing = tmp_path / "nowhere" / "replay.yaml"
    proc = run_cli("replay", "--config", str(missing))
    assert_input_error(proc, str(missing))


def test_yaml_syntax_error_exits_2_with_file_and_line(tmp_path):
    cfg = tmp_path / "r.yaml"
    cfg.write_text("engine:\n  model: [x\n", encoding="utf-8")
    proc = run_cli("replay", "--config", str(cfg))
    assert_input_error(proc, f"{cfg}:")


def test_missing_argument_exits_2():
    proc = run_cli("replay")
    assert_input_error(proc, "a config is required", "CONFIG")


def test_trace_row_without_output_length_exits_2_with_file_and_line(tmp_path):
    rows = [dict(EXAMPLE1_ROWS[0]), dict(EXAMPLE1_ROWS[1])]
    del rows[1]["output_length"]  # the second row, line 2 of the file
    trace = write_mooncake(tmp_path / "bad.jsonl", rows)
    cfg = write_config(tmp_path / "r.yaml", example1_spec(Path("bad.jsonl")))
    proc = run_cli("replay", "--config", str(cfg))
    assert_input_error(proc, "bad.jsonl:2:", "output_length")
    assert str(trace) in proc.stderr


def test_synthetic_replay_prints_a_table(tmp_path, base_spec):
    proc = run_cli("replay", "--config", str(write_config(tmp_path / "r.yaml", base_spec)))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        assert any(line.startswith(metric) for line in out.splitlines())
    completed = next(line for line in out.splitlines() if line.startswith("Completed requests"))
    assert completed.split()[-1] == "5"  # num_requests in base_spec, none rejected
    assert "Traceback" not in proc.stderr
    assert "wrote" not in proc.stderr  # nothing saved without --output-dir


def test_output_dir_writes_the_table_and_prediction(tmp_path, base_spec):
    out = tmp_path / "out" / "run1"
    proc = run_cli("replay", "--config", str(write_config(tmp_path / "r.yaml", base_spec)),
                   "--output-dir", str(out), "--records", "parquet,jsonl")
    assert proc.returncode == 0, proc.stderr
    pred = json.loads((out / "prediction.json").read_text())
    assert set(pred) == {"metadata", "records", "summary"}
    assert pred["records"]["count"] == 5
    lines = (out / "requests.jsonl").read_text().splitlines()
    assert len(lines) == 5
    assert (out / "requests.parquet").stat().st_size == pred["records"]["files"]["requests.parquet"]["bytes"]
    assert not (out / "requests.csv").exists()
    for name in ("requests.parquet", "requests.jsonl", "prediction.json"):
        assert f"wrote {out / name}" in proc.stderr
    assert_input_error(run_cli("replay", str(tmp_path / "r.yaml"), "--output-dir", ""), "--output-dir")
    assert_input_error(run_cli("replay", str(tmp_path / "r.yaml"), "--output-dir", str(out),
                               "--records", "parquet,xml"), "--records", "csv")


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys, tmp_path, base_spec):
    def interrupted(src, **options):  # replay(spec, progress=…, slo=…, timeline=…)
        raise KeyboardInterrupt
    monkeypatch.setattr(replay_command, "replay", interrupted)
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    assert cli.main(["replay", str(cfg), "--output-dir", str(tmp_path / "out")]) == 130  # 128 + SIGINT
    assert capsys.readouterr().err == "aisimulate: error: interrupted\n"
    assert not (tmp_path / "out").exists()


def test_format_json_parses(tmp_path, base_spec):
    proc = run_cli("replay", "--config", str(write_config(tmp_path / "r.yaml", base_spec)),
                   "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {"metadata", "summary"}
    assert doc["summary"]["completed"] == 5
    assert doc["summary"]["rejected"] == 0


def test_simulation_error_exits_1(monkeypatch, capsys, tmp_path, base_spec):
    def boom(src, **options):
        raise SimulationError("the core broke")
    monkeypatch.setattr(replay_command, "replay", boom)
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    assert cli.main(["replay", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("aisimulate: error: ")
    assert "the core broke" in err


# --- the command people script --------------------------------------------------------

def test_console_script_is_installed_beside_the_interpreter():
    script = Path(sys.executable).parent / "aisimulate"
    assert script.is_file(), "pip install (or make build) installs the `aisimulate` console script"
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("aisimulate ")


def test_config_is_positional_and_help_shows_examples(tmp_path, base_spec):
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    proc = run_cli("replay", str(cfg), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["completed"] == 5
    both = run_cli("replay", str(cfg), "--config", str(cfg))
    assert_input_error(both, "not both")
    help_text = run_cli("replay", "--help").stdout
    assert "examples:" in help_text and "--set engine.workers.aggregated.count=4" in help_text


def test_set_changes_typed_fields(tmp_path, base_spec):
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    proc = run_cli("replay", str(cfg), "--format", "json",
                   "--set", "engine.workers.aggregated.count=3",
                   "--set", "traffic.source.num_requests=7",
                   "--set", "traffic.source.osl={kind: uniform, min: 2, max: 3}",
                   "--set", "engine.scheduler.enable_prefix_caching=false")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    spec = doc["metadata"]["spec"]
    assert doc["metadata"]["workers"] == 3
    assert spec["traffic"]["source"]["osl"] == {"kind": "uniform", "min": 2, "max": 3}
    assert spec["engine"]["scheduler"]["enable_prefix_caching"] is False
    assert doc["summary"]["completed"] == 7  # num_requests 5 → 7


def test_set_null_is_the_field_left_out_in_a_variant_block(base_spec):
    # a null for a field of another variant (context_mode belongs to mooncake; arrival to
    # the rate mode) or for a block's key that has a default (perf.source: roofline) is
    # the field left out: the same canonical spec as without it (core/config/union.go)
    from aisimulate.config import load_config
    from aisimulate.errors import ConfigError

    del base_spec["engine"]["perf"]  # the roofline default
    conc = {**base_spec, "traffic": {**base_spec["traffic"], "load": {"mode": "concurrency", "concurrency": 2}}}
    for spec, field in ((base_spec, "traffic.source.context_mode"), (conc, "traffic.load.arrival"),
                        (base_spec, "engine.perf.source")):
        assert load_config(spec, overrides={field: None}).data == load_config(spec).data, field
    with pytest.raises(ConfigError, match="belongs to type mooncake, not synthetic"):
        load_config(base_spec, overrides={"traffic.source.context_mode": "deltas_without_responses"})


def test_set_errors_name_the_field(tmp_path, base_spec):
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    assert_input_error(run_cli("replay", str(cfg), "--set", "engine.bogus=1"), "engine.bogus")
    assert_input_error(run_cli("replay", str(cfg), "--set", "engine.model.name=x"),
                       "engine.model: is the string", "not a mapping")
    assert_input_error(run_cli("replay", str(cfg), "--set", "engine.workers"), "expected FIELD=VALUE")
    assert_input_error(run_cli("replay", str(cfg), "--set", "traffic.load.rate_rps=[1"),
                       "--set traffic.load.rate_rps")
    assert_input_error(run_cli("replay", str(cfg), "--set", "traffic.load.rate_rps=fast"),
                       "traffic.load.rate_rps")


def test_config_from_stdin_resolves_paths_against_the_working_directory(tmp_path):
    write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS)
    text = yaml.safe_dump(example1_spec(Path("t.jsonl")))
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run([sys.executable, "-m", "aisimulate", "replay", "-", "--format", "json"],
                          input=text, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["metadata"]["spec"]["traffic"]["source"]["path"] == str(tmp_path / "t.jsonl")
    assert doc["summary"]["completed"] == 2
    bad = subprocess.run([sys.executable, "-m", "aisimulate", "replay", "-"], input="engine: [x\n",
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert_input_error(bad, "<stdin>:")


def test_format_csv_is_one_summary_row(tmp_path, base_spec):
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    as_json = json.loads(run_cli("replay", str(cfg), "--format", "json").stdout)["summary"]
    proc = run_cli("replay", str(cfg), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 1
    row = rows[0]
    assert int(row["completed"]) == 5
    assert float(row["ttft_ms.p50"]) == as_json["ttft_ms"]["p50"]  # repr round-trips
    assert float(row["duration_ms"]) == as_json["duration_ms"]


def test_validate_checks_without_running(tmp_path, base_spec):
    # 10^6 requests: a replay would take a while; validate builds the deployment only
    # (10^9 would need ~640 GB: validate refuses it on execution.max_memory_gb).
    base_spec["traffic"]["source"]["num_requests"] = 1_000_000
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    proc = run_cli("validate", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{cfg}: valid")
    assert "1000 KV blocks per worker" in proc.stdout  # num_gpu_blocks of base_spec
    spec = json.loads(run_cli("validate", str(cfg), "--format", "json").stdout)
    assert spec["engine"]["scheduler"]["max_num_seqs"] > 0  # defaults filled
    # an error found only when the deployment is built (TP must divide the heads)
    proc = run_cli("validate", str(cfg), "--set", "engine.workers.aggregated.tp=3")
    assert_input_error(proc, "engine.workers.aggregated.tp")


def _data_folder(root: Path) -> Path:
    """An AISIMULATE_DATA folder with one model (Qwen3-8B's shape, renamed) and one
    system (h100's figures, renamed)."""
    models, systems = root / "aic" / "model_configs", root / "aic" / "systems"
    models.mkdir(parents=True)
    systems.mkdir(parents=True)
    (models / "acme--Tiny-8B_config.json").write_text(json.dumps({
        "architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": 36, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "intermediate_size": 12288, "vocab_size": 151936, "max_position_embeddings": 40960}))
    (models / "acme--Moe_config.json").write_text(json.dumps({"architectures": ["AcmeMoeForCausalLM"]}))
    (systems / "acme_gpu.yaml").write_text(
        "gpu: {mem_bw: 3350000000000, mem_capacity: 85899345920, bfloat16_tc_flops: 989000000000000,"
        " fp8_tc_flops: 1978000000000000}\nnode: {num_gpus_per_node: 8, intra_node_bw: 450000000000}\n"
        "misc: {other_mem: 3758096384}\n")
    return root


def test_models_and_systems_list_the_data_folder(tmp_path, base_spec, monkeypatch):
    data = _data_folder(tmp_path / "data")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), AISIMULATE_DATA=str(data))
    run = lambda *a: subprocess.run([sys.executable, "-m", "aisimulate", *a], capture_output=True,  # noqa: E731
                                    text=True, env=env, timeout=120)
    models = {m["name"]: m for m in json.loads(run("models", "--format", "json").stdout)}
    assert models["Qwen/Qwen3-32B"]["source"] == "built-in"
    assert models["acme/Tiny-8B"]["source"] == str(data / "aic/model_configs/acme--Tiny-8B_config.json")
    assert models["acme/Tiny-8B"]["layers"] == 36
    assert "acme/Moe" not in models  # not usable: listed only with --all, with the reason
    everything = {m["name"]: m for m in json.loads(run("models", "--all", "--format", "json").stdout)}
    assert everything["acme/Moe"]["supported"] is False
    assert "AcmeMoeForCausalLM" in everything["acme/Moe"]["reason"]
    table = run("models")
    assert "acme/Tiny-8B" in table.stdout and "AISIMULATE_DATA" in table.stderr
    systems = {s["name"]: s for s in json.loads(run("systems", "--format", "json").stdout)}
    assert systems["h100_sxm"]["source"] == "built-in"
    assert systems["acme_gpu"]["mem_capacity_bytes"] == 85899345920
    assert systems["acme_gpu"]["kernel_tables"] is False
    # both names work in a replay
    base_spec["engine"].update(model="acme/Tiny-8B", system="acme_gpu")
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    proc = run("replay", str(cfg), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(proc.stdout)["metadata"]
    assert (meta["model"], meta["system"]) == ("acme/Tiny-8B", "acme_gpu")


def test_an_unknown_model_says_where_it_looked_and_how_to_add_more(tmp_path, base_spec):
    data = _data_folder(tmp_path / "data")
    base_spec["engine"]["model"] = "acme/Nowhere-1B"
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), AISIMULATE_DATA=str(data))
    proc = subprocess.run([sys.executable, "-m", "aisimulate", "replay", str(cfg)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert_input_error(proc, "engine.model", "acme/Nowhere-1B", "not found",
                       str(data / "aic" / "model_configs"), "AISIMULATE_DATA", "aisimulate models")
    # each folder named once: the core names the file it looked for in the first one,
    # the hint adds only the folders not yet named
    first = data / "aic" / "model_configs"
    assert proc.stderr.count(str(first)) == 1
    assert f"; {first / 'acme--Nowhere-1B_config.json'}; " in proc.stderr
    shared = REPO.parent / "shared" / "data" / "aic" / "model_configs"
    if shared.is_dir():
        assert proc.stderr.count(str(shared)) == 1
        assert f"; also searched for models in: {shared}; set AISIMULATE_DATA" in proc.stderr
    base_spec["engine"]["model"] = "Qwen/Qwen3-32B"
    base_spec["engine"]["system"] = "acme_gpu_9000"
    cfg = write_config(tmp_path / "r.yaml", base_spec)
    proc = subprocess.run([sys.executable, "-m", "aisimulate", "validate", str(cfg)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert_input_error(proc, "engine.system", "acme_gpu_9000", str(data / "aic" / "systems"),
                       "AISIMULATE_DATA")


_CONFIGS = REPO.parent / "shared" / "data" / "aic" / "model_configs"


@pytest.mark.skipif(not (_CONFIGS / "nvidia--GLM-5.1-NVFP4_config.json").is_file(), reason="shared model configs not found")
def test_nvfp4_experts_are_named_beside_bf16_dense_weights(tmp_path):
    # GLM-5.1-NVFP4 keeps its attention, first dense layers and shared experts bf16
    # (quantization_config ignore) and its routed experts NVFP4: validate, the report's
    # metadata and `models` say both, where "bfloat16 weights" alone read as if the
    # quantization had not been picked up
    spec = {"engine": {"model": "nvidia/GLM-5.1-NVFP4", "system": "b200_sxm",
                       "workers": {"aggregated": {"count": 1, "tp": 8}}, "scheduler": {"max_model_len": 8192}},
            "traffic": {"source": {"type": "synthetic", "num_requests": 4, "isl": 64, "osl": 4},
                        "load": {"mode": "concurrency", "concurrency": 1}}}
    cfg = write_config(tmp_path / "glm.yaml", spec)
    proc = run_cli("validate", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert "model nvidia/GLM-5.1-NVFP4 (nvfp4 experts, bfloat16 other weights, fp8 KV cache)" in proc.stdout
    meta = json.loads(run_cli("replay", str(cfg), "--format", "json").stdout)["metadata"]
    assert (meta["weight_dtype"], meta["expert_dtype"]) == ("bfloat16", "nvfp4")
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(run_cli("models", "--format", "csv").stdout))}
    glm = rows["nvidia/GLM-5.1-NVFP4"]
    assert (glm["weight_dtype"], glm["expert_dtype"]) == ("bfloat16", "nvfp4")
    assert rows["nvidia/GLM-5-NVFP4"]["expert_dtype"] == "nvfp4"
    # the table has an experts column; a dense model names no expert format
    table = run_cli("models", "-q").stdout.splitlines()
    assert table[0].split()[:5] == ["name", "architecture", "layers", "weights", "experts"]
    glm_line = next(line for line in table if line.startswith("nvidia/GLM-5.1-NVFP4 "))
    assert glm_line.split()[3:5] == ["bfloat16", "nvfp4"]
    assert next(line for line in table if line.startswith("Qwen/Qwen3-32B ")).split()[3:5] == ["bfloat16", "40960"]


def test_a_replay_with_some_requests_rejected_says_why_on_stderr(capsys, tmp_path):
    # three rows of which the second (50,000 + 10 tokens) passes Llama-3.1-8B's max_model_len
    # of 8,192 set here: the table counts "Rejected requests: 1" and stderr gives the reason
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 100, "output_length": 5}\n'
                     '{"timestamp": 10, "input_length": 50000, "output_length": 10}\n'
                     '{"timestamp": 20, "input_length": 100, "output_length": 5}\n')
    cfg = tmp_path / "c.yaml"
    cfg.write_text("engine: {model: meta-llama/Llama-3.1-8B-Instruct, system: h100_sxm, "
                   "scheduler: {max_model_len: 8192}}\n"
                   f"traffic: {{source: {{type: mooncake, path: {trace}}}, load: {{mode: trace}}}}\n")
    assert cli.main(["replay", str(cfg)]) == 0
    err = capsys.readouterr().err
    assert err == ("aisimulate: note: 1 rejected of 3 requests; request 1 was rejected: prompt (50000) + output "
                   "(10) tokens exceed max_model_len (8192)\n")
    assert cli.main(["replay", str(cfg), "-q"]) == 0 and capsys.readouterr().err == ""
