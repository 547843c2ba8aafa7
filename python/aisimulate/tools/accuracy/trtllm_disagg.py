"""TensorRT-LLM's P/D rows (``mode`` disagg): InferenceX's ``dsr1-fp8-h200-dynamo-trt``.

The rows are InferenceX's multi-node DeepSeek-R1-0528 FP8 runs on H200 (and the same
runs exported again as DeepSeek-V3): Dynamo's TensorRT-LLM workers
(``nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1``, TensorRT-LLM
1.2.0rc6.post1) launched by srt-slurm (``runners/launch_h200-dgxc-slurm.sh`` clones
ishandhanani/srt-slurm at branch ``sa-submission-q1-2026`` and runs ``srtctl apply -f
$CONFIG_FILE``). Each point of ``.github/configs/nvidia-master.yaml``'s search space
names its recipe (``CONFIG_FILE=recipes/trtllm/h200/<1k1k|8k1k>/<mtp|stp>/<name>.yaml``;
the same from 49f8ceee0, 2026-02-13, the min-latency configs, to at least d9e1a758b,
2026-04-20); the recipes are srt-slurm's (ishandhanani/srt-slurm 4893f83, copied into
InferenceX at 80d98084f as ``benchmarks/multi_node/srt-slurm-recipes/trtllm/h200/``).
A recipe holds:

- ``resources``: its context (prefill) and generation (decode) workers, one node of
  8 GPUs each; the name says it: ``c16_ctx1_gen9_tep8_batch128_eplb0_mtp3`` is 1 context
  and 9 generation workers, generation at TP8 EP8 (``tep8``; ``dep8``: attention DP over
  the 8 GPUs, EP8), generation ``max_batch_size`` 128, MTP with 3 draft tokens (``mtp0``:
  none).
- ``backend.trtllm_config.prefill`` / ``.decode``: each server's extra LLM API options,
  here :data:`PREFILL` (by ISL, the same in every recipe of it but for MTP) and
  :func:`decode_options` (the name's batch and MTP, :class:`DisaggRecipe`'s
  max_num_tokens and free_gpu_memory_fraction, the CUDA-graph batch sizes by the
  recipes' two rules). Both: block reuse off, the KV cache fp8, ``stream_interval`` 100,
  chunked prefill off; the context server without CUDA graphs and without the overlap
  scheduler, the generation server with both.
- ``benchmark``: sa-bench at ``concurrencies`` (the row's ``silicon_concurrency``:
  about the name's c per generation worker) — srt-slurm's
  ``src/srtctl/benchmarks/scripts/sa-bench/bench.sh`` runs InferenceX's
  ``benchmark_serving.py`` with random lengths (range ratio 0.8), 10·c prompts and
  2·c warm-ups, ``ignore_eos``: the InferenceX client (``campaigns.inferencex_benchmark``).
- ``frontend: dynamo`` without arguments: Dynamo's frontend at its default
  ``--router-mode round-robin`` for both pools.

Which recipe ran a row (:func:`annotate`): those at the row's ISL with the row's
concurrency, narrowed by the row's layout columns when it has them (the database
dump's rows: prefill and decode workers, decode attention DP). One left: that one. An
MTP and a non-MTP recipe left (the same concurrency in both lists: 1k/1k at 144, 8k/1k
at 9, 28, 128, 160 and 512): the measurements of that ISL, concurrency and day fall in
two, and the lower TPOT is the MTP run — the only physical difference at one
concurrency, and a large one (0.5–0.7 times the other's TPOT in every such pair). Any
other case (8k/1k at 48 holds four recipes, 1k/1k at 1024 two MTP ones) is reported
unknown and not simulated.

The H100 rows (``dsr1-fp8-h100-dynamo-trt``, Dynamo's
``tensorrtllm-runtime:0.8.1.post3``, TensorRT-LLM 1.2.0rc6.post3) are the search space of
``nvidia-master.yaml`` at 66d6a351a (2026-02-08T01:24:12Z, the H100 model prefix fixed;
unchanged until c453dd6f5, 2026-02-25): :data:`H100_RECIPES`, read from InferenceX's copy
of the recipes (``benchmarks/multi_node/srt-slurm-recipes/trtllm/h100-fp8/``, added at
80d98084f from srt-slurm's later submission branch; the run day's state of
``sa-submission-q1-2026`` is not held here). Each worker spans two nodes of 8 GPUs
(``tensor_parallel_size`` 16, ``moe_expert_parallel_size`` 16): the context server with
attention DP over the 16 (1k/1k: ``max_batch_size`` 2, ``max_num_tokens`` 2048,
``max_seq_len`` 2048, ``free_gpu_memory_fraction`` 0.6; 8k/1k: 1, 8224, 8232, 0.3;
chunked prefill as each recipe says), the generation server TP16 EP16 (``tep16``) or
attention DP 16 with EP16 (``dep16``), ``free_gpu_memory_fraction`` 0.9, CUDA graphs of
1, 2, 4, 8 then every 8th up to its batch. The context server and the ``dep16``
generation server run ``moe_config.backend`` WIDEEP with the environment's
``TRTLLM_FORCE_ALLTOALL_METHOD: DeepEP`` (their tokens go to the experts' GPUs and back
by DeepEP's normal kernels over both nodes; the 8k/1k context server with
``moe_config.max_num_tokens`` 16384), the ``tep16`` one CUTLASS (:data:`H100_MOE`);
``num_postprocess_workers`` 4, ``enable_lm_head_tp_in_adp``, ``NCCL_NVLS_ENABLE`` 0 and
the other environment variables are not modelled. The H200 recipes' servers all run
CUTLASS. The same rule picks a row's recipe (the MTP and the non-MTP recipe share 1k/1k
at 6, 9, 30, 60, 231 and 462, 8k/1k at 6, 9, 30 and 154).

The KV moves as in every P/D row of the harness (:func:`disagg.workers_block`:
``kv_transfer`` without a bandwidth, the system's network, one NIC per attention rank),
the cache transceiver's UCX over the nodes' RDMA NICs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Sequence

from .campaigns import _t
from .rows import _int
from . import disagg, trtllm

#: Where the row's recipe is put by :func:`annotate` (its name, "" when unknown) and
#: why none is known.
RECIPE_KEY = "_trtllm_disagg_recipe"
REASON_KEY = "_trtllm_disagg_reason"
#: The search space of the rows' recipes: from InferenceX 49f8ceee0 (2026-02-13, the
#: min-latency configs and every CONFIG_FILE below).
SINCE = _t("2026-02-13T22:57:32-08:00")
#: Where the recipes are (the repository and commit of :attr:`DisaggRecipe.file`).
SRT_SLURM = "ishandhanani/srt-slurm@4893f83"
#: The image every recipe names.
IMAGE = "0.8.1.post1"
#: The recipes' GPUs per worker (tensor_parallel_size, moe_expert_parallel_size), by system.
WORKER_GPUS = {"h200_sxm": 8, "h100_sxm": 16}
#: The H100 recipes' search space (module docstring): from 66d6a351a to c453dd6f5.
H100_SINCE = _t("2026-02-07T20:24:12-05:00")
H100_UNTIL = _t("2026-02-25T10:29:48-06:00")
#: Where the H100 recipes are (:attr:`DisaggRecipe.file`).
H100_SOURCE = "SemiAnalysisAI/InferenceX@80d98084f"
#: The images of the recipes, by system.
IMAGES = {"h200_sxm": IMAGE, "h100_sxm": "0.8.1.post3"}
#: The context server's options by ISL (``trtllm_config.prefill``): 1k/1k with attention
#: DP (8 ranks of max_batch_size 8), 8k/1k without.
PREFILL: dict[int, dict[str, Any]] = {
    1024: {"enable_attention_dp": True, "max_batch_size": 8, "max_num_tokens": 8192, "max_seq_len": 1064,
           "free_gpu_memory_fraction": 0.6},
    8192: {"enable_attention_dp": False, "max_batch_size": 2, "max_num_tokens": 16640, "max_seq_len": 8232,
           "free_gpu_memory_fraction": 0.85},
}
#: The H100 context servers' options by ISL (every recipe's ``trtllm_config.prefill``
#: but ``enable_chunked_prefill``, :attr:`DisaggRecipe.ctx_chunked`; no stream_interval).
H100_PREFILL: dict[int, dict[str, Any]] = {
    1024: {"enable_attention_dp": True, "max_batch_size": 2, "max_num_tokens": 2048, "max_seq_len": 2048,
           "free_gpu_memory_fraction": 0.6},
    8192: {"enable_attention_dp": True, "max_batch_size": 1, "max_num_tokens": 8224, "max_seq_len": 8232,
           "free_gpu_memory_fraction": 0.3},
}
#: The H100 servers' MoE options (every recipe's ``trtllm_config.*.moe_config.backend``
#: and ``*_environment.TRTLLM_FORCE_ALLTOALL_METHOD``, the 8k/1k context server's
#: ``moe_config.max_num_tokens``): WIDEEP over DeepEP where attention DP runs, else
#: CUTLASS. The H200 recipes' servers: CUTLASS.
H100_MOE = {"backend": "WIDEEP", "force_alltoall_method": "DeepEP"}
H100_PREFILL_MOE_MAX_TOKENS = {1024: 0, 8192: 16384}
#: The generation server's max_seq_len by ISL.
DECODE_MAX_SEQ_LEN = {1024: 2088, 8192: 9256}


@dataclass(frozen=True)
class DisaggRecipe:
    """One srt-slurm recipe: its name, ISL, sa-bench concurrency, the generation
    server's max_num_tokens and free_gpu_memory_fraction, and what the name says
    (:data:`NAME`: context and generation workers, generation attention DP, its
    max_batch_size, MTP draft tokens)."""
    name: str
    isl: int
    concurrency: int
    gen_tokens: int
    gen_fraction: float
    ctx: int
    gen: int
    attention_dp: bool
    batch: int
    mtp: int
    system: str = "h200_sxm"
    #: the context server's enable_chunked_prefill (H100; the H200 recipes': off)
    ctx_chunked: bool = False

    @property
    def file(self) -> str:
        lengths, kind = "1k1k" if self.isl == 1024 else "8k1k", "mtp" if self.mtp else "stp"
        if self.system == "h100_sxm":
            return f"benchmarks/multi_node/srt-slurm-recipes/trtllm/h100-fp8/{lengths}/{kind}/{self.name}.yaml"
        return f"recipes/trtllm/h200/{lengths}/{kind}/{self.name}.yaml"

    @property
    def source(self) -> str:
        """The recipe's repository, commit and file."""
        return f"{H100_SOURCE if self.system == 'h100_sxm' else SRT_SLURM}:{self.file}"


#: A recipe's name (H200: ``c16_ctx1_gen9_tep8_…``; H100: ``ctx1_gen3_tep16_…``).
NAME = re.compile(r"(?:c(?P<c>\d+)_)?ctx(?P<ctx>\d+)_gen(?P<gen>\d+)_(?P<par>tep|dep)(?:8|16)_batch(?P<batch>\d+)_eplb0_mtp(?P<mtp>\d)")



def _recipe(name: str, isl: int, concurrency: int, gen_tokens: int, gen_fraction: float,
            system: str = "h200_sxm", ctx_chunked: bool = False) -> DisaggRecipe:
    m = NAME.fullmatch(name)
    assert m, name
    return DisaggRecipe(name, isl, concurrency, gen_tokens, gen_fraction, int(m["ctx"]), int(m["gen"]),
                        m["par"] == "dep", int(m["batch"]), int(m["mtp"]), system, ctx_chunked)


def _h100(name: str, isl: int, concurrency: int, gen_tokens: int, ctx_chunked: bool) -> DisaggRecipe:
    return _recipe(name, isl, concurrency, gen_tokens, 0.9, "h100_sxm", ctx_chunked)


#: The recipes (1k/1k and 8k/1k, MTP then not; OSL 1024).
RECIPES: tuple[DisaggRecipe, ...] = (
    _recipe("c1_ctx1_gen11_tep8_batch1_eplb0_mtp3", 1024, 13, 4, 0.9),
    _recipe("c4_ctx1_gen11_tep8_batch128_eplb0_mtp3", 1024, 44, 512, 0.9),
    _recipe("c8_ctx1_gen11_tep8_batch128_eplb0_mtp3", 1024, 88, 512, 0.9),
    _recipe("c16_ctx1_gen9_tep8_batch128_eplb0_mtp3", 1024, 144, 512, 0.9),
    _recipe("c32_ctx1_gen11_tep8_batch128_eplb0_mtp3", 1024, 352, 512, 0.9),
    _recipe("c64_ctx1_gen8_dep8_batch128_eplb0_mtp3", 1024, 512, 512, 0.85),
    _recipe("c128_ctx1_gen7_dep8_batch128_eplb0_mtp3", 1024, 896, 512, 0.85),
    _recipe("c256_ctx1_gen4_dep8_batch128_eplb0_mtp3", 1024, 1024, 512, 0.85),
    _recipe("c512_ctx1_gen2_dep8_batch256_eplb0_mtp1", 1024, 1024, 512, 0.85),
    _recipe("c1_ctx1_gen9_tep8_batch1_eplb0_mtp0", 1024, 11, 1, 0.9),
    _recipe("c4_ctx1_gen9_tep8_batch256_eplb0_mtp0", 1024, 36, 256, 0.9),
    _recipe("c8_ctx1_gen9_tep8_batch256_eplb0_mtp0", 1024, 72, 256, 0.9),
    _recipe("c16_ctx1_gen9_tep8_batch256_eplb0_mtp0", 1024, 144, 256, 0.9),
    _recipe("c32_ctx1_gen9_tep8_batch256_eplb0_mtp0", 1024, 288, 256, 0.9),
    _recipe("c64_ctx1_gen9_tep8_batch256_eplb0_mtp0", 1024, 576, 256, 0.9),
    _recipe("c128_ctx1_gen9_dep8_batch512_eplb0_mtp0", 1024, 1152, 512, 0.9),
    _recipe("c256_ctx1_gen6_dep8_batch512_eplb0_mtp0", 1024, 1536, 512, 0.9),
    _recipe("c512_ctx2_gen7_dep8_batch512_eplb0_mtp0", 1024, 3584, 512, 0.9),
    _recipe("c1_ctx1_gen7_tep8_batch1_eplb0_mtp3", 8192, 9, 4, 0.85),
    _recipe("c4_ctx1_gen7_tep8_batch32_eplb0_mtp3", 8192, 28, 128, 0.85),
    _recipe("c8_ctx1_gen6_tep8_batch32_eplb0_mtp3", 8192, 48, 128, 0.85),
    _recipe("c16_ctx1_gen3_tep8_batch32_eplb0_mtp2", 8192, 48, 128, 0.85),
    _recipe("c32_ctx3_gen5_tep8_batch32_eplb0_mtp3", 8192, 160, 128, 0.85),
    _recipe("c64_ctx1_gen1_dep8_batch32_eplb0_mtp2", 8192, 64, 128, 0.85),
    _recipe("c128_ctx2_gen1_dep8_batch32_eplb0_mtp2", 8192, 128, 128, 0.85),
    _recipe("c256_ctx3_gen1_dep8_batch32_eplb0_mtp2", 8192, 256, 128, 0.85),
    _recipe("c512_ctx3_gen1_dep8_batch64_eplb0_mtp1", 8192, 512, 256, 0.85),
    _recipe("c1_ctx1_gen7_tep8_batch1_eplb0_mtp0", 8192, 9, 1, 0.85),
    _recipe("c4_ctx1_gen7_tep8_batch32_eplb0_mtp0", 8192, 28, 32, 0.85),
    _recipe("c8_ctx1_gen6_tep8_batch16_eplb0_mtp0", 8192, 48, 16, 0.85),
    _recipe("c16_ctx1_gen3_tep8_batch32_eplb0_mtp0", 8192, 48, 32, 0.85),
    _recipe("c32_ctx2_gen5_tep8_batch128_eplb0_mtp0", 8192, 160, 128, 0.85),
    _recipe("c64_ctx2_gen3_dep8_batch128_eplb0_mtp0", 8192, 192, 128, 0.85),
    _recipe("c128_ctx1_gen1_dep8_batch256_eplb0_mtp0", 8192, 128, 256, 0.85),
    _recipe("c256_ctx5_gen3_dep8_batch256_eplb0_mtp0", 8192, 768, 256, 0.85),
    _recipe("c512_ctx3_gen1_dep8_batch512_eplb0_mtp0", 8192, 512, 512, 0.85),
)
#: The H100 recipes (:data:`H100_SOURCE`; name, ISL, sa-bench concurrency, the
#: generation server's max_num_tokens, the context server's enable_chunked_prefill),
#: each point of the 66d6a351a search space (1k/1k and 8k/1k, MTP then not; OSL 1024).
H100_RECIPES: tuple[DisaggRecipe, ...] = (
    _h100("ctx1_gen3_tep16_batch1_eplb0_mtp3", 1024, 6, 256, False),
    _h100("ctx1_gen3_tep16_batch2_eplb0_mtp3", 1024, 9, 256, False),
    _h100("ctx1_gen3_tep16_batch8_eplb0_mtp3", 1024, 30, 256, False),
    _h100("ctx1_gen3_tep16_batch16_eplb0_mtp3", 1024, 60, 256, False),
    _h100("ctx1_gen3_tep16_batch32_eplb0_mtp3", 1024, 117, 256, False),
    _h100("ctx1_gen3_dep16_batch4_eplb0_mtp3", 1024, 231, 256, False),
    _h100("ctx1_gen3_tep16_batch128_eplb0_mtp3", 1024, 462, 512, False),
    _h100("ctx1_gen1_dep16_batch32_eplb0_mtp2", 1024, 615, 256, False),
    _h100("ctx1_gen1_dep16_batch64_eplb0_mtp1", 1024, 1229, 256, False),
    _h100("ctx1_gen3_tep16_batch1_eplb0_mtp0", 1024, 6, 256, True),
    _h100("ctx1_gen3_tep16_batch2_eplb0_mtp0", 1024, 9, 256, True),
    _h100("ctx1_gen3_tep16_batch8_eplb0_mtp0", 1024, 30, 256, True),
    _h100("ctx1_gen3_tep16_batch16_eplb0_mtp0", 1024, 60, 256, False),
    _h100("ctx1_gen3_dep16_batch4_eplb0_mtp0", 1024, 231, 256, False),
    _h100("ctx1_gen3_dep16_batch8_eplb0_mtp0", 1024, 462, 256, False),
    _h100("ctx1_gen3_dep16_batch16_eplb0_mtp0", 1024, 924, 256, True),
    _h100("ctx1_gen3_dep16_batch32_eplb0_mtp0", 1024, 1845, 256, False),
    _h100("ctx2_gen1_dep16_batch256_eplb0_mtp0", 1024, 4916, 256, True),
    _h100("ctx1_gen3_tep16_batch1_eplb0_mtp3", 8192, 6, 256, True),
    _h100("ctx1_gen3_tep16_batch2_eplb0_mtp3", 8192, 9, 256, True),
    _h100("ctx1_gen3_tep16_batch8_eplb0_mtp3", 8192, 30, 256, False),
    _h100("ctx1_gen1_dep16_batch4_eplb0_mtp3", 8192, 77, 128, True),
    _h100("ctx2_gen1_dep16_batch8_eplb0_mtp3", 8192, 154, 128, True),
    _h100("ctx1_gen3_tep16_batch1_eplb0_mtp0", 8192, 6, 256, False),
    _h100("ctx1_gen3_tep16_batch2_eplb0_mtp0", 8192, 9, 256, False),
    _h100("ctx1_gen3_tep16_batch8_eplb0_mtp0", 8192, 30, 256, True),
    _h100("ctx1_gen2_tep16_batch64_eplb0_mtp0", 8192, 154, 256, False),
    _h100("ctx2_gen1_dep16_batch16_eplb0_mtp0", 8192, 308, 128, False),
)
BY_NAME = {(r.system, r.isl, r.name): r for r in RECIPES + H100_RECIPES}


def is_disagg(row: dict[str, str]) -> bool:
    """A TensorRT-LLM P/D row."""
    return (row.get("backend") or "").strip() == "trtllm" and (row.get("mode") or "").strip() == "disagg"


def graph_batch_sizes(isl: int, batch: int, system: str = "h200_sxm") -> list[int]:
    """The generation server's cuda_graph_config.batch_sizes: 1, 2, 4, 8, then every 8th
    up to the batch (H200 1k/1k); the powers of two up to it (H200 8k/1k); on H100 the
    first rule at either ISL, never fewer than 1, 2, 4 (``batch1``: 1, 2, 4)."""
    if system == "h100_sxm":
        return [b for b in [1, 2, 4, 8, *range(16, batch + 1, 8)] if b <= max(batch, 4)]
    sizes = [1, 2, 4, 8, *range(16, batch + 1, 8)] if isl == 1024 else [1 << i for i in range(batch.bit_length())]
    return [b for b in sizes if b <= batch]


def _mtp(n: int) -> dict[str, Any]:
    return {"speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": n}} if n else {}


def prefill_options(r: DisaggRecipe) -> dict[str, Any]:
    """``engine.workers.disaggregated.prefill.trtllm`` of a recipe."""
    h100 = r.system == "h100_sxm"
    p = (H100_PREFILL if h100 else PREFILL)[r.isl]
    out = {"max_batch_size": p["max_batch_size"], "max_num_tokens": p["max_num_tokens"],
           "max_seq_len": p["max_seq_len"], "enable_attention_dp": p["enable_attention_dp"],
           "enable_chunked_prefill": r.ctx_chunked, "disable_overlap_scheduler": True, "cuda_graph_config": None,
           "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": p["free_gpu_memory_fraction"]}}
    if not h100:
        out["stream_interval"] = 100
    out.update(_moe(r, "prefill"))
    return {**out, **_mtp(r.mtp)}


def _moe(r: DisaggRecipe, side: str) -> dict[str, Any]:
    """A server's ``moe_config`` and ``force_alltoall_method`` (:data:`H100_MOE`):
    ``side`` "prefill" (attention DP on H100) or "decode"."""
    wide = r.system == "h100_sxm" and (side == "prefill" or r.attention_dp)
    if not wide:
        return {"moe_config": {"backend": "CUTLASS"}}
    moe: dict[str, Any] = {"backend": H100_MOE["backend"]}
    if side == "prefill" and H100_PREFILL_MOE_MAX_TOKENS[r.isl]:
        moe["max_num_tokens"] = H100_PREFILL_MOE_MAX_TOKENS[r.isl]
    return {"moe_config": moe, "force_alltoall_method": H100_MOE["force_alltoall_method"]}


def decode_options(r: DisaggRecipe) -> dict[str, Any]:
    """``engine.workers.disaggregated.decode.trtllm`` of a recipe."""
    return {"max_batch_size": r.batch, "max_num_tokens": r.gen_tokens, "max_seq_len": DECODE_MAX_SEQ_LEN[r.isl],
            "enable_attention_dp": r.attention_dp, "enable_chunked_prefill": False,
            "disable_overlap_scheduler": False,
            "cuda_graph_config": {"enable_padding": True, "batch_sizes": graph_batch_sizes(r.isl, r.batch, r.system)},
            "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": r.gen_fraction},
            "stream_interval": 100, **_moe(r, "decode"), **_mtp(r.mtp)}


def candidates(row: dict[str, str]) -> tuple[list[DisaggRecipe], str]:
    """The recipes that can have run a row (module docstring), and why none can."""
    system = (row.get("system") or "").strip()
    if system not in WORKER_GPUS:
        return [], (f"{system}: no InferenceX TensorRT-LLM P/D recipe is tabulated for it (only for "
                    f"{', '.join(sorted(WORKER_GPUS))})")
    when = trtllm.measured_at(row)
    if system == "h100_sxm":
        recipes = H100_RECIPES
        if when is None or not H100_SINCE.date() <= when.date() <= H100_UNTIL.date():
            return [], ("measured outside the tabulated search space (InferenceX 66d6a351a, 2026-02-08, "
                        "to c453dd6f5, 2026-02-25)")
    else:
        recipes = RECIPES
        if when is None or when < SINCE.replace(hour=0, minute=0, second=0):
            return [], "measured before the tabulated search space (InferenceX 49f8ceee0, 2026-02-13)"
    isl, osl, c = _int(row, "isl"), _int(row, "osl"), trtllm.silicon_concurrency(row)
    if osl != 1024 or isl not in PREFILL:
        return [], f"ISL/OSL {isl}/{osl}: no recipe"
    out = [r for r in recipes if r.isl == isl and r.concurrency == c]
    if (row.get("decode_num_workers") or "").strip():
        ctx, gen = _int(row, "prefill_num_workers"), _int(row, "decode_num_workers")
        adp = max(_int(row, "decode_attention_dp_size", 0), 1) > 1
        out = [r for r in out if (r.ctx, r.gen, r.attention_dp) == (ctx, gen, adp)]
    if not out:
        return [], f"no recipe at ISL {isl} and concurrency {c}"
    return out, ""


def _point(row: dict[str, str]) -> tuple[Any, ...]:
    when = trtllm.measured_at(row)
    return ((row.get("system") or "").strip(), _int(row, "isl"), _int(row, "osl"),
            trtllm.silicon_concurrency(row), when.date() if when else None)


def _tpot(row: dict[str, str]) -> float:
    return round(float(row["silicon_tpot_ms"]), 2)


def choose(row: dict[str, str], peers: Iterable[dict[str, str]]) -> tuple[DisaggRecipe | None, str]:
    """The recipe that ran ``row`` among the rows ``peers`` (the silicon file's; the
    module docstring's rule), or None and why not."""
    try:
        cands, why = candidates(row)
    except ValueError as exc:
        return None, str(exc)
    if len(cands) == 1:
        return cands[0], ""
    if not cands:
        return None, why
    names = ", ".join(r.name for r in cands)
    if len(cands) != 2 or sorted(bool(r.mtp) for r in cands) != [False, True]:
        return None, f"recipe unknown: {names} share ISL {cands[0].isl} and concurrency {cands[0].concurrency}"
    point = _point(row)
    tpots = sorted({_tpot(p) for p in peers if is_disagg(p) and _point(p) == point})
    if len(tpots) != 2:
        return None, (f"recipe unknown: {names} share the point, and its day has {len(tpots)} distinct "
                      "measurements, not an MTP and a non-MTP one")
    mtp, stp = (cands[0], cands[1]) if cands[0].mtp else (cands[1], cands[0])
    return (mtp if _tpot(row) == tpots[0] else stp), ""


def annotate(rows: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """``rows`` with each TensorRT-LLM P/D row (a copy) given its recipe under
    :data:`RECIPE_KEY` ("" when unknown, the reason under :data:`REASON_KEY`)."""
    groups: dict[Any, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        if is_disagg(r):
            try:
                groups[_point(r)].append(r)
            except ValueError:
                pass
    out = []
    for r in rows:
        if is_disagg(r) and RECIPE_KEY not in r:
            try:
                peers = groups.get(_point(r), [r])
            except ValueError:
                peers = [r]
            rec, why = choose(r, peers)
            r = {**r, RECIPE_KEY: rec.name if rec else "", REASON_KEY: why}
        out.append(r)
    return out


def recipe_of(row: dict[str, str]) -> tuple[DisaggRecipe | None, str]:
    """The recipe :func:`annotate` gave a row (alone: the row as its only peer)."""
    if RECIPE_KEY not in row:
        row = annotate([row])[0]
    name = row[RECIPE_KEY]
    if not name:
        return None, row[REASON_KEY]
    return BY_NAME[((row.get("system") or "").strip(), _int(row, "isl"), name)], ""


def decode_gpus(row: dict[str, str]) -> int:
    """The GPUs of a row's generation worker: its recipe's, else its columns'
    (ValueError: the reason the row has none)."""
    rec, why = recipe_of(row)
    if rec:
        return WORKER_GPUS[rec.system]
    if (row.get("decode_tp_size") or "").strip():
        return _int(row, "decode_tp_size") * max(_int(row, "decode_attention_dp_size", 0), 1)
    raise ValueError(why)


def row_spec(row: dict[str, str], config: str, *, perf_block: dict[str, Any], weights: str | None,
             client: str, length_ratio: float = 1.0) -> tuple[dict[str, Any], int, int]:
    """The replay spec of a TensorRT-LLM P/D row (module docstring): warm-ups not
    reported (0) and the measured requests.

    Raises:
        ValueError: the row cannot be simulated (the message is the skip reason)."""
    from .spec import _quantization, inferencex_run

    rec, why = recipe_of(row)
    if rec is None:
        if not disagg.records_sides(row):  # the columns do not give both sides either
            if (row.get("system") or "").strip() not in WORKER_GPUS:
                why += f", and its columns do not give both sides' servers ({disagg.SIDES_MISSING})"
            raise ValueError(why)
        return _columns_spec(row, config, perf_block=perf_block, weights=weights, client=client,
                             length_ratio=length_ratio)
    isl, osl, c = _int(row, "isl"), _int(row, "osl"), trtllm.silicon_concurrency(row)
    measured: datetime = trtllm.measured_at(row)  # candidates() required it
    pools: dict[str, Any] = {}
    for side, count, opts in (("prefill", rec.ctx, prefill_options(rec)), ("decode", rec.gen, decode_options(rec))):
        pools[side] = {"count": count, "tp": WORKER_GPUS[rec.system], "enable_expert_parallel": True,
                       "placement": "round_robin", "trtllm": opts}
    quant = _quantization(weights)
    quant["kv_cache"] = "fp8"  # kv_cache_config.dtype fp8 on both servers
    engine: dict[str, Any] = {
        "model": config, "system": row["system"].strip(), "backend": "trtllm", "perf": perf_block,
        "backend_version": trtllm.release_of(IMAGES[rec.system], "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime"),
        "workers": {"disaggregated": {**pools, "kv_transfer": {}}}, "quantization": quant,
    }
    return inferencex_run(engine, isl, osl, c, measured, length_ratio, client)


def side_pool(row: dict[str, str], side: str, config: str) -> dict[str, Any]:
    """A P/D side's pool read from its own columns (``prefill_*`` / ``decode_*``, as
    :mod:`.disagg` reads them), for a row whose recipe is not tabulated: ``num_workers``
    servers of ``tp_size × attention_dp_size`` GPUs in TensorRT-LLM's layout
    (:func:`trtllm.layout`: attention DP over them when ``attention_dp_size`` > 1, the
    experts EP or split both ways by ``moe_ep_size``), the recorded ``batch_size`` as its
    ``max_batch_size``; every other option the release's default, the placement Dynamo's
    frontend default (round robin, as the recipes'), but block reuse off for a model with
    recurrent state (:func:`keeps_recurrent_state`): TensorRT-LLM's
    ``MambaHybridCacheManager`` requires it off, so a row measured on such a model ran
    without it (every InferenceX recipe of these models sets ``enable_block_reuse:
    false``)."""
    from pathlib import Path

    p = side + "_"
    cols = {k: row.get(p + k) or "" for k in ("tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size")}
    try:
        workers = _int(row, p + "num_workers")
        lay = trtllm.layout(cols, Path(config))
    except ValueError as exc:
        raise ValueError(f"{side}: {exc}") from None
    opts: dict[str, Any] = {"enable_attention_dp": lay.attention_dp, **lay.options()}
    if batch := _int(row, p + "batch_size", 0):
        opts["max_batch_size"] = batch
    if keeps_recurrent_state(Path(config)):
        opts["kv_cache_config"] = {"enable_block_reuse": False}
    return {"count": workers, "tp": lay.tp, "enable_expert_parallel": lay.ep, "placement": "round_robin",
            "trtllm": opts}


def keeps_recurrent_state(config: Any) -> bool:
    """Whether the model of ``config.json`` path ``config`` has layers that keep a
    recurrent state per request (docs/hybrid.md): Gated DeltaNet (``layer_types`` with
    ``linear_attention``, in ``text_config`` for Qwen3.5), Mamba-2 (Nemotron-H's
    ``hybrid_override_pattern`` with ``M``, or ``layers_block_type`` with ``mamba``) or
    Kimi Delta Attention (``linear_attn_config``). False when the file does not read."""
    import json

    try:
        c = json.loads(config.read_text())
    except (OSError, ValueError, AttributeError):
        return False
    c = c.get("text_config") or c
    return ("linear_attention" in (c.get("layer_types") or []) or "M" in (c.get("hybrid_override_pattern") or "")
            or "mamba" in (c.get("layers_block_type") or []) or bool(c.get("linear_attn_config")))


def _columns_spec(row: dict[str, str], config: str, *, perf_block: dict[str, Any], weights: str | None,
                  client: str, length_ratio: float) -> tuple[dict[str, Any], int, int]:
    """:func:`row_spec` of a row whose recipe is not tabulated but whose columns give
    both sides (:func:`side_pool`): its release's defaults, InferenceX's client at the
    row's date (the current client without one), the KV cache as its precision implies."""
    from .campaigns import INFERENCEX_WARMUPS_SINCE
    from .spec import _quantization, inferencex_run

    isl, osl, c = _int(row, "isl"), _int(row, "osl"), trtllm.silicon_concurrency(row)
    pools = {side: side_pool(row, side, config) for side in ("prefill", "decode")}
    engine: dict[str, Any] = {
        "model": config, "system": row["system"].strip(), "backend": "trtllm", "perf": perf_block,
        "workers": {"disaggregated": {**pools, "kv_transfer": {}}}, "quantization": _quantization(weights),
    }
    if version := trtllm.release_of((row.get("backend_version") or "").strip(), row.get("silicon_data_source") or ""):
        engine["backend_version"] = version
    return inferencex_run(engine, isl, osl, c, trtllm.measured_at(row) or INFERENCEX_WARMUPS_SINCE, length_ratio,
                          client)


def layout_text(spec: dict[str, Any]) -> str:
    """A P/D row's layout as simulated: ``"P/D 1×TP8 ADP8 EP8 + 9×TP8 EP8 MTP3"``."""
    d = spec["engine"]["workers"]["disaggregated"]

    def one(p: dict[str, Any]) -> str:
        t = p["trtllm"]
        return f"{p['count']}×" + trtllm.Layout(p["tp"], t["enable_attention_dp"], p["enable_expert_parallel"]).text()

    mtp = (d["decode"]["trtllm"].get("speculative_config") or {}).get("num_nextn_predict_layers")
    return f"P/D {one(d['prefill'])} + {one(d['decode'])}" + (f" MTP{mtp}" if mtp else "")
