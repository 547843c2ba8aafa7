"""`python -m aisimulate replay`: exit codes, messages, outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from aisimulate import SimulationError, cli
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
    assert proc.returncode == 2
    assert "--config" in proc.stderr


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


def test_output_dir_writes_both_files(tmp_path, base_spec):
    out = tmp_path / "out" / "run1"
    proc = run_cli("replay", "--config", str(write_config(tmp_path / "r.yaml", base_spec)),
                   "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    pred = json.loads((out / "prediction.json").read_text())
    assert set(pred) == {"metadata", "summary"}
    lines = (out / "requests.jsonl").read_text().splitlines()
    assert len(lines) == 5
    assert f"wrote {out / 'prediction.json'}" in proc.stderr
    assert f"wrote {out / 'requests.jsonl'}" in proc.stderr


def test_format_json_parses(tmp_path, base_spec):
    proc = run_cli("replay", "--config", str(write_config(tmp_path / "r.yaml", base_spec)),
                   "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {"metadata", "summary"}
    assert doc["summary"]["completed"] == 5
    assert doc["summary"]["rejected"] == 0


def test_simulation_error_exits_1(monkeypatch, capsys, base_spec):
    def boom(src):
        raise SimulationError("the core broke")
    monkeypatch.setattr(cli, "replay", boom)
    assert cli.main(["replay", "--config", "whatever.yaml"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("aisimulate: error: ")
    assert "the core broke" in err
