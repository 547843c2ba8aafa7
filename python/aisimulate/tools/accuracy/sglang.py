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
    release (the radix cache on).
InferenceX (``YYYY-MM-DD.csv``, ``db-dump/…``)
    Its client (``traffic.benchmark`` tool ``vllm_bench_serve``, variant ``inferencex``,
    at the row's ``measured`` date): random lengths with range ratio 0.8, 10·c prompts
    at max concurrency c, the warm-ups of that date, ``ignore_eos``; the server at
    SGLang's defaults for the release (the recipes' flags are not read here), its radix
    cache off (the random prompts share nothing).

P/D rows (``mode`` disagg) run ``prefill_num_workers`` prefill servers of
``prefill_tp_size`` GPUs and ``decode_num_workers`` decode servers of ``decode_tp_size``,
least outstanding placement, the KV over :data:`KV_TRANSFER` (SGLang's default NIXL /
Mooncake transfer over the nodes' RDMA NICs).
"""

from __future__ import annotations

import re
from typing import Any

from . import campaigns
from .rows import _int
from .spec import (AIC_GENERATOR_TOKEN_SLACK, AIPERF_CLIENT, LOAD_GENERATORS, _lengths, _quantization,
                   _weights_for, row_layout)

#: The KV transfer of a P/D row: one 400 Gb/s RDMA NIC per GPU (50 GB/s), and 1 ms for
#: the transfer's setup and completion poll (an estimate: not measured).
KV_TRANSFER = {"bandwidth_gb_per_s": 50.0, "latency_ms": 1.0}
#: The first SGLang template (cli_args.0.5.6.post2.j2) that writes --enable-mixed-chunk.
MIXED_CHUNK_SINCE = (0, 5, 6)


def row_concurrency(row: dict[str, str]) -> int:
    """The row's client concurrency: ``batch_size``, else (P/D rows) the source's
    ``silicon_concurrency``, else AIConfigurator's estimate for a P/D deployment,
    decode workers × decode batch size (``rule_plugin/benchmark/sglang.rule``,
    ``BenchConfig.estimated_concurrency``)."""
    if (row.get("batch_size") or "").strip():
        return _int(row, "batch_size")
    m = re.search(r"silicon_concurrency=(\d+)", row.get("silicon_data_source") or "")
    if m:
        return int(m.group(1))
    return _int(row, "decode_num_workers") * _int(row, "decode_batch_size")


def _release(version: str) -> tuple[int, int, int] | None:
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def sglang_row_spec(row: dict[str, str], config: str, *, perf: str, database: str,
                    perf_overrides: dict[str, Any] | None = None) -> tuple[dict[str, Any], int, int]:
    """The replay spec of one SGLang row (module docstring), with the warm-up requests
    sent first and not measured (0: the benchmark's window) and the measured ones.

    Raises:
        ValueError: the row cannot be simulated (the message is the skip reason)."""
    mode = (row.get("mode") or "agg").strip()
    c, isl, osl = row_concurrency(row), _int(row, "isl"), _int(row, "osl")
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
        dp, ep, _ = row_layout(row, config)
        pool: dict[str, Any] = {"count": 1, "tp": _int(row, "tp_size")}
        if dp > 1:
            pool["data_parallel_size"] = dp
        if ep:
            pool["enable_expert_parallel"] = True
        engine["workers"] = {"aggregated": pool}
    elif mode == "disagg":
        pools = {}
        for side in ("prefill", "decode"):
            if _int(row, f"{side}_pp_size", 1) > 1 or _int(row, f"{side}_attention_dp_size", 1) > 1:
                raise ValueError(f"{side}: pipeline parallelism or DP attention is not simulated for SGLang")
            pools[side] = {"count": _int(row, f"{side}_num_workers"), "tp": _int(row, f"{side}_tp_size"),
                           "placement": "least_outstanding"}
            if _int(row, f"{side}_moe_ep_size", 1) > 1:
                pools[side]["enable_expert_parallel"] = True
        engine["workers"] = {"disaggregated": {**pools, "kv_transfer": dict(KV_TRANSFER)}}
    else:
        raise ValueError(f"mode {mode!r}: want agg or disagg")
    engine["quantization"] = _quantization(_weights_for(row.get("precision") or "", config))
    server: dict[str, Any] = {}
    if which == campaigns.INFERENCEX:
        server["disable_radix_cache"] = True
    else:
        # one block for both servers of a P/D row: the decode server's batch size
        # (the prefill server's, 1, caps its prefills, which the prefill budget does)
        batch = c if mode == "agg" else _int(row, "decode_batch_size")
        server.update(max_running_requests=batch, max_prefill_tokens=isl + AIC_GENERATOR_TOKEN_SLACK,
                      cuda_graph_max_bs=batch)
        if rel and rel >= MIXED_CHUNK_SINCE and mode == "agg":
            server["enable_mixed_chunk"] = True
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
    """The row's layout as simulated: ``"TP4"``, ``"P/D 5×TP1 + 11×TP1"``."""
    w = spec["engine"]["workers"]
    if "aggregated" in w:
        p = w["aggregated"]
        s = f"TP{p['tp']}"
        if p.get("enable_expert_parallel"):
            s += f" EP{p['tp'] * p.get('data_parallel_size', 1)}"
        return s
    d = w["disaggregated"]
    return f"P/D {d['prefill']['count']}×TP{d['prefill']['tp']} + {d['decode']['count']}×TP{d['decode']['tp']}"
