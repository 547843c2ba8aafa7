"""A deployment's launch commands in its engine's own words: ``vllm serve`` (vLLM's
``vllm/engine/arg_utils.py`` flags), ``trtllm-serve`` (TensorRT-LLM's
``tensorrt_llm/commands/serve.py`` flags and its ``--extra_llm_api_options`` YAML of LLM
API options), ``python -m sglang.launch_server`` (SGLang's ``server_args.py``).

:func:`launch_commands` reads a candidate's canonical spec (``Spec.data``) and gives one
entry per pool: how many workers run it, and the command of one worker. A setting the
spec leaves at the engine's default is left out of the command, except the ones the search
chooses (the parallel sizes and the batch limits), which are always given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["launch_commands"]

#: vLLM's defaults of the settings a command leaves out when the spec has them
#: (vllm/engine/arg_utils.py EngineArgs): gpu_memory_utilization 0.9, block_size 16.
_VLLM_DEFAULTS = {"gpu_memory_utilization": 0.9, "block_size": 16}

#: vLLM's KV connector for P/D (NixlConnector, the connector aisimulate's P/D models:
#: docs/design.md, "P/D disaggregation"), on both roles.
_NIXL = json.dumps({"kv_connector": "NixlConnector", "kv_role": "kv_both"}, separators=(",", ":"))


def _quote(s: str) -> str:
    return s if s and all(c.isalnum() or c in "-_./:=,@+" for c in s) else "'" + s.replace("'", "'\\''") + "'"


def _pools(engine: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    w = engine.get("workers") or {}
    if w.get("disaggregated"):
        d = w["disaggregated"]
        return [("prefill", d["prefill"]), ("decode", d["decode"])]
    return [("aggregated", w.get("aggregated") or {"count": 1, "tp": 1})]


def _vllm(engine: Mapping[str, Any], role: str, pool: Mapping[str, Any]) -> list[str]:
    sc = dict(engine.get("scheduler") or {})
    sc.update(pool.get("scheduler") or {})  # the pool's servers' own batch limits
    q = engine.get("quantization") or {}
    args = ["vllm", "serve", engine["model"], "--tensor-parallel-size", str(pool.get("tp", 1))]
    dp = pool.get("data_parallel_size") or 1
    if dp > 1:
        args += ["--data-parallel-size", str(dp)]
    if pool.get("enable_expert_parallel"):
        args += ["--enable-expert-parallel"]
    args += ["--max-num-seqs", str(sc.get("max_num_seqs")), "--max-num-batched-tokens",
             str(sc.get("max_num_batched_tokens"))]
    if q.get("weights"):
        args += ["--quantization", "fp8" if q["weights"] in ("fp8", "fp8_block") else str(q["weights"])]
    if q.get("kv_cache") and q["kv_cache"] not in ("auto",):
        args += ["--kv-cache-dtype", "fp8" if q["kv_cache"] in ("fp8", "fp8_e4m3") else str(q["kv_cache"])]
    for key, flag in (("gpu_memory_utilization", "--gpu-memory-utilization"), ("block_size", "--block-size")):
        if key in sc and sc[key] != _VLLM_DEFAULTS[key]:
            args += [flag, f"{sc[key]:g}" if isinstance(sc[key], float) else str(sc[key])]
    if sc.get("max_model_len"):
        args += ["--max-model-len", str(sc["max_model_len"])]
    if sc.get("enable_prefix_caching") is False:
        args += ["--no-enable-prefix-caching"]
    if "async_scheduling" in sc:
        args += ["--async-scheduling" if sc["async_scheduling"] else "--no-async-scheduling"]
    if pool.get("all2all_backend"):
        args += ["--all2all-backend", pool["all2all_backend"]]
    if role != "aggregated":
        args += ["--kv-transfer-config", _NIXL]
    return args


def _trtllm(engine: Mapping[str, Any], role: str, pool: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    t = dict(engine.get("trtllm") or {})
    t.update(pool.get("trtllm") or {})
    q = engine.get("quantization") or {}
    tp = pool.get("tp", 1)
    ep = tp if pool.get("enable_expert_parallel") else 1
    args = ["trtllm-serve", engine["model"], "--backend", "pytorch", "--tp_size", str(tp), "--ep_size", str(ep),
            "--max_batch_size", str(t.get("max_batch_size")), "--max_num_tokens", str(t.get("max_num_tokens"))]
    kv = t.get("kv_cache_config") or {}
    if kv.get("free_gpu_memory_fraction") is not None:
        args += ["--kv_cache_free_gpu_memory_fraction", f"{kv['free_gpu_memory_fraction']:g}"]
    if t.get("max_seq_len"):
        args += ["--max_seq_len", str(t["max_seq_len"])]
    extra: dict[str, Any] = {}
    if t.get("enable_attention_dp"):
        extra["enable_attention_dp"] = True
    if q.get("kv_cache") in ("fp8", "fp8_e4m3"):
        extra.setdefault("kv_cache_config", {})["dtype"] = "fp8"
    if kv.get("enable_block_reuse") is False:
        extra.setdefault("kv_cache_config", {})["enable_block_reuse"] = False
    if t.get("disable_overlap_scheduler"):
        extra["disable_overlap_scheduler"] = True
    if role != "aggregated":
        extra["cache_transceiver_config"] = {"backend": "DEFAULT"}
    if extra:
        args += ["--extra_llm_api_options", f"{role}.yaml"]
    return args, extra


def _sglang(engine: Mapping[str, Any], role: str, pool: Mapping[str, Any]) -> list[str]:
    g = dict(engine.get("sglang") or {})
    g.update(pool.get("sglang") or {})
    q = engine.get("quantization") or {}
    args = ["python", "-m", "sglang.launch_server", "--model-path", engine["model"], "--tp", str(pool.get("tp", 1))]
    dp = pool.get("data_parallel_size") or 1
    if dp > 1:
        args += ["--dp", str(dp), "--enable-dp-attention"]
    if pool.get("enable_expert_parallel"):
        args += ["--ep-size", str(pool.get("tp", 1) * dp)]
    args += ["--max-running-requests", str(g.get("max_running_requests")),
             "--chunked-prefill-size", str(g.get("chunked_prefill_size"))]
    if q.get("weights"):
        args += ["--quantization", "fp8" if q["weights"] in ("fp8", "fp8_block") else str(q["weights"])]
    if q.get("kv_cache") in ("fp8", "fp8_e4m3"):
        args += ["--kv-cache-dtype", "fp8_e4m3"]
    if g.get("mem_fraction_static"):
        args += ["--mem-fraction-static", f"{g['mem_fraction_static']:g}"]
    for key in ("moe_a2a_backend", "deepep_mode"):
        if g.get(key):
            args += ["--" + key.replace("_", "-"), str(g[key])]
    if role != "aggregated":
        args += ["--disaggregation-mode", role]
    return args


def launch_commands(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The launch commands of a deployment's canonical spec, one per pool.

    Returns:
        ``[{"pool", "workers", "gpus_per_worker", "argv", "command", "options"}]``:
        ``argv`` one worker's command as a list, ``command`` the same as one shell
        line, ``options`` the TensorRT-LLM LLM API options its
        ``--extra_llm_api_options`` file holds (``{}`` for the other engines).
    """
    engine = spec["engine"]
    backend = engine.get("backend", "vllm")
    out = []
    for role, pool in _pools(engine):
        extra: dict[str, Any] = {}
        if backend == "trtllm":
            argv, extra = _trtllm(engine, role, pool)
        elif backend == "sglang":
            argv = _sglang(engine, role, pool)
        else:
            argv = _vllm(engine, role, pool)
        per = pool.get("tp", 1) * (pool.get("data_parallel_size") or 1)
        out.append({"pool": role, "workers": pool.get("count", 1), "gpus_per_worker": per, "argv": argv,
                    "command": " ".join(_quote(a) for a in argv), "options": extra})
    return out
