"""The perf model as an API: the time of one engine step (a pass) and the memory plan of a
deployment, priced by the same model a replay of the spec would use.

>>> import aisimulate
>>> engine = {"model": "Qwen/Qwen3-32B", "system": "h100_sxm",
...           "workers": {"aggregated": {"count": 1, "tp": 2}}}
>>> t = aisimulate.step_time(engine, {"prefill": [(512, 1536)], "decode": [1024] * 32})
>>> t.time_ms, t.breakdown_ms["gemm"], t.perf_model
>>> aisimulate.memory_plan(engine)["aggregated"]["num_gpu_blocks"]

A batch is one pass as the engine forms it (``core/perf/perf.go``, ``perf.Batch``):

- ``prefill``: the prefill chunks, each ``(tokens, cached)`` or ``(tokens, cached,
  samples)`` or a mapping with those keys: ``tokens`` prompt tokens computed in this pass
  (≥ 1), after ``cached`` tokens already in the KV cache (the prefix-cache hit plus the
  prompt's earlier chunks); ``samples`` (default true) when the chunk completes its
  prompt, so that the pass samples its first output token (a chunk before a prompt's last
  does not);
- ``decode``: the context length of each decoding request, tokens already in its KV
  cache (the token being computed not counted: the decode that produces output token
  k ≥ 2 of a P-token prompt has P + k − 2);
- ``spec_tokens``, ``draft_steps``: speculative decoding (TensorRT-LLM's MTP, vLLM's and SGLang's EAGLE): draft
  tokens the decodes verify beyond their one each, and the draft model's steps.

A pass the engine would never form (more sequences than ``max_num_seqs``, more tokens
than its token budget ``max_num_batched_tokens``, a request longer than
``max_model_len``) is priced all the same, with an :class:`~aisimulate.EngineLimitWarning`
naming the batch, the limit and the value (:func:`_beyond_limits`).

For a worker whose data-parallel ranks run in lockstep (a mixture-of-experts model with
``data_parallel_size`` > 1), a batch stands for every rank's; a list of one batch per rank
prices the lockstep pass (the slowest rank, the MoE layers over every rank's tokens), with
no breakdown.

The perf source is the spec's ``engine.perf`` (``roofline``, ``aic``, ``linear``; docs/design.md,
"Perf models"); its model is built once per process for each spec (the ``aic`` kernel
tables load once per process) and kept for the next call.
"""

from __future__ import annotations

import numbers
import os
import re
from collections.abc import Mapping

from .errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any, Sequence

    from .config import Spec

__all__ = ["StepTime", "step_time", "step_times", "memory_plan"]

#: The traffic of a spec made from an ``engine`` mapping alone: the perf model reads the
#: engine only, but a spec needs a workload to compile.
_NO_TRAFFIC = {"source": {"type": "synthetic", "num_requests": 1, "isl": 1, "osl": 1},
               "load": {"mode": "concurrency", "concurrency": 1}}


class StepTime:
    """The priced time of one pass.

    Attributes:
        time_ns: the pass's duration, int ns, as the replay advances its clock (at least 1).
        time_ms: the same in ms.
        breakdown_ns: its parts by op family, float ns before rounding (``gemm``,
            ``context_attention``, ``generation_attention``, ``memory_ops`` (norms,
            activation, rotary), ``all_reduce``, ``embedding``, ``logits``, ``overhead``
            (the engine step's CPU work), ``kernel_latency``, ``experts`` (routed
            experts), ``dispatch`` (the MoE token all-gather / reduce-scatter or
            all-to-all), ``draft``), or ``None`` (a ``linear`` source, or a pass of several
            ranks). ``time_ns`` is round(Σ parts); with ``overlap_cpu`` round(max(Σ −
            overhead, overhead)): vLLM's async scheduling runs the CPU work beside the
            kernels (``perf.Breakdown.PassNs`` in ``core/perf/roofline.go``). A pass the
            engine runs eagerly (SGLang's prefill passes — from 0.5.10 only those above
            ``piecewise_cuda_graph_max_tokens`` or with piecewise CUDA graphs off — and
            decodes above ``cuda_graph_max_bs``, with
            ``engine.sglang.eager_launch_us_per_layer``, left out the model's measured
            value: DeepSeek's and Llama's decoder layers) also
            has ``host_launch``, the host's launch of its kernels: no part of Σ, it bounds
            the kernels: round(max(kernels, overhead + host_launch)) with the overlap
            scheduler, else round(overhead + max(kernels, host_launch)), as in the replay.
        breakdown_ms: the same in ms.
        perf_model: the source and version that priced it (``roofline-v3``, ``aic-v1``).
        pool: the pool whose worker ran it (``aggregated``, ``prefill``, ``decode``).
        overlap_cpu: whether the engine overlaps its CPU work with the kernels.
    """

    __slots__ = ("time_ns", "breakdown_ns", "perf_model", "pool", "overlap_cpu")

    def __init__(self, time_ns: int, breakdown_ns: dict[str, float] | None, perf_model: str,
                 pool: str, overlap_cpu: bool) -> None:
        self.time_ns, self.breakdown_ns = time_ns, breakdown_ns
        self.perf_model, self.pool, self.overlap_cpu = perf_model, pool, overlap_cpu

    @property
    def time_ms(self) -> float:
        return self.time_ns / 1e6

    @property
    def breakdown_ms(self) -> dict[str, float] | None:
        if self.breakdown_ns is None:
            return None
        return {k: v / 1e6 for k, v in self.breakdown_ns.items()}

    def __repr__(self) -> str:
        parts = ""
        if self.breakdown_ns:
            top = sorted(self.breakdown_ns.items(), key=lambda kv: -kv[1])[:3]
            parts = ", " + ", ".join(f"{k} {v / 1e6:.3f}" for k, v in top if v > 0)
        return f"StepTime({self.time_ms:.4f} ms{parts}; {self.perf_model}, {self.pool})"


def _spec(engine: Any) -> Spec:
    """The compiled spec of ``engine``: a replay spec (path, mapping, :class:`Spec`), or
    the ``engine`` mapping of one (a mapping with ``model`` and no ``engine``)."""
    from .config import Spec, load_config

    if isinstance(engine, Mapping) and "engine" not in engine and "model" in engine:
        engine = {"engine": dict(engine), "traffic": _NO_TRAFFIC}
    if not isinstance(engine, (str, os.PathLike, Mapping, Spec)):
        raise TypeError(f"engine: a replay spec (path, dict or Spec) or its engine mapping, got {type(engine).__name__}")
    return load_config(engine)


def _chunk(c: Any, where: str) -> list[int]:
    if isinstance(c, Mapping):
        unknown = set(c) - {"tokens", "cached", "samples"}
        if unknown:
            raise ConfigError(f"{where}.{sorted(unknown)[0]}", "unknown key: a chunk has tokens, cached, samples")
        if "tokens" not in c:
            raise ConfigError(f"{where}.tokens", "is required (prompt tokens computed in the pass)")
        c = (c["tokens"], c.get("cached", 0), c.get("samples", True))
    elif isinstance(c, (list, tuple)) and len(c) in (2, 3):
        c = (*c, True) if len(c) == 2 else c
    else:
        raise ConfigError(where, f"a chunk is (tokens, cached[, samples]) or a mapping, got {c!r}")
    tokens, cached, samples = c
    for name, v in (("tokens", tokens), ("cached", cached)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ConfigError(f"{where}.{name}", f"must be an integer, got {v!r}")
    if not isinstance(samples, bool):
        raise ConfigError(f"{where}.samples", f"must be true or false, got {samples!r}")
    return [int(tokens), int(cached), int(samples)]


def _batch(b: Any, where: str) -> dict[str, Any]:
    """One rank's batch as the core's request takes it (``pybind/step.go``, stepBatch)."""
    if not isinstance(b, Mapping):
        raise ConfigError(where, f"a batch is a mapping of prefill, decode (and spec_tokens, draft_steps), got {b!r}")
    unknown = set(b) - {"prefill", "decode", "spec_tokens", "draft_steps"}
    if unknown:
        raise ConfigError(f"{where}.{sorted(unknown)[0]}", "unknown key: a batch has prefill, decode, spec_tokens, draft_steps")
    prefill, decode = b.get("prefill") or [], b.get("decode") or []
    if not isinstance(prefill, (list, tuple)):
        raise ConfigError(f"{where}.prefill", f"a list of chunks, got {prefill!r}")
    if isinstance(decode, (str, bytes, Mapping)) or not hasattr(decode, "__iter__"):
        raise ConfigError(f"{where}.decode", f"a list of context lengths, got {decode!r}")
    kv = []
    for i, k in enumerate(decode):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise ConfigError(f"{where}.decode[{i}]", f"a context length is a whole number of tokens, got {k!r}")
        kv.append(int(k))
    out: dict[str, Any] = {"prefill": [_chunk(c, f"{where}.prefill[{i}]") for i, c in enumerate(prefill)],
                           "decode": kv}
    for key in ("spec_tokens", "draft_steps"):
        v = b.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"{where}.{key}", f"must be an integer, got {v!r}")
        out[key] = v
    return out


#: The core's field of a batch in a request (``passes[i][r]``).
_FIELD = re.compile(r"^passes\[(\d+)\]\[(\d+)\]")


def _call(spec: Spec, passes: list[list[dict[str, Any]]], pool: str | None, name: Any) -> dict[str, Any]:
    import json

    from .binding import native as _native
    from .catalogue import explain_not_found

    request = '{"spec":' + spec.to_json() + ',"pool":' + json.dumps(pool or "") + ',"passes":' + \
        json.dumps(passes) + "}"
    try:
        return _native.call("StepTime", request, "step")
    except ConfigError as exc:
        m = _FIELD.match(exc.field)
        if m:  # the caller's name of the batch
            raise ConfigError(name(int(m.group(1)), int(m.group(2))) + exc.field[m.end():], exc.reason) from None
        raise explain_not_found(exc) from None


def _ranks(batch: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(batch, (list, tuple)):
        if not batch:
            raise ConfigError(where, "an empty list of rank batches")
        return [_batch(b, f"{where}[{r}]") for r, b in enumerate(batch)]
    return [_batch(batch, where)]


def _beyond_limits(b: Mapping[str, Any], limits: Mapping[str, int], where: str, pool: str,
                   fields: Mapping[str, str] | None = None) -> list[str]:
    """Why the engine of ``pool`` would never run rank batch ``b`` (the core's form,
    :func:`_batch`), within the pool's per-rank ``limits`` (the core's ``step.limits``),
    each reason naming the limit and the value; empty when it would. Counted as vLLM's
    scheduler counts them (``core/engine/vllm/scheduler.go``): a pass's sequences are its
    chunks and decodes; its tokens, every prompt token computed, one per decode and the
    draft tokens verified (``spec_tokens``); a request's length after the pass, the tokens
    computed and one more (a chunk: cached + tokens, then its sampled token or the
    prompt's next; a decode: its context, the token it computes and the one it samples),
    which the replay keeps within max_model_len (prompt + output ≤ max_model_len). Each
    reason names, by vLLM's name of the limit, the spec field that sets it
    (``fields``, the core's ``step.limit_fields``: ``engine.trtllm.max_batch_size`` for TensorRT-LLM's
    sequences)."""
    fields = fields or {}

    def over(key: str) -> str:  # the limit, its value and the spec field that sets it
        field = fields.get(key)
        return f"{key} {limits[key]}" + (f" ({field})" if field else "")

    out = []
    seqs = len(b["prefill"]) + len(b["decode"])
    if seqs > limits["max_num_seqs"]:
        out.append(f"{seqs} sequences, over {over('max_num_seqs')}")
    tokens = sum(c[0] for c in b["prefill"]) + len(b["decode"]) + b["spec_tokens"]
    if tokens > limits["max_num_batched_tokens"]:
        out.append(f"{tokens} tokens computed, over the token budget {over('max_num_batched_tokens')}")
    lengths = [(f"prefill[{i}]", c[1] + c[0] + 1) for i, c in enumerate(b["prefill"])]
    lengths += [(f"decode[{i}]", kv + 2) for i, kv in enumerate(b["decode"])]
    name, longest = max(lengths, key=lambda x: x[1], default=("", 0))
    if longest > limits["max_model_len"]:
        out.append(f"{name} makes a request of {longest} tokens, over {over('max_model_len')}")
    return [f"{where}: {why}: the {pool} pool's engine never runs this pass; it is priced all the same"
            for why in out]


def _warn_beyond_limits(passes: list[list[dict[str, Any]]], head: Mapping[str, Any], name: Any) -> None:
    """One :class:`~aisimulate.EngineLimitWarning` per limit a rank batch is beyond
    (``name(i, r)`` the caller's name of pass i's rank r)."""
    import warnings

    from .errors import EngineLimitWarning

    for i, ranks in enumerate(passes):
        for r, b in enumerate(ranks):
            for message in _beyond_limits(b, head["limits"], name(i, r), str(head["pool"]), head.get("limit_fields")):
                warnings.warn(message, EngineLimitWarning, stacklevel=3)


def _result(p: Mapping[str, Any], head: Mapping[str, Any]) -> StepTime:
    bd = p.get("breakdown_ns")
    if bd is not None:  # the core's keys end in _ns; the parts are named without it
        bd = {k[:-3] if k.endswith("_ns") else k: float(v) for k, v in bd.items()}
    return StepTime(int(p["time_ns"]), bd, str(head["perf_model"]), str(head["pool"]), bool(head["overlap_cpu"]))


def step_time(engine: Any, batch: Mapping[str, Any] | Sequence[Mapping[str, Any]], *,
              pool: str | None = None) -> StepTime:
    """Price one engine pass of a deployment with its spec's perf model.

    Args:
        engine: a replay spec (a path, a dict, a :class:`~aisimulate.Spec`) whose engine
            names the model, system, perf source and workers, or that ``engine`` mapping
            alone (its traffic is not read).
        batch: the pass (see the module docstring), or one batch per data-parallel rank
            of a lockstep worker.
        pool: ``"prefill"`` or ``"decode"`` for a disaggregated deployment (required
            there); an aggregated one has one pool.

    Returns:
        A :class:`StepTime`: ``time_ns`` / ``time_ms``, ``breakdown_ms``, ``perf_model``.

    Warns:
        EngineLimitWarning: the pass is one the pool's engine would never run (over
            ``max_num_seqs``, the token budget or ``max_model_len``); it is priced
            all the same.

    Raises:
        ConfigError: the spec is invalid or its deployment cannot start (``InfeasibleError``:
            the model does not fit), the pool is not one of the deployment's, or the batch is
            malformed (``.field`` names it: ``batch.prefill[1].tokens``).
        TypeError: ``engine`` is none of the accepted forms.
    """
    spec = _spec(engine)
    ranks = _ranks(batch, "batch")
    multi = isinstance(batch, (list, tuple))
    name = (lambda i, r: f"batch[{r}]") if multi else (lambda i, r: "batch")
    out = _call(spec, [ranks], pool, name)
    _warn_beyond_limits([ranks], out, name)
    return _result(out["passes"][0], out)


def step_times(engine: Any, batches: Sequence[Mapping[str, Any] | Sequence[Mapping[str, Any]]], *,
               pool: str | None = None) -> list[StepTime]:
    """:func:`step_time` of many passes of one deployment in one call to the core (a
    parity suite's grid): ``batches[i]`` is a batch, or a list of rank batches.

    Raises:
        as :func:`step_time` (a bad batch is named ``batches[i]…``).

    Warns:
        EngineLimitWarning: as :func:`step_time`, for each batch beyond a limit.
    """
    spec = _spec(engine)
    if isinstance(batches, Mapping) or not isinstance(batches, (list, tuple)):
        raise TypeError("batches: a list of batches (step_time prices one)")
    passes = [_ranks(b, f"batches[{i}]") for i, b in enumerate(batches)]
    multi = [isinstance(b, (list, tuple)) for b in batches]
    name = lambda i, r: f"batches[{i}][{r}]" if multi[i] else f"batches[{i}]"  # noqa: E731
    out = _call(spec, passes, pool, name)
    _warn_beyond_limits(passes, out, name)
    return [_result(p, out) for p in out["passes"]]


def memory_plan(engine: Any) -> dict[str, dict[str, Any]]:
    """The memory plan of each pool of a deployment, per GPU of one worker rank, as the
    replay sizes its KV cache (docs/design.md, "The KV capacity"; ``perf.MemoryPlan`` in
    ``core/perf/memory.go``).

    Args:
        engine: as :func:`step_time`.

    Returns:
        ``{pool: {"workers", "tp", "dp", "ep", "num_gpu_blocks", "block_size",
        "kv_tokens", "max_model_len", "max_num_seqs", "max_num_batched_tokens",
        "perf_model", "plan"}}`` with ``plan`` the budget in bytes: ``usable_bytes``
        (gpu_memory_utilization × HBM), ``weight_bytes``, ``activation_bytes``,
        ``nccl_bytes``, ``other_bytes``, ``sliding_bytes``, ``kv_budget_bytes`` (what is
        left for the KV cache) and ``kv_bytes_per_token``; ``plan`` is ``None`` when the
        spec fixes the cache's size (``num_gpu_blocks``) or the engine sizes its pools
        itself (SGLang).

    Raises:
        ConfigError: as :func:`step_time`; ``InfeasibleError`` when the model does not fit.
    """
    from .binding import native as _native
    from .catalogue import explain_not_found

    spec = _spec(engine)
    try:
        out = _native.call("MemoryPlan", spec.to_json(), "memory")
    except ConfigError as exc:
        raise explain_not_found(exc) from None
    return {p.pop("pool"): p for p in out["pools"]}
