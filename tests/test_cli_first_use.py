"""What a first-time user runs into on the command line, each found by trying the README's
commands with a slip in them: the message names what the user wrote (the option, the
file, why no request completed), and an interrupted run leaves no folders behind."""

from __future__ import annotations

import pytest
import yaml

from aisimulate import cli
from aisimulate.cli.bench import _BenchUsageError as BenchUsageError, parse_command
from aisimulate.io import files as _files

ENGINE = "engine: {model: Qwen/Qwen3-8B, system: h100_sxm, backend_version: 0.15.1}\n"
VLLM = "vllm bench serve --dataset-name random --random-input-len 128 --num-prompts 4 --ignore-eos"


def test_bench_takes_its_config_as_config_too(tmp_path, capsys):
    """`--config FILE -- vllm bench serve …` took `vllm` for CONFIG and refused
    "bench serve": not a benchmark command; it is the positional's equal."""
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    assert cli.main(["bench", str(cfg), "-q", "--", *VLLM.split()]) == 0
    positional = capsys.readouterr().out
    assert cli.main(["bench", "--config", str(cfg), "-q", "--", *VLLM.split()]) == 0
    assert capsys.readouterr().out == positional


@pytest.mark.parametrize("command, shown", [
    (VLLM, "vllm bench serve"),
    ("python3 benchmark_serving.py --num-prompts 4", "python3 benchmark_serving.py"),
    ("inference-perf --config_file x.yaml", "inference-perf"),
])
def test_bench_without_engine_config_says_so(capsys, command, shown):
    assert cli.main(["bench", "-q", "--", *command.split()]) == 2
    assert capsys.readouterr().err == ("aisimulate: error: bench: ENGINE_CONFIG is missing: "
                                       f"aisimulate bench ENGINE_CONFIG -- {shown} …\n")


@pytest.mark.parametrize("tail, message", [
    ("--isl", "--isl takes one value, got 0"),                    # not --synthetic-input-tokens-mean
    ("--isl many", "--isl 'many': want an integer"),
    ("--num-requests 2.5", "--num-requests '2.5': want an integer"),  # not --request-count
    ("--arrival-pattern poisson", "--arrival-pattern: not simulated"),  # genai-perf has no rate mode
])
def test_bench_names_an_aiperf_option_as_written(tail, message):
    tool = "genai-perf" if "arrival" in tail else "aiperf"
    with pytest.raises(BenchUsageError) as exc:
        parse_command([f"{tool} profile --streaming --concurrency 2 --osl 10 "
                       f"--extra-inputs ignore_eos:true {tail}"])
    assert str(exc.value).startswith(message), str(exc.value)


def test_a_bad_scenario_names_its_points_file(tmp_path, base_spec, capsys):
    cfg = tmp_path / "base.yaml"
    cfg.write_text(yaml.safe_dump(base_spec))
    points = tmp_path / "points.yaml"
    points.write_text("- {traffic.load.rate_rps: 2}\n- traffic.load.rate_rps 3\n")
    assert cli.main(["sweep", str(cfg), "--no-progress", "--points", str(points)]) == 2
    assert capsys.readouterr().err == (f"aisimulate: error: --points {points}: scenario 2 of 2 must be a mapping "
                                       "of dotted fields to values, got str\n")


def test_a_replay_where_nothing_completed_says_why(tmp_path, base_spec, capsys):
    """Every prompt over max_model_len (16,000 here): the table was all dashes and
    said nothing of the reason each record carries."""
    base_spec["traffic"]["source"]["isl"] = 20_000
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(base_spec))
    assert cli.main(["replay", str(cfg), "-q"]) == 0
    out = capsys.readouterr()
    assert out.err == ("aisimulate: warning: no request completed (5 rejected); request 0 was rejected: "
                       "prompt (20000) + output (4) tokens exceed max_model_len (16000)\n")
    assert "Rejected requests:" in out.out
    base_spec["traffic"]["source"]["isl"] = 100  # one completed: no warning
    cfg.write_text(yaml.safe_dump(base_spec))
    assert cli.main(["replay", str(cfg), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_an_aborted_save_removes_the_folders_it_made(tmp_path):
    """`--output-dir a/b/c` interrupted removed c and left a/b behind."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "notes.txt").write_text("mine")
    with pytest.raises(KeyboardInterrupt):
        with _files.ResultDir(tmp_path / "a" / "b" / "c"):
            raise KeyboardInterrupt
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "notes.txt"]
    with pytest.raises(KeyboardInterrupt):
        with _files.ResultDir(tmp_path / "x" / "y"):
            raise KeyboardInterrupt
    assert not (tmp_path / "x").exists()


def test_a_sweep_point_where_nothing_completed_says_why(tmp_path, base_spec, capsys):
    """Such a point was `ok` with an empty reason and every metric a dash."""
    pytest.importorskip("pandas")
    import aisimulate

    df = aisimulate.sweep(base_spec, {"traffic.source.isl": [100, 20_000]}, progress=False)
    why = ("no request completed (5 rejected); request 0 was rejected: "
           "prompt (20000) + output (4) tokens exceed max_model_len (16000)")
    assert df["status"].tolist() == ["ok", "ok"]
    assert df["reason"].isna().tolist() == [True, False] and df["reason"][1] == why
    cfg = tmp_path / "base.yaml"
    cfg.write_text(yaml.safe_dump(base_spec))
    assert cli.main(["sweep", str(cfg), "--no-progress", "--grid", "traffic.source.isl=100,20000"]) == 0
    assert capsys.readouterr().err == f"1 of 2 points completed no request:\n  traffic.source.isl=20000: ok: {why}\n"
