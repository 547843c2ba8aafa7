"""InferenceX's vLLM recipes by model, system, precision and date (accuracy/vllm_recipes.py)."""

from datetime import UTC, datetime

from aisimulate.tools.accuracy import campaigns, vllm_recipes


def _row(model: str, system: str, precision: str) -> dict[str, str]:
    return {"model_path": model, "system": system, "precision": precision}


def _engine(row: dict[str, str], when: datetime, isl: int, osl: int, c: int) -> tuple[dict, str]:
    flags, src = vllm_recipes.recipe_of(row, when)
    engine: dict = {}
    campaigns.apply_recipe(engine, flags, isl, osl, c)
    return engine, src


def test_the_silicon_rows_llama_name_takes_its_recipe():
    # the rows call the model meta-llama/Llama-3.1-70B; InferenceX's H200 script at the
    # rows' day (2025-10-29): max-model-len by scenario since eb282d8f6, --max-num-seqs $CONC
    when = datetime(2025, 10, 29, 23, 59, tzinfo=UTC)
    engine, src = _engine(_row("meta-llama/Llama-3.1-70B", "h200_sxm", "fp8"), when, 1024, 1024, 64)
    assert src == "benchmarks/70b_fp8_h200_slurm.sh@425f74d51+eb282d8f6"
    assert engine == {"scheduler": {"gpu_memory_utilization": 0.9, "enable_prefix_caching": False, "async_scheduling": True,
                                    "max_num_batched_tokens": 8192, "max_num_seqs": 64, "max_model_len": 1024 + 1024 + 20},
                      "quantization": {"kv_cache": "fp8"}}
    assert _engine(_row("meta-llama/Llama-3.1-70B", "h200_sxm", "fp8"), when, 8192, 1024, 64)[0]["scheduler"][
        "max_model_len"] == 8192 + 1024 + 200
    # H100's script kept max-model-len 10240
    assert _engine(_row("meta-llama/Llama-3.1-70B", "h100_sxm", "fp8"), when, 1024, 1024, 64)[0]["scheduler"][
        "max_model_len"] == 10240


def test_b200_llama_runs_512_sequences_and_each_precision_its_script():
    when = datetime(2025, 10, 29, 23, 59, tzinfo=UTC)
    fp8, src8 = _engine(_row("meta-llama/Llama-3.1-70B", "b200_sxm", "fp8"), when, 1024, 1024, 64)
    fp4, src4 = _engine(_row("meta-llama/Llama-3.1-70B", "b200_sxm", "fp4"), when, 1024, 1024, 64)
    assert (src8, src4) == ("benchmarks/70b_fp8_b200_docker.sh@425f74d51", "benchmarks/70b_fp4_b200_docker.sh@27f29acbe+eb282d8f6")
    assert fp8["scheduler"]["max_num_seqs"] == fp4["scheduler"]["max_num_seqs"] == 512
    assert "max_model_len" not in fp8["scheduler"]  # the workflow's $MAX_MODEL_LEN
    assert fp4["scheduler"]["max_model_len"] == 2068


def test_b200_minimax_before_and_after_the_vllm_upgrade():
    row = _row("MiniMaxAI/MiniMax-M2.5", "b200_sxm", "fp8")
    # 2026-03-11 (f342df18e): 0.95, block 32, experts always expert-parallel, prefix caching on
    flags, _ = vllm_recipes.recipe_of(row, datetime(2026, 3, 20, tzinfo=UTC))
    assert flags == {"gpu_memory_utilization": 0.95, "block_size": 32, "enable_expert_parallel": True,
                     "max_model_len": "isl+osl+200"}
    # from bddbf4031 (2026-04-03): fp8 KV, 2·ISL batched tokens, EP only as the row says
    engine, src = _engine(row, datetime(2026, 4, 3, 23, 59, tzinfo=UTC), 8192, 1024, 32)
    assert src == "benchmarks/single_node/minimaxm2.5_fp8_b200.sh@f342df18e+0f78cf4eb+bddbf4031"
    assert engine == {"scheduler": {"gpu_memory_utilization": 0.9, "enable_prefix_caching": False,
                                    "max_num_batched_tokens": 2 * 8192, "block_size": 32,
                                    "max_model_len": 8192 + 1024 + 200},
                      "quantization": {"kv_cache": "fp8"}}
    assert vllm_recipes.recipe_of(row, datetime(2026, 4, 3, 23, 59, tzinfo=UTC))[0]["enable_expert_parallel"] is False
    # the fp4 script (79bd988e9, 2026-04-08): none before it landed, then no block size
    fp4 = _row("MiniMaxAI/MiniMax-M2.5", "b200_sxm", "fp4")
    assert vllm_recipes.recipe_of(fp4, datetime(2026, 4, 3, 23, 59, tzinfo=UTC)) == ({}, "")
    engine, _ = _engine(fp4, datetime(2026, 4, 22, tzinfo=UTC), 1024, 1024, 32)
    assert engine["scheduler"] == {"gpu_memory_utilization": 0.9, "enable_prefix_caching": False,
                                   "max_num_batched_tokens": 2048, "max_model_len": 2248}


def test_a_flag_a_later_change_stopped_setting_is_the_releases_default():
    # gpt-oss on B200: async-scheduling in config.yaml until d2c2acb19 (vLLM 0.15.1, where it is the default)
    row = _row("openai/gpt-oss-120b", "b200_sxm", "fp4")
    before, _ = _engine(row, datetime(2025, 11, 2, 23, 59, tzinfo=UTC), 1024, 8192, 16)
    after, src = _engine(row, datetime(2026, 2, 25, 23, 59, tzinfo=UTC), 1024, 8192, 16)
    assert before["scheduler"]["async_scheduling"] is True and "quantization" not in before
    assert "async_scheduling" not in after["scheduler"] and after["quantization"] == {"kv_cache": "fp8"}
    assert after["scheduler"]["max_model_len"] == 1024 + 8192 + 200
    assert src.endswith("@27f29acbe+5e92867f4+eb282d8f6+25506e87c+d2c2acb19")


def test_b200_gpt_oss_runs_the_mxfp8_activation_kernel():
    # 5e92867f4 (2025-09-24) exports VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1: the MXFP4 experts
    # run FlashInfer's TRT-LLM-gen kernel with MXFP8 activations (engine.moe_backend
    # flashinfer_trtllm_afp8, the oracle's name for it); the first script (27f29acbe) did not
    row = _row("openai/gpt-oss-120b", "b200_sxm", "fp4")
    first, _ = _engine(row, datetime(2025, 9, 22, tzinfo=UTC), 1024, 1024, 16)
    assert "moe_backend" not in first
    for when in (datetime(2025, 11, 2, 23, 59, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)):
        engine, _ = _engine(row, when, 1024, 1024, 16)
        assert engine["moe_backend"] == "flashinfer_trtllm_afp8"
    # Hopper's recipes leave the kernel to vLLM's choice there
    assert "moe_backend" not in _engine(_row("openai/gpt-oss-120b", "h200_sxm", "fp4"),
                                        datetime(2025, 11, 2, tzinfo=UTC), 1024, 1024, 16)[0]


def test_no_recipe_on_a_system_or_precision_none_is_tabulated_for():
    when = datetime(2026, 4, 22, tzinfo=UTC)
    assert vllm_recipes.recipe_of(_row("MiniMaxAI/MiniMax-M2.5", "gb200", "fp8"), when) == ({}, "")
    assert vllm_recipes.recipe_of(_row("moonshotai/Kimi-K2.5", "gb200", "fp4"), when) == ({}, "")
    # a precision-free Hopper recipe still serves every precision of its model and GPU
    assert vllm_recipes.recipe_of(_row("MiniMaxAI/MiniMax-M2.5", "h200_sxm", "fp8"), when)[1].startswith(
        "benchmarks/single_node/minimaxm2.5_fp8_h200.sh@")


def test_kimi_on_blackwell_by_checkpoint():
    # INT4 on B200 (eb02101ef; prefix caching off from 79ea3651a), its measured day 2026-03-24
    engine, src = _engine(_row("moonshotai/Kimi-K2.5", "b200_sxm", "int4"), datetime(2026, 3, 24, 23, 59, tzinfo=UTC),
                          8192, 1024, 16)
    assert src == "benchmarks/single_node/kimik2.5_int4_b200.sh@eb02101ef+79ea3651a"
    assert engine == {"scheduler": {"gpu_memory_utilization": 0.95, "enable_prefix_caching": False, "max_num_seqs": 16,
                                    "max_model_len": 8192 + 1024 + 200}}
    # NVFP4 on B200: fp8 KV and 2·ISL batched tokens from 6c3acebfa (2026-04-20)
    fp4 = _row("moonshotai/Kimi-K2.5", "b200_sxm", "fp4")
    assert "kv_cache" not in vllm_recipes.recipe_of(fp4, datetime(2026, 3, 27, 23, 59, tzinfo=UTC))[0]
    engine, _ = _engine(fp4, datetime(2026, 4, 20, 23, 59, tzinfo=UTC), 1024, 1024, 32)
    assert engine["quantization"] == {"kv_cache": "fp8"} and engine["scheduler"]["max_num_batched_tokens"] == 2048
    # B300's NVFP4 script landed 2026-04-17: a row of 2026-04-03 has no recipe
    assert vllm_recipes.recipe_of(_row("moonshotai/Kimi-K2.5", "b300_sxm", "fp4"), datetime(2026, 4, 3, tzinfo=UTC)) == ({}, "")


def test_gpt_oss_on_hopper():
    # H100 (af4ccd03f): max-model-len 10240 and --max-num-seqs $CONC; H200's by scenario
    # from eb282d8f6; async scheduling left to vLLM 0.15.1's default from d2c2acb19
    when = datetime(2025, 11, 2, 23, 59, tzinfo=UTC)
    h100, src = _engine(_row("openai/gpt-oss-120b", "h100_sxm", "fp4"), when, 1024, 1024, 64)
    assert src.endswith("@af4ccd03f")
    assert h100 == {"scheduler": {"gpu_memory_utilization": 0.9, "enable_prefix_caching": False, "async_scheduling": True,
                                  "max_num_batched_tokens": 8192, "max_num_seqs": 64, "max_model_len": 10240}}
    h200, _ = _engine(_row("openai/gpt-oss-120b", "h200_sxm", "fp4"), when, 1024, 1024, 64)
    assert h200["scheduler"]["max_model_len"] == 2068
    later, src = _engine(_row("openai/gpt-oss-120b", "h200_sxm", "fp4"), datetime(2026, 3, 27, tzinfo=UTC), 8192, 1024, 4)
    assert "async_scheduling" not in later["scheduler"] and src.endswith("@77f238d12+eb282d8f6+d2c2acb19")


def test_minimax_on_h100_runs_256_sequences():
    row = _row("MiniMaxAI/MiniMax-M2.5", "h100_sxm", "fp8")
    engine, src = _engine(row, datetime(2026, 3, 28, 23, 59, tzinfo=UTC), 1024, 1024, 64)
    assert src == "benchmarks/single_node/minimaxm2.5_fp8_h100.sh@ac0d2a853+0f78cf4eb"
    assert engine == {"scheduler": {"gpu_memory_utilization": 0.9, "enable_prefix_caching": False, "max_num_seqs": 256,
                                    "max_model_len": 2248}}
    # the rows of 2026-03-27 (UTC) ran before prefix caching was switched off
    assert "enable_prefix_caching" not in vllm_recipes.recipe_of(row, datetime(2026, 3, 27, 23, 59, tzinfo=UTC))[0]


def test_b300_kimi_switched_prefix_caching_off_from_its_first_commit():
    engine, src = _engine(_row("moonshotai/Kimi-K2.5", "b300_sxm", "fp4"), datetime(2026, 4, 20, 23, 59, tzinfo=UTC),
                          1024, 1024, 8)
    assert src == "benchmarks/single_node/kimik2.5_fp4_b300.sh@a35e53694"
    assert engine == {"scheduler": {"gpu_memory_utilization": 0.9, "enable_prefix_caching": False, "max_num_seqs": 8,
                                    "max_model_len": 2248}}
