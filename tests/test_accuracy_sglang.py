"""The accuracy harness on SGLang rows (aisimulate.tools.accuracy.sglang)."""

from __future__ import annotations

import pytest

from aisimulate.tools import accuracy
from aisimulate.tools.accuracy import disagg, sglang

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
    assert disagg.concurrency_of(pd) == 528
    assert disagg.concurrency_of(aic) == 16


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
    """InferenceX: its client at the row's date (2026-03 rows: 2·c warm-ups), the
    recipe's flags at that date (GLM-5: --mem-fraction-static 0.85, the radix cache on),
    the KV cache at SGLang's --kv-cache-dtype auto."""
    row = _row("2026_04_06_glm_5_h200_sxm_sglang_fp8_agg_1024x1024_c4_tp8")
    spec, warm, measured = accuracy.row_spec(row, perf="aic", aliases=accuracy.load_aliases(ALIASES),
                                             model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                             database=accuracy.DEFAULT_DATABASE)
    b = spec["traffic"]["benchmark"]
    assert b["tool"] == "vllm_bench_serve" and b["variant"] == "inferencex"
    assert (b["num_prompts"], b["max_concurrency"], b["num_warmups"], b["random_range_ratio"]) == (40, 4, 8, 0.8)
    assert spec["engine"]["sglang"] == {"mem_fraction_static": 0.85}  # the eager launch: the engine's default
    assert spec["engine"]["quantization"]["kv_cache"] == "auto"
    assert (warm, measured) == (0, 40)


def test_inferencex_recipe_by_lengths():
    """DeepSeek-R1 on H200 (benchmarks/dsr1_fp8_h200.sh since e617b3e63): 512 running
    requests and CUDA graphs at 1k/1k, 256 otherwise; 32,768-token chunks, 0.82."""
    short = _row("2026_03_25_deepseek_r1_h200_sxm_sglang_fp8_agg_1024x1024_c4_tp8")
    long = _row("2026_03_25_deepseek_r1_h200_sxm_sglang_fp8_agg_8192x1024_c4_tp8")
    f1, src = sglang.recipe_flags(short, 1024, 1024, 4)
    f2, _ = sglang.recipe_flags(long, 8192, 1024, 4)
    assert (f1["max_running_requests"], f1["cuda_graph_max_bs"]) == (512, 512)
    assert (f2["max_running_requests"], f2["cuda_graph_max_bs"]) == (256, 256)
    assert f1["chunked_prefill_size"] == 32768 and f1["mem_fraction_static"] == 0.82 and f1["disable_radix_cache"]
    assert src.endswith("@e617b3e63")


def test_qwen35_recipe_and_the_single_node_export():
    """Qwen3.5-397B on H200 (benchmarks/single_node/qwen3.5_fp8_h200.sh at f65d6b4b1,
    five seconds before the run): TP 8 with EP 8, 128 running requests, CUDA graphs up to
    the concurrency (16), a context of ISL + OSL + 20 (1024 + 8192 + 20), an fp8 KV
    cache. The 2026-04-06 export's copy of the run gives tp_size 64 (8 × 8) with
    moe_tp_size 8 and moe_ep_size 8: the id's TP 8, the experts expert-parallel, the same
    spec as the 2026-03-25 export's row."""
    kw = dict(perf="aic", aliases=accuracy.load_aliases(ALIASES), model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE)
    old = _row("2026_03_25_qwen3_5_397b_h200_sxm_sglang_fp8_agg_1024x8192_c16_tp8_0_ep8_0_587")
    new = _row("2026_04_06_qwen3_5_397b_h200_sxm_sglang_fp8_agg_1024x8192_c16_tp8_ep8_1896")
    assert (new["tp_size"], new["moe_tp_size"], new["moe_ep_size"]) == ("64", "8", "8")
    spec, _, _ = accuracy.row_spec(old, **kw)
    e = spec["engine"]
    assert e["workers"] == {"aggregated": {"count": 1, "tp": 8, "enable_expert_parallel": True}}
    assert e["sglang"] == {"disable_radix_cache": True, "max_running_requests": 128, "chunked_prefill_size": 16384,
                           "mem_fraction_static": 0.8, "cuda_graph_max_bs": 16, "context_length": 9236,
                           "mamba_ssm_dtype": "bfloat16"}
    assert e["quantization"]["kv_cache"] == "fp8_e4m3"
    assert accuracy.row_spec(new, **kw)[0]["engine"] == e
    fixed, note = sglang.single_node_row(new)
    assert (fixed["tp_size"], fixed["moe_tp_size"], fixed["moe_ep_size"]) == ("8", "1", "8")
    assert note == "columns give 64 × 1 GPUs: the id's TP 8"
    res = accuracy.run_row(new, "aic", kw["aliases"], str(accuracy.DEFAULT_MODEL_CONFIGS), str(accuracy.DEFAULT_DATABASE))
    assert res.status == "ok", res.reason
    assert (res.tp, res.layout) == (8, "TP8 EP8 (columns give 64 × 1 GPUs: the id's TP 8)")


def test_pd_row_spec():
    """An AIConfigurator P/D row through the shared reader: 6 prefill servers of TP1 and 5
    decode servers of TP2, each pool with its own server arguments (prefill batch 1,
    decode 128, ISL + 1500 prefill tokens), the KV over the system's network."""
    row = _row("qwen3_32b_qwen3_32b_h100_sxm_sglang_disagg_4000x1000_c_tpnone_epnone_4")
    spec, _, measured = accuracy.row_spec(row, perf="aic", aliases=accuracy.load_aliases(ALIASES),
                                          model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                          database=accuracy.DEFAULT_DATABASE)
    d = spec["engine"]["workers"]["disaggregated"]
    assert (d["prefill"]["count"], d["prefill"]["tp"], d["decode"]["count"], d["decode"]["tp"]) == (6, 1, 5, 2)
    assert d["prefill"]["sglang"] == {"max_running_requests": 1, "max_prefill_tokens": 5500, "cuda_graph_max_bs": 1}
    assert d["decode"]["sglang"]["max_running_requests"] == 128
    assert d["kv_transfer"] == {}
    assert measured == 20 * 640 and sglang.sglang_layout(spec) == "P/D 6×TP1 + 5×TP2"


def test_inferencex_pd_rows_by_the_recipe_run_of_their_day():
    """InferenceX's SGLang P/D rows record no worker counts or speculative decoding: the
    configurations of the recipe run that day decide. An H100 1k/1k row (2026-02-13: MTP
    only, its decode TEP) is h100-fp8-1p2d-max-tp-mtp, simulated with that file's flags
    (InferenceX 80d98084f): 1 prefill server of TP 16 (max-running-requests 2,
    mem-fraction-static 0.6, 2048-token prefills and chunks) and 2 decode servers of TP 16
    (mem-fraction-static 0.9, max-running-requests and cuda-graph-max-bs 128, EAGLE 2
    steps, topk 1, 3 draft tokens, SGLANG_ENABLE_SPEC_V2=1), each TP 16 over two nodes
    of 8; an H100 1k/8k row's recipe has no copy in InferenceX; an H200 1k/1k row at
    c = 8 has two candidates (with and without MTP); the H200 8k/1k row at c = 2 has one,
    bs8-1p6d-mtp, simulated with its flags: 1 prefill and 6 decode servers of TP 8, EAGLE
    2 steps on the decode side."""
    aliases = accuracy.load_aliases(ALIASES)
    kw = dict(perf="aic", aliases=aliases, model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE)
    h100 = _row("2026_03_25_deepseek_r1_h100_sxm_sglang_fp8_disagg_1024x1024_c8_")
    spec, _, measured = accuracy.row_spec(h100, **kw)
    d = spec["engine"]["workers"]["disaggregated"]
    assert (d["prefill"]["count"], d["prefill"]["tp"], d["decode"]["count"], d["decode"]["tp"]) == (1, 16, 2, 16)
    assert "data_parallel_size" not in d["decode"] and "enable_expert_parallel" not in d["decode"]
    assert d["prefill"]["sglang"] == {"disable_radix_cache": True, "mem_fraction_static": 0.6,
                                      "max_running_requests": 2, "max_prefill_tokens": 2048,
                                      "chunked_prefill_size": 2048}
    assert d["decode"]["sglang"] == {"disable_radix_cache": True, "mem_fraction_static": 0.9,
                                     "max_running_requests": 128, "cuda_graph_max_bs": 128,
                                     "speculative_algorithm": "EAGLE", "speculative_num_steps": 2,
                                     "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 3,
                                     "enable_spec_v2": True}
    assert measured == 10 * 8 and sglang.sglang_layout(spec) == "P/D 1×TP16 + 2×TP16"
    long_out = _row("2026_03_25_deepseek_r1_h100_sxm_sglang_fp8_disagg_1024x8192_c8_")
    with pytest.raises(ValueError, match="h100-fp8-1p2d-max-tp-mtp.yaml .*server flags are not tabulated"):
        accuracy.row_spec(long_out, **kw)
    h200 = _row("2026_04_06_deepseek_r1_h200_sxm_sglang_fp8_disagg_1024x1024_c8_")
    with pytest.raises(ValueError, match="2 configurations of its recipe ran these lengths at c = 8"):
        accuracy.row_spec(h200, **kw)
    one = next(r for r in accuracy.read_silicon(SILICON) if r["id"].startswith("2026_04_06_deepseek_r1_h200_sxm_sglang_fp8_disagg_8192x1024_c2_"))
    spec, _, measured = accuracy.row_spec(one, **kw)
    d = spec["engine"]["workers"]["disaggregated"]
    assert (d["prefill"]["count"], d["prefill"]["tp"], d["decode"]["count"], d["decode"]["tp"]) == (1, 8, 6, 8)
    assert d["decode"]["sglang"]["speculative_algorithm"] == "EAGLE" and d["decode"]["sglang"]["speculative_num_steps"] == 2
    assert "speculative_algorithm" not in d["prefill"]["sglang"]
    assert spec["engine"]["quantization"]["kv_cache"] == "auto" and measured == 20
