"""scripts/coverage.py: held-back-style rows through the accuracy harness, refusals classed."""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from aisimulate.tools import accuracy

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not accuracy.DEFAULT_MODEL_CONFIGS.is_dir(), reason="shared model configs not found")


def _script():
    spec = importlib.util.spec_from_file_location("coverage_script", REPO / "scripts" / "coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gpt_oss_20b_on_one_h200_every_layout(tmp_path):
    """gpt-oss-20b (MXFP4 experts, ~13 GB) fits one H200 in every layout; the one refusal
    is vLLM's own rule: TP8 with EP2 splits the experts both ways, which vLLM cannot."""
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "coverage.py"), "--backend", "vllm", "--system",
                          "h200_sxm", "--perf", "roofline", "--model", "gpt-oss-20b", "--full", "--jobs", "1",
                          "--out", str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert "21 cases" in out and "ok 20, refused (memory) 0, (the engine's rule) 1, (other) 0" in out
    rows = list(csv.DictReader(open(tmp_path / "cases.csv", encoding="utf-8")))
    assert [(r["layout"], r["class"]) for r in rows if r["status"] != "ok"] == [("TP8 EP2", "engine")]


def test_deepseek_r1_fp8_does_not_fit_eight_h100s():
    """DeepSeek-R1's 671 B parameters in fp8 (~671 GB of weights) exceed 8 × 80 GB: TP8
    on h100_sxm is a memory refusal (a correct one); DEP16 over two nodes fits."""
    cov = _script()
    aliases = accuracy.load_aliases(accuracy.SHARED_DATA / "silicon" / "model_aliases.csv")
    layouts = dict(cov.AGG_LAYOUTS)
    tp8 = cov.run_case(cov._row("vllm", "h100_sxm", "deepseek-ai/DeepSeek-R1", "fp8", "TP8", layouts["TP8"]),
                       "TP8", "roofline", 40, aliases)
    assert (tp8["status"], tp8["class"]) == ("refused", "memory") and "does not fit" in tp8["reason"]
    dep16 = cov.run_case(cov._row("vllm", "h100_sxm", "deepseek-ai/DeepSeek-R1", "fp8", "DEP16", layouts["DEP16"]),
                         "DEP16", "roofline", 40, aliases)
    assert dep16["status"] == "ok", dep16["reason"]
