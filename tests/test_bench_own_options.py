"""aisimulate bench's own options (``--tool-version``, ``--format``, ``--set``, ``-q``)
written after ``--``, among the benchmark's options, are named as aisimulate bench's with
where they go: ``--tool-version 0.5.0`` appended to an ``aiperf profile`` command was
refused as "not simulated (an option that changes what aiperf profile sends or
measures)", an option AIPerf does not have, so the user could not tell the fix."""

from __future__ import annotations

import pytest

from aisimulate import cli

ENGINE = "engine: {model: Qwen/Qwen3-8B, system: h100_sxm, backend_version: 0.15.1}\n"
AIPERF = ("aiperf profile -m Qwen/Qwen3-8B --streaming --concurrency 2 --request-count 4 --isl 100 --osl 10 "
          "--extra-inputs ignore_eos:true")
VLLM = "vllm bench serve --dataset-name random --random-input-len 100 --num-prompts 4 --ignore-eos"
SGLANG = "python3 -m sglang.bench_serving --backend sglang --dataset-name random --num-prompts 4"


@pytest.mark.parametrize("command, own, tool, value", [
    (AIPERF, ["--tool-version", "0.5.0"], "aiperf profile", " …"),
    (VLLM, ["--format", "json"], "vllm bench serve", " …"),
    (VLLM, ["--set", "engine.workers.aggregated.tp=2"], "vllm bench serve", " …"),
    (SGLANG, ["-q"], "python3 -m sglang.bench_serving", ""),
])
def test_an_own_option_after_the_dashes_says_where_it_goes(capsys, tmp_path, command, own, tool, value):
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    code = cli.main(["bench", str(cfg), "--", *command.split(), *own])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == (f"aisimulate: error: bench: {own[0]}: aisimulate bench's own option, written after -- "
                           f"among the benchmark's options: give it before -- (aisimulate bench ENGINE_CONFIG "
                           f"{own[0]}{value} -- {tool} …)")
    # before --, where it goes, it is taken
    assert cli.main(["bench", str(cfg), *own, "-q", "--", *command.split()]) == 0, capsys.readouterr().err


def test_a_tools_own_unsimulated_option_keeps_its_message(capsys, tmp_path):
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    assert cli.main(["bench", str(cfg), "--", *VLLM.split(), "--profile"]) == 2
    assert "bench: --profile: not simulated (an option that changes what vllm bench serve" in capsys.readouterr().err
