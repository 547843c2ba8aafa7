"""A misspelt option of a benchmark's command line is named as a likely typo of the
option aisimulate bench knows, where it was "not simulated (an option that changes what
vllm bench serve sends or measures)": a claim about an option the tool does not have.
An option far from every known one is still "not simulated"."""

from __future__ import annotations

import pytest

from conftest import REPO, assert_usage_error, run_cli

from aisimulate.cli.bench_unknown import unknown_option

ENGINE = str(REPO / "examples" / "bench" / "engine.yaml")


@pytest.mark.parametrize("command, typo, meant", [
    (["vllm", "bench", "serve", "--dataset-name", "random", "--num-promps", "20"], "--num-promps", "--num-prompts"),
    (["aiperf", "profile", "--streaming", "--concurency", "8", "--isl", "100", "--osl", "10"],
     "--concurency", "--concurrency"),
    (["aiperf", "profile", "--streming", "--concurrency", "8", "--isl", "100", "--osl", "10"],
     "--streming", "--streaming"),
    (["python3", "-m", "sglang.bench_serving", "--dataset-name", "random", "--random-input", "10"],
     "--random-input", "--random-input-len"),
])
def test_a_misspelt_option_is_named_with_the_one_meant(tmp_path, command, typo, meant):
    proc = run_cli("bench", ENGINE, "-q", "--", *command, cwd=tmp_path)
    assert_usage_error(proc, f"aisimulate: error: bench: {typo}: not an option aisimulate bench knows of ",
                       f": did you mean {meant}?")


def test_an_option_far_from_every_known_one_is_not_simulated():
    assert unknown_option("--profile", "vllm bench serve", ["--num-prompts", "--model"], "--num-prompts") == (
        "--profile: not simulated (an option that changes what vllm bench serve sends or measures; "
        "aisimulate bench takes --num-prompts)")
    assert unknown_option("--num-promts", "t", ["--num-prompts"]) == (
        "--num-promts: not an option aisimulate bench knows of t: did you mean --num-prompts?")
    # a known option this command cannot take is not simulated, not a typo of itself
    assert unknown_option("--request-rate", "genai-perf profile", ["--request-rate"]).startswith(
        "--request-rate: not simulated")
