"""Validation against real open-loop vLLM runs (``../shared/data/real``).

``scripts/validate_real.py`` is the command; this package is the library it calls.
Each measured run is replayed as it ran — the exact workload, the deployment's engine
arguments, the vLLM version's scheduler defaults — with each perf source, and the
measured and predicted metrics are compared run by run (``docs/accuracy.md`` records the
results). Data sets (``../shared/data/real/README.md`` describes every file and clock):

``llmservingsim`` (:mod:`.llmservingsim`)
    Four vLLM 0.19.0 runs of 300 ShareGPT requests, Poisson 10 req/s, driven in process
    (``AsyncLLM`` with token ids: no HTTP, no tokenization, no streaming client), so the
    replay has no client path. The workload file carries every prompt's token ids
    (``traffic.source.type: llmservingsim``), so shared prefixes hit the prefix cache
    exactly. Measured per request: TTFT from the frontend's arrival (anchor B of the
    README: the wall-clock arrival mapped onto the engine's monotonic clock), TPOT per
    request, E2E; percentiles with numpy's linear interpolation; throughput over the
    makespan (first admission to last token). The MoE run (Qwen3-30B-A3B) replays with
    its layout: ``data_parallel_size`` 2 and ``enable_expert_parallel``.

``apex_plus`` (:mod:`.apex`)
    94 vLLM 0.6.0 (V0 engine) runs on 8× H100-SXM: Llama-3.1-70B bf16 and Mistral-Large
    fp8 at TP 8/4/2 (DP replicas replayed one by one, as each was its own server).
    Measured: the server's Prometheus means — TTFT from the API server's hand-off to the
    engine, apex_plus's token-weighted TPOT Σ(t_last − t_first) / Σ output tokens, E2E —
    so the replay has no client path either; each request replays the prompt and output
    token counts vLLM actually processed (``derived/requests/*.csv``).

Both: the vLLM version sets ``async_scheduling`` (on from 0.14.0, :func:`async_default`)
and the perf tables read (``backend_version``; the nearest measured version stands in).
"""

from .apex import apex_runs
from .evaluate import METRICS, RunResult, evaluate, mape_by_source, write_results
from .llmservingsim import llmservingsim_runs
from .runs import ASYNC_SCHEDULING_SINCE, RealRun, async_default, version_tuple

__all__ = [
    "ASYNC_SCHEDULING_SINCE",
    "METRICS",
    "RealRun",
    "RunResult",
    "apex_runs",
    "async_default",
    "evaluate",
    "llmservingsim_runs",
    "mape_by_source",
    "version_tuple",
    "write_results",
]
