"""Accuracy of predicted TTFT and TPOT against measured serving results ("silicon").

``scripts/accuracy.py`` is the command; this module is the library it calls (and that
``tests/test_accuracy.py`` exercises on a three-row slice).

A silicon CSV has the schema of ``../shared/data/silicon/vllm_dense_dev.csv``. Each row
is one measured serving run: vLLM, one aggregated worker of ``tp_size`` GPUs, a closed
loop of ``batch_size`` clients each sending its next request when the previous one ends,
every request with ``isl`` prompt and ``osl`` output tokens, no prefix reuse; the columns
``silicon_ttft_ms`` and ``silicon_tpot_ms`` are the measured means.

How a row is simulated (:func:`row_spec`)
    The same closed loop, synthetic fixed lengths, prefix caching off. Model: the
    config file ``model_aliases.csv`` names for the row's ``model_path``, else
    ``Org--Name_config.json`` in the model configs folder. Weights:
    ``precision`` empty means the checkpoint's formats (weights, and the KV cache it
    was calibrated for, else bf16); ``fp8`` means fp8 weights (the checkpoint's fp8
    or fp8_block format when it is one, else per-tensor fp8) with an fp8 KV cache;
    ``fp4``/``nvfp4`` NVFP4 weights with an fp8 KV cache; ``bf16`` a bf16 KV cache. Perf tables: the row's ``backend_version``
    (the nearest measured version stands in; the tables read are in ``rows.csv``).

Deployment (``deployment``)
    ``"aic-generator"`` (default): the engine limits AIConfigurator's generator writes
    into a vLLM aggregated launch, as its rule file ``generator/rule_plugin/vllm.rule``
    stood in aiconfigurator 0.5.0, the release contemporary with the rows' vLLM 0.12.0:
    ``max_num_seqs`` = the worker's batch size (the row's ``batch_size``) and
    ``max_num_batched_tokens`` = batch size + ISL + 1500. The dev rows come from
    AIConfigurator's gap analysis (their ``silicon_data_source`` column), whose
    evaluation deploys generated configs. ``"aic-generator-0.7"``: the rule from
    aiconfigurator 0.7.0 on, which lifts the batch size to at least 512 (so 512 +
    ISL + 1500 tokens) and sets ``max_model_len`` = ISL + OSL + 1500.
    ``"vllm-defaults"``: vLLM's own limits for an API server on an 80 GB GPU
    (``max_num_seqs`` 256 as the spec default, ``max_num_batched_tokens`` 8192).
    A deployment whose KV cache cannot hold one request of the model's default
    ``max_model_len`` is refused by the core, as vLLM refuses to start; since the
    measured run started, the harness then sets ``max_model_len`` = ISL + OSL + 1500
    (the generator's value) and replays.
    In every case ``gpu_memory_utilization`` is 0.9 and the block size 16. The token
    budget matters: it caps how many prompts share a pass, which decides how the
    clients that start together stay grouped (see below).

Client (``client``)
    ``"aiperf"`` (default): the load generator's path of DESIGN.md §6 with its reference
    values (:data:`AIPERF_CLIENT`): send leg 0.255 ms, the engine's output processor
    150 µs + 2 µs per token of a pass, response overhead 1.40 ms + 3.65 µs per output
    token before a client sends its next request. In a real server the engine starts
    its next pass as soon as one ends, while the finished response still has to reach
    the client and the next request the engine, so a closed-loop replacement always
    misses the pass that follows the one that finished its predecessor (AIConfigurator
    names the same boundary in ``docs/design/queueing_model.md``, failure mode 13).
    ``"none"``: the client acts at the pass end, so the replacement can join the very
    next pass (an idealised loop, for comparison).

Measured window and warm-up (``steady_state``)
    Default: the benchmark's own window. AIConfigurator's evaluation measures a
    closed loop with genai-perf / AIPerf: ``--concurrency c --request-count 10·c
    --warmup-request-count 2·c`` and fixed ISL/OSL
    (``eval/benchmarks/genai_perf_runner.py``), and AIPerf waits for every warm-up
    response before profiling starts (its warm-up tutorial, "Grace Period"). So the
    measured requests begin with c requests sent together to an idle engine and end
    with the loop draining, and the reported means are over all 10·c of them. The
    harness simulates exactly that: 10·c requests from an empty engine, every one
    counted; the warm-up requests themselves change nothing in a simulator (no
    JIT, no allocation) and are not simulated. The first wave matters: c prompts
    queue behind each other's prefills, and with fixed lengths the clients that
    finish together come back together, so the grouping the first wave leaves
    persists (the token budget splits it). That is why the measured mean TTFT grows
    about linearly with c at every ISL, TP and OSL.

    ``steady_state=True`` instead sends ``c · (1 + W + 1)`` requests (W measured
    waves, at least :data:`MIN_MEASURED` measured requests), drops the first wave
    (warm-up) and the last (drain), and averages the W·c requests in between.

    ``length_ratio`` R < 1 draws each request's ISL and OSL uniformly in [R·L, L]
    (a random dataset with a range ratio) instead of fixed lengths.
    The simulation is deterministic, so no repetitions are needed.

Prompt reuse (``dataset_entries``, ``sampling``)
    Default 0: every request has a prompt of its own and prefix caching is off, the
    rows' "no prefix reuse". AIConfigurator's runner makes that so by asking
    genai-perf for ``--num-dataset-entries 12·c``, one entry per warm-up and measured
    request. A load generator left at its defaults does not: AIPerf and genai-perf
    generate 100 entries and send them again and again (AIPerf in a shuffled order),
    and vLLM caches prefixes by default. ``dataset_entries`` N > 0 simulates that:
    the synthetic source's ``dataset`` of N entries picked by ``sampling`` (shuffle,
    sequential or random), with prefix caching on.

Outputs (:func:`evaluate`)
    ``rows.csv`` (one line per input row, ``ok`` or ``skipped`` with the reason), a MAPE
    table per (model, system, TP) and overall (printed and ``mape.csv``), and
    ``predicted_vs_measured.png`` (log axes). MAPE = mean over ok rows of
    ``|predicted − measured| / measured``, in %.

Modules: ``rows`` (reading the CSV), ``spec`` (a row's replay spec), ``run`` (simulating
rows), ``output`` (rows.csv, the MAPE table, the plot), ``args`` (the scripts' option
types).
"""

from . import args
from .output import format_mape, mape_table, settings_text, write_mape, write_plot, write_rows
from .rows import LINE_KEY, REQUIRED_COLUMNS, load_aliases, read_inputs, read_silicon, resolve_aliases
from .run import ROW_COLUMNS, RowResult, check_length_ratio, evaluate, run_row
from .spec import (AIC_GENERATOR_07_MAX_NUM_SEQS, AIC_GENERATOR_TOKEN_SLACK, AIPERF_CLIENT,
                   BENCHMARK_REQUESTS_PER_CLIENT, CLIENTS, DEFAULT_DATABASE, DEFAULT_MODEL_CONFIGS,
                   DEPLOYMENTS, MAX_DATASET_ENTRIES, MAX_WAVES, MIN_MEASURED, SAMPLINGS, SHARED_DATA,
                   VLLM_API_SERVER_MAX_NUM_BATCHED_TOKENS,
                   VLLM_DEFAULT_MAX_NUM_SEQS, row_spec)

__all__ = [
    "AIPERF_CLIENT",
    "BENCHMARK_REQUESTS_PER_CLIENT",
    "CLIENTS",
    "DEFAULT_DATABASE",
    "DEFAULT_MODEL_CONFIGS",
    "DEPLOYMENTS",
    "LINE_KEY",
    "MAX_DATASET_ENTRIES",
    "MIN_MEASURED",
    "REQUIRED_COLUMNS",
    "ROW_COLUMNS",
    "RowResult",
    "SAMPLINGS",
    "SHARED_DATA",
    "check_length_ratio",
    "evaluate",
    "format_mape",
    "load_aliases",
    "mape_table",
    "read_inputs",
    "read_silicon",
    "resolve_aliases",
    "row_spec",
    "run_row",
    "settings_text",
    "write_mape",
    "write_plot",
    "write_rows",
]
