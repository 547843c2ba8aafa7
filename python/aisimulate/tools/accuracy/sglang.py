"""How an SGLang silicon row becomes a replay spec (``engine.backend: sglang``).

The row's campaign (:func:`campaigns.campaign_of`, from ``silicon_data_source``) chooses
the procedure:

AIConfigurator (``…aic-auto-gap-analysis/…``) and unrecorded rows
    The load generator as the vLLM rows run it (:data:`spec.LOAD_GENERATORS`: AIPerf, c
    warm-up requests, 20·c measured from 20·c shuffled prompts) with its client path,
    on the SGLang server AIConfigurator's generator writes
    (``generator/rule_plugin/sglang.rule`` and ``backend_templates/sglang/
    cli_args.<version>.j2``): ``--max-running-requests`` = the worker's batch size (the
    row's ``batch_size``), ``--max-prefill-tokens`` = ISL + 1500, ``--cuda-graph-bs`` 1…
    batch size, and ``--enable-mixed-chunk`` from the 0.5.6.post2 template on (the
    0.5.1.post1 template spells it ``--enable-mix-chunk``, a flag SGLang does not know,
    so those servers ran without it); the rest at SGLang's defaults for the row's
    release (the radix cache on). No template writes ``--quantization``, so an
    aggregated row's weights are the checkpoint's (:func:`aic_generator_quantization`:
    the ``fp8`` rows on the bf16 ``meta-llama/Llama-3.1-8B-Instruct`` run bf16 GEMMs),
    its KV cache the row's (``--kv-cache-dtype fp8_e4m3`` from the rule).
InferenceX (``YYYY-MM-DD.csv``, ``db-dump/…``)
    Its client (``traffic.benchmark`` tool ``vllm_bench_serve``, variant ``inferencex``,
    at the row's ``measured`` date): random lengths with range ratio 0.8, 10·c prompts
    at max concurrency c, the warm-ups of that date, ``ignore_eos``; the server its
    recipe launched at that date (:data:`RECIPES`, ``python3 -m sglang.launch_server``
    flags), SGLang's defaults for the release where the recipe is silent (or when no
    recipe is tabulated: ``rows.csv`` says which), the weights those of the checkpoint
    it serves (a recipe's ``checkpoint``: zai-org/GLM-5-FP8's config file, or
    :data:`QWEN35_397B_FP8`'s quantization_config over the bf16 release's config where the
    shared data has no config of the FP8 release). The KV cache is SGLang's
    ``--kv-cache-dtype auto`` (no recipe sets it): the checkpoint's FP8 KV when its
    quantization config names one (``kv_cache_quant_algo``), else the model's bf16
    (``ModelRunner.configure_kv_cache_dtype``): DeepSeek-R1-0528's and GLM-5-FP8's
    fp8 checkpoints name none, so their KV is bf16; a recipe that sets
    ``--kv-cache-dtype`` (Qwen3.5's fp8_e4m3) sets it. A row whose ``tp_size`` ×
    ``attention_dp_size`` exceeds a node (the 2026-04-06 export gives Qwen3.5's TP 8, EP 8
    runs ``tp_size`` 64) is that node's: :func:`single_node_row`.

P/D rows (``mode`` disagg) are read by the shared P/D reader (:mod:`.disagg`: each side's
servers, attention TP, DP attention and expert parallelism), each pool with its own
server arguments (``engine.workers.disaggregated.<side>.sglang``: AIConfigurator's
generator writes ``--max-running-requests`` = that side's batch size, 1 for the prefill
servers, and ``--max-prefill-tokens`` = ISL + 1500 for both), the KV over the system's
network (one NIC per attention rank, as SGLang's NIXL / Mooncake transfer sends each
rank's KV). InferenceX's P/D rows record neither worker counts nor speculative
decoding: the configurations of the recipe run of the row's day (:data:`PD_RECIPES`)
that hold its lengths and concurrency and agree with the layout it records decide
(:func:`pd_configs`); a dated export records the prefill servers' layout only, the
results database's dump both sides' (:func:`recorded_sides`). A row two or more
configurations hold is skipped with them named: no column, file name or run id of these
rows tells them apart, and a configuration is never chosen by comparing times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import campaigns, disagg
from .rows import _int
from .spec import (AIC_GENERATOR_TOKEN_SLACK, AIPERF_CLIENT, LOAD_GENERATORS, Checkpoint, _checkpoint_quant,
                   _lengths, _quantization, _weights_for, layout_text, row_layout)

#: The first SGLang template (cli_args.0.5.6.post2.j2) that writes --enable-mixed-chunk.
MIXED_CHUNK_SINCE = (0, 5, 6)

#: ``launch_server`` flags of the InferenceX SGLang recipes that set a length-dependent
#: value: ``{(isl, osl): value, None: otherwise}``.
ByLengths = dict

_DSR1_H200_FLAGS = {
    "disable_radix_cache": True, "chunked_prefill_size": 32768, "max_prefill_tokens": 32768,
    "mem_fraction_static": 0.82, "stream_interval": 10,
    "max_running_requests": {(1024, 1024): 512, None: 256}, "cuda_graph_max_bs": {(1024, 1024): 512, None: 256},
}
_DSR1_H200_WHAT = ("launch_server --tensor-parallel-size=8 --data-parallel-size=1 --disable-radix-cache "
                   "--max-running-requests 512 (1k/1k; else 256) --cuda-graph-max-bs 512 (else 256) "
                   "--chunked-prefill-size 32768 --max-prefill-tokens 32768 --mem-fraction-static 0.82 "
                   "--attention-backend flashinfer --stream-interval 10 (the same flags, less --tokenizer-path, "
                   "at 12ba0ae07 on the rows' day, image lmsysorg/sglang:v0.5.9-cu130; the attention backend is "
                   "not modelled: the 0.5.9 tables time FA3's MLA decode, which the wideep module tables put "
                   "within ±5 µs a layer of flashinfer's; the experts run Triton's fused MoE with the shared "
                   "expert fused in, E 257, top-k 9; the interval sends a request's output at the lengths ≡ 1 "
                   "mod 10, its first token at once, and at its finish)")

#: Qwen/Qwen3.5-397B-A17B-FP8, the checkpoint ``qwen3.5_fp8_h200.sh`` serves (``MODEL`` of
#: ``qwen3.5-fp8-h200-sglang`` in InferenceX's ``.github/configs/nvidia-master.yaml`` at
#: f65d6b4b1), whose config.json the shared data lacks: Qwen/Qwen3.5-397B-A17B's
#: architecture with Qwen's fine-grained FP8 ``quantization_config`` (quant_method fp8, fmt
#: e4m3, dynamic activation scales, 128×128 weight blocks, as the Qwen3-32B-FP8 and
#: Qwen3-235B-A22B-FP8 configs of the shared data write it). Its module coverage, as an arXiv
#: paper's appendix quotes "the weight-selection policy of the official
#: Qwen3.5-397B-A17B-FP8 release" (D.3 "Quantized Module Coverage", the code corpus):
#: the routed- and shared-expert projections, each Gated DeltaNet layer's fused input
#: projection (its q, k, v and z rows) and out_proj, each full-attention layer's QKV and
#: o_proj are fp8; the beta and alpha rows of the input projection (``in_proj_b``,
#: ``in_proj_a``) stay bf16 — so also lightseekorg/tokenspeed pull request 766 (the
#: Qwen3.5-35B-A3B-FP8 checkpoint: in_proj_qkv and in_proj_z fp8, in_proj_b and
#: in_proj_a in ``modules_to_not_convert``) and sgl-project/sglang issue 30598 (Qwen's
#: static FP8 releases leave ``mlp.gate``, ``shared_expert_gate``, ``in_proj_a``,
#: ``in_proj_b``, the embedding, lm_head, the MTP layer and the vision tower
#: unquantized). The globs of ``modules_to_not_convert`` below stand for those modules'
#: names (``*`` a layer index; the releases list them one by one), a record: the weight
#: format is read from the rest, and the replay's ``engine.quantization.weights:
#: fp8_block`` prices every projection of the decoder layers fp8 (in_proj_ba too, the one
#: module it cannot keep bf16) and the router, embedding and lm_head bf16, as it always
#: does (docs/accuracy.md, "SGLang rows"). SGLang loads it block-quantized (sgl-project/sglang pull
#: request 18926, "[Qwen3.5] Support block-wise FP8 quantization", merged 2026-02-17;
#: ``models/qwen3_5.py`` builds ``in_proj_qkvz``, ``in_proj_ba``
#: and ``out_proj`` with the checkpoint's quant config, its Fp8Config skipping the
#: modules the list names). The script's ``--quantization fp8`` names the checkpoint's
#: own method (``configs/model_config.py`` ``_parse_quant_hf_config``), so the
#: checkpoint's block scales are the ones served.
QWEN35_397B_FP8 = Checkpoint("Qwen/Qwen3.5-397B-A17B-FP8", {
    "quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128],
    "modules_to_not_convert": [
        "lm_head", "model.language_model.embed_tokens",
        "model.language_model.layers.*.linear_attn.in_proj_a", "model.language_model.layers.*.linear_attn.in_proj_b",
        "model.language_model.layers.*.mlp.gate", "model.language_model.layers.*.mlp.shared_expert_gate",
        "model.visual*", "mtp*"],
}, "arXiv paper appendix D.3 (the official release's module coverage); lightseekorg/tokenspeed#766; "
   "sgl-project/sglang#30598, #18926")

#: The SGLang recipes of InferenceX that rows of the shared data ran, from
#: SemiAnalysisAI/InferenceX's history: flags in ``engine.sglang`` terms (a
#: :data:`ByLengths` value by the row's lengths). The DeepSeek-V3 rows of the results
#: database repeat DeepSeek-R1-0528 runs (the recipe's model).
RECIPES = tuple(
    campaigns.Recipe(model, "h200_sxm", "benchmarks/dsr1_fp8_h200.sh (benchmarks/single_node/ from 2026-02-19)", (
        campaigns.Change("e617b3e63", campaigns._t("2025-09-19T11:49:36-04:00"), _DSR1_H200_FLAGS, _DSR1_H200_WHAT),
    ))
    for model in ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3")
) + (
    campaigns.Recipe("zhipuai/GLM-5", "h200_sxm", "benchmarks/single_node/glm5_fp8_h200.sh", (
        campaigns.Change("ebb48d4bc", campaigns._t("2026-03-18T23:26:37-07:00"), {
            "mem_fraction_static": 0.85, "checkpoint": "zai-org--GLM-5-FP8_config.json"},
                         "launch_server --model-path zai-org/GLM-5-FP8 --tp-size 8 --mem-fraction-static 0.85 "
                         "(lmsysorg/sglang:glm5-hopper; SGLang's defaults otherwise, the radix cache on; the "
                         "checkpoint's quantization_config is block fp8, weight_block_size [128, 128], so "
                         "SGLang's Fp8MoEMethod runs its experts on the Triton fused-MoE kernel with 128×128 "
                         "block scales: the fp8_block rows of its moe_perf tables)"),
    )),
    campaigns.Recipe("Qwen/Qwen3.5-397B-A17B", "h200_sxm", "benchmarks/single_node/qwen3.5_fp8_h200.sh", (
        campaigns.Change("f65d6b4b1", campaigns._t("2026-03-04T10:52:58-08:00"), {
            "disable_radix_cache": True, "max_running_requests": 128, "chunked_prefill_size": 16384,
            "mem_fraction_static": 0.8, "cuda_graph_max_bs": "c", "context_length": "isl+osl+20",
            "mamba_ssm_dtype": "bfloat16", "kv_cache": "fp8_e4m3", "stream_interval": 50,
            "checkpoint": QWEN35_397B_FP8},
            "launch_server --model Qwen/Qwen3.5-397B-A17B-FP8 --tp 8 --expert-parallel-size 8 "
            "--max-running-requests 128 --chunked-prefill-size 16384 --mem-fraction-static 0.8 "
            "--cuda-graph-max-bs $CONC --context-length ISL + OSL + 20 --kv-cache-dtype fp8_e4m3 "
            "--quantization fp8 --mamba-ssm-dtype bfloat16 --disable-radix-cache "
            "--attention-backend flashinfer --enable-flashinfer-allreduce-fusion --stream-interval 50 "
            "--tokenizer-worker-num 6 (lmsysorg/sglang:v0.5.9-cu129-amd64; the checkpoint's weights are "
            "block fp8, 128×128 (QWEN35_397B_FP8), so its experts run on the fp8_block rows of the "
            "fused-MoE tables; the attention backend, the all-reduce fusion and the tokenizer workers are "
            "not modelled)"),
    )),
)

#: Rows of more GPUs than this in one server are a single-node export's product of its
#: tensor and expert parallel sizes (``tp_size`` 64 with ``moe_tp_size`` 8 and
#: ``moe_ep_size`` 8 in the 2026-04-06 export, whose runs the 2026-03-25 export records
#: as TP 8, EP 8).
GPUS_PER_NODE = 8


@dataclass(frozen=True)
class PDConfig:
    """One P/D configuration of an InferenceX multi-node SGLang recipe (its
    ``nvidia-master.yaml`` search space): the lengths, speculative decoding (``"mtp"``:
    EAGLE with the model's MTP layer, or ``"none"``), the concurrencies it ran, each
    side's (servers, TP, EP, DP attention) and the srt-slurm recipe file."""
    isl: int
    osl: int
    spec: str
    concurrencies: tuple[int, ...]
    prefill: tuple[int, int, int, bool]
    decode: tuple[int, int, int, bool]
    file: str
    #: each side's ``launch_server`` flags in ``engine.sglang`` terms (its
    #: ``sglang_config`` and environment), when tabulated
    flags: tuple[dict[str, Any], dict[str, Any]] | None = None

    def text(self) -> str:
        def side(x: tuple[int, int, int, bool]) -> str:
            return f"{x[0]}×TP{x[1]}" + (f" EP{x[2]}" if x[2] > 1 else "") + (" DP-attention" if x[3] else "")
        return f"{self.file} (P {side(self.prefill)}, D {side(self.decode)}, {self.spec.upper()})"


def _pd(isl, osl, spec, conc, prefill, decode, file, flags=None):
    return PDConfig(isl, osl, spec, tuple(conc), prefill, decode, file, flags)


def _eagle_pd_flags(prefill_fraction: float, prefill_requests: int, prefill_tokens: int, decode_fraction: float,
                    decode_requests: int, spec_v2: bool,
                    stream_interval: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two sides' flags of an srt-slurm DeepSeek-R1 MTP recipe: the radix cache off on
    both; the prefill server's --mem-fraction-static, --max-running-requests and
    --max-prefill-tokens = --chunked-prefill-size; the decode server's
    --mem-fraction-static, --max-running-requests = --cuda-graph-max-bs, EAGLE 2 steps,
    topk 1, 3 draft tokens, and SGLANG_ENABLE_SPEC_V2=1 where its environment sets it;
    both sides' --stream-interval when above 1 (--attention-backend flashinfer and the
    prefill's EAGLE flags not modelled)."""
    prefill = {"disable_radix_cache": True, "mem_fraction_static": prefill_fraction,
               "max_running_requests": prefill_requests, "max_prefill_tokens": prefill_tokens,
               "chunked_prefill_size": prefill_tokens}
    decode = {"disable_radix_cache": True, "mem_fraction_static": decode_fraction,
              "max_running_requests": decode_requests, "cuda_graph_max_bs": decode_requests,
              "speculative_algorithm": "EAGLE", "speculative_num_steps": 2, "speculative_eagle_topk": 1,
              "speculative_num_draft_tokens": 3}
    if spec_v2:
        decode["enable_spec_v2"] = True
    if stream_interval > 1:
        prefill["stream_interval"] = decode["stream_interval"] = stream_interval
    return prefill, decode


#: srt-slurm's recipes/h200/8k1k/bs8-1p6d-mtp.yaml: --mem-fraction-static 0.82 on both
#: sides, SPEC_V2 on; prefill 16 requests and 32,768-token chunks and prefills; decode 16
#: requests (--stream-interval 10).
_H200_BS8_MTP = _eagle_pd_flags(0.82, 16, 32768, 0.82, 16, True, stream_interval=10)
#: srt-slurm's recipes/h200/8k1k/bs128-1p1d-dep-mtp.yaml on the sa-submission-q1-2026
#: branch at the run of 2026-02-07 (last changed by 35d6fb1, 2026-02-05): SPEC_V2 on;
#: prefill TP 8, --mem-fraction-static 0.75, 16 requests, 163,840-token chunks and
#: prefills, no EAGLE flags; decode DP attention over 8 ranks with EP 8,
#: --mem-fraction-static 0.85, 192 requests and graphs (--stream-interval 10).
_H200_BS128_DEP_MTP = _eagle_pd_flags(0.75, 16, 163840, 0.85, 192, True, stream_interval=10)
#: The H100 recipes, from InferenceX's copy of srt-slurm's recipes
#: (``benchmarks/multi_node/srt-slurm-recipes/h100/{1k1k,8k1k}/mtp/``, added at
#: 80d98084f from the sa-submission-q2-2026 branch; the q1 branch's state of the run's
#: day is not in InferenceX, and InferenceX holds no H100 1k/8k recipe at all), every
#: server TP 16 over two nodes of 8 (--stream-interval 1). ``h100-fp8-1p2d-max-tp-mtp``
#: (1k/1k) and ``h100-fp8-1p1d-max-tp-mtp`` (8k/1k): prefill --mem-fraction-static 0.6,
#: 2 requests, 2048-token chunks and prefills; decode 0.9, 128 requests; SPEC_V2 on.
_H100_MAX_TP_MTP = _eagle_pd_flags(0.6, 2, 2048, 0.9, 128, True)
#: ``h100-fp8-1p1d-max-dep-mtp``: prefill as above but 4 requests; decode DP attention
#: over 16 ranks with EP 16, 0.85, 64 requests; SPEC_V2 at 8k/1k and 1k/8k only (the
#: 1k/1k file's environments lack it).
_H100_MAX_DEP_MTP = {spec_v2: _eagle_pd_flags(0.6, 4, 2048, 0.85, 64, spec_v2) for spec_v2 in (False, True)}
#: ``recipes/h100/1k8k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml``, which InferenceX never copied:
#: srt-slurm's sa-submission-q1-2026 branch (the one InferenceX's H100 runner checked out,
#: ``runners/launch_h100-dgxc-slurm.sh``@78d48618f) held it as of 616191c (2026-02-04)
#: through the run of 2026-02-13; every version of the file in srt-slurm's history
#: (da1472d … 5063eb4, and the main branch's merge of the submission branch) has these
#: server flags, only the model alias, the nginx alias and the watchdog changing: as the
#: 1k/1k TEP recipe but 64 decode requests and graphs (--stream-interval 1).
_H100_1K8K_MAX_TP_MTP = _eagle_pd_flags(0.6, 2, 2048, 0.9, 64, True)


#: InferenceX's DeepSeek-R1 SGLang P/D recipes (dynamo-sglang through srt-slurm's
#: ``srtctl``, branch sa-submission-q1-2026) at the commits whose runs the rows are: a
#: row's ``measured`` time is its commit's (the run it triggered). Every configuration
#: of the search space then, by system: ``dsr1-fp8-h100-dynamo-sglang`` at 78d48618f
#: (2026-02-13T03:10:02Z, "h100: mtp configs sglang": the STP ones commented out) and
#: ``dsr1-fp8-h200-dynamo-sglang`` at fcc04aaa2 (2026-02-07T22:52:22Z, "h200: mtp
#: recipies": STP and MTP).
PD_RECIPES = {
    ("h100_sxm", "78d48618f"): (
        _pd(1024, 1024, "mtp", [1, 2, 4, 8, 16, 32, 64, 128], (1, 16, 1, False), (2, 16, 1, False), "recipes/h100/1k1k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml",
            _H100_MAX_TP_MTP),
        _pd(1024, 1024, "mtp", [1, 2, 4, 8, 16, 32, 64], (1, 16, 1, False), (1, 16, 16, True), "recipes/h100/1k1k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml",
            _H100_MAX_DEP_MTP[False]),
        _pd(1024, 8192, "mtp", [1, 2, 4, 8, 16, 32, 64], (1, 16, 1, False), (2, 16, 1, False), "recipes/h100/1k8k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml",
            _H100_1K8K_MAX_TP_MTP),
        _pd(1024, 8192, "mtp", [1, 2, 4, 8, 16, 32, 64], (1, 16, 1, False), (1, 16, 16, True), "recipes/h100/1k8k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml",
            _H100_MAX_DEP_MTP[True]),
        _pd(8192, 1024, "mtp", [1, 2, 4, 8, 16, 32, 64, 128], (1, 16, 1, False), (1, 16, 1, False), "recipes/h100/8k1k/mtp/h100-fp8-1p1d-max-tp-mtp.yaml",
            _H100_MAX_TP_MTP),
        _pd(8192, 1024, "mtp", [1, 2, 4, 8, 16, 32, 64], (1, 16, 1, False), (1, 16, 16, True), "recipes/h100/8k1k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml",
            _H100_MAX_DEP_MTP[True]),
    ),
    ("h200_sxm", "fcc04aaa2"): (
        _pd(1024, 1024, "none", [1, 4, 8, 16, 32, 64, 128, 256], (1, 8, 1, False), (9, 8, 1, False), "recipes/h200/1k1k/low-latency-1p9d.yaml"),
        _pd(1024, 1024, "none", [512, 1024, 2048], (1, 8, 1, False), (6, 8, 1, False), "recipes/h200/1k1k/bs256-1p6d-tp.yaml"),
        _pd(1024, 1024, "none", [128, 256, 512, 1024, 2048], (1, 8, 8, True), (6, 8, 8, True), "recipes/h200/1k1k/bs256-1p6d-dep.yaml"),
        _pd(1024, 1024, "mtp", [1, 4, 8, 16, 32, 64, 128, 256], (1, 8, 1, False), (9, 8, 1, False), "recipes/h200/1k1k/low-latency-1p9d-mtp.yaml"),
        _pd(1024, 1024, "mtp", [512, 1024, 2048], (1, 8, 1, False), (6, 8, 1, False), "recipes/h200/1k1k/bs256-1p6d-tp-mtp.yaml"),
        _pd(1024, 1024, "mtp", [128, 256, 512, 1024, 2048], (1, 8, 8, True), (6, 8, 8, True), "recipes/h200/1k1k/bs256-1p6d-dep-mtp.yaml"),
        _pd(8192, 1024, "none", [1, 4, 8], (1, 8, 1, False), (7, 8, 1, False), "recipes/h200/8k1k/bs4-1p7d.yaml"),
        _pd(8192, 1024, "none", [4, 8, 16], (1, 8, 1, False), (6, 8, 1, False), "recipes/h200/8k1k/bs8-1p6d.yaml"),
        _pd(8192, 1024, "none", [8, 16, 32], (1, 8, 1, False), (3, 8, 1, False), "recipes/h200/8k1k/bs16-1p3d.yaml"),
        _pd(8192, 1024, "none", [32, 64, 128], (2, 8, 1, False), (3, 8, 1, False), "recipes/h200/8k1k/bs64-2p3d.yaml"),
        _pd(8192, 1024, "none", [64, 128, 256], (1, 8, 1, False), (1, 8, 8, True), "recipes/h200/8k1k/bs128-1p1d-dep.yaml"),
        _pd(8192, 1024, "mtp", [1, 4, 8], (1, 8, 1, False), (7, 8, 1, False), "recipes/h200/8k1k/bs4-1p7d-mtp.yaml"),
        _pd(8192, 1024, "mtp", [2, 4, 8, 16, 32], (1, 8, 1, False), (6, 8, 1, False), "recipes/h200/8k1k/bs8-1p6d-mtp.yaml",
            _H200_BS8_MTP),
        _pd(8192, 1024, "mtp", [4, 8, 16, 32, 64], (1, 8, 1, False), (3, 8, 1, False), "recipes/h200/8k1k/bs16-1p3d-mtp.yaml"),
        _pd(8192, 1024, "mtp", [32, 64, 128], (2, 8, 1, False), (3, 8, 1, False), "recipes/h200/8k1k/bs64-2p3d-mtp.yaml"),
        _pd(8192, 1024, "mtp", [32, 64, 128, 256, 512], (1, 8, 1, False), (1, 8, 8, True), "recipes/h200/8k1k/bs128-1p1d-dep-mtp.yaml",
            _H200_BS128_DEP_MTP),
    ),
}
#: When each recipe's run was measured (the commit's time, UTC), by system.
PD_RECIPE_RUNS = {"h100_sxm": ("78d48618f", campaigns._t("2026-02-13T03:10:02+00:00")),
                  "h200_sxm": ("fcc04aaa2", campaigns._t("2026-02-07T22:52:22+00:00"))}


def recorded_sides(row: dict[str, str]) -> tuple[str, ...]:
    """The sides of an InferenceX P/D row whose layout its columns record: both for the
    results database's dump (``db-dump/…``: each side's servers, attention DP and experts
    from the run's configuration), the prefill side alone for the dated exports
    (``source_file=YYYY-MM-DD.csv``). An export row holds one tensor and one expert
    parallel size (its id's ``tp8_0_ep1_0``), written into both sides' columns, and they
    are the prefill servers': the 2026-03-25 and 2026-04-06 exports give the 8k/1k
    measurement at c = 256 (TTFT 29,643.6 ms, TPOT 42.734 ms) as TP 8 with EP 1 on both
    sides, while the database dump's row of it (config 434) records a TP 8 prefill and a
    decode of DP attention over 8 ranks with EP 8, and the recipe run of that day decoded
    8k/1k at c = 256 and 512 only with DP attention and EP 8 (bs128-1p1d-dep and -dep-mtp,
    whose prefill is TP 8, EP 1); every other export row's columns equal its candidates'
    prefill layout."""
    return ("prefill", "decode") if _is_dump(row) else ("prefill",)


def _is_dump(row: dict[str, str]) -> bool:
    """Whether the row is the InferenceX results database's dump (``db-dump/…``)."""
    return (row.get("silicon_data_source") or "").strip().startswith("db-dump/")


def _holds_layout(p: PDConfig, row: dict[str, str]) -> bool:
    """Whether the configuration's sides agree with the layout the row records of them
    (:func:`recorded_sides`): expert parallelism (``<side>_moe_ep_size`` > 1), and with
    the database dump also the servers (``<side>_num_workers``) and DP attention
    (``<side>_attention_dp_size`` > 1; an export writes 1 there whatever ran); a column
    left empty says nothing."""
    for name in recorded_sides(row):
        workers, _, ep, dp_attention = p.prefill if name == "prefill" else p.decode
        rec_ep = _int(row, f"{name}_moe_ep_size", 0)
        if rec_ep and (rec_ep > 1) != (ep > 1):
            return False
        if _is_dump(row):
            rec_workers, rec_adp = _int(row, f"{name}_num_workers", 0), _int(row, f"{name}_attention_dp_size", 0)
            if rec_workers and rec_workers != workers:
                return False
            if rec_adp and (rec_adp > 1) != dp_attention:
                return False
    return True


def pd_configs(row: dict[str, str], c: int) -> list[PDConfig]:
    """The configurations of the InferenceX P/D recipe run on the row's measured day that
    hold its lengths and concurrency and agree with the layout its columns record
    (:func:`recorded_sides`). Empty: no recipe tabulated."""
    camp = campaigns.campaign_of(row)
    run = PD_RECIPE_RUNS.get(row.get("system", "").strip())
    if camp.name != campaigns.INFERENCEX or camp.measured is None or run is None \
            or camp.measured.date() != run[1].date():
        return []
    isl, osl = _int(row, "isl"), _int(row, "osl")
    return [p for p in PD_RECIPES[(row["system"].strip(), run[0])]
            if (p.isl, p.osl) == (isl, osl) and c in p.concurrencies and _holds_layout(p, row)]


def _columns_only(row: dict[str, str], c: int) -> bool:
    """Whether an InferenceX P/D row is read off its own layout columns (``disagg.sides_of``,
    SGLang's defaults for every flag): no one configuration with tabulated flags ran it
    (:func:`inferencex_pd_config`), and the columns give both sides."""
    cands = pd_configs(row, c)
    return not (len(cands) == 1 and cands[0].flags is not None) and disagg.records_sides(row)


def inferencex_pd_config(row: dict[str, str], c: int) -> PDConfig:
    """The one configuration of the InferenceX P/D recipe that ran the row, with its
    servers' flags tabulated (:func:`pd_configs`).

    Raises:
        ValueError: none or several ran its lengths and concurrency that day, or the
            one that did cannot be simulated (the skip reason names them)."""
    cands = pd_configs(row, c)
    if len(cands) == 1 and cands[0].flags is not None:
        return cands[0]
    raise ValueError(_inferencex_pd_reason(row, c))


def pd_recipe_text(row: dict[str, str]) -> str:
    """The P/D configuration an InferenceX SGLang row ran, with its recipe run's commit
    (``""``: none or several, :func:`inferencex_pd_config`)."""
    run = PD_RECIPE_RUNS.get(row.get("system", "").strip())
    try:
        p = inferencex_pd_config(row, disagg.concurrency_of(row))
    except ValueError:
        return ""
    return f"{p.text()}@{run[0]}"


def _inferencex_pd_reason(row: dict[str, str], c: int) -> str:
    """Why an InferenceX SGLang P/D row is not simulated: which recipe configurations ran
    its lengths and concurrency that day (:func:`pd_configs`), and what stops each."""
    cands = pd_configs(row, c)
    system = (row.get("system") or "").strip()
    if not cands and system not in PD_RECIPE_RUNS:
        return (f"{system}: no InferenceX SGLang P/D recipe run is tabulated for it (only for "
                f"{', '.join(sorted(PD_RECIPE_RUNS))}), and its columns do not give both sides' servers "
                f"({disagg.SIDES_MISSING})")
    if not cands:
        return "no InferenceX P/D recipe of its date is tabulated for this system, lengths and concurrency"
    if len(cands) > 1:
        return (f"InferenceX records neither the worker counts nor the speculative decoding of its P/D rows, and "
                f"{len(cands)} configurations of its recipe ran these lengths at c = {c} that day: "
                + "; ".join(p.text() for p in cands))
    p = cands[0]
    return f"ran {p.text()}: the srt-slurm recipe's server flags are not tabulated"


def recipe_flags(row: dict[str, str], isl: int, osl: int, c: int) -> tuple[dict[str, Any], str]:
    """The flags of an InferenceX row's recipe at its measured time in ``engine.sglang``
    terms (``kv_cache``: the KV cache dtype, ``engine.quantization``'s), a
    :data:`ByLengths` value resolved by ``isl`` × ``osl``, ``"c"`` by the concurrency
    ``c`` and ``"isl+osl+N"`` by the lengths, and where they come from (``({}, "")``: no
    recipe tabulated)."""
    camp = campaigns.campaign_of(row)
    if camp.name != campaigns.INFERENCEX or camp.measured is None:
        return {}, ""
    flags, src = campaigns.recipe_at(row.get("model_path", "").strip(), row.get("system", "").strip(),
                                     camp.measured, RECIPES)
    out = {}
    for k, v in flags.items():
        if isinstance(v, dict):
            v = v.get((isl, osl), v[None])
        if v == "c":
            v = c
        elif isinstance(v, str) and v.startswith("isl+osl+"):
            v = isl + osl + int(v.rsplit("+", 1)[1])
        out[k] = v
    return out, src


def single_node_row(row: dict[str, str]) -> tuple[dict[str, str], str]:
    """The row with its aggregated layout columns as one node's (:data:`GPUS_PER_NODE`):
    a row whose ``tp_size`` × ``attention_dp_size`` exceeds it with both ``moe_tp_size``
    and ``moe_ep_size`` above 1 (the export's product of the two) takes its tensor parallel
    size from its id (``…_tp8_ep8_…``), its experts expert-parallel over those GPUs when
    ``moe_ep_size`` > 1; and a note saying so ("" when the row is unchanged). Within a node
    the same export is read from the id too (as :func:`trtllm.layout` does): an id
    ``…_tpN_epM_…`` (M > 1 dividing N) whose columns give N × M GPUs without attention DP,
    both MoE sizes above 1, is N GPUs with the experts over M of them (InferenceX's ``tp: 2,
    ep: 2`` exported as ``tp_size`` 4, ``moe_tp_size`` 2, ``moe_ep_size`` 2): not a TP 4
    server with ``--ep-size`` 2."""
    tp, adp = _int(row, "tp_size"), max(_int(row, "attention_dp_size", 0), 1)
    both = min(max(_int(row, "moe_tp_size", 0), 1), max(_int(row, "moe_ep_size", 0), 1)) > 1
    m = re.search(r"_tp(\d+)_ep(\d+)_", row.get("id") or "")
    if m and both and adp == 1 and tp <= GPUS_PER_NODE:
        id_tp, id_ep = int(m.group(1)), int(m.group(2))
        if 1 < id_ep <= id_tp != tp == id_tp * id_ep and id_tp % id_ep == 0:
            fixed = dict(row, tp_size=str(id_tp), moe_tp_size=str(id_tp // id_ep), moe_ep_size=str(id_ep))
            return fixed, f"columns give {tp} × {adp} GPUs: the id's TP {id_tp}"
    if tp * adp <= GPUS_PER_NODE:
        return row, ""
    if min(max(_int(row, "moe_tp_size", 0), 1), max(_int(row, "moe_ep_size", 0), 1)) == 1:
        # the experts split one way over the GPUs: a server over several nodes (SGLang's
        # --nnodes, DP attention and EP across them, InferenceX's dep16/dep32), as given;
        # the export's product has both sizes > 1
        return row, ""
    m = re.search(r"_tp(\d+)", row.get("id") or "")
    if not m:
        raise ValueError(f"tp_size {tp} × attention_dp_size {adp} GPUs in one server, more than a node's "
                         f"{GPUS_PER_NODE}, and the id names no TP")
    gpus = int(m.group(1))
    fixed = dict(row, tp_size=str(gpus), attention_dp_size="1")
    if _int(row, "moe_ep_size", 0) > 1:
        fixed.update(moe_tp_size="1", moe_ep_size=str(gpus))
    else:
        fixed.update(moe_tp_size=str(gpus), moe_ep_size="1")
    return fixed, f"columns give {tp} × {adp} GPUs: the id's TP {gpus}"


def _is_moe(config: str) -> bool:
    """Whether the model config (a multimodal one's text_config) has routed experts."""
    import json
    with open(config, encoding="utf-8") as f:
        top = json.load(f)
    cfg = top.get("text_config") or top
    return any(k in cfg for k in ("num_experts", "num_local_experts", "n_routed_experts"))


def sglang_row_layout(row: dict[str, str], config: str) -> tuple[int, bool, int]:
    """A row's aggregated layout in SGLang's terms: (data_parallel_size,
    enable_expert_parallel, ep_size). SGLang splits the routed experts both ways
    where vLLM cannot: ``--ep-size`` below the server's GPUs runs ``moe_tp_size =
    tp_size // ep_size`` (``distributed/parallel_state.py``
    ``initialize_model_parallel``), so a row with ``moe_tp_size`` and ``moe_ep_size``
    both above 1 over ``tp_size`` GPUs is ``ep_size`` = ``moe_ep_size`` (0: every other
    row, laid out as :func:`spec.row_layout` says).

    Raises:
        ValueError: a layout that cannot be simulated (the skip reason)."""
    moe_tp, moe_ep = max(_int(row, "moe_tp_size", 0), 1), max(_int(row, "moe_ep_size", 0), 1)
    if moe_tp > 1 and moe_ep > 1 and _is_moe(config):
        tp, adp = _int(row, "tp_size"), max(_int(row, "attention_dp_size", 0), 1)
        if moe_tp * moe_ep != tp * adp:
            raise ValueError(f"tp_size {tp} × attention_dp_size {adp} ≠ moe_tp_size {moe_tp} × moe_ep_size {moe_ep}")
        if adp > 1:
            raise ValueError(f"moe_tp_size {moe_tp} × moe_ep_size {moe_ep} with attention_dp_size {adp}: the "
                             "experts split both ways beside DP attention is not simulated")
        return 1, False, moe_ep
    dp, ep, _ = row_layout(row, config)
    return dp, ep, 0


def _release(version: str) -> tuple[int, int, int] | None:
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def aic_generator_quantization(quant: dict[str, str], config: str) -> dict[str, str]:
    """``engine.quantization`` of a server AIConfigurator's generator launched for a row
    whose precision column (``fp8``, ``fp8_block``) names weights the checkpoint does not
    store: the checkpoint's own weights, the KV cache as the row says.

    The generator writes no weight quantization for SGLang: its templates
    (``generator/config/backend_templates/sglang/cli_args.<version>.j2``, 0.5.1.post1
    … 0.5.9) have no ``--quantization`` and ``backend_config_mapping.yaml`` maps no
    quantization key, only ``kv_cache_dtype`` to ``--kv-cache-dtype`` (``fp8`` →
    ``fp8_e4m3``; ``fp8_e5m2`` before 2026-01-23, the same byte a token). SGLang then
    serves the checkpoint's dtype (``configs/model_config.py``
    ``_parse_quant_hf_config``: the quantization is the checkpoint's
    ``quantization_config`` or ``--quantization``; neither here), so the bf16 ``meta-llama/
    Llama-3.1-8B-Instruct`` and ``Qwen/Qwen3-32B`` checkpoints of the ``fp8`` rows ran
    bf16 GEMMs over an fp8 KV cache. A checkpoint that stores fp8 weights
    (``Qwen/Qwen3-235B-A22B-FP8``) keeps them."""
    w = quant.get("weights")
    if w not in ("fp8", "fp8_block") or _checkpoint_quant(config):
        return quant
    return {k: v for k, v in quant.items() if k != "weights"}


def sglang_row_spec(row: dict[str, str], config: str, *, perf: str, database: str,
                    perf_overrides: dict[str, Any] | None = None) -> tuple[dict[str, Any], int, int]:
    """The replay spec of one SGLang row (module docstring), with the warm-up requests
    sent first and not measured (0: the benchmark's window) and the measured ones.

    Raises:
        ValueError: the row cannot be simulated (the message is the skip reason)."""
    mode = (row.get("mode") or "agg").strip()
    c, isl, osl = disagg.concurrency_of(row), _int(row, "isl"), _int(row, "osl")
    version = (row.get("backend_version") or "").strip()
    rel = _release(version)
    camp = campaigns.campaign_of(row)
    which = camp.name
    engine: dict[str, Any] = {"model": config, "system": row["system"].strip(), "backend": "sglang"}
    if rel:
        engine["backend_version"] = version
    perf_block: dict[str, Any] = {"source": perf}
    if perf == "aic":
        perf_block["database"] = database
    perf_block.update(perf_overrides or {})
    engine["perf"] = perf_block
    if mode == "agg":
        row, _ = single_node_row(row)
        dp, ep, ep_size = sglang_row_layout(row, config)
        pool: dict[str, Any] = {"count": 1, "tp": _int(row, "tp_size")}
        if dp > 1:
            pool["data_parallel_size"] = dp
        if ep:
            pool["enable_expert_parallel"] = True
        engine["workers"] = {"aggregated": pool}
    elif mode == "disagg" and which == campaigns.INFERENCEX and not _columns_only(row, c):
        # the recipe's configuration: its servers and flags (InferenceX records neither)
        pdc = inferencex_pd_config(row, c)
        sides = tuple(disagg.Side(name, x[0], 1 if x[3] else x[1], x[1] if x[3] else 1, x[2] > 1, None)
                      for name, x in (("prefill", pdc.prefill), ("decode", pdc.decode)))
        engine["workers"] = disagg.workers_block(*sides)
        for side, flags in zip(sides, pdc.flags):
            engine["workers"]["disaggregated"][side.name]["sglang"] = dict(flags)
    elif mode == "disagg":
        sides = disagg.sides_of(row, config)
        engine["workers"] = disagg.workers_block(*sides)
    else:
        raise ValueError(f"mode {mode!r}: want agg or disagg")
    engine["quantization"] = _quantization(_weights_for(row.get("precision") or "", config))
    if which == campaigns.AICONFIGURATOR and mode == "agg":
        # the generator's server: the checkpoint's weights (unrecorded rows keep the column's;
        # the P/D rows too: their measurements need fp8 weights, e.g. the 5×TP1 + 11×TP1
        # Qwen3-32B row's 11 decode servers × 48 requests = its concurrency 528, where bf16
        # weights leave each TP1 server KV for about 9: predicted TTFT 113 s, measured 0.57 s)
        engine["quantization"] = aic_generator_quantization(engine["quantization"], config)
    server: dict[str, Any] = {}
    if which == campaigns.INFERENCEX:
        # the recipe's flags (a P/D recipe's are its pools'); the KV cache at SGLang's
        # --kv-cache-dtype auto (module docstring)
        engine["quantization"]["kv_cache"] = "auto"
        if mode == "agg":
            server.update(recipe_flags(row, isl, osl, c)[0])
            if "kv_cache" in server:
                engine["quantization"]["kv_cache"] = server.pop("kv_cache")
            if "checkpoint" in server:
                # the checkpoint the script serves (its --model-path), whose quantization
                # config decides the weights where the row's model names another release:
                # its config file beside the row's, or (a Checkpoint) the row's config's
                # architecture with the release's quantization_config
                ckpt = server.pop("checkpoint")
                if isinstance(ckpt, Checkpoint):
                    w = _weights_for(row.get("precision") or "", config, quant=ckpt.quantization_config)
                    if w is None:
                        raise ValueError(f"{ckpt.name} at precision {row.get('precision')!r}: the checkpoint's "
                                         f"own formats, which only its config.json gives")
                else:
                    w = _weights_for(row.get("precision") or "", str(Path(config).with_name(ckpt)))
                if w:
                    engine["quantization"]["weights"] = w
    elif mode == "agg":
        server.update(max_running_requests=c, max_prefill_tokens=isl + AIC_GENERATOR_TOKEN_SLACK, cuda_graph_max_bs=c)
        if rel and rel >= MIXED_CHUNK_SINCE:
            server["enable_mixed_chunk"] = True
    else:
        # each P/D server's own arguments (generator/rule_plugin/sglang.rule): its
        # batch size (prefill: 1 unless recorded), ISL + 1500 prefill tokens
        for side in sides:
            batch = side.batch_size or (1 if side.name == "prefill" else c // max(side.workers, 1))
            engine["workers"]["disaggregated"][side.name]["sglang"] = {
                "max_running_requests": batch, "max_prefill_tokens": isl + AIC_GENERATOR_TOKEN_SLACK,
                "cuda_graph_max_bs": batch}
    if mode == "agg" and ep_size:
        server["ep_size"] = ep_size
    engine["sglang"] = server
    engine["tokenization"] = dict(AIPERF_CLIENT["tokenization"])
    engine["detokenization"] = dict(AIPERF_CLIENT["detokenization"])
    if which == campaigns.INFERENCEX:
        bench: dict[str, Any] = {"tool": "vllm_bench_serve", "variant": "inferencex", "random_input_len": isl,
                                 "random_output_len": osl, "random_range_ratio": campaigns.INFERENCEX_RANGE_RATIO,
                                 "num_prompts": campaigns.INFERENCEX_PROMPTS_PER_CLIENT * c, "max_concurrency": c,
                                 "ignore_eos": True, "date": camp.measured.date().isoformat()}
        if camp.measured >= campaigns.INFERENCEX_WARMUPS_SINCE:
            bench["num_warmups"] = campaigns.INFERENCEX_WARMUPS_PER_CLIENT * c
        traffic: dict[str, Any] = {"benchmark": bench}
        warm, measured = 0, bench["num_prompts"]
    else:
        gen = LOAD_GENERATORS["aiperf"]
        load: dict[str, Any] = {"mode": "concurrency", "concurrency": c,
                                "response_overhead": dict(AIPERF_CLIENT["response_overhead"])}
        if gen.warmup:
            load["warmup_requests"] = c * gen.warmup
        source: dict[str, Any] = {"type": "synthetic", "num_requests": c * gen.requests,
                                  "isl": _lengths(isl, 1.0), "osl": _lengths(osl, 1.0)}
        if gen.entries(c) > 0:
            source["dataset"] = {"entries": gen.entries(c), "sampling": "shuffle"}
        traffic = {"source": source, "load": load}
        warm, measured = 0, c * gen.requests
    return {"engine": engine, "traffic": traffic, "execution": {"mode": "offline", "seed": 1}}, warm, measured


def sglang_layout(spec: dict[str, Any]) -> str:
    """The row's layout as simulated: ``"TP4"``, ``"TP1 DP8 EP8"``, ``"TP8 EP2"`` (``ep_size`` 2),
    ``"P/D 5×TP1 + 11×TP1"``."""
    w = spec["engine"]["workers"]
    if "aggregated" in w:
        p = w["aggregated"]
        ep_size = spec["engine"].get("sglang", {}).get("ep_size", 0)
        if ep_size:
            return f"TP{p['tp']} EP{ep_size}"
        return layout_text(p["tp"], p.get("data_parallel_size", 1), p.get("enable_expert_parallel", False))
    return disagg.layout_text(spec)
