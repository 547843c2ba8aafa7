"""TensorRT-LLM rows of the accuracy harness (aisimulate.tools.accuracy.trtllm)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from aisimulate.tools import accuracy
from aisimulate.tools.accuracy import trtllm

UTC = timezone.utc
CONFIGS = accuracy.DEFAULT_MODEL_CONFIGS
pytestmark = pytest.mark.skipif(not CONFIGS.is_dir(), reason="the shared model configs are not there")


def _row(**kw):
    row = {"id": "r", "backend": "trtllm", "mode": "agg", "system": "h200_sxm", "isl": "1024", "osl": "1024",
           "tp_size": "8", "attention_dp_size": "", "moe_tp_size": "1", "moe_ep_size": "8", "batch_size": "16",
           "precision": "fp8", "backend_version": "1.1.0rc2.post2", "model_path": "deepseek-ai/DeepSeek-R1",
           "silicon_ttft_ms": "100", "silicon_tpot_ms": "10", "silicon_data_source": ""}
    row.update(kw)
    return row


def test_layout_and_concurrency():
    cfg = CONFIGS / "deepseek-ai--DeepSeek-R1_config.json"
    assert trtllm.layout(_row(), cfg) == trtllm.Layout(8, False, True)
    # attention DP: tp_size 1 × 8 ranks; batch_size is one rank's, the loop's is the source's
    adp = _row(tp_size="1", attention_dp_size="8", batch_size="16",
               silicon_data_source="source_file=2026-03-25.csv; silicon_concurrency=128; measured=2026-01-14T22:26:21Z")
    assert trtllm.layout(adp, cfg) == trtllm.Layout(8, True, True)
    assert trtllm.silicon_concurrency(adp) == 128
    # a mislabelled export (tp 64 = 8 × 8): one node, expert parallel, noted
    lay = trtllm.layout(_row(id="x_c4_cfg181", tp_size="64", moe_tp_size="8", moe_ep_size="8"), cfg)
    assert (lay.tp, lay.attention_dp, lay.ep) == (8, False, True) and "one node" in lay.note
    # experts split both ways (moe_tp 2 × moe_ep 2 = tp 4): moe_expert_parallel_size 2
    both = trtllm.layout(_row(tp_size="4", moe_tp_size="2", moe_ep_size="2"), cfg)
    assert both == trtllm.Layout(4, False, False, moe_ep=2)
    assert both.text() == "TP4 EP2" and both.options() == {"moe_expert_parallel_size": 2}
    assert trtllm.aic_generator(8, 1024, None, both)["moe_expert_parallel_size"] == 2
    with pytest.raises(ValueError, match="not simulated with attention DP"):
        trtllm.layout(_row(tp_size="1", attention_dp_size="4", moe_tp_size="2", moe_ep_size="2"), cfg)
    with pytest.raises(ValueError, match="not the row's 8 GPUs"):
        trtllm.layout(_row(tp_size="8", moe_tp_size="2", moe_ep_size="2"), cfg)


def test_layout_of_a_multiplied_export_within_a_node():
    """InferenceX's TP 2 EP 2 (nvidia-master.yaml@17d5e204f: ``{ tp: 2, ep: 2 }``, no TP 4
    EP 2) exported as tp_size 4 = 2 × 2, moe_tp_size 2, moe_ep_size 2: the id's 2 GPUs,
    experts over both; an id without the pattern keeps the columns' split both ways."""
    cfg = CONFIGS / "openai--gpt-oss-120b_config.json"
    kw = dict(model_path="openai/gpt-oss-120b", tp_size="4", moe_tp_size="2", moe_ep_size="2")
    lay = trtllm.layout(_row(id="2026_04_06_gpt_oss_120b_h200_sxm_trtllm_fp4_agg_1024x1024_c4_tp2_ep2_992", **kw),
                        cfg)
    assert lay == trtllm.Layout(2, False, True, "columns give 4 × 1 GPUs: the id's 2")
    assert lay.text() == "TP2 EP2" and lay.options() == {}
    assert trtllm.layout(_row(id="x_c4_tp4_ep2_1", **kw), cfg) == trtllm.Layout(4, False, False, moe_ep=2)
    # TP 4 EP 2 exported as 8 = 4 × 2: the id's 4 GPUs, moe_expert_parallel_size 2
    lay = trtllm.layout(_row(id="x_c4_tp4_ep2_1", **{**kw, "tp_size": "8", "moe_tp_size": "4"}), cfg)
    assert lay == trtllm.Layout(4, False, False, "columns give 8 × 1 GPUs: the id's 4", 2)
    # TP 2 EP 1 as exported (tp_size 2): the columns
    one = trtllm.layout(_row(id="x_c4_tp2_ep1_315", **{**kw, "tp_size": "2", "moe_ep_size": "1"}), cfg)
    assert one == trtllm.Layout(2, False, False)


def test_releases():
    src = "db-dump/2026-04-27; measured=2026-02-14; nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1"
    assert trtllm.release_of("0.8.1.post1", src) == "1.2.0rc6.post1"  # Dynamo 0.8.1.post1's TensorRT-LLM
    assert trtllm.release_of("1.3.0rc1", "image=nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.9.0") == "1.3.0rc1"
    assert trtllm.release_of("gpt-oss-dev") == ""
    assert trtllm.release_of("1.1.0rc2.post2") == "1.1.0rc2.post2"
    with pytest.raises(ValueError, match="not tabulated"):
        trtllm.release_of("0.5.0", src)


def test_aic_generator_by_release():
    lay = trtllm.Layout(2, False, False)
    old = trtllm.aic_generator(32, 1024, None, lay)  # aiconfigurator 0.5/0.6
    assert old["max_batch_size"] == 32 and old["max_num_tokens"] == 32 + 1024 + 1500
    assert old["cuda_graph_config"] == {"batch_sizes": list(range(1, 33)), "enable_padding": False}
    assert old["kv_cache_config"] == {"free_gpu_memory_fraction": 0.8, "enable_block_reuse": False}
    new = trtllm.aic_generator(160, 4000, datetime(2026, 3, 18, tzinfo=UTC), lay)  # 0.7 on
    assert new["max_batch_size"] == 512 and new["max_num_tokens"] == (512 + 4000 + 1500 + 31) // 32 * 32
    sizes = new["cuda_graph_config"]["batch_sizes"]
    assert new["cuda_graph_config"]["enable_padding"] and sizes[:4] == [1, 2, 3, 4] and 152 in sizes and 168 in sizes


def test_deepseek_mtp_rows():
    lay, adp = trtllm.Layout(8, False, True), trtllm.Layout(8, True, True)
    at = lambda t, **kw: _row(silicon_data_source=f"source_file=2026-03-25.csv; measured={t}", **kw)  # noqa: E731
    # before the MTP config existed: not MTP
    assert trtllm.variant_of(at("2025-11-02T00:00:00.000Z"), lay) == ""
    # the MTP config's own run (its merge, 2026-01-14T22:26Z), in either export's form
    assert trtllm.variant_of(at("2026-01-14T22:26:21Z"), lay) == "mtp"
    assert trtllm.variant_of(at("2026-01-14T00:00:00.000Z"), lay) == "mtp"
    # later: MTP only where the non-MTP config has no such point
    assert trtllm.variant_of(at("2026-01-28T06:18:44Z", osl="8192", batch_size="32", tp_size="1",
                                attention_dp_size="8") | {"silicon_data_source": "silicon_concurrency=256; measured=2026-01-28T06:18:44Z"}, adp) == "mtp"
    assert trtllm.variant_of(at("2026-01-28T06:18:44Z", osl="8192", batch_size="64"), lay) == ""
    opts, image, src = trtllm.recipe_at("deepseek-ai/DeepSeek-R1", "h200_sxm", datetime(2026, 1, 20, tzinfo=UTC), "mtp")
    assert image == "1.1.0rc2.post2" and "mtp" in src
    o, kv = trtllm.recipe_options(opts, 64, 1024, lay, 1024)
    assert o["speculative_config"] == {"decoding_type": "MTP", "num_nextn_predict_layers": 3}
    assert o["max_batch_size"] == 64 and o["max_num_tokens"] == (4 * 64 + 1024 + 127) // 64 * 64 and kv == "fp8"
    o, _ = trtllm.recipe_options(opts, 128, 1024, adp, 1024)  # attention DP: one rank's 16, MTP 1
    assert o["max_batch_size"] == 16 and o["speculative_config"]["num_nextn_predict_layers"] == 1
    assert o["enable_attention_dp"] is True and o["stream_interval"] == 10
    assert o["attention_dp_config"] == {"enable_balance": True, "timeout_iters": 60, "batching_wait_iters": 0}
    assert "attention_dp_config" not in trtllm.recipe_options(opts, 64, 1024, lay, 1024)[0]


def test_llama_recipe_batch_waiting_at_1k_1k_below_tp8():
    # 70b_fp8_h200_trt_slurm.sh@1b563c858: batch_wait_* only where ISL = OSL = 1024 and TP < 8
    opts, image, _ = trtllm.recipe_at("meta-llama/Llama-3.1-70B", "h200_sxm", datetime(2025, 10, 29, tzinfo=UTC))
    assert image == "1.1.0rc2.post2"
    o, kv = trtllm.recipe_options(opts, 64, 1024, trtllm.Layout(4, False, False), 1024)
    assert o["batch_wait_timeout_iters"] == 20 and o["batch_wait_max_tokens_ratio"] == 0.9 and kv == "fp8"
    for tp, osl in ((8, 1024), (4, 8192)):
        o, _ = trtllm.recipe_options(opts, 64, 1024, trtllm.Layout(tp, False, False), osl)
        assert "batch_wait_timeout_iters" not in o and "batch_wait_max_tokens_ratio" not in o
        assert o["stream_interval"] == 10 and o["max_num_tokens"] == 16384


def test_b200_llama_rows_take_the_b200_scripts_options():
    # 70b_fp8_b200_trt_slurm.sh and 70b_fp4_b200_trt_slurm.sh@1b563c858 write the H200
    # script's options; before, a B200 row ran the release's defaults
    when = datetime(2025, 10, 29, tzinfo=UTC)
    b200 = trtllm.recipe_at("meta-llama/Llama-3.1-70B", "b200_sxm", when)
    h200 = trtllm.recipe_at("meta-llama/Llama-3.1-70B", "h200_sxm", when)
    assert b200[:2] == h200[:2] and b200[2] == "benchmarks/70b_{fp8,fp4}_b200_trt_slurm.sh@1b563c858"
    o, kv = trtllm.recipe_options(b200[0], 16, 1024, trtllm.Layout(2, False, False), 1024)
    assert (o["max_num_tokens"], o["batch_wait_timeout_iters"], kv) == (16384, 20, "fp8")
    assert trtllm.recipe_at("meta-llama/Llama-3.1-70B", "gb200", when) == ({}, "", "")


def test_b200_gpt_oss_recipe_by_date():
    # gptoss_fp4_b200_trt_slurm.sh: max_batch_size 512 (H200's script: $CONC), max_num_tokens
    # 20000, CUDA graphs padded up to $CONC, stream_interval 20, free_gpu_memory_fraction 0.85
    model = "openai/gpt-oss-120b"
    opts, image, src = trtllm.recipe_at(model, "b200_sxm", datetime(2025, 10, 1, tzinfo=UTC))
    assert (image, src) == ("1.1.0rc2.post2", "benchmarks/gptoss_fp4_b200_trt_slurm.sh@28e5a01ea")
    o, kv = trtllm.recipe_options(opts, 64, 1024, trtllm.Layout(4, False, False), 1024)
    assert kv is None  # kv_cache_config dtype auto
    assert o == {"max_batch_size": 512, "max_num_tokens": 20000, "stream_interval": 20, "enable_attention_dp": False,
                 "moe_expert_parallel_size": 4,  # TEP: TP 4, ISL 1024, CONC 64 ≥ 16
                 "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.85},
                 "cuda_graph_config": {"enable_padding": True, "max_batch_size": 64}}
    # 28e5a01ea: 8k/1k at TP 4 below CONC 256 splits the experts tensor-parallel (--ep_size 1); TP 2 at CONC 16 too
    assert trtllm.recipe_options(opts, 64, 8192, trtllm.Layout(4, False, False), 1024)[0]["moe_expert_parallel_size"] == 1
    assert trtllm.recipe_options(opts, 16, 1024, trtllm.Layout(2, False, False), 1024)[0]["moe_expert_parallel_size"] == 1
    # ac1998a50 (2025-10-20): fp8 KV, --ep_size $TP only from CONC 256, with attention DP
    opts, image, src = trtllm.recipe_at(model, "b200_sxm", datetime(2025, 11, 2, tzinfo=UTC))
    assert (image, src) == ("1.2.0rc0.post1", "benchmarks/gptoss_fp4_b200_trt_slurm.sh@28e5a01ea+ac1998a50")
    o, kv = trtllm.recipe_options(opts, 64, 1024, trtllm.Layout(4, False, False), 1024)
    assert kv == "fp8" and o["moe_expert_parallel_size"] == 1 and "attention_dp_config" not in o
    o, _ = trtllm.recipe_options(opts, 256, 1024, trtllm.Layout(4, True, False), 1024)
    assert o["moe_expert_parallel_size"] == 4 and o["enable_attention_dp"] is True
    assert o["attention_dp_config"] == {"enable_balance": True} and o["cuda_graph_config"]["max_batch_size"] == 256
    # 17d5e204f on: the row's columns give EP; images 1.2.0rc2 (06667a51e), 1.2.0rc2.post1 for a
    # day (98ea663cc, reverted by 10d183038), 1.2.0rc2.post2 (d7dbd045b), 1.3.0rc14 (0977b65f1)
    for when, img in ((datetime(2025, 12, 15, tzinfo=UTC), "1.2.0rc2"), (datetime(2026, 1, 16, 12, tzinfo=UTC), "1.2.0rc2"),
                      (datetime(2026, 1, 28, tzinfo=UTC), "1.2.0rc2"), (datetime(2026, 3, 1, tzinfo=UTC), "1.2.0rc2.post2"),
                      (datetime(2026, 5, 20, tzinfo=UTC), "1.3.0rc14")):
        opts, image, _ = trtllm.recipe_at(model, "b200_sxm", when)
        o, kv = trtllm.recipe_options(opts, 64, 1024, trtllm.Layout(4, False, False), 1024)
        assert image == img and kv == "fp8" and "moe_expert_parallel_size" not in o
        assert (o["max_batch_size"], o["max_num_tokens"]) == (512, 20000)
    assert trtllm.recipe_at(model, "b200_sxm", datetime(2025, 9, 18, tzinfo=UTC)) == ({}, "", "")


def test_b200_gpt_oss_inferencex_row_spec():
    # a synthetic B200 row shaped like the H200 ones (InferenceX's export of 2026-04-06,
    # measured 2025-12-15): TP 8, EP 8, concurrency 64, 1k/8k
    row = _row(model_path="openai/gpt-oss-120b", system="b200_sxm", precision="fp4", backend_version="",
               tp_size="8", attention_dp_size="1", moe_tp_size="1", moe_ep_size="8", batch_size="64", isl="1024",
               osl="8192", silicon_data_source="source_file=2026-04-06.csv; model=gpt-oss-120b; "
                                               "silicon_concurrency=64; measured=2025-12-15T00:00:00.000Z")
    aliases = accuracy.read_inputs(accuracy.SHARED_DATA / "silicon" / "trtllm_dev.csv", None)[1]
    spec, _, measured = accuracy.row_spec(row, perf="roofline", aliases=aliases, model_configs=CONFIGS,
                                          database=accuracy.DEFAULT_DATABASE)
    eng = spec["engine"]
    assert eng["backend_version"] == "1.2.0rc2"  # the image of the day (06667a51e); the row names none
    assert eng["quantization"]["kv_cache"] == "fp8"
    assert eng["workers"]["aggregated"] == {"count": 1, "tp": 8, "enable_expert_parallel": True}
    t = eng["trtllm"]
    assert (t["max_batch_size"], t["max_num_tokens"], t["stream_interval"]) == (512, 20000, 20)
    assert t["cuda_graph_config"] == {"enable_padding": True, "max_batch_size": 64}
    assert t["kv_cache_config"] == {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.85}
    assert "moe_expert_parallel_size" not in t and t["enable_attention_dp"] is False
    assert measured == 10 * 64


def test_recipes_spread_the_experts_over_tp_before_the_search_space():
    # gptoss_fp4_h200_trt_slurm.sh and dsr1_fp8_h200_trt_slurm.sh ran --ep_size=$TP until
    # 17d5e204f (2025-11-03T18:05:50Z) made it the search space's $EP_SIZE (the row's columns)
    for model in ("openai/gpt-oss-120b", "deepseek-ai/DeepSeek-R1"):
        opts, _, src = trtllm.recipe_at(model, "h200_sxm", datetime(2025, 11, 2, tzinfo=UTC))
        assert "17d5e204f" not in src
        assert trtllm.recipe_options(opts, 4, 1024, trtllm.Layout(8, False, False), 1024)[0]["moe_expert_parallel_size"] == 8
        # the columns' own split wins (and enable_expert_parallel is not given twice)
        assert "moe_expert_parallel_size" not in trtllm.recipe_options(opts, 4, 1024, trtllm.Layout(8, False, True), 1024)[0]
        assert trtllm.recipe_options(opts, 4, 1024, trtllm.Layout(4, False, False, moe_ep=2), 1024)[0]["moe_expert_parallel_size"] == 2
        opts, _, src = trtllm.recipe_at(model, "h200_sxm", datetime(2025, 12, 15, tzinfo=UTC))
        assert src.endswith("+17d5e204f")
        assert "moe_expert_parallel_size" not in trtllm.recipe_options(opts, 4, 1024, trtllm.Layout(4, False, False), 1024)[0]


def test_deepseek_h200_token_budget_floored_at_8192_from_64af5a771():
    # dsr1_fp8_h200_trt_slurm.sh@64af5a771 (2026-01-21T23:05:08Z): MAX_NUM_TOKENS =
    # max((CONC + ISL + 64 + 63) / 64 * 64, 8192); the MTP script was not changed
    lay = trtllm.Layout(8, False, True)
    m = "deepseek-ai/DeepSeek-R1"
    before, _, src = trtllm.recipe_at(m, "h200_sxm", datetime(2026, 1, 21, 23, 5, tzinfo=UTC))
    assert "64af5a771" not in src
    assert trtllm.recipe_options(before, 64, 1024, lay, 8192)[0]["max_num_tokens"] == 1152  # (64+1024+127)//64*64
    after, image, src = trtllm.recipe_at(m, "h200_sxm", datetime(2026, 1, 28, tzinfo=UTC))
    assert src.endswith("+17d5e204f+64af5a771") and image == "1.1.0rc2.post2"
    assert trtllm.recipe_options(after, 64, 1024, lay, 8192)[0]["max_num_tokens"] == 8192
    assert trtllm.recipe_options(after, 32, 8192, lay, 1024)[0]["max_num_tokens"] == 8320  # (32+8192+127)//64*64
    mtp, _, _ = trtllm.recipe_at(m, "h200_sxm", datetime(2026, 1, 28, tzinfo=UTC), "mtp")
    assert trtllm.recipe_options(mtp, 64, 1024, lay, 8192)[0]["max_num_tokens"] == (4 * 64 + 1024 + 127) // 64 * 64


def test_row_spec_of_an_aiconfigurator_row():
    row = _row(model_path="Qwen/Qwen3-32B", system="h100_sxm", tp_size="2", moe_tp_size="1", moe_ep_size="1",
               batch_size="32", isl="1024", osl="512", backend_version="1.0.0rc3",
               silicon_data_source="source_file=/x/aic-auto-gap-analysis/data/h100_sxm/trtllm/1.0.0rc3/qwen3_32b.csv")
    aliases = accuracy.read_inputs(accuracy.SHARED_DATA / "silicon" / "trtllm_dev.csv", None)[1]
    spec, warm, measured = accuracy.row_spec(row, perf="roofline", aliases=aliases, model_configs=CONFIGS,
                                             database=accuracy.DEFAULT_DATABASE)
    eng = spec["engine"]
    assert eng["backend"] == "trtllm" and "scheduler" not in eng and eng["backend_version"] == "1.0.0rc3"
    assert eng["trtllm"]["max_batch_size"] == 32 and eng["trtllm"]["max_num_tokens"] == 32 + 1024 + 1500
    assert eng["workers"]["aggregated"] == {"count": 1, "tp": 2}
    assert (warm, measured) == (0, 20 * 32)


def _pd(c, tpot, when="2026-03-23T13:00:07Z", isl="1024", **kw):
    row = _row(mode="disagg", tp_size="", batch_size="", isl=isl, silicon_tpot_ms=str(tpot), id=f"pd{c}_{tpot}",
               backend_version="0.8.1.post1",
               silicon_data_source=f"source_file=2026-03-25.csv; model=DeepSeek-R1; silicon_concurrency={c}; "
                                   f"measured={when}; image=nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1")
    row.update(kw)
    return row


def test_disagg_recipes_by_row():
    from aisimulate.tools.accuracy import trtllm_disagg as td
    # one recipe at the point: it
    (one,) = td.annotate([_pd(13, 5.5)])
    assert one[td.RECIPE_KEY] == "c1_ctx1_gen11_tep8_batch1_eplb0_mtp3"
    # an MTP and a non-MTP recipe at 1k/1k, 144: the day's lower TPOT is the MTP run
    rows = td.annotate([_pd(144, 13.0), _pd(144, 20.2), _pd(144, 13.0, id="dup"), _pd(144, 20.2, when="2026-02-14T06:57:35Z")])
    assert [r[td.RECIPE_KEY] for r in rows[:3]] == ["c16_ctx1_gen9_tep8_batch128_eplb0_mtp3",
                                                     "c16_ctx1_gen9_tep8_batch256_eplb0_mtp0",
                                                     "c16_ctx1_gen9_tep8_batch128_eplb0_mtp3"]
    assert rows[3][td.RECIPE_KEY] == "" and "1 distinct" in rows[3][td.REASON_KEY]  # alone on its day
    # the database dump's layout columns narrow the candidates (ctx 1: the non-MTP 8k/1k c128)
    (v3,) = td.annotate([_pd(128, 36.3, isl="8192", prefill_num_workers="1", decode_num_workers="1",
                             decode_attention_dp_size="8")])
    assert v3[td.RECIPE_KEY] == "c128_ctx1_gen1_dep8_batch256_eplb0_mtp0"
    # two MTP recipes share 1k/1k at 1024; an H100 row outside its search space's days
    assert "recipe unknown" in td.annotate([_pd(1024, 30.0)])[0][td.REASON_KEY]
    assert "66d6a351a" in td.annotate([_pd(6, 8.0, system="h100_sxm")])[0][td.REASON_KEY]


def test_disagg_h100_recipe():
    """An H100 row at 1k/1k, concurrency 30, on 2026-02-08: the 66d6a351a search space
    has an MTP and a non-MTP recipe there, and the lower of the day's two TPOTs is the
    MTP run. Its spec carries the flags of InferenceX 80d98084f's
    benchmarks/multi_node/srt-slurm-recipes/trtllm/h100-fp8/1k1k/mtp/ctx1_gen3_tep16_batch8_eplb0_mtp3.yaml,
    as read off the file: 1 context worker and 3 generation workers of 16 GPUs (two
    nodes of 8), the context server attention DP, max_batch_size 2, max_num_tokens
    2048, max_seq_len 2048, chunked prefill off, free_gpu_memory_fraction 0.6; the
    generation server TP16 EP16, max_batch_size 8, max_num_tokens 256, max_seq_len
    2088, graphs 1, 2, 4, 8, fraction 0.9, stream_interval 100, MTP 3 on both; image
    0.8.1.post3 (TensorRT-LLM 1.2.0rc6.post3). The non-MTP run's recipe
    (1k1k/stp/ctx1_gen3_tep16_batch8_eplb0_mtp0.yaml) turns chunked prefill on."""
    from aisimulate.tools.accuracy import trtllm_disagg as td
    aliases = accuracy.read_inputs(accuracy.SHARED_DATA / "silicon" / "trtllm_dev.csv", None)[1]
    when = "2026-02-08T00:00:00.000Z"
    mtp, stp = td.annotate([_pd(30, 14.2, when=when, system="h100_sxm"), _pd(30, 19.9, when=when, system="h100_sxm")])
    assert mtp[td.RECIPE_KEY] == "ctx1_gen3_tep16_batch8_eplb0_mtp3"
    assert stp[td.RECIPE_KEY] == "ctx1_gen3_tep16_batch8_eplb0_mtp0"
    rec, _ = td.recipe_of(mtp)
    assert rec.source == ("SemiAnalysisAI/InferenceX@80d98084f:benchmarks/multi_node/srt-slurm-recipes/trtllm/"
                          "h100-fp8/1k1k/mtp/ctx1_gen3_tep16_batch8_eplb0_mtp3.yaml")
    spec, warm, measured = accuracy.row_spec(mtp, perf="roofline", aliases=aliases, model_configs=CONFIGS,
                                             database=accuracy.DEFAULT_DATABASE)
    eng = spec["engine"]
    pd = eng["workers"]["disaggregated"]
    assert eng["backend_version"] == "1.2.0rc6.post3"
    assert [(pd[s]["count"], pd[s]["tp"], pd[s]["enable_expert_parallel"]) for s in ("prefill", "decode")] == \
        [(1, 16, True), (3, 16, True)]
    assert pd["prefill"]["trtllm"] == {
        "max_batch_size": 2, "max_num_tokens": 2048, "max_seq_len": 2048, "enable_attention_dp": True,
        "enable_chunked_prefill": False, "disable_overlap_scheduler": True, "cuda_graph_config": None,
        "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.6},
        "moe_config": {"backend": "WIDEEP"}, "force_alltoall_method": "DeepEP",
        "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 3}}
    assert pd["decode"]["trtllm"] == {
        "max_batch_size": 8, "max_num_tokens": 256, "max_seq_len": 2088, "enable_attention_dp": False,
        "enable_chunked_prefill": False, "disable_overlap_scheduler": False,
        "cuda_graph_config": {"enable_padding": True, "batch_sizes": [1, 2, 4, 8]},
        "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.9},
        "stream_interval": 100, "moe_config": {"backend": "CUTLASS"},
        "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 3}}
    assert td.layout_text(spec) == "P/D 1×TP16 ADP16 EP16 + 3×TP16 EP16 MTP3"
    assert (warm, measured) == (0, 10 * 30)  # sa-bench: 10·c prompts
    assert td.prefill_options(td.recipe_of(stp)[0])["enable_chunked_prefill"] is True
    # every H100 recipe's moe_config and TRTLLM_FORCE_ALLTOALL_METHOD: WIDEEP over DeepEP on the
    # context servers and the dep16 generation servers (8k/1k context: max_num_tokens 16384)
    dep = td.BY_NAME[("h100_sxm", 8192, "ctx2_gen1_dep16_batch16_eplb0_mtp0")]
    assert td.decode_options(dep)["moe_config"] == {"backend": "WIDEEP"}
    assert td.decode_options(dep)["force_alltoall_method"] == "DeepEP"
    assert td.prefill_options(dep)["moe_config"] == {"backend": "WIDEEP", "max_num_tokens": 16384}
    h200 = td.BY_NAME[("h200_sxm", 1024, "c128_ctx1_gen9_dep8_batch512_eplb0_mtp0")]
    assert "force_alltoall_method" not in td.decode_options(h200)
    assert td.decode_options(h200)["moe_config"] == {"backend": "CUTLASS"}
    # the graphs of a batch-1 generation server: 1, 2, 4 (its file); of batch 64: 1, 2, 4, 8, 16, 24, …, 64
    assert td.graph_batch_sizes(8192, 1, "h100_sxm") == [1, 2, 4]
    assert td.graph_batch_sizes(8192, 64, "h100_sxm") == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]


def test_disagg_row_spec():
    from aisimulate.tools.accuracy import trtllm_disagg as td
    aliases = accuracy.read_inputs(accuracy.SHARED_DATA / "silicon" / "trtllm_dev.csv", None)[1]
    row = td.annotate([_pd(144, 13.0), _pd(144, 20.2)])[0]
    spec, warm, measured = accuracy.row_spec(row, perf="roofline", aliases=aliases, model_configs=CONFIGS,
                                             database=accuracy.DEFAULT_DATABASE)
    eng = spec["engine"]
    pd = eng["workers"]["disaggregated"]
    assert eng["backend"] == "trtllm" and eng["backend_version"] == "1.2.0rc6.post1" and "trtllm" not in eng
    assert (pd["prefill"]["count"], pd["decode"]["count"], pd["decode"]["tp"]) == (1, 9, 8)
    p, d = pd["prefill"]["trtllm"], pd["decode"]["trtllm"]
    assert p["enable_attention_dp"] and p["cuda_graph_config"] is None and p["disable_overlap_scheduler"]
    assert (p["max_batch_size"], p["max_num_tokens"], p["max_seq_len"]) == (8, 8192, 1064)
    assert (d["max_batch_size"], d["max_num_tokens"], d["stream_interval"]) == (128, 512, 100)
    assert d["cuda_graph_config"]["batch_sizes"] == [1, 2, 4, 8, *range(16, 129, 8)]
    assert d["speculative_config"]["num_nextn_predict_layers"] == 3 and eng["quantization"]["kv_cache"] == "fp8"
    assert spec["traffic"]["benchmark"]["num_prompts"] == 1440 and (warm, measured) == (0, 1440)
    assert td.graph_batch_sizes(8192, 128) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert td.layout_text(spec) == "P/D 1×TP8 ADP8 EP8 + 9×TP8 EP8 MTP3"


def test_disagg_row_without_a_recipe_takes_its_columns():
    """A B200 P/D row (no recipe tabulated for the system) with its layout columns, as
    InferenceX's search space names them (1 prefill worker DEP4, 4 decode workers TEP8,
    nvidia-master.yaml's most run P/D point): its pools from the columns, each option
    the release's default, InferenceX's client at the row's concurrency (10·c prompts)."""
    from aisimulate.tools.accuracy import trtllm_disagg as td
    aliases = accuracy.read_inputs(accuracy.SHARED_DATA / "silicon" / "trtllm_dev.csv", None)[1]
    cols = dict(prefill_num_workers="1", prefill_tp_size="1", prefill_attention_dp_size="4",
                prefill_moe_tp_size="1", prefill_moe_ep_size="4", decode_num_workers="4", decode_tp_size="8",
                decode_attention_dp_size="1", decode_moe_tp_size="1", decode_moe_ep_size="8",
                decode_batch_size="32")
    row = _pd(64, 20.0, system="b200_sxm", **cols)
    assert td.recipe_of(row) == (None, "b200_sxm: no InferenceX TensorRT-LLM P/D recipe is tabulated for it "
                                       "(only for h100_sxm, h200_sxm)")
    spec, warm, measured = accuracy.row_spec(row, perf="roofline", aliases=aliases, model_configs=CONFIGS,
                                             database=accuracy.DEFAULT_DATABASE)
    pd = spec["engine"]["workers"]["disaggregated"]
    assert pd["prefill"] == {"count": 1, "tp": 4, "enable_expert_parallel": True, "placement": "round_robin",
                             "trtllm": {"enable_attention_dp": True}}
    assert pd["decode"] == {"count": 4, "tp": 8, "enable_expert_parallel": True, "placement": "round_robin",
                            "trtllm": {"enable_attention_dp": False, "max_batch_size": 32}}
    assert spec["engine"]["backend_version"] == "1.2.0rc6.post1"  # Dynamo 0.8.1.post1's
    assert (warm, measured) == (0, 640)
    assert td.layout_text(spec) == "P/D 1×TP4 ADP4 EP4 + 4×TP8 EP8"
    # the decode side's GPUs for the row's TP column: its columns' 8
    assert td.decode_gpus(row) == 8
    # a row with neither a recipe nor columns is still refused, naming what it lacks
    with pytest.raises(ValueError, match="no InferenceX TensorRT-LLM P/D recipe is tabulated for it .*"
                                         "prefill_num_workers, prefill_tp_size, decode_num_workers"):
        accuracy.row_spec(_pd(64, 20.0, system="b200_sxm"), perf="roofline", aliases=aliases,
                          model_configs=CONFIGS, database=accuracy.DEFAULT_DATABASE)


def test_group_table():
    """The closing table by (model, mode, campaign, layout, MTP): MAPE and the median
    signed error, by hand; a P/D layout named by its generation workers; a mode line
    with the rows served of all (a skipped TensorRT-LLM row counts, another engine's
    does not)."""
    from aisimulate.tools.accuracy.run import RowResult

    def ok(ttft, tpot, layout="TP8 EP8", mode="agg", mtp=0):
        return RowResult(id="x", status="ok", model="deepseek-ai/DeepSeek-R1", campaign="inferencex", mode=mode,
                         mtp=mtp, layout=layout, silicon_ttft_ms=100.0, silicon_tpot_ms=10.0,
                         predicted_ttft_ms=ttft, predicted_tpot_ms=tpot)

    rs = [ok(80, 11), ok(130, 9), ok(60, 10), ok(90, 6, mtp=3),
          ok(50, 12, layout="P/D 2×TP8 EP8 + 3×TP8 ADP8 EP8", mode="disagg"),
          RowResult(id="s", status="skipped", mode="disagg"), RowResult(id="v", status="skipped")]
    t = accuracy.group_table(rs)
    by = {(g["mode"], g["layout"], g["mtp"]): g for g in t}
    g = by[("agg", "TP8 EP8", "0")]
    assert g["rows"] == 3
    assert g["ttft_mape_pct"] == pytest.approx((20 + 30 + 40) / 3) and g["ttft_bias_pct"] == pytest.approx(-20)
    assert g["tpot_mape_pct"] == pytest.approx((10 + 10 + 0) / 3) and g["tpot_bias_pct"] == pytest.approx(0)
    assert by[("agg", "TP8 EP8", "3")]["tpot_bias_pct"] == pytest.approx(-40)
    assert by[("disagg", "P/D, gen TP8 ADP8 EP8", "0")]["ttft_bias_pct"] == pytest.approx(-50)
    assert by[("agg", "", "")]["rows"] == 4 and by[("agg", "", "")]["of"] == 4
    assert (by[("disagg", "", "")]["rows"], by[("disagg", "", "")]["of"]) == (1, 2)
    assert "1 of 2" in accuracy.format_groups(t)
    assert accuracy.group_table([RowResult(id="v", status="ok", predicted_ttft_ms=1.0)]) == []


def test_disagg_columns_of_a_hybrid_model_turn_block_reuse_off():
    """A P/D row from its columns of a model with recurrent state (Qwen3.5's Gated
    DeltaNet, Nemotron-H's Mamba-2) runs both sides with block reuse off, as
    TensorRT-LLM's MambaHybridCacheManager requires; another model's keeps the release's
    default."""
    from pathlib import Path

    from aisimulate.tools.accuracy import trtllm_disagg as td
    d = Path(CONFIGS)
    for name, hybrid in (("Qwen--Qwen3.5-35B-A3B", True), ("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", True),
                         ("deepseek-ai--DeepSeek-R1", False)):
        assert td.keeps_recurrent_state(d / f"{name}_config.json") is hybrid, name
    assert not td.keeps_recurrent_state(d / "no-such_config.json")
    cols = dict(prefill_num_workers="1", prefill_tp_size="2", prefill_attention_dp_size="1",
                prefill_moe_tp_size="2", prefill_moe_ep_size="1")
    pool = td.side_pool(cols, "prefill", str(d / "Qwen--Qwen3.5-35B-A3B_config.json"))
    assert pool["trtllm"]["kv_cache_config"] == {"enable_block_reuse": False}
    pool = td.side_pool(cols, "prefill", str(d / "deepseek-ai--DeepSeek-R1_config.json"))
    assert "kv_cache_config" not in pool["trtllm"]


def test_fp8_row_of_an_mxfp4_checkpoint_serves_the_checkpoint():
    """AIConfigurator's H100 gpt-oss-120b rows say fp8 of a checkpoint whose experts are
    MXFP4 (its config.json: quant_method mxfp4): the weights stay the checkpoint's, the KV
    cache fp8 as the row says; a bf16 checkpoint's fp8 row (Qwen3-32B) keeps fp8 weights."""
    oss = CONFIGS / "openai--gpt-oss-120b_config.json"
    assert trtllm.checkpoint_quantization({"kv_cache": "fp8", "weights": "fp8"}, oss) == {"kv_cache": "fp8"}
    assert trtllm.checkpoint_quantization({"kv_cache": "fp8", "weights": "fp8_block"}, oss) == {"kv_cache": "fp8"}
    assert trtllm.checkpoint_quantization({"kv_cache": "auto"}, oss) == {"kv_cache": "auto"}
    qwen = CONFIGS / "Qwen--Qwen3-32B_config.json"
    fp8 = {"kv_cache": "fp8", "weights": "fp8"}
    assert trtllm.checkpoint_quantization(fp8, qwen) == fp8
