"""Speculative decoding without the drafts' acceptance is said on the command line: the
acceptance AIConfigurator's MTP default puts in its place (0.85, 0.3, 0 for three
drafts: DeepSeek-V3's MTP) took 27 % off the quickstart's TPOT with ``eagle3`` on
Llama-3.1-8B, and only ``metadata.spec`` showed the rates used. ``replay`` and ``bench``
print a note on stderr (``-q`` hides it), ``validate`` lists it; a block that gives its
acceptance gets none."""

from __future__ import annotations

import aisimulate
from aisimulate.cli.notes import acceptance_notes
from conftest import REPO, run_cli

QUICKSTART = str(REPO / "examples" / "quickstart.yaml")
SMALL = ("--set", "traffic.source.num_requests=4")
EAGLE = "engine.scheduler.speculative_config={method: eagle3, num_speculative_tokens: 3}"
NOTE = ("engine.scheduler.speculative_config: no acceptance_rates or acceptance_rate given: acceptance_rates "
        "[0.85, 0.3, 0] stands in (AIConfigurator's MTP default, DeepSeek-V3's; a draft's acceptance depends on "
        "the model, its draft and the prompts: give the measured one)")


def test_replay_and_validate_say_the_acceptance_that_stands_in(tmp_path):
    proc = run_cli("replay", QUICKSTART, *SMALL, "--set", EAGLE, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [f"aisimulate: note: {NOTE}"]
    assert run_cli("replay", QUICKSTART, *SMALL, "--set", EAGLE, "-q", cwd=tmp_path).stderr == ""
    proc = run_cli("validate", QUICKSTART, "--set", EAGLE, cwd=tmp_path)
    assert proc.stdout.splitlines()[-1] == f"  note: {NOTE}"


def test_a_given_acceptance_gets_no_note(tmp_path):
    given = EAGLE.replace("}", ", acceptance_rate: 0.6}")
    proc = run_cli("replay", QUICKSTART, *SMALL, "--set", given, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""


def test_trtllm_and_sglang_blocks():
    trt = aisimulate.load_config(REPO / "examples" / "trtllm-qwen3-32b-h100.yaml", overrides={
        "engine.trtllm.speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 2}})
    assert [n.split(":")[0] for n in acceptance_notes(trt.given, trt.data)] == ["engine.trtllm.speculative_config"]
    assert "acceptance_rates [0.85, 0.3] stands in" in acceptance_notes(trt.given, trt.data)[0]
    sg = {"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm", "backend": "sglang",
                     "sglang": {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3}},
          "traffic": {"source": {"type": "synthetic", "num_requests": 4, "isl": 64, "osl": 4},
                      "load": {"mode": "concurrency", "concurrency": 1}}}
    spec = aisimulate.load_config(sg)
    assert acceptance_notes(spec.given, spec.data) == [
        "engine.sglang: no speculative_acceptance_rates or speculative_acceptance_rate given: "
        "speculative_acceptance_rates [0.85, 0.3, 0] stands in "
        "(AIConfigurator's MTP default, DeepSeek-V3's; a draft's acceptance depends on the model, its draft and "
        "the prompts: give the measured one)"]
    sg["engine"]["sglang"]["speculative_acceptance_rate"] = 0.7
    spec = aisimulate.load_config(sg)
    assert acceptance_notes(spec.given, spec.data) == []
