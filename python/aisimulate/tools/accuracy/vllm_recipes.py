"""InferenceX's vLLM recipes beyond campaigns.RECIPES (Blackwell's; gpt-oss-120b's on Hopper
and MiniMax-M2.5's on H100), and the lookup of a row's recipe.

Each entry is one benchmark script of SemiAnalysisAI/InferenceX and its git history: the
``vllm serve`` flags (``campaigns.Change``, spec terms) each commit set, read from the
script at that commit. A GPU with one script per checkpoint has a recipe per
``precision`` (the silicon rows' column: ``fp8``, ``fp4``). Flags the simulator does not
model are named in each change's text and left out: ``--compilation-config`` (fusion
passes), ``--max-cudagraph-capture-size``, ``--stream-interval``, the MoE kernel's
environment (``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8``: the tables time the experts vLLM's
default picks), ``VLLM_FLOAT32_MATMUL_PRECISION``. ``--max-model-len $MAX_MODEL_LEN`` of
the 2026 scripts is the sweep generator's ISL + OSL + 200 (as in :data:`campaigns.RECIPES`);
the 2025 Llama-3.1-70B fp8 B200 script's came from the workflow, not held here: the
harness leaves it (the release's default, lowered as the operator must when the KV cache
cannot hold one request).

The other Hopper recipes are :data:`campaigns.RECIPES`; :func:`recipe_of` searches all.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .campaigns import MML_BY_SCENARIO, RECIPES as HOPPER, LLAMA_70B, Change, Recipe, _t, recipe_at

_LLAMA_B200 = {"kv_cache": "fp8", "async_scheduling": True, "enable_prefix_caching": False,
               "max_num_batched_tokens": 8192, "gpu_memory_utilization": 0.9, "max_num_seqs": 512}
_LLAMA_B200_WHAT = ("kv-cache-dtype fp8, async-scheduling, no-enable-prefix-caching, max-num-batched-tokens 8192; "
                    "--gpu-memory-utilization 0.9 --max-num-seqs 512 (a fixed 512, not $CONC as on H100/H200); "
                    "the compilation config's fusion passes not modelled")

_MINIMAX_B200_2604 = {"gpu_memory_utilization": 0.9, "kv_cache": "fp8", "max_num_batched_tokens": "isl*2",
                      "enable_prefix_caching": False, "max_model_len": "isl+osl+200"}
_MINIMAX_2604_WHAT = ("--gpu-memory-utilization 0.90 --kv-cache-dtype fp8 --max-num-batched-tokens $((ISL * 2)) "
                      "--no-enable-prefix-caching; --enable-expert-parallel only when EP_SIZE > 1 (the row's "
                      "columns); --max-cudagraph-capture-size 2048, --stream-interval 20 and the all-reduce "
                      "backend not modelled")

#: d2c2acb19, vLLM v0.15.1's change to the gpt-oss scripts' config.yaml.
_NO_ASYNC = Change("d2c2acb19", _t("2026-02-25T13:02:08-06:00"), {"async_scheduling": None},
                   "vLLM v0.15.1: async-scheduling no longer in config.yaml (the release's default: on from 0.14.0)")

#: The 70B scripts' max-model-len: fp4's own from 27f29acbe (10240, by scenario from
#: eb282d8f6); fp8's the workflow's $MAX_MODEL_LEN, not held here.
_LLAMA_B200_MML = {
    "fp8": (),
    "fp4": (MML_BY_SCENARIO,),
}

RECIPES: tuple[Recipe, ...] = tuple(
    Recipe(model, "b200_sxm", f"benchmarks/70b_{prec}_b200_docker.sh", (
        Change(commit, _t(when), {**_LLAMA_B200, **first}, _LLAMA_B200_WHAT),
    ) + _LLAMA_B200_MML[prec], precision=prec)
    for model in LLAMA_70B
    for prec, commit, when, first in (("fp8", "425f74d51", "2025-09-12T21:32:37+00:00", {}),
                                      ("fp4", "27f29acbe", "2025-09-21T20:02:42-04:00", {"max_model_len": 10240}))
) + (
    Recipe("openai/gpt-oss-120b", "b200_sxm", "benchmarks/gptoss_fp4_b200_docker.sh (benchmarks/single_node/"
           "gptoss_fp4_b200.sh from 2026-01-22)", (
        Change("27f29acbe", _t("2025-09-21T20:02:42-04:00"),
               {"async_scheduling": True, "enable_prefix_caching": False, "max_num_batched_tokens": 8192,
                "max_model_len": 10240, "gpu_memory_utilization": 0.9, "max_num_seqs": 512},
               "config.yaml: async-scheduling, no-enable-prefix-caching, max-num-batched-tokens 8192, "
               "max-model-len 10240; --gpu-memory-utilization 0.9 --max-num-seqs 512 (cuda-graph-sizes 2048 and "
               "the compilation config not modelled)"),
        Change("5e92867f4", _t("2025-09-24T13:35:53-07:00"), {"moe_backend": "flashinfer_trtllm_afp8"},
               "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1: FlashInfer's TRT-LLM-gen MoE with MXFP8 activations "
               "(get_mxfp4_backend's SM100_FI_MXFP4_MXFP8_TRTLLM; --moe-backend flashinfer_trtllm_afp8 in the "
               "MXFP4 oracle), set until the script's removal"),
        MML_BY_SCENARIO,
        Change("25506e87c", _t("2025-12-05T13:49:06-08:00"), {"kv_cache": "fp8"},
               "vLLM v0.11.2: kv-cache-dtype fp8"),
        _NO_ASYNC,
    )),
    Recipe("MiniMaxAI/MiniMax-M2.5", "b200_sxm", "benchmarks/single_node/minimaxm2.5_fp8_b200.sh", (
        Change("f342df18e", _t("2026-03-11T14:39:27-04:00"),
               {"gpu_memory_utilization": 0.95, "block_size": 32, "enable_expert_parallel": True,
                "max_model_len": "isl+osl+200"},
               "--gpu-memory-utilization 0.95 --block-size=32, --enable-expert-parallel when EP_SIZE ≥ 1 (every "
               "run); VLLM_USE_FLASHINFER_MOE_FP8=0 VLLM_MOE_USE_DEEP_GEMM=0 (Triton experts) not modelled"),
        Change("0f78cf4eb", _t("2026-03-27T19:17:39-07:00"), {"enable_prefix_caching": False},
               "--no-enable-prefix-caching"),
        Change("bddbf4031", _t("2026-04-03T09:31:35-07:00"), {**_MINIMAX_B200_2604, "enable_expert_parallel": False},
               "vLLM upgrade: " + _MINIMAX_2604_WHAT + "; --block-size=32 kept"),
    ), precision="fp8"),
    Recipe("MiniMaxAI/MiniMax-M2.5", "b200_sxm", "benchmarks/single_node/minimaxm2.5_fp4_b200.sh", (
        Change("79bd988e9", _t("2026-04-08T11:55:08-07:00"), dict(_MINIMAX_B200_2604),
               _MINIMAX_2604_WHAT + "; data-parallel attention (TP 1, DP $TP) when the row's columns say so"),
    ), precision="fp4"),
    Recipe("MiniMaxAI/MiniMax-M2.5", "b300_sxm", "benchmarks/single_node/minimaxm2.5_fp8_b300.sh", (
        Change("340d7854c", _t("2026-04-17T08:47:21-04:00"), {**_MINIMAX_B200_2604, "block_size": 32},
               _MINIMAX_2604_WHAT + "; --block-size=32"),
    ), precision="fp8"),
    Recipe("MiniMaxAI/MiniMax-M2.5", "b300_sxm", "benchmarks/single_node/minimaxm2.5_fp4_b300.sh", (
        Change("22d0f12f7", _t("2026-04-17T08:43:53-04:00"), dict(_MINIMAX_B200_2604),
               _MINIMAX_2604_WHAT + "; data-parallel attention (TP 1, DP $TP) when the row's columns say so"),
    ), precision="fp4"),
)

def _kimi(system: str, file: str, precision: str, first: tuple[str, str, float],
          no_prefix_cache: tuple[str, str, str] | None, later: tuple[Change, ...] = ()) -> Recipe:
    """A Kimi-K2.5 script: ``first`` (commit, time, --gpu-memory-utilization) with
    --max-num-seqs $CONC and the sweep generator's max-model-len, then the commit that
    switched prefix caching off (commit, time, what else it says; None: off from the
    first), then ``later``."""
    commit, when, util = first
    flags: dict[str, Any] = {"gpu_memory_utilization": util, "max_num_seqs": "c", "max_model_len": "isl+osl+200"}
    if no_prefix_cache is None:
        flags["enable_prefix_caching"] = False
    changes = [Change(commit, _t(when), flags, f"--gpu-memory-utilization {util:.2f} --max-num-seqs $CONC"
                      + (" --no-enable-prefix-caching" if no_prefix_cache is None else ""))]
    if no_prefix_cache:
        changes.append(Change(no_prefix_cache[0], _t(no_prefix_cache[1]), {"enable_prefix_caching": False},
                              "--no-enable-prefix-caching" + no_prefix_cache[2]))
    return Recipe("moonshotai/Kimi-K2.5", system, file, tuple(changes) + later, precision=precision)


#: Kimi-K2.5 (``--reasoning-parser``/``--tool-call-parser`` kimi_k2 and the all-reduce
#: fusion pass not modelled), INT4 and NVFP4 checkpoints, one script each. B300's first
#: script (a35e53694) already switched prefix caching off; it was reverted by 13d527ab9
#: and added again by f34a83b25 on 2026-04-20 with the same flags.
KIMI = (
    _kimi("b200_sxm", "benchmarks/single_node/kimik2.5_int4_b200.sh", "int4",
          ("eb02101ef", "2026-02-23T21:58:57-05:00", 0.95),
          ("79ea3651a", "2026-03-24T13:03:05-07:00", " (VLLM_USE_FLASHINFER_MOE_INT4=1: the experts' kernel, not modelled)")),
    _kimi("b200_sxm", "benchmarks/single_node/kimik2.5_fp4_b200.sh", "fp4",
          ("a58dedd5a", "2026-03-11T09:59:36-07:00", 0.9), ("79a42e20a", "2026-03-27T15:21:53-07:00", ""), (
              Change("6c3acebfa", _t("2026-04-20T07:22:32-07:00"), {"kv_cache": "fp8", "max_num_batched_tokens": "isl*2"},
                     "--kv-cache-dtype fp8 --max-num-batched-tokens $((ISL * 2)) (--max-cudagraph-capture-size 2048, "
                     "--stream-interval 20 not modelled)"),)),
    _kimi("b300_sxm", "benchmarks/single_node/kimik2.5_fp4_b300.sh", "fp4",
          ("a35e53694", "2026-04-17T09:20:42-04:00", 0.9), None),
)


#: gpt-oss-120b on Hopper (the MXFP4 experts' Marlin kernel, VLLM_MXFP4_USE_MARLIN=1 from
#: 4e52ed4c6, and cuda-graph-sizes / max-cudagraph-capture-size 2048 not modelled).
_GPTOSS_HOPPER = {"async_scheduling": True, "enable_prefix_caching": False, "max_num_batched_tokens": 8192,
                  "max_model_len": 10240, "gpu_memory_utilization": 0.9, "max_num_seqs": "c"}
_GPTOSS_HOPPER_WHAT = ("config.yaml: async-scheduling, no-enable-prefix-caching, max-num-batched-tokens 8192, "
                       "max-model-len 10240; --gpu-memory-utilization 0.9 --max-num-seqs $CONC")
GPTOSS_HOPPER = (
    Recipe("openai/gpt-oss-120b", "h100_sxm", "benchmarks/gptoss_fp4_h100_{slurm,docker}.sh (benchmarks/single_node/"
           "gptoss_fp4_h100.sh from 2026-01-22)", (
        Change("af4ccd03f", _t("2025-09-23T15:29:20-04:00"), dict(_GPTOSS_HOPPER), _GPTOSS_HOPPER_WHAT),
        _NO_ASYNC,
    )),
    Recipe("openai/gpt-oss-120b", "h200_sxm", "benchmarks/gptoss_fp4_h200_slurm.sh (benchmarks/single_node/"
           "gptoss_fp4_h200.sh from 2026-01-22)", (
        Change("77f238d12", _t("2025-09-15T16:13:38-07:00"), dict(_GPTOSS_HOPPER), _GPTOSS_HOPPER_WHAT),
        MML_BY_SCENARIO,
        _NO_ASYNC,
    )),
)

#: MiniMax-M2.5 FP8 on H100 (the H200 one is campaigns.RECIPES'): a fixed --max-num-seqs 256,
#: EP only when EP_SIZE > 1 (the row's columns).
MINIMAX_H100 = (
    Recipe("MiniMaxAI/MiniMax-M2.5", "h100_sxm", "benchmarks/single_node/minimaxm2.5_fp8_h100.sh", (
        Change("ac0d2a853", _t("2026-03-02T23:47:57-05:00"),
               {"gpu_memory_utilization": 0.9, "max_num_seqs": 256, "max_model_len": "isl+osl+200"},
               "--gpu-memory-utilization 0.90 --max-num-seqs 256; --enable-expert-parallel when EP_SIZE > 1"),
        Change("0f78cf4eb", _t("2026-03-27T19:17:39-07:00"), {"enable_prefix_caching": False},
               "--no-enable-prefix-caching"),
    )),
)

#: Every vLLM recipe tabulated: Hopper's and Blackwell's.
ALL = HOPPER + GPTOSS_HOPPER + MINIMAX_H100 + RECIPES + KIMI


def recipe_of(row: dict[str, str], when: datetime) -> tuple[dict[str, Any], str]:
    """The flags of the InferenceX vLLM recipe that served ``row`` (its model, system and
    precision) at ``when``, and where they come from (``({}, "")``: none tabulated)."""
    return recipe_at((row.get("model_path") or "").strip(), (row.get("system") or "").strip(), when, ALL,
                     (row.get("precision") or "").strip())
