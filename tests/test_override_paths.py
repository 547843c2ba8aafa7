"""One rule for a relative file path given beside the config: in
``--set``, ``--grid``, ``--points``, ``load_config(overrides=)`` and the points of
``aisimulate.sweep()`` it resolves against the working directory; only the paths written
in the config file resolve against the file's folder. (``--set`` resolved against the
config's folder and the others against the working directory, so the same spelling of
the same field read two different traces.)"""

from __future__ import annotations

import io
import json

import pytest
import yaml

import aisimulate
from aisimulate.cli import main
from aisimulate.config import load_config
from conftest import LINEAR_PERF, write_mooncake

ROW = {"timestamp": 0, "input_length": 100, "output_length": 5}


@pytest.fixture
def two_traces(tmp_path, monkeypatch):
    """The config in sub/ (its own trace sub/t.jsonl: 2 requests); X.jsonl of 1 request in
    the working directory and sub/X.jsonl of 3: the count tells which one was read."""
    sub = tmp_path / "sub"
    write_mooncake(sub / "t.jsonl", [ROW, ROW])
    write_mooncake(tmp_path / "X.jsonl", [ROW])
    write_mooncake(sub / "X.jsonl", [ROW, ROW, ROW])
    cfg = sub / "mc.yaml"
    cfg.write_text(yaml.safe_dump({
        "engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm", "perf": dict(LINEAR_PERF),
                   "workers": {"aggregated": {"count": 1, "tp": 1}}},
        "traffic": {"source": {"type": "mooncake", "path": "t.jsonl"}, "load": {"mode": "trace"}},
    }))
    monkeypatch.chdir(tmp_path)
    return tmp_path, cfg


def _completed(args, capsys) -> list[int]:
    assert main([*args, "--format", "csv" if args[0] == "sweep" else "json", "-q"]) == 0
    out = capsys.readouterr().out
    if args[0] == "sweep":
        pd = pytest.importorskip("pandas")
        return [int(v) for v in pd.read_csv(io.StringIO(out))["completed"]]
    return [json.loads(out)["summary"]["completed"]]


def test_a_path_in_the_config_file_resolves_against_its_folder(two_traces, capsys):
    _, cfg = two_traces
    assert _completed(["replay", "sub/mc.yaml"], capsys) == [2]  # sub/t.jsonl, not ./t.jsonl


def test_set_grid_points_and_sweep_resolve_against_the_working_directory(two_traces, capsys):
    tmp_path, cfg = two_traces
    assert _completed(["replay", "sub/mc.yaml", "--set", "traffic.source.path=X.jsonl"], capsys) == [1]
    assert _completed(["replay", "sub/mc.yaml", "--set",
                       "traffic.source={type: mooncake, path: X.jsonl}"], capsys) == [1]
    assert _completed(["sweep", "sub/mc.yaml", "--set", "traffic.source.path=X.jsonl",
                       "--grid", "engine.workers.aggregated.count=1"], capsys) == [1]
    assert _completed(["sweep", "sub/mc.yaml", "--grid", "traffic.source.path=X.jsonl,sub/X.jsonl"],
                      capsys) == [1, 3]
    (tmp_path / "pts.yaml").write_text("- {traffic.source.path: X.jsonl}\n")
    assert _completed(["sweep", "sub/mc.yaml", "--points", "pts.yaml"], capsys) == [1]
    df = aisimulate.sweep("sub/mc.yaml", {"traffic.source.path": ["X.jsonl"]}, progress=False)
    assert list(df["completed"]) == [1]


def test_load_config_overrides_resolve_paths_against_the_working_directory(two_traces):
    tmp_path, cfg = two_traces
    (tmp_path / "models").mkdir()
    spec = load_config(cfg, overrides={"traffic.source.path": "X.jsonl",
                                       "engine.model_config_dir": "models"})
    assert spec.data["traffic"]["source"]["path"] == str(tmp_path / "X.jsonl")
    assert spec.data["engine"]["model_config_dir"] == str(tmp_path / "models")
    # a model or system name is not a path: it stays a name
    spec = load_config(cfg, overrides={"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm",
                                                  "perf": dict(LINEAR_PERF)}})
    assert (spec.data["engine"]["model"], spec.data["engine"]["system"]) == ("Qwen/Qwen3-32B", "h100_sxm")
    assert load_config(cfg).data["traffic"]["source"]["path"] == str(cfg.parent / "t.jsonl")
