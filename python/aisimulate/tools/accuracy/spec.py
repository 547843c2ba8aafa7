"""How one silicon row becomes a replay spec: deployments, clients, the measured window."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import campaigns, disagg, trtllm, vllm_recipes
from .paths import DEFAULT_DATABASE, DEFAULT_MODEL_CONFIGS, SHARED_DATA  # noqa: F401 (re-exported)
from ..vllm_defaults import BUILD_FROM_MAIN, api_server_count_default, async_default, shared_loop_default, version_tuple
from .rows import _int


#: Fewest requests a row's means are taken over (small concurrencies run more waves).
MIN_MEASURED = 64
#: Deployments a row can be simulated under (see the module docstring).
DEPLOYMENTS = ("aic-generator", "aic-generator-0.7", "vllm-defaults")
#: AIConfigurator's generator rule for vLLM aggregated workers
#: (generator/rule_plugin/vllm.rule): max_num_batched_tokens = max_batch_size + ISL + 1500.
#: In aiconfigurator 0.5.0 (the release of vLLM 0.12.0's time) max_batch_size is the
#: worker's batch size, the row's ``batch_size``; from 0.7.0 it is lifted to at least
#: 512, and max_model_len = ISL + OSL + 1500 is set too.
AIC_GENERATOR_TOKEN_SLACK = 1500
AIC_GENERATOR_07_MAX_NUM_SEQS = 512
#: vLLM's limits for an OpenAI API server on a GPU with ≥ 70 GiB (H100/H200):
#: 8192 batched tokens; max_num_seqs 256 (the spec's default before it followed vLLM's
#: per-GPU rule, 1024 on these GPUs), raised to c.
VLLM_API_SERVER_MAX_NUM_BATCHED_TOKENS = 8192
VLLM_DEFAULT_MAX_NUM_SEQS = 256
#: Client models a row can be simulated with (see the module docstring).
CLIENTS = ("aiperf", "none")
#: vLLM's OpenAI front end turns a chat request into engine input before the engine
#: core sees it: body parsing and validation, the chat template, tokenization, input
#: checks, and the engine core's prefix-cache block hashes, all proportional to the
#: prompt. Tokenization alone is ~1 µs a token on a DGX H100's CPU (vLLM issue 19012:
#: "about 1k tokens/ms" at concurrency 1; 10.7 ms for 10,000 tokens), and the rest of the
#: path is of the same order, so 2 µs per prompt token (8 ms at 4,096 tokens, 2 ms at
#: 1,024); concurrent requests are tokenized in one batch (vLLM pull request 19334), so
#: they do not queue. docs/accuracy.md, "What spreads requests, and what does not", has
#: what it does to the dev rows.
API_SERVER_INPUT_US_PER_TOKEN = 2.0
#: vLLM's API server handles every running request's output each step (the
#: output_handler's process_outputs: detokenization and the RequestOutput; then the
#: request's SSE chunk): 29 µs per request and step, the host path's cost per streamed
#: token where it bounded a run (vllm-project/vllm pull request 27869: gpt-oss-20b on one
#: B200, 1,024 concurrent streams, 34,079 output tokens/s at --stream-interval 1, 57 %
#: more with 10: 1 s / 34,079 = 29.3 µs). docs/accuracy.md, "The path to the first token".
API_SERVER_OUTPUT_US_PER_REQUEST = 29.0
#: The reference client path of docs/design.md ("The client path": one public AIPerf calibration at
#: concurrency 1): send leg 0.255 ms; response overhead 1.40 ms + 3.65 µs per output
#: token; the API server's output handling 152 µs per pass at one request (the
#: calibration's 150 µs + 2 µs per token), of which :data:`API_SERVER_OUTPUT_US_PER_REQUEST`
#: per request of the pass and the rest per pass; and the front end's input processing,
#: :data:`API_SERVER_INPUT_US_PER_TOKEN` per prompt token, on the same event loop for a
#: V1 engine (``shared_event_loop``, set by the row's version).
AIPERF_CLIENT = {
    "tokenization": {"send_ms": 0.255, "per_token_us": API_SERVER_INPUT_US_PER_TOKEN},
    "detokenization": {"base_us": 152.0 - API_SERVER_OUTPUT_US_PER_REQUEST,
                       "per_token_us": API_SERVER_OUTPUT_US_PER_REQUEST},
    "response_overhead": {"base_ms": 1.40, "per_output_token_us": 3.65},
}
#: How a load generator picks its next dataset entry (``dataset_entries`` > 0):
#: AIPerf's --dataset-sampling-strategy values; shuffle is its choice for synthetic data.
SAMPLINGS = ("shuffle", "sequential", "random")
#: Most dataset entries a spec takes (the core's ``traffic.source.dataset.entries`` bound).
MAX_DATASET_ENTRIES = 1_000_000
#: Most measured waves (large concurrencies already average over many requests).
MAX_WAVES = 8


@dataclass(frozen=True)
class LoadGenerator:
    """How a load generator ran a closed-loop row at concurrency c: ``warmup``·c
    warm-up requests whose responses it waits for, then ``requests``·c measured
    requests, all clients starting together, drawing prompts from a dataset of
    ``entries(c)`` entries (0: a prompt of its own per request, prefix caching off;
    otherwise AIPerf's shuffled sampling and vLLM's default prefix caching)."""
    warmup: int
    requests: int
    entries: Callable[[int], int]
    doc: str


#: AIConfigurator's benchmark generator runs AIPerf with ``--concurrency c
#: --request-count 20·c``, fixed synthetic ISL/OSL, ``ignore_eos``, streaming chat
#: completions, seed 100: its cluster workflow with ``--warmup-request-count c
#: --num-dataset-entries 20·c`` ("aiperf"), its bare-metal script with 2·c warm-up
#: requests and AIPerf's default dataset of 100 entries ("aiperf-baremetal"). AIPerf
#: waits for every warm-up response before profiling (its warm-up guide, "Grace
#: Period") and keeps one dataset sampler across both phases, so the profiling phase
#: continues the warm-up's shuffled pass over the entries. "genai-perf" is the
#: earlier evaluation (``eval/benchmarks/genai_perf_runner.py``: 10·c requests, 12·c
#: entries — every prompt new), simulated from an idle engine.
LOAD_GENERATORS = {
    "aiperf": LoadGenerator(1, 20, lambda c: 20 * c, "AIPerf, AIConfigurator's cluster workflow"),
    "aiperf-baremetal": LoadGenerator(2, 20, lambda c: 100, "AIPerf, AIConfigurator's bare-metal script"),
    "genai-perf": LoadGenerator(0, 10, lambda c: 0, "genai-perf, AIConfigurator's earlier evaluation"),
}
#: The procedure of each row's campaign (campaigns.campaign_of): AIConfigurator's rows
#: and rows of no recorded campaign run "aiperf", InferenceX's rows "inferencex".
CAMPAIGN = "campaign"
#: InferenceX's client against its recipe's server (campaigns.inferencex_benchmark,
#: campaigns.recipe_at).
INFERENCEX = "inferencex"
#: --load-generator's values: the campaign's procedure per row (default), or one
#: procedure for every row (an override, for experiments).
PROCEDURES = (CAMPAIGN, *LOAD_GENERATORS, INFERENCEX)
DEFAULT_LOAD_GENERATOR = CAMPAIGN
#: The procedure a campaign's rows get under the default.
CAMPAIGN_PROCEDURE = {campaigns.AICONFIGURATOR: "aiperf", campaigns.INFERENCEX: INFERENCEX,
                      campaigns.UNKNOWN: "aiperf"}


def procedure_of(row: dict[str, str], load_generator: str = DEFAULT_LOAD_GENERATOR) -> tuple[str, campaigns.Campaign]:
    """The procedure a row is simulated with (a key of :data:`LOAD_GENERATORS`, or
    ``"inferencex"``) and its campaign: under ``"campaign"`` the campaign's
    (:data:`CAMPAIGN_PROCEDURE`), otherwise ``load_generator`` itself.

    Raises:
        ValueError: ``load_generator`` is not one of :data:`PROCEDURES`."""
    if load_generator not in PROCEDURES:
        raise ValueError(f"load_generator {load_generator!r}: want one of {', '.join(PROCEDURES)}")
    camp = campaigns.campaign_of(row)
    if load_generator == CAMPAIGN:
        return CAMPAIGN_PROCEDURE[camp.name], camp
    return load_generator, camp


def _waves(concurrency: int) -> int:
    return max(1, min(MAX_WAVES, math.ceil(MIN_MEASURED / concurrency)))


@dataclass(frozen=True)
class Checkpoint:
    """A quantized release that a recipe serves (its ``--model-path``) when the shared data
    holds no config.json of it, only that of the release the silicon rows name: its
    architecture is that config's, its ``quantization_config`` the one given here (the
    field as the release's config.json spells it), ``source`` where its values are stated.
    The spec builder reads the weight format from it as from a config file's
    (:func:`_weights_for` with ``quant``); the replay prices the model of the row's
    config with those weights (``engine.quantization.weights``)."""
    name: str
    quantization_config: dict[str, Any]
    source: str


def _checkpoint_quant(config_path: str) -> dict[str, Any]:
    """The checkpoint's quantization_config (a multimodal one's in text_config), {} if none."""
    import json
    with open(config_path, encoding="utf-8") as f:
        top = json.load(f)
    return top.get("quantization_config") or (top.get("text_config") or {}).get("quantization_config") or {}


def _checkpoint_4bit(q: dict[str, Any]) -> str:
    """``"int"`` or ``"float"`` when the checkpoint stores 4-bit weights of that type
    (compressed-tensors int4, gpt-oss's mxfp4, ModelOpt NVFP4), else ``""``."""
    if q.get("quant_method") == "mxfp4" or q.get("quant_algo") == "NVFP4":
        return "float"
    for g in (q.get("config_groups") or {}).values():
        w = (g or {}).get("weights") or {}
        if w.get("num_bits") == 4:
            return str(w.get("type") or "")
    return ""


def _fp4_experts(config_path: str) -> bool:
    """Whether the checkpoint's experts are 4-bit floats by its own field: DeepSeek-V4's
    ``expert_dtype: "fp4"`` beside an fp8 ``quantization_config`` (MXFP4 experts, fp8
    linear layers, as vLLM's DeepseekV4FP8Config loads them)."""
    import json
    with open(config_path, encoding="utf-8") as f:
        return json.load(f).get("expert_dtype") == "fp4"


def _weights_for(precision: str, config_path: str, quant: dict[str, Any] | None = None) -> str | None:
    """Spec weight format for a silicon ``precision`` (None: the checkpoint's), the
    checkpoint's quantization_config being ``quant`` when given (a :class:`Checkpoint`'s,
    served on ``config_path``'s architecture), else ``config_path``'s own.

    ``int4`` (Kimi-K2.5's native INT4 experts) is the checkpoint's own format and needs a
    checkpoint that stores int4 weights; ``fp4``/``nvfp4``/``mxfp4`` on a checkpoint that
    stores 4-bit float weights (gpt-oss's MXFP4 experts, a ModelOpt NVFP4 release,
    DeepSeek-V4's fp4 experts, whose fp8 rows are that checkpoint too) is the checkpoint's too (its bf16 attention stays bf16, as vLLM serves it), else NVFP4 for
    every linear layer."""
    p = precision.strip().lower()
    checkpoint = (lambda: quant) if quant is not None else (lambda: _checkpoint_quant(config_path))
    if p in ("", "bf16", "bfloat16", "fp16", "float16"):
        return None if p == "" else "bf16"
    if p == "fp8":
        if _fp4_experts(config_path):
            return None  # DeepSeek-V4's fp8 release: fp8_block linears beside its fp4 experts
        q = checkpoint()
        if q.get("quant_method") == "fp8" and q.get("weight_block_size"):
            return "fp8_block"
        return "fp8"
    if p == "fp8_block":
        return "fp8_block"
    if p in ("int4", "int4_wo", "w4a16"):
        if _checkpoint_4bit(checkpoint()) != "int":
            raise ValueError(f"precision {precision!r}: the checkpoint {Path(config_path).name} stores no int4 weights")
        return None
    if p in ("fp4", "nvfp4", "mxfp4"):
        if _checkpoint_4bit(checkpoint()) == "float" or _fp4_experts(config_path):
            return None
        return "nvfp4"
    raise ValueError(f"precision {precision!r} is not supported (empty, bf16, fp8, fp8_block, int4, fp4, nvfp4, mxfp4)")


def row_spec(row: dict[str, str], *, perf: str, aliases: dict[str, str],
             model_configs: str | os.PathLike[str], database: str | os.PathLike[str],
             perf_overrides: dict[str, Any] | None = None,
             length_ratio: float = 1.0, steady_state: bool = False,
             deployment: str = "aic-generator",
             client: str = "aiperf", dataset_entries: int = 0,
             sampling: str = "shuffle",
             load_generator: str = DEFAULT_LOAD_GENERATOR) -> tuple[dict[str, Any], int, int]:
    """The replay spec of one silicon row, with the number of requests sent first and
    not measured (0 in the benchmark window) and the number measured after them.

    ``dataset_entries`` = 0 (default): every request has a prompt of its own and
    prefix caching is off (the rows' "no prefix reuse"). N > 0: the load generator
    sends N distinct prompts again and again, picked by ``sampling``, to an engine
    with prefix caching on (vLLM's default), as AIPerf and genai-perf do unless told
    otherwise (100 entries by default).

    Returns:
        (spec dict, warm-up requests, measured requests).

    Raises:
        ValueError: the row cannot be simulated (the message is the skip reason).
    """
    if (row.get("backend") or "vllm").strip() == "sglang":  # its own deployments (sglang.py)
        from .sglang import sglang_row_spec
        return sglang_row_spec(row, str(model_config(row, aliases, model_configs)), perf=perf,
                               database=str(database), perf_overrides=perf_overrides)
    procedure, camp = procedure_of(row, load_generator)
    if (row.get("backend") or "").strip() == "trtllm" and (row.get("mode") or "").strip() == "disagg":
        return _trtllm_disagg_spec(row, procedure, perf=perf, aliases=aliases, model_configs=model_configs,
                                   database=database, perf_overrides=perf_overrides, length_ratio=length_ratio,
                                   client=client)
    if procedure == INFERENCEX:
        return _inferencex_spec(row, camp, perf=perf, aliases=aliases, model_configs=model_configs,
                                database=database, perf_overrides=perf_overrides, length_ratio=length_ratio,
                                steady_state=steady_state, client=client, dataset_entries=dataset_entries)
    b = _row_basics(row, perf=perf, aliases=aliases, model_configs=model_configs, database=database,
                    perf_overrides=perf_overrides, tables_of_row=True)
    config, c, tp, isl, osl = b["config"], b["c"], b["tp"], b["isl"], b["osl"]
    dp, ep, weights, perf_block, backend = b["dp"], b["ep"], b["weights"], b["perf"], b["backend"]
    sides = b["sides"]
    _check_deployment(deployment)
    _check_client(client)
    _check_dataset(dataset_entries, sampling)
    gen = _load_generator(procedure)
    entries = dataset_entries if dataset_entries > 0 or steady_state else gen.entries(c)
    scheduler: dict[str, Any] = {"enable_prefix_caching": entries > 0}
    version = (row.get("backend_version") or "").strip()
    if version and async_default(version):
        scheduler["async_scheduling"] = True  # vLLM's default from 0.14.0
    if sides and deployment == "aic-generator":
        # AIConfigurator's vLLM P/D servers (generator/rule_plugin/vllm.rule): the
        # prefill server's max_num_batched_tokens ISL + 1500, the decode server's
        # max_num_seqs its batch size; one engine.scheduler holds both here
        scheduler.update(max_num_seqs=sides[1].batch_size or c, max_num_batched_tokens=isl + AIC_GENERATOR_TOKEN_SLACK)
    elif deployment == "aic-generator":
        scheduler.update(max_num_seqs=c, max_num_batched_tokens=c + isl + AIC_GENERATOR_TOKEN_SLACK)
    elif deployment == "aic-generator-0.7":
        seqs = max(AIC_GENERATOR_07_MAX_NUM_SEQS, c)
        scheduler.update(max_num_seqs=seqs, max_num_batched_tokens=seqs + isl + AIC_GENERATOR_TOKEN_SLACK,
                         max_model_len=isl + osl + AIC_GENERATOR_TOKEN_SLACK)
    else:
        scheduler.update(max_num_seqs=max(VLLM_DEFAULT_MAX_NUM_SEQS, c),
                         max_num_batched_tokens=VLLM_API_SERVER_MAX_NUM_BATCHED_TOKENS)
    engine: dict[str, Any] = {
        "model": str(config),
        "system": row["system"].strip(),
        "backend": backend,
        "perf": perf_block,
        "workers": disagg.workers_block(*sides) if sides else {"aggregated": _pool(tp, dp, ep)},
        "scheduler": scheduler,
    }
    if b["engine_version"] and backend == "vllm":
        engine["backend_version"] = b["engine_version"]
    if backend == "trtllm":
        # AIConfigurator's generator launching trtllm-serve (trtllm.aic_generator);
        # its batch size is one attention rank's
        lay = b["trtllm_layout"]
        del engine["scheduler"]
        per_rank = c // lay.tp if lay.attention_dp else c
        engine["trtllm"] = trtllm.aic_generator(per_rank, isl, trtllm.measured_at(row), lay)
        version = trtllm.release_of(version, row.get("silicon_data_source") or "")
        if version:
            engine["backend_version"] = version
    # fp8 and fp4 serving quantize the KV cache too: NVIDIA's FP8 and NVFP4
    # checkpoints carry an fp8 KV scale (kv_cache_quant_algo FP8), and the measured
    # fp8 TPOTs sit below the bf16-KV memory bound. An empty precision serves the
    # checkpoint as it is: its calibrated KV format ("auto"), else bf16.
    if weights in ("fp8", "fp8_block", "nvfp4"):
        kv = "fp8"
    elif weights is None:
        kv = "auto"
    else:
        kv = "bf16"
    quant: dict[str, str] = {"kv_cache": kv}
    if weights:
        quant["weights"] = weights
    if backend == "trtllm":
        quant = trtllm.checkpoint_quantization(quant, Path(config))
    engine["quantization"] = quant
    load: dict[str, Any] = {"mode": "concurrency", "concurrency": c}
    if client == "aiperf":
        engine["tokenization"] = dict(AIPERF_CLIENT["tokenization"])
        engine["detokenization"] = dict(AIPERF_CLIENT["detokenization"])
        load["response_overhead"] = dict(AIPERF_CLIENT["response_overhead"])
        if backend == "vllm" and version and shared_loop_default(version):  # the V1 API server's one event loop
            engine["tokenization"]["shared_event_loop"] = True  # (trtllm-serve's: the core's default)
            if dp > 1 and "aggregated" in engine["workers"]:  # one API server for all ranks before 0.15.0
                engine["workers"]["aggregated"]["api_server_count"] = api_server_count_default(version, dp)
    if steady_state:
        waves = _waves(c)
        warm, measured, total = c, waves * c, c * (waves + 2)
    else:
        # the warm-up requests run first, besides the measured ones, and are not
        # reported (warm = 0 here): AIPerf's --warmup-request-count W --request-count N
        warm, measured = 0, c * gen.requests
        total = measured
        if gen.warmup:
            load["warmup_requests"] = c * gen.warmup
    source: dict[str, Any] = {"type": "synthetic", "num_requests": total,
                              "isl": _lengths(isl, length_ratio), "osl": _lengths(osl, length_ratio)}
    if entries > 0:
        source["dataset"] = {"entries": entries, "sampling": sampling}
    spec = {
        "engine": engine,
        "traffic": {"source": source, "load": load},
        "execution": {"mode": "offline", "seed": 1},
    }
    return spec, warm, measured


def _load_generator(name: str) -> LoadGenerator:
    if name not in LOAD_GENERATORS:
        raise ValueError(f"load_generator {name!r}: want one of {', '.join(PROCEDURES)}")
    return LOAD_GENERATORS[name]


def model_config(row: dict[str, str], aliases: dict[str, str], model_configs: str | os.PathLike[str]) -> Path:
    """The config.json of a row's model: the file ``model_aliases.csv`` names for its
    ``model_path``, else ``Org--Name_config.json`` in ``model_configs`` (ValueError:
    the skip reason)."""
    model_path = row["model_path"].strip()
    if model_path in aliases:
        config = Path(model_configs) / aliases[model_path]
        if not config.is_file():
            raise ValueError(f"model config {config} not found")
        return config
    config = Path(model_configs) / (model_path.replace("/", "--") + "_config.json")
    if not config.is_file():
        raise ValueError(f"unknown model {model_path!r} (not in model_aliases.csv, "
                         f"and no {config.name} in {model_configs})")
    return config


def _row_basics(row: dict[str, str], *, perf: str, aliases: dict[str, str],
                model_configs: str | os.PathLike[str], database: str | os.PathLike[str],
                perf_overrides: dict[str, Any] | None, tables_of_row: bool = False) -> dict[str, Any]:
    """What every procedure reads from a row: the model config, c, TP, ISL, OSL, the
    layout (a P/D row's two sides, :mod:`.disagg`, in ``sides``; ``None`` for an
    aggregated row), the weight format and the perf block (ValueError: the skip reason). With
    ``tables_of_row`` the aic block names the row's ``backend_version`` for its tables
    (the AIPerf procedures; InferenceX's take them from ``engine.backend_version``)."""
    mode = (row.get("mode") or "agg").strip()
    if mode not in ("agg", "disagg"):
        raise ValueError(f"mode {mode!r}: want agg or disagg")
    if mode == "agg" and _int(row, "pp_size", 1) > 1:
        raise ValueError(f"pp_size = {row['pp_size']}: not simulated (pipeline parallelism)")
    backend = (row.get("backend") or "vllm").strip()
    if backend not in ("vllm", "trtllm"):
        raise ValueError(f"backend {backend!r}: only vllm and trtllm are simulated")
    model_path = row["model_path"].strip()
    config = model_config(row, aliases, model_configs)
    sides = None
    if mode == "disagg" and backend == "trtllm":
        raise ValueError("mode 'disagg': TensorRT-LLM's P/D rows take their recipes' path (row_spec, trtllm_disagg.py)")
    if mode == "disagg":  # the P/D reader (disagg.py): the decode side's TP in the row's tp column
        sides = disagg.sides_of(row, str(config))
        c, tp = disagg.concurrency_of(row), sides[1].tp
    else:
        c, tp = _int(row, "batch_size"), _int(row, "tp_size")
    isl, osl = _int(row, "isl"), _int(row, "osl")
    if min(c, tp, isl, osl) < 1:
        raise ValueError("batch_size, tp_size, isl and osl must be ≥ 1")
    lay = None
    if backend == "trtllm" and not sides:
        # TensorRT-LLM's layout (tp_size: every GPU, attention DP over them) and the
        # closed loop's concurrency (batch_size is one attention rank's)
        lay = trtllm.layout(row, config)
        dp, ep, tp, c = 1, lay.ep, lay.tp, trtllm.silicon_concurrency(row)
    elif sides:
        dp, ep = 1, False
    else:
        dp, ep, _ = row_layout(row, str(config))
    if osl < 2:
        raise ValueError(f"osl = {osl}: a TPOT needs at least 2 output tokens")
    weights = _weights_for(row.get("precision") or "", str(config))
    perf_block: dict[str, Any] = {"source": perf}
    engine_version = ""
    if perf == "aic":
        perf_block["database"] = str(database)
        version = (row.get("backend_version") or "").strip()
        if version and tables_of_row:
            if _from_main(version):
                # the tables field names a release; the engine's field reads a build
                # from main as the newest release known, and its tables follow it
                engine_version = version
            else:  # an image tag's v0.20.0 is release 0.20.0
                perf_block["backend_version"] = version[1:] if version[:2] in ("v0", "v1", "V0", "V1") else version
    perf_block.update(perf_overrides or {})
    return dict(model_path=model_path, config=config, c=c, tp=tp, isl=isl, osl=osl, dp=dp, ep=ep,
                weights=weights, perf=perf_block, backend=backend, trtllm_layout=lay, sides=sides,
                engine_version=engine_version)


def _from_main(version: str) -> bool:
    """Whether a row's version names a build from main (vllm_defaults.BUILD_FROM_MAIN)."""
    try:
        return version_tuple(version) == BUILD_FROM_MAIN
    except ValueError:
        return False


def _quantization(weights: str | None) -> dict[str, str]:
    """engine.quantization for a row's weight format (row_spec's rule)."""
    kv = "fp8" if weights in ("fp8", "fp8_block", "nvfp4") else "auto" if weights is None else "bf16"
    quant = {"kv_cache": kv}
    if weights:
        quant["weights"] = weights
    return quant


def _is_moe(config: Path) -> bool:
    """Whether a config.json (its text_config when it has one) is a mixture of experts:
    the expert count under any of its families' names (Qwen's ``num_experts``, Mixtral's,
    Llama 4's and MiniMax's ``num_local_experts``, DeepSeek's, Kimi's, GLM's and
    Nemotron-H's ``n_routed_experts``)."""
    import json
    with open(config, encoding="utf-8") as f:
        top = json.load(f)
    cfg = top.get("text_config") or top
    return any(k in cfg for k in ("num_experts", "num_local_experts", "n_routed_experts"))


def _inferencex_spec(row: dict[str, str], camp: campaigns.Campaign, *, perf: str, aliases: dict[str, str],
                     model_configs: str | os.PathLike[str], database: str | os.PathLike[str],
                     perf_overrides: dict[str, Any] | None, length_ratio: float, steady_state: bool,
                     client: str, dataset_entries: int) -> tuple[dict[str, Any], int, int]:
    """A row as InferenceX measured it (campaigns module docstring): its client
    (``traffic.benchmark`` vllm_bench_serve, variant inferencex, at the row's date)
    against the server its recipe launched then, on the row's vLLM release
    (``engine.backend_version``: that release's defaults where the recipe is silent).
    All 10·c requests are measured (the warm-ups are not reported)."""
    if steady_state:
        raise ValueError("--steady-state applies to the AIPerf procedures, not InferenceX's client")
    if dataset_entries:
        raise ValueError("--dataset-entries applies to the AIPerf procedures: InferenceX's prompts are random token ids")
    _check_client(client)
    b = _row_basics(row, perf=perf, aliases=aliases, model_configs=model_configs, database=database,
                    perf_overrides=perf_overrides)
    c, isl, osl = b["c"], b["isl"], b["osl"]
    # a row without a time (an explicit --load-generator inferencex on another
    # campaign's row) runs the current client against the version's defaults
    measured = camp.measured or campaigns.INFERENCEX_WARMUPS_SINCE
    if b["backend"] == "trtllm":
        return _inferencex_trtllm(row, b, camp, measured, length_ratio, client)
    flags, _ = vllm_recipes.recipe_of(row, measured) if camp.measured else ({}, "")
    ep = b["ep"] or bool(flags.get("enable_expert_parallel")) and _is_moe(b["config"])
    engine: dict[str, Any] = {
        "model": str(b["config"]),
        "system": row["system"].strip(),
        "backend": b["backend"],
        "perf": b["perf"],
        "workers": disagg.workers_block(*b["sides"]) if b["sides"] else {"aggregated": _pool(b["tp"], b["dp"], ep)},
        "scheduler": {},
        "quantization": _quantization(b["weights"]),
    }
    version = (row.get("backend_version") or "").strip()
    if version:
        engine["backend_version"] = version
    campaigns.apply_recipe(engine, flags, isl, osl, c)
    return inferencex_run(engine, isl, osl, c, measured, length_ratio, client)


def inferencex_run(engine: dict[str, Any], isl: int, osl: int, c: int, measured: Any, length_ratio: float,
                   client: str) -> tuple[dict[str, Any], int, int]:
    """The spec of ``engine`` under InferenceX's client at concurrency ``c`` measured
    then (all of its 10·c requests measured; the warm-ups are not reported), with the
    reference client path for ``client`` aiperf (no calibration of this client's own)."""
    bench = campaigns.inferencex_benchmark(isl, osl, c, measured)
    if length_ratio < 1:
        bench["random_range_ratio"] = length_ratio
    if client == "aiperf":
        engine["tokenization"] = dict(AIPERF_CLIENT["tokenization"])
        engine["detokenization"] = dict(AIPERF_CLIENT["detokenization"])
        bench["response_overhead"] = dict(AIPERF_CLIENT["response_overhead"])
    spec = {"engine": engine, "traffic": {"benchmark": bench}, "execution": {"mode": "offline", "seed": 1}}
    return spec, 0, bench["num_prompts"]


def _inferencex_trtllm(row: dict[str, str], b: dict[str, Any], camp: campaigns.Campaign, measured: Any,
                       length_ratio: float, client: str) -> tuple[dict[str, Any], int, int]:
    """_inferencex_spec for a TensorRT-LLM row: the recipe's trtllm-serve options at the
    row's date (trtllm.RECIPES) on its image's release (the row's backend_version when it
    names one), the release's defaults where the recipe is silent."""
    c, isl, osl, lay = b["c"], b["isl"], b["osl"], b["trtllm_layout"]
    variant = trtllm.variant_of(row, lay)
    opts, image, _ = (trtllm.recipe_at(b["model_path"], row["system"].strip(), measured, variant)
                      if camp.measured else ({}, "", ""))
    options, kv = trtllm.recipe_options(opts, c, isl, lay, osl)
    quant = _quantization(b["weights"])
    if kv:
        quant["kv_cache"] = kv
    engine: dict[str, Any] = {
        "model": str(b["config"]), "system": row["system"].strip(), "backend": "trtllm", "perf": b["perf"],
        "workers": {"aggregated": _pool(lay.tp, 1, lay.ep)}, "trtllm": options, "quantization": quant,
    }
    src = row.get("silicon_data_source") or ""
    version = trtllm.release_of((row.get("backend_version") or "").strip(), src) or trtllm.release_of(image)
    if version:
        engine["backend_version"] = version
    return inferencex_run(engine, isl, osl, c, measured, length_ratio, client)


def _trtllm_disagg_spec(row: dict[str, str], procedure: str, *, perf: str, aliases: dict[str, str],
                        model_configs: str | os.PathLike[str], database: str | os.PathLike[str],
                        perf_overrides: dict[str, Any] | None, length_ratio: float,
                        client: str) -> tuple[dict[str, Any], int, int]:
    """A TensorRT-LLM P/D row: its srt-slurm recipe under InferenceX's client
    (trtllm_disagg)."""
    from . import trtllm_disagg

    if procedure != INFERENCEX:
        raise ValueError(f"TensorRT-LLM P/D rows are InferenceX's: load generator {procedure!r} does not apply")
    _check_client(client)
    config = model_config(row, aliases, model_configs)
    perf_block: dict[str, Any] = {"source": perf}
    if perf == "aic":
        perf_block["database"] = str(database)
    perf_block.update(perf_overrides or {})
    return trtllm_disagg.row_spec(row, str(config), perf_block=perf_block,
                                  weights=_weights_for(row.get("precision") or "", str(config)),
                                  client=client, length_ratio=length_ratio)


def _pool(tp: int, dp: int, ep: bool) -> dict[str, Any]:
    pool: dict[str, Any] = {"count": 1, "tp": tp}
    if dp > 1:
        pool["data_parallel_size"] = dp
    if ep:
        pool["enable_expert_parallel"] = True
    return pool


#: The fp8 weight block vLLM requires a block-quantized expert's per-GPU intermediate
#: size to be a multiple of (``Fp8MoEMethod.create_weights``).
FP8_WEIGHT_BLOCK = 128


def row_layout(row: dict[str, str], config_path: str) -> tuple[int, bool, str]:
    """The data-parallel size and expert parallelism of a row, in vLLM's terms.

    The silicon CSVs give AIConfigurator's layout: ``tp_size`` (attention TP),
    ``attention_dp_size`` (often empty), ``moe_tp_size`` and ``moe_ep_size``, with
    ``tp_size × attention_dp_size = moe_tp_size × moe_ep_size`` (every GPU of the
    instance holds a share of the experts). So an empty ``attention_dp_size`` is
    ``moe_tp × moe_ep / tp_size``. vLLM has two expert layouts over the TP × DP GPUs:
    ``--enable-expert-parallel`` (moe_ep = TP·DP, moe_tp = 1) or not (moe_tp = TP·DP,
    moe_ep = 1); any other combination is a layout vLLM cannot run and the row is
    skipped. Dense rows (no MoE columns) are TP only.

    One mapping: a row whose experts are fp8 block-quantized and whose stated
    moe_tp leaves a per-GPU expert width that is not a multiple of the 128-wide
    weight block is a layout vLLM refuses to start ("The output_size of gate's and
    up's weight = 192 is not divisible by weight quantization block_n = 128"); vLLM's
    recipes for those checkpoints serve that GPU count with
    ``--enable-expert-parallel`` (MiniMax-M2: "pure TP8 is not supported; use DP+EP
    or TP+EP"). Such a row was measured, so it ran the only way vLLM can: it is
    simulated with expert parallelism, and ``rows.csv``'s ``layout`` says so.

    Returns:
        (data_parallel_size, enable_expert_parallel, note): the note says when the
        expert-parallel mapping above was applied ("" otherwise).

    Raises:
        ValueError: a layout vLLM cannot run (the skip reason)."""
    import json
    with open(config_path, encoding="utf-8") as f:
        top = json.load(f)
    cfg = top.get("text_config") or top
    tp = _int(row, "tp_size")
    moe_tp, moe_ep = _int(row, "moe_tp_size", 0), _int(row, "moe_ep_size", 0)
    adp = _int(row, "attention_dp_size", 0)
    if not ("num_experts" in cfg or "num_local_experts" in cfg or "n_routed_experts" in cfg):
        # a dense model: the MoE columns (1 or 0 in the CSVs) say nothing
        return max(adp, 1), False, ""
    moe_tp, moe_ep = max(moe_tp, 1), max(moe_ep, 1)
    width = moe_tp * moe_ep
    if adp == 0:
        if width % tp:
            raise ValueError(f"moe_tp_size {moe_tp} × moe_ep_size {moe_ep} is not a multiple of tp_size {tp}")
        adp = width // tp
    if tp * adp != width:
        raise ValueError(f"tp_size {tp} × attention_dp_size {adp} ≠ moe_tp_size {moe_tp} × moe_ep_size {moe_ep}")
    if moe_tp > 1 and moe_ep > 1:
        raise ValueError(f"moe_tp_size {moe_tp} with moe_ep_size {moe_ep}: vLLM splits experts one way "
                         "(tensor or expert parallel), not both")
    ep, note = moe_ep > 1, ""
    if not ep and moe_tp > 1:
        q = top.get("quantization_config") or {}
        inter = cfg.get("moe_intermediate_size") or cfg.get("intermediate_size") or 0
        block = q.get("quant_method") == "fp8" and q.get("weight_block_size")
        if block and inter and (inter % moe_tp or (inter // moe_tp) % FP8_WEIGHT_BLOCK):
            ep = True
            note = (f"row's moe_tp {moe_tp} gives {inter}/{moe_tp} expert columns per GPU, not a multiple "
                    f"of the {FP8_WEIGHT_BLOCK}-wide fp8 block (vLLM refuses it): run as vLLM's recipe, expert parallel")
    return adp, ep, note


def layout_text(tp: int, dp: int, ep: bool) -> str:
    """``"TP4"``, ``"TP1 DP2"``, ``"TP8 EP8"``: a row's layout as simulated."""
    s = f"TP{tp}"
    if dp > 1:
        s += f" DP{dp}"
    if ep:
        s += f" EP{tp * dp}"
    return s


def _check_deployment(deployment: str) -> None:
    if deployment not in DEPLOYMENTS:
        raise ValueError(f"deployment {deployment!r}: want one of {', '.join(DEPLOYMENTS)}")


def _check_client(client: str) -> None:
    if client not in CLIENTS:
        raise ValueError(f"client {client!r}: want one of {', '.join(CLIENTS)}")


def _check_dataset(entries: int, sampling: str) -> None:
    if isinstance(entries, bool) or not isinstance(entries, int) or not 0 <= entries <= MAX_DATASET_ENTRIES:
        raise ValueError(f"dataset_entries {entries!r}: want an integer in [0, {MAX_DATASET_ENTRIES}] "
                         "(0 = every prompt new)")
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling {sampling!r}: want one of {', '.join(SAMPLINGS)}")


def _lengths(n: int, ratio: float) -> Any:
    """A token length for the synthetic source: ``n`` itself at ratio 1, else uniform
    integers in [⌊ratio·n⌋, n] (how benchmark generators such as vLLM's random dataset
    with a range ratio draw lengths)."""
    if ratio >= 1:
        return n
    return {"kind": "uniform", "min": max(1, int(n * ratio)), "max": n}
