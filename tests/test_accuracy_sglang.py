"""The accuracy harness on SGLang rows (aisimulate.tools.accuracy.sglang)."""

from __future__ import annotations

import pytest

from aisimulate.tools import accuracy
from aisimulate.tools.accuracy import sglang

SILICON = accuracy.SHARED_DATA / "silicon" / "sglang_dev.csv"
ALIASES = accuracy.SHARED_DATA / "silicon" / "model_aliases.csv"

pytestmark = pytest.mark.skipif(not SILICON.is_file(), reason="shared silicon data not found")


def _row(prefix: str) -> dict[str, str]:
    return next(r for r in accuracy.read_silicon(SILICON) if r["id"].startswith(prefix))


def test_concurrency_of_a_pd_row():
    aic = _row("qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_sglang_agg_1024x128_c16_tp2")
    ix = _row("2026_04_06_glm_5_h200_sxm_sglang_fp8_agg_1024x1024_c4_tp8")
    pd = _row("qwen3_32b_qwen3_32b_h100_sxm_sglang_disagg_4000x1000_c_tpnone_epnone_1")
    assert [accuracy.campaigns.campaign_of(r).name for r in (aic, ix, pd)] == ["aiconfigurator", "inferencex",
                                                                                "aiconfigurator"]
    # a P/D row without batch_size: AIConfigurator's estimate, 11 decode workers × 48
    assert sglang.row_concurrency(pd) == 528
    assert sglang.row_concurrency(aic) == 16


def test_aiconfigurator_row_spec():
    """AIConfigurator's generated SGLang server: max_running_requests = batch size (16),
    max_prefill_tokens = ISL + 1500 (2524), cuda_graph_max_bs = 16, no mixed chunks
    before the 0.5.6.post2 template; AIPerf's c warm-up and 20·c measured requests."""
    row = _row("qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_sglang_agg_1024x128_c16_tp2")
    spec, warm, measured = accuracy.row_spec(row, perf="aic", aliases=accuracy.load_aliases(ALIASES),
                                             model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                             database=accuracy.DEFAULT_DATABASE)
    e = spec["engine"]
    assert e["backend"] == "sglang" and e["backend_version"] == "0.5.1.post1"
    assert "scheduler" not in e
    assert e["sglang"] == {"max_running_requests": 16, "max_prefill_tokens": 2524, "cuda_graph_max_bs": 16}
    assert e["workers"] == {"aggregated": {"count": 1, "tp": 2}}
    assert spec["traffic"]["load"]["warmup_requests"] == 16
    assert (warm, measured) == (0, 320)
    res = accuracy.run_row(row, "aic", accuracy.load_aliases(ALIASES), str(accuracy.DEFAULT_MODEL_CONFIGS),
                           str(accuracy.DEFAULT_DATABASE))
    assert res.status == "ok", res.reason
    assert res.layout == "TP2" and res.max_num_seqs == 16 and res.measured_requests == 320
    assert "gemm_perf@0.5.6.post2" in res.tables  # 0.5.1.post1 has no tables of its own


def test_inferencex_row_spec():
    """InferenceX: its client at the row's date (2026-03 rows: 2·c warm-ups), the radix
    cache off, SGLang's defaults otherwise."""
    row = _row("2026_04_06_glm_5_h200_sxm_sglang_fp8_agg_1024x1024_c4_tp8")
    spec, warm, measured = accuracy.row_spec(row, perf="aic", aliases=accuracy.load_aliases(ALIASES),
                                             model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                             database=accuracy.DEFAULT_DATABASE)
    b = spec["traffic"]["benchmark"]
    assert b["tool"] == "vllm_bench_serve" and b["variant"] == "inferencex"
    assert (b["num_prompts"], b["max_concurrency"], b["num_warmups"], b["random_range_ratio"]) == (40, 4, 8, 0.8)
    assert spec["engine"]["sglang"] == {"disable_radix_cache": True}
    assert (warm, measured) == (0, 40)
