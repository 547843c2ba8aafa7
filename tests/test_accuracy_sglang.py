"""The accuracy harness on SGLang rows (aisimulate.tools.accuracy.sglang)."""

from __future__ import annotations

import pytest

from aisimulate.tools import accuracy
from aisimulate.tools.accuracy import disagg, sglang
from aisimulate.tools.accuracy.spec import _weights_for

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
    the KV cache at SGLang's --kv-cache-dtype auto; the weights the served checkpoint's
    (zai-org/GLM-5-FP8: quant_method fp8, weight_block_size [128, 128]), not the fp8 of
    the bf16 release the silicon CSV names, so the experts are priced on the fp8_block rows
    of SGLang's Triton fused-MoE tables (quantization/fp8.py Fp8MoEMethod.create_moe_runner:
    --moe-runner-backend auto is Triton without a DeepEP/Mooncake all-to-all)."""
    row = _row("2026_04_06_glm_5_h200_sxm_sglang_fp8_agg_1024x1024_c4_tp8")
    spec, warm, measured = accuracy.row_spec(row, perf="aic", aliases=accuracy.load_aliases(ALIASES),
                                             model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                             database=accuracy.DEFAULT_DATABASE)
    b = spec["traffic"]["benchmark"]
    assert b["tool"] == "vllm_bench_serve" and b["variant"] == "inferencex"
    assert (b["num_prompts"], b["max_concurrency"], b["num_warmups"], b["random_range_ratio"]) == (40, 4, 8, 0.8)
    assert spec["engine"]["sglang"] == {"mem_fraction_static": 0.85}  # the eager launch: the engine's default
    assert spec["engine"]["quantization"] == {"kv_cache": "auto", "weights": "fp8_block"}
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
                           "mamba_ssm_dtype": "bfloat16", "stream_interval": 50}
    assert e["quantization"]["kv_cache"] == "fp8_e4m3"
    assert accuracy.row_spec(new, **kw)[0]["engine"] == e
    fixed, note = sglang.single_node_row(new)
    assert (fixed["tp_size"], fixed["moe_tp_size"], fixed["moe_ep_size"]) == ("8", "1", "8")
    assert note == "columns give 64 × 1 GPUs: the id's TP 8"
    res = accuracy.run_row(new, "aic", kw["aliases"], str(accuracy.DEFAULT_MODEL_CONFIGS), str(accuracy.DEFAULT_DATABASE))
    assert res.status == "ok", res.reason
    assert (res.tp, res.layout) == (8, "TP8 EP8 (columns give 64 × 1 GPUs: the id's TP 8)")


def test_qwen35_recipe_serves_the_block_fp8_checkpoint():
    """qwen3.5_fp8_h200.sh serves Qwen/Qwen3.5-397B-A17B-FP8 (sglang.QWEN35_397B_FP8: the
    bf16 release's config plus quant_method fp8, weight_block_size [128, 128]): the row's
    fp8 is fp8_block, not the per-tensor fp8 of the bf16 config the silicon CSV names.

    Weight bytes per GPU at TP 8, EP 8 (h 4096, 60 layers: 45 Gated DeltaNet, 15 full
    attention; 512 experts of 1024, a shared expert of 1024, vocabulary 248,320, untied),
    fp8 weights 1 byte, bf16 2:
      full attention (gated q): qkv (2·32/8 + 2·1)·256 × 4096 = 10,485,760, o_proj
        4096 × 4·256 = 4,194,304: 14,680,064 fp8 × 15 = 220,200,960
      DeltaNet: qkvz (2·16·128 + 2·64·128)/8 × 4096 = 10,485,760, ba 2·64/8 × 4096 = 65,536
        (the release's bf16 in_proj_b/a, priced with the other projections), out_proj
        4096 × 8192/8 = 4,194,304: 14,745,600 fp8 × 45 = 663,552,000
      shared expert 3 · 4096 · 1024/8 = 1,572,864 fp8 × 60 = 94,371,840
      routed experts 512/8 = 64 local × 3 · 4096 · 1024 = 805,306,368 fp8 × 60 = 48,318,382,080
      router 512 · 4096 = 2,097,152 bf16 × 60 × 2 B = 251,658,240
      embedding and lm_head 31,040 · 4096 × 2 B × 2 = 508,559,360
    fp8_block: 978,124,800 + 48,318,382,080 + 251,658,240 + 508,559,360 = 50,056,724,480;
    all bf16: (978,124,800 + 48,318,382,080) × 2 + 760,217,600 = 99,353,231,360 — the
    49,296,506,880 between them the fp8 parts alone (the bf16 parts the same bytes).
    SGLang sizes its pools itself (memory_plan's plan None), so the bytes are read from the
    same engine as vLLM's plan."""
    from aisimulate import perf

    kw = dict(perf="aic", aliases=accuracy.load_aliases(ALIASES), model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE)
    row = _row("2026_03_25_qwen3_5_397b_h200_sxm_sglang_fp8_agg_1024x8192_c16_tp8_0_ep8_0_587")
    assert row["precision"] == "fp8" and row["model_path"] == "Qwen/Qwen3.5-397B-A17B"
    q = sglang.QWEN35_397B_FP8.quantization_config
    assert (q["quant_method"], q["fmt"], q["activation_scheme"], q["weight_block_size"]) == (
        "fp8", "e4m3", "dynamic", [128, 128])
    # the bf16 config alone gives per-tensor fp8; the served checkpoint's field block fp8
    config = str(accuracy.DEFAULT_MODEL_CONFIGS / "Qwen--Qwen3.5-397B-A17B_config.json")
    assert _weights_for("fp8", config) == "fp8"
    assert _weights_for("fp8", config, quant=q) == "fp8_block"
    spec, _, _ = accuracy.row_spec(row, **kw)
    e = spec["engine"]
    assert e["model"] == config
    assert e["quantization"] == {"kv_cache": "fp8_e4m3", "weights": "fp8_block"}
    assert "checkpoint" not in e["sglang"]
    assert perf.memory_plan(e)["aggregated"]["weight_dtype"] == "fp8_block"
    vllm = {k: v for k, v in e.items() if k not in ("sglang", "backend_version")}
    vllm["backend"] = "vllm"
    got = {}
    for w in ("fp8_block", "bf16"):
        vllm["quantization"] = {"weights": w, "kv_cache": "fp8"}
        got[w] = perf.memory_plan(vllm)["aggregated"]["plan"]["weight_bytes"]
    assert got == {"fp8_block": 50_056_724_480, "bf16": 99_353_231_360}
    res = accuracy.run_row(row, "aic", kw["aliases"], str(accuracy.DEFAULT_MODEL_CONFIGS),
                           str(accuracy.DEFAULT_DATABASE))
    assert res.status == "ok", res.reason
    assert "moe_perf (fp8_block" in res.tables


def test_multi_node_aggregated_row_keeps_its_columns():
    """A server over two nodes (DP attention 16 with EP 16, InferenceX's dep16): its
    columns as given, not the single-node export's product rule (which needs both
    moe_tp_size and moe_ep_size above 1)."""
    row = {"id": "r", "tp_size": "1", "attention_dp_size": "16", "moe_tp_size": "1", "moe_ep_size": "16"}
    assert sglang.single_node_row(row) == (row, "")
    with pytest.raises(ValueError, match="the id names no TP"):  # the product: 64 GPUs, both sizes 8
        sglang.single_node_row(dict(row, tp_size="64", attention_dp_size="1", moe_tp_size="8", moe_ep_size="8"))


def test_inferencex_pd_row_of_no_known_configuration_takes_its_columns():
    """An InferenceX P/D row whose day ran several configurations of its recipe at its
    lengths and concurrency, but whose database-dump columns give both sides (1 prefill
    server TP8, 1 decode server DP attention 8 with EP 8): read off the columns, SGLang's
    defaults for the servers' flags, InferenceX's client (10·c prompts)."""
    row = _row("dsr1_h200_sglang_fp8_disagg_8192x1024_c64_cfg434")
    assert len(sglang.pd_configs(row, 64)) > 1
    kw = dict(perf="roofline", aliases=accuracy.load_aliases(ALIASES), model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE)
    spec, warm, measured = accuracy.row_spec(row, **kw)
    pd = spec["engine"]["workers"]["disaggregated"]
    assert pd["prefill"] == {"count": 1, "tp": 8, "placement": "least_outstanding"}
    assert pd["decode"] == {"count": 1, "tp": 1, "data_parallel_size": 8, "enable_expert_parallel": True,
                            "placement": "least_outstanding"}
    assert "sglang" not in pd["prefill"] and spec["engine"]["sglang"] == {}
    assert spec["traffic"]["benchmark"]["num_prompts"] == 640 and (warm, measured) == (0, 640)
    # without the columns the row keeps its reason
    bare = {k: ("" if k.startswith(("prefill_", "decode_")) else v) for k, v in row.items()}
    with pytest.raises(ValueError, match="configurations of its recipe ran these lengths"):
        accuracy.row_spec(bare, **kw)


def test_a_blackwell_export_pd_row_names_what_it_lacks():
    """A DeepSeek-R1 P/D row of InferenceX's dated export (no worker counts) on B200,
    where no recipe run is tabulated: refused, naming the systems that have one and the
    columns that would stand in; the same row with both sides' columns is served."""
    row = dict(_row("2026_03_25_deepseek_r1_h200_sxm_sglang_fp8_disagg_1024x1024_c512_"), system="b200_sxm")
    assert row["mode"] == "disagg" and not row["prefill_num_workers"]
    kw = dict(perf="roofline", aliases=accuracy.load_aliases(ALIASES), model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE)
    with pytest.raises(ValueError, match=r"^b200_sxm: no InferenceX SGLang P/D recipe run is tabulated for it \(only "
                                         r"for h100_sxm, h200_sxm\), .*prefill_num_workers, prefill_tp_size"):
        accuracy.row_spec(row, **kw)
    full = dict(row, prefill_num_workers="1", decode_num_workers="2")
    spec, _, _ = accuracy.row_spec(full, **kw)
    assert spec["engine"]["workers"]["disaggregated"]["decode"]["count"] == 2


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


def _pd_row(system: str, isl: int, osl: int, c: int, *, source: str = "source_file=2026-03-25.csv",
            sides: dict[str, str] | None = None) -> dict[str, str]:
    """A hand-built InferenceX DeepSeek-R1 P/D row of the recipe run of its system's day
    (H200: 2026-02-07, H100: 2026-02-13), its layout columns as an export writes them
    (one TP and EP for both sides) unless ``sides`` gives them."""
    day, tp, image = (("2026-02-07T22:52:25Z", 8, "lmsysorg/sglang:v0.5.8.post1-cu130") if system == "h200_sxm"
                      else ("2026-02-13T03:10:06Z", 16, "lmsysorg/sglang:v0.5.8-cu130"))
    row = {"id": f"hand_{system}_{isl}x{osl}_c{c}", "backend": "sglang", "backend_version": "0.5.8.post1" if system == "h200_sxm" else "0.5.8",
           "model_path": "deepseek-ai/DeepSeek-R1", "system": system, "precision": "fp8", "mode": "disagg",
           "isl": str(isl), "osl": str(osl), "gemm_quant_mode": "fp8", "moe_quant_mode": "fp8_block",
           "silicon_data_source": f"{source}; model=DeepSeek-R1; silicon_concurrency={c}; measured={day}; image={image}",
           "silicon_ttft_ms": "100", "silicon_tpot_ms": "10"}
    for side in ("prefill", "decode"):
        row.update({f"{side}_tp_size": str(tp), f"{side}_moe_tp_size": str(tp), f"{side}_moe_ep_size": "1",
                    f"{side}_attention_dp_size": "1", f"{side}_num_workers": "", f"{side}_batch_size": ""})
    row.update(sides or {})
    return row


def _eagle_recipe(prefill_fraction: float, prefill_requests: int, prefill_tokens: int, decode_fraction: float,
                  decode_requests: int, stream_interval: int = 1) -> tuple[dict, dict]:
    """The two sides' flags an srt-slurm DeepSeek-R1 MTP recipe writes, as the recipe
    files read: the radix cache off; the prefill's --mem-fraction-static,
    --max-running-requests and --max-prefill-tokens = --chunked-prefill-size; the
    decode's --mem-fraction-static, --max-running-requests = --cuda-graph-max-bs, EAGLE
    2 steps, topk 1, 3 draft tokens, SGLANG_ENABLE_SPEC_V2=1; both sides'
    --stream-interval when above 1."""
    both = {"stream_interval": stream_interval} if stream_interval > 1 else {}
    return (dict(disable_radix_cache=True, mem_fraction_static=prefill_fraction, max_running_requests=prefill_requests,
                 max_prefill_tokens=prefill_tokens, chunked_prefill_size=prefill_tokens, **both),
            dict(disable_radix_cache=True, mem_fraction_static=decode_fraction, max_running_requests=decode_requests,
                 cuda_graph_max_bs=decode_requests, speculative_algorithm="EAGLE", speculative_num_steps=2,
                 speculative_eagle_topk=1, speculative_num_draft_tokens=3, enable_spec_v2=True, **both))


def _pd_kw() -> dict:
    return dict(perf="aic", aliases=accuracy.load_aliases(ALIASES), model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                database=accuracy.DEFAULT_DATABASE)


def test_an_export_records_the_prefill_layout_only():
    """An export row's layout columns are its prefill servers' (sglang.recorded_sides):
    at 8k/1k on H200 the recipe run of 2026-02-07 held c = 512 only in
    bs128-1p1d-dep-mtp, whose prefill is TP 8 without EP and whose decode is DP attention
    with EP 8; the export's "TP 8, EP 1" on both sides is that configuration, simulated
    with its flags (1 prefill server: 0.75, 16 requests, 163,840-token prefills and
    chunks; 1 decode server of 8 attention ranks with EP 8: 0.85, 192 requests and graphs,
    EAGLE 2 steps, SPEC_V2). At c = 256 the same columns hold bs128-1p1d-dep and its MTP
    twin: two candidates."""
    row = _pd_row("h200_sxm", 8192, 1024, 512)
    assert sglang.recorded_sides(row) == ("prefill",)
    assert [p.file for p in sglang.pd_configs(row, 512)] == ["recipes/h200/8k1k/bs128-1p1d-dep-mtp.yaml"]
    spec, _, measured = accuracy.row_spec(row, **_pd_kw())
    d = spec["engine"]["workers"]["disaggregated"]
    assert (d["prefill"]["count"], d["prefill"]["tp"], d["decode"]["count"], d["decode"]["tp"]) == (1, 8, 1, 1)
    assert d["decode"]["data_parallel_size"] == 8 and d["decode"]["enable_expert_parallel"] is True
    assert "data_parallel_size" not in d["prefill"] and "enable_expert_parallel" not in d["prefill"]
    assert (d["prefill"]["sglang"], d["decode"]["sglang"]) == _eagle_recipe(0.75, 16, 163840, 0.85, 192, 10)
    assert measured == 10 * 512 and sglang.sglang_layout(spec) == "P/D 1×TP8 + 1×TP1 DP8 EP8"
    assert sglang.pd_recipe_text(row) == ("recipes/h200/8k1k/bs128-1p1d-dep-mtp.yaml (P 1×TP8, D 1×TP8 EP8 "
                                          "DP-attention, MTP)@fcc04aaa2")
    assert sglang.pd_recipe_text(_pd_row("h200_sxm", 8192, 1024, 256)) == ""
    with pytest.raises(ValueError, match="2 configurations of its recipe ran these lengths at c = 256 that day: "
                                         "recipes/h200/8k1k/bs128-1p1d-dep.yaml .*bs128-1p1d-dep-mtp.yaml"):
        accuracy.row_spec(_pd_row("h200_sxm", 8192, 1024, 256), **_pd_kw())


def test_the_database_dump_records_both_sides():
    """A database-dump row records each side's servers, attention DP and EP: at 8k/1k,
    c = 64, a decode of one server of 8 attention ranks with EP 8 leaves bs128-1p1d-dep
    and -dep-mtp of the five configurations holding c = 64 (bs16-1p3d-mtp, bs64-2p3d,
    bs64-2p3d-mtp besides): still two, with and without MTP."""
    dump = {"decode_num_workers": "1", "decode_tp_size": "1", "decode_attention_dp_size": "8",
            "decode_moe_tp_size": "1", "decode_moe_ep_size": "8", "prefill_num_workers": "1"}
    row = _pd_row("h200_sxm", 8192, 1024, 64, source="db-dump/2026-04-27; config_id=1; workflow_run_id=1", sides=dump)
    assert sglang.recorded_sides(row) == ("prefill", "decode")
    assert [p.file.rsplit("/", 1)[1] for p in sglang.pd_configs(row, 64)] == ["bs128-1p1d-dep.yaml",
                                                                             "bs128-1p1d-dep-mtp.yaml"]
    export = _pd_row("h200_sxm", 8192, 1024, 64)
    assert len(sglang.pd_configs(export, 64)) == 5
    # the dump's two prefill workers would be bs64-2p3d and its MTP twin
    two = dict(row, prefill_num_workers="2", decode_num_workers="3", decode_attention_dp_size="1",
               decode_tp_size="8", decode_moe_tp_size="8", decode_moe_ep_size="1")
    assert [p.file.rsplit("/", 1)[1] for p in sglang.pd_configs(two, 64)] == ["bs64-2p3d.yaml", "bs64-2p3d-mtp.yaml"]


def test_inferencex_pd_rows_by_the_recipe_run_of_their_day():
    """InferenceX's SGLang P/D rows record no worker counts or speculative decoding: the
    configurations of the recipe run that day decide. H100 (2026-02-13: MTP only; every
    prefill TP 16 without EP, so an export's columns cannot tell the TEP decode from the
    DEP one): 1k/1k at c = 128 only h100-fp8-1p2d-max-tp-mtp held, simulated with that
    file's flags (InferenceX 80d98084f): 1 prefill server of TP 16 (max-running-requests
    2, mem-fraction-static 0.6, 2048-token prefills and chunks) and 2 decode servers of TP
    16 (mem-fraction-static 0.9, max-running-requests and cuda-graph-max-bs 128, EAGLE 2
    steps, topk 1, 3 draft tokens, SGLANG_ENABLE_SPEC_V2=1), each TP 16 over two nodes of
    8; at c = 8 both the TEP and the DEP configuration held it. The 1k/8k TEP recipe's
    flags (srt-slurm's sa-submission-q1-2026 branch, 616191c): as the 1k/1k one but 64
    decode requests and graphs. An H200 1k/1k row at c = 8 has two candidates (with and
    without MTP); the H200 8k/1k row at c = 2 has one, bs8-1p6d-mtp, simulated with its
    flags: 1 prefill and 6 decode servers of TP 8, EAGLE 2 steps on the decode side."""
    kw = _pd_kw()
    spec, _, measured = accuracy.row_spec(_pd_row("h100_sxm", 1024, 1024, 128), **kw)
    d = spec["engine"]["workers"]["disaggregated"]
    assert (d["prefill"]["count"], d["prefill"]["tp"], d["decode"]["count"], d["decode"]["tp"]) == (1, 16, 2, 16)
    assert "data_parallel_size" not in d["decode"] and "enable_expert_parallel" not in d["decode"]
    assert (d["prefill"]["sglang"], d["decode"]["sglang"]) == _eagle_recipe(0.6, 2, 2048, 0.9, 128)
    assert measured == 10 * 128 and sglang.sglang_layout(spec) == "P/D 1×TP16 + 2×TP16"
    with pytest.raises(ValueError, match="2 configurations of its recipe ran these lengths at c = 8 that day: "
                                         "recipes/h100/1k1k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml .*"
                                         "h100-fp8-1p1d-max-dep-mtp.yaml"):
        accuracy.row_spec(_pd_row("h100_sxm", 1024, 1024, 8), **kw)
    tep, dep = sglang.pd_configs(_pd_row("h100_sxm", 1024, 8192, 8), 8)
    assert tep.file == "recipes/h100/1k8k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml"
    assert tep.flags == _eagle_recipe(0.6, 2, 2048, 0.9, 64)
    assert dep.decode == (1, 16, 16, True) and dep.flags == _eagle_recipe(0.6, 4, 2048, 0.85, 64)
    with pytest.raises(ValueError, match="2 configurations of its recipe ran these lengths at c = 8"):
        accuracy.row_spec(_pd_row("h200_sxm", 1024, 1024, 8), **kw)
    spec, _, measured = accuracy.row_spec(_pd_row("h200_sxm", 8192, 1024, 2), **kw)
    d = spec["engine"]["workers"]["disaggregated"]
    assert (d["prefill"]["count"], d["prefill"]["tp"], d["decode"]["count"], d["decode"]["tp"]) == (1, 8, 6, 8)
    assert d["decode"]["sglang"]["speculative_algorithm"] == "EAGLE" and d["decode"]["sglang"]["speculative_num_steps"] == 2
    assert "speculative_algorithm" not in d["prefill"]["sglang"]
    assert spec["engine"]["quantization"]["kv_cache"] == "auto" and measured == 20


@pytest.mark.parametrize("prefix, weights", [
    # meta-llama/Llama-3.1-8B-Instruct, precision fp8 (gemm fp8_block): a bf16 checkpoint, and the
    # generator's cli_args.0.5.6.post2.j2 writes no --quantization, so SGLang serves bf16 weights;
    # --kv-cache-dtype fp8_e4m3 from the rule keeps the KV cache fp8
    ("meta_llama_llama_3_1_8b_instruct_meta_llama_llama_3_1_8b_instruct_h200_sxm_sglang_agg_1000x100_c160_tp1", None),
    # Qwen/Qwen3-235B-A22B-FP8: the checkpoint stores fp8 block weights, which SGLang loads as such
    ("qwen_qwen3_235b_a22b_fp8_qwen_qwen3_235b_a22b_fp8_h200_sxm_sglang_agg", "fp8_block"),
])
def test_aiconfigurator_server_runs_the_checkpoints_weights(prefix, weights):
    """AIConfigurator's generator sets no weight quantization for SGLang (no --quantization
    in its templates), so an fp8 row on a bf16 checkpoint runs bf16 weights over the fp8 KV
    cache the row names (sglang.aic_generator_quantization)."""
    spec, _, _ = accuracy.row_spec(_row(prefix), perf="aic", aliases=accuracy.load_aliases(ALIASES),
                                   model_configs=accuracy.DEFAULT_MODEL_CONFIGS, database=accuracy.DEFAULT_DATABASE)
    q = spec["engine"]["quantization"]
    assert q.get("weights") == weights and q["kv_cache"] == "fp8"


def test_aic_generator_quantization_keeps_what_the_checkpoint_stores():
    """The rule by hand: fp8 / fp8_block weights on a checkpoint with no quantization_config
    drop to the checkpoint's; a quantized checkpoint, bf16 and no weights are unchanged."""
    bf16 = str(accuracy.DEFAULT_MODEL_CONFIGS / "meta-llama--Meta-Llama-3.1-8B_config.json")
    fp8 = str(accuracy.DEFAULT_MODEL_CONFIGS / "Qwen--Qwen3-32B-FP8_config.json")
    assert sglang.aic_generator_quantization({"weights": "fp8", "kv_cache": "fp8"}, bf16) == {"kv_cache": "fp8"}
    assert sglang.aic_generator_quantization({"weights": "fp8_block", "kv_cache": "fp8"}, bf16) == {"kv_cache": "fp8"}
    assert sglang.aic_generator_quantization({"weights": "bf16", "kv_cache": "bf16"}, bf16) == {"weights": "bf16",
                                                                                              "kv_cache": "bf16"}
    assert sglang.aic_generator_quantization({"weights": "fp8_block", "kv_cache": "fp8"}, fp8) == {
        "weights": "fp8_block", "kv_cache": "fp8"}
    assert sglang.aic_generator_quantization({"kv_cache": "auto"}, bf16) == {"kv_cache": "auto"}


def test_experts_split_both_ways_run_as_ep_size():
    """A row whose experts split both ways (moe_tp_size 4 × moe_ep_size 2 over TP 8) is
    SGLang's --ep-size 2 (moe_tp_size = tp_size // ep_size), where vLLM refuses it; a dense
    model's MoE columns say nothing; the split both ways beside DP attention is refused."""
    row = dict(_row("qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_sglang_agg_1024x128_c16_tp2"))
    moe = str(accuracy.DEFAULT_MODEL_CONFIGS / "Qwen--Qwen3-235B-A22B-FP8_config.json")
    dense = str(accuracy.DEFAULT_MODEL_CONFIGS / "Qwen--Qwen3-32B_config.json")
    row.update(tp_size="8", attention_dp_size="", moe_tp_size="4", moe_ep_size="2")
    assert sglang.sglang_row_layout(row, moe) == (1, False, 2)
    assert sglang.sglang_row_layout(row, dense) == (1, False, 0)
    with pytest.raises(ValueError, match="vLLM splits experts one way"):
        accuracy.row_layout(row, moe)
    row.update(tp_size="4", attention_dp_size="2")
    with pytest.raises(ValueError, match="beside DP attention is not simulated"):
        sglang.sglang_row_layout(row, moe)
    spec = {"engine": {"workers": {"aggregated": {"count": 1, "tp": 8}}, "sglang": {"ep_size": 2}}}
    assert sglang.sglang_layout(spec) == "TP8 EP2"


def test_a_multiplied_export_within_a_node_is_the_ids_layout():
    """InferenceX's TP 2 EP 2 exported as tp_size 4, moe_tp_size 2, moe_ep_size 2 (id
    ``…_tp2_ep2_…``) is 2 GPUs with the experts over both (moe_tp 1, moe_ep 2), not a TP 4
    server with --ep-size 2; TP 4 EP 2 (id ``…_tp4_ep2_…``, tp_size 8 = 4 × 2) is 4 GPUs, the
    experts 2 ways expert-parallel and 4 // 2 = 2 ways tensor-parallel; a row whose id
    agrees with its columns is unchanged."""
    base = dict(_row("qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_sglang_agg_1024x128_c16_tp2"))
    row = dict(base, id="2026_04_06_x_h200_sxm_sglang_fp8_agg_1024x1024_c4_tp2_ep2_7", tp_size="4",
               attention_dp_size="", moe_tp_size="2", moe_ep_size="2")
    fixed, note = sglang.single_node_row(row)
    assert (fixed["tp_size"], fixed["moe_tp_size"], fixed["moe_ep_size"]) == ("2", "1", "2")
    assert note == "columns give 4 × 1 GPUs: the id's TP 2"
    moe = str(accuracy.DEFAULT_MODEL_CONFIGS / "Qwen--Qwen3-235B-A22B-FP8_config.json")
    assert sglang.sglang_row_layout(fixed, moe) == (1, True, 0)
    row = dict(row, id=row["id"].replace("_tp2_ep2_", "_tp4_ep2_"), tp_size="8", moe_tp_size="4", moe_ep_size="2")
    fixed, _ = sglang.single_node_row(row)
    assert (fixed["tp_size"], fixed["moe_tp_size"], fixed["moe_ep_size"]) == ("4", "2", "2")
    assert sglang.sglang_row_layout(fixed, moe) == (1, False, 2)
    same = dict(row, id=row["id"].replace("_tp4_ep2_", "_tp8_ep2_"))
    assert sglang.single_node_row(same) == (same, "")
