"""TensorRT-LLM rows: the parallel layout, and how each campaign launched ``trtllm-serve``.

A TensorRT-LLM row (``backend`` trtllm) is simulated with ``engine.backend: trtllm`` and
an ``engine.trtllm`` block of the options its campaign launched the server with
(docs/trtllm.md has the engine's rules):

- AIConfigurator's rows (AIPerf): its generator's ``extra_engine_args`` for an
  aggregated worker (``generator/rule_plugin/trtllm.rule`` and the release's
  ``backend_templates/trtllm/extra_engine_args.<version>.yaml.j2``), by the
  aiconfigurator release of the row's time (:func:`aic_generator`).
- InferenceX's rows: the recipe's ``trtllm-serve`` flags and extra options at the row's
  date (:data:`RECIPES`, each change with its commit), its image's release.

The rows' layout columns are AIConfigurator's: ``tp_size`` attention tensor parallelism,
``attention_dp_size`` attention data parallelism (``batch_size`` is then the batch of
one attention rank: the closed loop's concurrency is ``silicon_concurrency`` in
``silicon_data_source``), ``moe_tp_size`` × ``moe_ep_size`` the experts' split.
TensorRT-LLM's ``tp_size`` is every GPU of the instance (attention TP × attention DP),
with ``enable_attention_dp`` (:func:`layout`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .campaigns import _t
from .rows import _int

#: aiconfigurator v0.7.0 (2026-03-11): its generator lifts an aggregated worker's
#: max_batch_size to at least 512 (twice the batch above), pads CUDA graphs over a list
#: of batch sizes and rounds max_num_tokens up to tokens_per_block; before it
#: (v0.5.0, v0.6.0) max_batch_size is the row's batch size and every batch size up to
#: it is captured.
AIC_GENERATOR_07_SINCE = datetime(2026, 3, 11, tzinfo=timezone.utc)
#: The generator's max_num_tokens slack above max_batch_size + ISL (``agg max_num_tokens``).
AIC_TOKEN_SLACK = 1500
#: The templates' kv_cache_config.free_gpu_memory_fraction default.
AIC_FREE_GPU_MEMORY_FRACTION = 0.8
#: GPUs of one node (the systems of the rows): a layout of more is a mislabelled row.
GPUS_PER_NODE = 8


def silicon_concurrency(row: dict[str, str]) -> int:
    """The closed loop's concurrency: ``silicon_concurrency`` in ``silicon_data_source``
    (with attention DP the ``batch_size`` column is one rank's), else ``batch_size``."""
    m = re.search(r"silicon_concurrency=(\d+)", row.get("silicon_data_source") or "")
    return int(m.group(1)) if m else _int(row, "batch_size")


def measured_at(row: dict[str, str]) -> datetime | None:
    """``measured=`` of ``silicon_data_source`` (UTC), or None."""
    m = re.search(r"measured=([0-9T:.\-]+Z?)", row.get("silicon_data_source") or "")
    if not m:
        return None
    t = datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class Layout:
    """A row as TensorRT-LLM runs it: ``tp`` GPUs (``tp_size``), attention DP over them
    or not, the experts expert-parallel over them or tensor-parallel (or, ``moe_ep``,
    spread over that many and split the rest of the way: ``moe_expert_parallel_size``),
    and a note when the row's columns needed reading."""
    tp: int
    attention_dp: bool
    ep: bool
    note: str = ""
    moe_ep: int = 0

    def text(self) -> str:
        s = f"TP{self.tp}"
        if self.attention_dp:
            s += f" ADP{self.tp}"
        if self.ep:
            s += f" EP{self.tp}"
        elif self.moe_ep:
            s += f" EP{self.moe_ep}"
        return s

    def options(self) -> dict[str, Any]:
        """The ``engine.trtllm`` options of the layout beyond the pool's: the experts'
        split both ways."""
        return {"moe_expert_parallel_size": self.moe_ep} if self.moe_ep else {}


def _moe(config: Path) -> bool:
    with open(config, encoding="utf-8") as f:
        top = json.load(f)
    cfg = top.get("text_config") or top
    return any(k in cfg for k in ("num_experts", "num_local_experts", "n_routed_experts"))


def layout(row: dict[str, str], config: Path) -> Layout:
    """TensorRT-LLM's layout of a row (module docstring). A row whose columns give more
    GPUs than a node (``tp_size`` 64 with ``moe_tp_size`` 8 and ``moe_ep_size`` 8: the
    tensor and expert parallel sizes multiplied, in some exports of single-node runs) is
    one node's: its GPU count from its id (``…_tp8_ep8_…``), else the node's, its experts
    expert-parallel when ``moe_ep_size`` > 1, attention DP when ``attention_dp_size`` > 1.
    Within a node the same export is read from the id too: an id ``…_tpN_epM_…`` (M > 1
    dividing N) whose columns give N × M GPUs is N GPUs, the experts expert-parallel
    over M of them (InferenceX's ``tp: 2, ep: 2`` exported as ``tp_size`` 4,
    ``moe_tp_size`` 2, ``moe_ep_size`` 2).
    Experts split both ways (``moe_tp_size`` × ``moe_ep_size`` = ``tp_size``, each > 1)
    run with ``moe_expert_parallel_size`` = ``moe_ep_size`` (TensorRT-LLM's Mapping
    derives ``moe_tp_size``); with attention DP that split is refused.

    Raises:
        ValueError: a layout the simulation cannot run (the skip reason)."""
    tp, adp = _int(row, "tp_size"), max(_int(row, "attention_dp_size", 0), 1)
    moe_tp, moe_ep = max(_int(row, "moe_tp_size", 0), 1), max(_int(row, "moe_ep_size", 0), 1)
    gpus, note = tp * adp, ""
    m = re.search(r"_tp(\d+)_ep(\d+)_", row.get("id") or "")
    if m and gpus <= GPUS_PER_NODE and _moe(config):
        id_tp, id_ep = int(m.group(1)), int(m.group(2))
        if 1 < id_ep <= id_tp != gpus == id_tp * id_ep and id_tp % id_ep == 0:
            # the same export within a node: InferenceX's TP 2 EP 2 as tp_size 4,
            # moe_tp_size 2, moe_ep_size 2 (the search space of nvidia-master.yaml has
            # no TP 4 EP 2); TensorRT-LLM's --tp_size $TP --ep_size $EP_SIZE
            note = f"columns give {tp} × {adp} GPUs: the id's {id_tp}"
            if id_ep == id_tp:
                return Layout(id_tp, adp > 1, True, note)
            if adp > 1:
                raise ValueError(f"the id's TP {id_tp} EP {id_ep} with attention DP: the experts' split both "
                                 "ways is not simulated with attention DP")
            return Layout(id_tp, False, False, note, id_ep)
    if gpus > GPUS_PER_NODE:
        m = re.search(r"_tp(\d+)", row.get("id") or "")
        gpus = int(m.group(1)) if m else GPUS_PER_NODE
        note = f"columns give {tp} × {adp} GPUs: {'the id' if m else 'one node'}'s {gpus}"
        if not _moe(config):
            return Layout(gpus, adp > 1, False, note)
        return Layout(gpus, adp > 1, moe_ep > 1, note)
    if not _moe(config):
        return Layout(gpus, adp > 1, False, note)
    if moe_tp > 1 and moe_ep > 1:
        if moe_tp * moe_ep != gpus:
            raise ValueError(f"moe_tp_size {moe_tp} × moe_ep_size {moe_ep} is not the row's {gpus} GPUs")
        if adp > 1:
            raise ValueError(f"moe_tp_size {moe_tp} with moe_ep_size {moe_ep} and attention DP: the experts' "
                             "split both ways is not simulated with attention DP")
        return Layout(gpus, False, False, note, moe_ep)
    return Layout(gpus, adp > 1, moe_ep > 1, note)


def checkpoint_quantization(quant: dict[str, str], config: Path) -> dict[str, str]:
    """``engine.quantization`` of a row whose precision names fp8 weights of a checkpoint
    that stores MXFP4 experts (``openai/gpt-oss-120b``: ``quantization_config``
    ``quant_method: mxfp4``; OpenAI released no fp8 one): TensorRT-LLM's PyTorch backend
    loads the quantization a checkpoint was exported with and converts none (its
    quantization guide, "ModelOpt Integration"; the tech blog "Deploying GPT-OSS on
    TensorRT-LLM" serves the MXFP4 experts as they are on Hopper), so the weights are the
    checkpoint's, with the KV cache the row names (AIConfigurator's five H100 rows of it
    say fp8). Any other row's ``quant`` is returned as it is."""
    if quant.get("weights") not in ("fp8", "fp8_block"):
        return quant
    with open(config, encoding="utf-8") as f:
        top = json.load(f)
    q = top.get("quantization_config") or (top.get("text_config") or {}).get("quantization_config") or {}
    if q.get("quant_method") != "mxfp4":
        return quant
    return {k: v for k, v in quant.items() if k != "weights"}


def aic_generator(c: int, isl: int, measured: datetime | None, lay: Layout) -> dict[str, Any]:
    """``engine.trtllm`` as AIConfigurator's generator launches an aggregated worker of
    batch size ``c`` (one attention rank's): v0.5/v0.6 (before
    :data:`AIC_GENERATOR_07_SINCE`, or a row without a date) max_batch_size c,
    max_num_tokens c + ISL + 1500, CUDA graphs of every batch size up to c without
    padding; v0.7 on, max_batch_size 512 (2c above 256), max_num_tokens rounded up to
    32, padded graphs of 1–16, then steps of 4, 8, 16, 32 and 64 up to 512, and c ± 8.
    Both: the overlap scheduler on, chunked prefill off, block reuse off,
    free_gpu_memory_fraction 0.8, attention DP as the row's."""
    if measured is None or measured < AIC_GENERATOR_07_SINCE:
        mbs, tokens = c, c + isl + AIC_TOKEN_SLACK
        # trtllm.rule: cuda_graph_batch_sizes = range(1, max_batch_size + 1)
        graphs: dict[str, Any] = {"batch_sizes": list(range(1, c + 1)), "enable_padding": False}
    else:
        sizes = (list(range(1, 17)) + list(range(16, 33, 4)) + list(range(32, 65, 8)) + list(range(64, 129, 16))
                 + list(range(128, 257, 32)) + list(range(256, 513, 64)) + list(range(max(1, c - 8), c + 9)))
        sizes = sorted(set(sizes))
        mbs = 512 if c < 512 else 2 * c
        tokens = (mbs + isl + AIC_TOKEN_SLACK + 31) // 32 * 32
        graphs = {"batch_sizes": sizes, "enable_padding": True}
    return {"max_batch_size": mbs, "max_num_tokens": tokens, "enable_chunked_prefill": False,
            "disable_overlap_scheduler": False, "enable_attention_dp": lay.attention_dp,
            "kv_cache_config": {"free_gpu_memory_fraction": AIC_FREE_GPU_MEMORY_FRACTION, "enable_block_reuse": False},
            "cuda_graph_config": graphs, **lay.options()}


@dataclass(frozen=True)
class Where:
    """A recipe value the script sets only at some points: ``value`` where
    ``test(isl, osl, tp_size)`` holds (a shell ``if`` on $ISL, $OSL, $TP), else the
    option is left out."""
    test: Any
    value: Any


@dataclass(frozen=True)
class Change:
    """One change of an InferenceX TensorRT-LLM recipe: its commit, when it landed
    (UTC), the image (its release), and the server's options (``engine.trtllm``; a value
    may be a function of the row's concurrency, ISL and tp_size, :func:`_resolve`), plus
    ``kv_cache`` for ``kv_cache_config.dtype``."""
    commit: str
    since: datetime
    image: str
    options: dict[str, Any]
    what: str


@dataclass(frozen=True)
class Recipe:
    """One InferenceX TensorRT-LLM recipe (a benchmark script and its config entry):
    the models it serves on ``system``, its ``variant`` ("" or ``"mtp"``, a separate
    config of the same model and GPU) and its history."""
    models: tuple[str, ...]
    system: str
    file: str
    changes: tuple[Change, ...] = field(default_factory=tuple)
    variant: str = ""


#: InferenceX's TensorRT-LLM recipes that rows of the shared data ran (SemiAnalysisAI/
#: InferenceX: the benchmark script and the image of .github/configs/nvidia-master.yaml
#: or the workflow template at the row's date).
DSR1 = ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3")  # InferenceX's DeepSeek-R1-0528 (the V3 rows: the same runs)
#: The DeepSeek MTP recipe's merge (InferenceX pull request 392, bf3456727): the run
#: its CI made of the new config is the one measured at 2026-01-14T22:26Z.
DSR1_MTP_SINCE = _t("2026-01-15T06:26:18+08:00")


#: A later change's value for an option the script no longer sets: left out everywhere.
NOT_SET = Where(lambda isl, osl, tp: False, None)


def _ep_over_tp(c: int, isl: int, tp: int) -> int:
    """``trtllm-serve --ep_size=$TP``: the experts spread over every GPU."""
    return tp


def _gptoss_b200_ep_0919(c: int, isl: int, tp: int) -> int:
    """gptoss_fp4_b200_trt_slurm.sh@28e5a01ea's ``--ep_size``: $TP at TP 4 or 8 for
    ISL 1024 (the script's ``"$ISL" == "1024" && "$OSL"`` 1024 or 8192: the campaign's
    1k/1k and 1k/8k) from concurrency 16, and at every TP from concurrency 256 (with
    attention DP); else 1 (the experts split tensor-parallel)."""
    tep = tp in (4, 8) and isl == 1024 and c >= 16
    return tp if tep or c >= 256 else 1


def _gptoss_b200_ep_1020(c: int, isl: int, tp: int) -> int:
    """gptoss_fp4_b200_trt_slurm.sh@ac1998a50's ``--ep_size``: $TP from concurrency 256
    (with attention DP), else 1."""
    return tp if c >= 256 else 1


def _dsr1_h200_tokens(c: int, isl: int, tp: int) -> int:
    """dsr1_fp8_h200_trt_slurm.sh's ``--max_num_tokens``: ``MAX_NUM_TOKENS=$(( (CONC +
    ISL + 64 + 63) / 64 * 64 ))``."""
    return (c + isl + 64 + 63) // 64 * 64


def _dsr1_h200_tokens_0121(c: int, isl: int, tp: int) -> int:
    """dsr1_fp8_h200_trt_slurm.sh@64af5a771's ``--max_num_tokens``: :func:`_dsr1_h200_tokens`,
    then ``MAX_NUM_TOKENS=$(( MAX_NUM_TOKENS > 8192 ? MAX_NUM_TOKENS : 8192 ))``: at least
    8192."""
    return max(_dsr1_h200_tokens(c, isl, tp), 8192)


def _llama_batch_wait(isl: int, osl: int, tp: int) -> bool:
    """The Llama-3.1-70B script's batch waiting: ``if [[ "$ISL" == "1024" && "$OSL" ==
    "1024" && ${TP} -lt 8 ]]``."""
    return isl == 1024 and osl == 1024 and tp < 8


RECIPES: tuple[Recipe, ...] = tuple(
    # B200: 70b_fp8_b200_trt_slurm.sh and 70b_fp4_b200_trt_slurm.sh (and their _docker.sh
    # twins) write the H200 script's options, the image of 70b-tmpl.yml's bmk-b200-trt-*
    Recipe(("meta-llama/Llama-3.1-70B",), system, file, (
        Change("1b563c858", _t("2025-09-18T11:51:07-07:00"), "1.1.0rc2.post2",
               {"max_num_tokens": 16384, "kv_cache": "fp8", "stream_interval": 10,
                "batch_wait_max_tokens_ratio": Where(_llama_batch_wait, 0.9),
                "batch_wait_timeout_iters": Where(_llama_batch_wait, 20),
                "kv_cache_config": {"enable_block_reuse": False},
                "cuda_graph_config": {"enable_padding": True, "max_batch_size": 1024}},
               "trtllm-serve --max_num_tokens 16384; cuda_graph_config enable_padding, max_batch_size 1024; "
               "kv_cache_config dtype fp8, enable_block_reuse false; stream_interval 10 (image 1.1.0rc2.post2, "
               ".github/workflows/70b-tmpl.yml); 1k/1k below TP 8 also batch_wait_max_tokens_ratio 0.9, "
               "batch_wait_timeout_iters 20"),
    ))
    for system, file in (("h200_sxm", "benchmarks/70b_fp8_h200_trt_slurm.sh"),
                         ("b200_sxm", "benchmarks/70b_{fp8,fp4}_b200_trt_slurm.sh"))
) + (
    Recipe(("openai/gpt-oss-120b",), "h200_sxm", "benchmarks/gptoss_fp4_h200_trt_slurm.sh", (
        Change("ffe0b55a7", _t("2025-09-28T17:41:27-07:00"), "gpt-oss-dev",
               {"max_batch_size": lambda c, isl, tp: c, "max_num_tokens": 20000, "stream_interval": 20,
                "moe_expert_parallel_size": _ep_over_tp, "moe_config": {"backend": "TRITON"},
                "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.85},
                "cuda_graph_config": {"enable_padding": True, "max_batch_size": lambda c, isl, tp: c}},
               "trtllm-serve --max_batch_size $CONC --max_num_tokens 20000; cuda_graph_config enable_padding, "
               "max_batch_size $CONC; kv_cache_config dtype auto, enable_block_reuse false, "
               "free_gpu_memory_fraction 0.85; stream_interval 20; --ep_size=$TP; moe_config backend TRITON "
               "(TritonFusedMoE, OpenAI triton_kernels matmul_ogs: the kernel AIConfigurator's 1.2.0rc5 "
               "w4a16_mxfp4 moe_perf rows time on Hopper, docs/trtllm.md) (image gpt-oss-dev, a "
               "development build; num_postprocess_workers 4 not modelled)"),
        Change("17d5e204f", _t("2025-11-03T12:05:50-06:00"), "gpt-oss-dev", {"moe_expert_parallel_size": NOT_SET},
               "--ep_size=$EP_SIZE, the search space's (.github/configs/nvidia-master.yaml): the row's columns"),
    )),
    # B200: gptoss_fp4_b200_trt_slurm.sh (its twin gptoss_fp4_b200_trt_docker.sh from
    # 156fef3fc, the same options; one gptoss_fp4_b200_trt.sh from b0c4ed21b, moved to
    # benchmarks/single_node/ by 8d81e0bf4, options unchanged until its removal in
    # 1b234994f), the image of gptoss-tmpl.yml's bmk-b200-trt, from 17d5e204f of
    # nvidia-master.yaml's gptoss-fp4-b200-trt
    Recipe(("openai/gpt-oss-120b",), "b200_sxm", "benchmarks/gptoss_fp4_b200_trt_slurm.sh", (
        Change("28e5a01ea", _t("2025-09-19T13:30:24-07:00"), "1.1.0rc2.post2",
               {"max_batch_size": 512, "max_num_tokens": 20000, "stream_interval": 20,
                "moe_expert_parallel_size": _gptoss_b200_ep_0919,
                "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.85},
                "cuda_graph_config": {"enable_padding": True, "max_batch_size": lambda c, isl, tp: c},
                "attention_dp_config": {"enable_balance": True}},
               "trtllm-serve --max_batch_size 512 --max_num_tokens 20000; cuda_graph_config enable_padding, "
               "max_batch_size $CONC; kv_cache_config dtype auto, enable_block_reuse false, "
               "free_gpu_memory_fraction 0.85; stream_interval 20; --ep_size $TP at TP 4/8 for ISL 1024 from "
               "CONC 16, and with enable_attention_dp (attention_dp_config enable_balance) from CONC 256, else 1 "
               "(image 1.1.0rc2.post2; moe_config backend TRTLLM, CUTLASS from CONC 256; mpirun -n 1, "
               "num_postprocess_workers 4, TRTLLM_ENABLE_PDL=1)"),
        Change("ac1998a50", _t("2025-10-20T16:08:25-07:00"), "1.2.0rc0.post1",
               {"kv_cache": "fp8", "moe_expert_parallel_size": _gptoss_b200_ep_1020},
               "kv_cache_config dtype fp8; --ep_size $TP only from CONC 256 (with attention DP), else 1; "
               "moe_config backend TRTLLM at every concurrency (image 1.2.0rc0.post1)"),
        Change("17d5e204f", _t("2025-11-03T12:05:50-06:00"), "1.2.0rc0.post1", {"moe_expert_parallel_size": NOT_SET},
               "--ep_size=$EP_SIZE and enable_attention_dp $DP_ATTENTION, the search space's "
               "(.github/configs/nvidia-master.yaml): the row's columns"),
        Change("06667a51e", _t("2025-12-02T15:01:04-08:00"), "1.2.0rc2", {},
               "image 1.2.0rc2 (the script's MNNVL all-to-all variables with attention DP are not modelled)"),
        Change("98ea663cc", _t("2026-01-16T16:21:00-08:00"), "1.2.0rc2.post1", {}, "image 1.2.0rc2.post1"),
        Change("10d183038", _t("2026-01-17T00:29:47+00:00"), "1.2.0rc2", {}, "98ea663cc reverted: image 1.2.0rc2"),
        Change("d7dbd045b", _t("2026-02-05T15:18:55-08:00"), "1.2.0rc2.post2", {}, "image 1.2.0rc2.post2"),
        Change("0977b65f1", _t("2026-05-18T13:26:11-04:00"), "1.3.0rc14", {}, "image 1.3.0rc14"),
    )),
    Recipe(DSR1, "h200_sxm", "benchmarks/dsr1_fp8_h200_trt_slurm.sh", (
        Change("9596d23d7", _t("2025-10-29T17:37:58-05:00"), "1.1.0rc2.post2",
               {"max_num_tokens": _dsr1_h200_tokens, "kv_cache": "fp8",
                "stream_interval": 10, "moe_expert_parallel_size": _ep_over_tp,
                "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.75},
                "cuda_graph_config": {"enable_padding": True, "max_batch_size": 128},
                "attention_dp_config": {"enable_balance": True, "timeout_iters": 60, "batching_wait_iters": 0}},
               "trtllm-serve --max_num_tokens ((CONC+ISL+64+63)/64*64); cuda_graph_config enable_padding, "
               "max_batch_size 128; kv_cache_config dtype fp8, free_gpu_memory_fraction 0.75, enable_block_reuse "
               "false; stream_interval 10; enable_attention_dp when the config says dp-attn, then "
               "attention_dp_config enable_balance, timeout_iters 60, batching_wait_iters 0; --ep_size=$TP "
               "(EP_SIZE=$TP) (image 1.1.0rc2.post2; moe backend CUTLASS not modelled)"),
        Change("17d5e204f", _t("2025-11-03T12:05:50-06:00"), "1.1.0rc2.post2", {"moe_expert_parallel_size": NOT_SET},
               "--ep_size=$EP_SIZE, the search space's (.github/configs/nvidia-master.yaml): the row's columns"),
        # pull request 258 (evals after the throughput run) floored the non-MTP script's
        # token budget at 8192 (and --max_seq_len, MAX_MODEL_LEN, at 8192: not set here,
        # a limit above every prompt + output of the rows); the MTP script kept its own;
        # b0c4ed21b (2026-01-22) renamed the script dsr1_fp8_h200_trt.sh, unchanged
        Change("64af5a771", _t("2026-01-21T23:05:08+00:00"), "1.1.0rc2.post2",
               {"max_num_tokens": _dsr1_h200_tokens_0121},
               "--max_num_tokens max((CONC+ISL+64+63)/64*64, 8192)"),
    )),
    Recipe(DSR1, "h200_sxm", "benchmarks/dsr1_fp8_h200_trt_mtp_slurm.sh", (
        Change("bf3456727", DSR1_MTP_SINCE, "1.1.0rc2.post2",
               {"max_batch_size": lambda c, isl, tp: c,
                "max_num_tokens": lambda c, isl, tp: ((3 + 1) * c + isl + 64 + 63) // 64 * 64,
                "kv_cache": "fp8", "stream_interval": 10,
                "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.75},
                "cuda_graph_config": {"enable_padding": True, "max_batch_size": 128},
                "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 3}},
               "trtllm-serve --max_batch_size $CONC (attention DP: $CONC/TP) --max_num_tokens "
               "(((MTP+1)*MAX_BATCH_SIZE+ISL+64+63)/64*64); speculative_config MTP, num_nextn_predict_layers 3 "
               "(1 with attention DP); otherwise the non-MTP recipe's options"),
    ), variant="mtp"),
)


def _mtp_attention_dp(opts: dict[str, Any], c: int, isl: int, tp: int) -> dict[str, Any]:
    """The MTP recipe's options under attention DP: one rank's batch, MTP 1."""
    o = dict(opts)
    o["max_batch_size"] = c // tp
    o["max_num_tokens"] = ((1 + 1) * (c // tp) + isl + 64 + 63) // 64 * 64
    o["speculative_config"] = {"decoding_type": "MTP", "num_nextn_predict_layers": 1}
    return o


def variant_of(row: dict[str, str], lay: Layout) -> str:
    """Which of InferenceX's DeepSeek-R1 TensorRT-LLM configs ran a row ("mtp" or ""),
    by three rules, in order (docs/trtllm.md, "The DeepSeek rows"): a row measured on
    2026-01-14 is MTP (the MTP config's merge, bf3456727, made the day's run: its
    timestamp, 2026-01-14T22:26:21Z, is the merge's); a row whose (ISL, concurrency,
    attention DP) only the MTP config's search space holds at its date is MTP (attention
    DP at c ≥ 128 for 1k/1k, 256 for 1k/8k, ≥ 64 for 8k/1k); anything else is the
    non-MTP config's (the only one before 2026-01-14)."""
    if row.get("model_path", "").strip() not in DSR1:
        return ""
    when = measured_at(row)
    if when is None or when < DSR1_MTP_SINCE.replace(hour=0, minute=0, second=0):
        return ""
    if when.date() == DSR1_MTP_SINCE.date():
        return "mtp"
    isl, osl, c = _int(row, "isl"), _int(row, "osl"), silicon_concurrency(row)
    only_mtp = {(1024, 1024): c >= 128, (1024, 8192): c >= 256, (8192, 1024): c >= 64 and lay.attention_dp}
    return "mtp" if only_mtp.get((isl, osl), False) else ""


def recipe_at(model: str, system: str, when: datetime, variant: str = "") -> tuple[dict[str, Any], str, str]:
    """The options of the recipe for ``model`` on ``system`` (its ``variant``) at
    ``when``, the image's release and where they come from; ``({}, "", "")`` when none
    is tabulated. The MTP recipe's options are the non-MTP recipe's with its own."""
    if variant:
        base, _, src0 = recipe_at(model, system, when)
    for r in RECIPES:
        if model in r.models and r.system == system and r.variant == variant:
            opts: dict[str, Any] = {}
            image, commits = "", []
            for c in r.changes:
                if c.since <= when:
                    opts = _merge(opts, c.options)
                    image = c.image
                    commits.append(c.commit)
            if commits:
                if variant:
                    opts = _merge(base, opts)
                return opts, image, f"{r.file}@{'+'.join(commits)}"
    return {}, "", ""


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out.get(k, {}), v) if isinstance(v, dict) else v
    return out


_ABSENT = object()


def _resolve(v: Any, c: int, isl: int, tp: int, osl: int) -> Any:
    """A recipe value with the row's numbers put in: a callable of (c, ISL, tp_size)
    is called (a script's shell arithmetic on $CONC, $ISL, $TP); a :class:`Where` is
    its value at the points it names, else left out (:data:`NOT_SET`: nowhere)."""
    if isinstance(v, dict):
        out = {k: _resolve(x, c, isl, tp, osl) for k, x in v.items()}
        return {k: x for k, x in out.items() if x is not _ABSENT}
    if isinstance(v, Where):
        return _resolve(v.value, c, isl, tp, osl) if v.test(isl, osl, tp) else _ABSENT
    if callable(v):
        return v(c, isl, tp)
    return v


def recipe_options(opts: dict[str, Any], c: int, isl: int, lay: Layout, osl: int) -> tuple[dict[str, Any], str | None]:
    """``engine.trtllm`` of a recipe's options for a row (``osl`` its output length),
    and its KV cache dtype (None: the checkpoint's)."""
    if lay.attention_dp and "speculative_config" in opts:
        opts = _mtp_attention_dp(opts, c, isl, lay.tp)
    o = _resolve(opts, c, isl, lay.tp, osl)
    kv = o.pop("kv_cache", None)
    o["enable_attention_dp"] = lay.attention_dp
    if not lay.attention_dp:  # the recipe writes attention_dp_config with dp-attn only
        o.pop("attention_dp_config", None)
    if lay.ep or lay.moe_ep:  # the row's columns give the experts' split
        o.pop("moe_expert_parallel_size", None)
    o.update(lay.options())
    return o, kv


#: The TensorRT-LLM release in each Dynamo TensorRT-LLM runtime image
#: (nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:<Dynamo version>): Dynamo's support
#: matrix, "Backend Dependencies" (docs.nvidia.com/dynamo, getting-started/support-matrix).
DYNAMO_TRTLLM = {
    "0.6.0": "1.1.0rc5", "0.6.1": "1.1.0rc5", "0.6.1.post1": "1.1.0rc5",
    "0.7.0": "1.2.0rc2", "0.7.0.post1": "1.2.0rc3", "0.7.1": "1.2.0rc3",
    "0.8.0": "1.2.0rc6.post1", "0.8.1": "1.2.0rc6.post1", "0.8.1.post1": "1.2.0rc6.post1",
    "0.8.1.post2": "1.2.0rc6.post2", "0.8.1.post3": "1.2.0rc6.post3",
    "0.9.0": "1.3.0rc1", "0.9.1": "1.3.0rc3",
}


def release_of(version: str, source: str = "") -> str:
    """The TensorRT-LLM release of a row's ``backend_version`` (or an image tag): a
    Dynamo runtime image's version (``ai-dynamo/tensorrtllm-runtime`` in
    ``silicon_data_source``) is its TensorRT-LLM release (:data:`DYNAMO_TRTLLM`); a
    release name is itself; a development image's tag (``gpt-oss-dev``) names no
    release: "" (the default release stands in).

    Raises:
        ValueError: a Dynamo version the table does not know."""
    v = version.strip()
    if not v:
        return ""
    if "ai-dynamo/tensorrtllm-runtime" in source and v.startswith("0."):  # Dynamo's 0.x, not TensorRT-LLM's 1.x
        if v not in DYNAMO_TRTLLM:
            raise ValueError(f"Dynamo image {v}: its TensorRT-LLM release is not tabulated (trtllm.DYNAMO_TRTLLM)")
        return DYNAMO_TRTLLM[v]
    return v if re.match(r"v?\d+\.\d+", v) else ""


def layout_text(row: dict[str, str], spec: dict[str, Any]) -> str:
    """A TensorRT-LLM row's layout as simulated, for ``rows.csv`` and the MAPE lines:
    ``"TP8 EP8"``, ``"TP8 ADP8 EP8 MTP3"``, with the layout note when the row's columns
    needed reading."""
    eng = spec["engine"]
    pool = eng["workers"]["aggregated"]
    t = eng.get("trtllm") or {}
    lay = Layout(pool["tp"], bool(t.get("enable_attention_dp")), bool(pool.get("enable_expert_parallel")),
                 moe_ep=t.get("moe_expert_parallel_size", 0))
    s = lay.text()
    mtp = (t.get("speculative_config") or {}).get("num_nextn_predict_layers")
    if mtp:
        s += f" MTP{mtp}"
    note = ""
    try:
        note = layout(row, Path(eng["model"])).note
    except ValueError:
        pass
    return f"{s} ({note})" if note else s


def recipe_of(row: dict[str, str], measured: datetime) -> str:
    """Where a TensorRT-LLM InferenceX row's options come from (``file@commits``), ""
    when no recipe is tabulated (or the row's layout cannot be read)."""
    try:
        variant = variant_of(row, layout_from_columns(row))
    except ValueError:
        return ""
    return recipe_at(row.get("model_path", "").strip(), row.get("system", "").strip(), measured, variant)[2]


def layout_from_columns(row: dict[str, str]) -> Layout:
    """The attention-DP part of a row's layout, from its columns alone (no model
    config: what variant_of needs)."""
    return Layout(_int(row, "tp_size"), max(_int(row, "attention_dp_size", 0), 1) > 1, False)
