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
    ``fp4``/``nvfp4`` NVFP4 weights with an fp8 KV cache, or on a checkpoint that stores
    4-bit float weights (gpt-oss's MXFP4, a ModelOpt NVFP4 release; ``mxfp4`` too) the
    checkpoint's formats; ``int4`` the checkpoint's int4 weights (Kimi-K2.5's experts; a
    checkpoint without int4 weights is skipped); ``bf16`` a bf16 KV cache. Perf tables: the row's ``backend_version``
    (the nearest measured version stands in; the tables read are in ``rows.csv``).

Parallel layout (:func:`row_layout`)
    ``tp_size`` is vLLM's tensor parallelism per data-parallel rank; a mixture-of-experts
    row's ``moe_tp_size`` / ``moe_ep_size`` / ``attention_dp_size`` become
    ``data_parallel_size`` (tp × dp = moe_tp × moe_ep) and ``enable_expert_parallel``
    (moe_ep > 1). Rows vLLM cannot run that way are skipped with the reason; a
    block-fp8 row whose stated moe_tp vLLM refuses (expert width per GPU not a multiple
    of 128) runs as vLLM's recipe serves that GPU count, expert parallel, and the
    ``layout`` column of ``rows.csv`` says so. The MAPE table has one line per (model,
    system, TP, layout).

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
    (``max_num_batched_tokens`` 8192; ``max_num_seqs`` 256, the spec's default before
    it followed vLLM's per-GPU rule, whose value on these GPUs is 1024).
    A deployment whose KV cache cannot hold one request of the model's default
    ``max_model_len`` is refused by the core, as vLLM refuses to start; since the
    measured run started, the harness then sets ``max_model_len`` = ISL + OSL + 1500
    (the generator's value) and replays.
    In every case ``gpu_memory_utilization`` is 0.9 and the block size 16. The token
    budget matters: it caps how many prompts share a pass, which decides how the
    clients that start together stay grouped (see below).

Client (``client``)
    ``"aiperf"`` (default): the load generator's path of docs/design.md ("The client path") with its reference
    values (:data:`AIPERF_CLIENT`): send leg 0.255 ms, the API server's output handling
    123 µs per pass + 29 µs per request of the pass (:data:`API_SERVER_OUTPUT_US_PER_REQUEST`),
    response overhead 1.40 ms + 3.65 µs per output
    token before a client sends its next request; and the OpenAI front end's input
    processing, 2 µs per prompt token before the request reaches the engine
    (:data:`API_SERVER_INPUT_US_PER_TOKEN`; long enough at ISL 4096 that a closed
    loop's wave comes back bunched, docs/accuracy.md), on the output handling's event
    loop for a V1 engine (``engine.tokenization.shared_event_loop``). In a real server the engine starts
    its next pass as soon as one ends, while the finished response still has to reach
    the client and the next request the engine, so a closed-loop replacement always
    misses the pass that follows the one that finished its predecessor (AIConfigurator
    names the same boundary in ``docs/design/queueing_model.md``, failure mode 13).
    ``"none"``: the client acts at the pass end, so the replacement can join the very
    next pass (an idealised loop, for comparison).

Which procedure a row gets (``load_generator``, :func:`procedure_of`)
    Default ``"campaign"``: the row's campaign, from its ``silicon_data_source`` by the
    rule of :mod:`.campaigns`: AIConfigurator's rows (and rows whose campaign is not
    recorded, in their own MAPE line, unless they repeat a recorded row's measurement:
    then that row's campaign, ``campaigns.annotate_repeats``) run AIPerf as below; InferenceX's rows run
    InferenceX's client (``traffic.benchmark`` vllm_bench_serve, variant inferencex, at
    the row's date: lengths uniform in [⌊0.8·L⌋, L], 2·c warm-up copies of the first
    prompt, 10·c measured) against the server its recipe launched at that date (its
    flags, the row's vLLM release for the rest: ``engine.backend_version``).
    ``rows.csv`` has each row's ``campaign``, ``measured``, ``procedure`` and
    ``recipe``. An explicit procedure runs every row that way (an override).

The load generator as it ran (``load_generator``, ``steady_state``)
    Default ``"aiperf"``: AIConfigurator's benchmark generator runs AIPerf with
    ``--concurrency c --request-count 20·c``, fixed synthetic ISL/OSL, ``ignore_eos``,
    streaming chat completions; its cluster workflow adds ``--warmup-request-count c
    --num-dataset-entries 20·c``. AIPerf waits for every warm-up response before
    profiling starts (its warm-up guide, "Grace Period"), and one dataset sampler
    (shuffled for synthetic data) serves both phases. The harness replays exactly
    that: the c warm-up requests (``traffic.load.warmup_requests``: run, not
    reported, sent besides ``num_requests``), then 20·c measured requests with every client starting together on
    an idle engine, prompts drawn from 20·c shuffled entries (the last c measured
    requests repeat an earlier prompt) with vLLM's default prefix caching.
    ``"aiperf-baremetal"`` is the generator's bare-metal script: 2·c warm-up requests
    and AIPerf's default dataset of 100 entries, so most prompts repeat.
    ``"genai-perf"`` is the earlier evaluation (``eval/benchmarks/genai_perf_runner.py``:
    10·c requests, 12·c entries, every prompt new): 10·c requests from an idle engine,
    prefix caching off. Which procedure produced a given row is not recorded.

    The row's vLLM version sets ``async_scheduling`` (vLLM's default from 0.14.0;
    the dev rows' 0.12.0 schedules synchronously).

    ``steady_state=True`` instead sends ``c · (1 + W + 1)`` requests (W measured
    waves, at least :data:`MIN_MEASURED` measured requests), drops the first wave
    (warm-up) and the last (drain), and averages the W·c requests in between.

    ``length_ratio`` R < 1 draws each request's ISL and OSL uniformly in [R·L, L]
    (a random dataset with a range ratio) instead of fixed lengths.
    The simulation is deterministic, so no repetitions are needed.

Prompt reuse (``dataset_entries``, ``sampling``)
    ``dataset_entries`` N > 0 overrides the load generator's dataset: N entries
    picked by ``sampling`` (shuffle, sequential or random), with prefix caching on.

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
from .output import (format_groups, format_mape, group_table, mape_table, settings_text, write_groups, write_mape,
                     write_plot, write_rows)
from .rows import LINE_KEY, REQUIRED_COLUMNS, load_aliases, read_inputs, read_silicon, resolve_aliases
from .run import ROW_COLUMNS, RowResult, check_length_ratio, evaluate, run_row
from . import campaigns
from .spec import (AIC_GENERATOR_07_MAX_NUM_SEQS, AIC_GENERATOR_TOKEN_SLACK, AIPERF_CLIENT, CAMPAIGN, INFERENCEX, PROCEDURES,
                   procedure_of,
                   API_SERVER_INPUT_US_PER_TOKEN, CLIENTS, DEFAULT_DATABASE, DEFAULT_LOAD_GENERATOR, DEFAULT_MODEL_CONFIGS, LOAD_GENERATORS,
                   DEPLOYMENTS, MAX_DATASET_ENTRIES, MAX_WAVES, MIN_MEASURED, SAMPLINGS, SHARED_DATA,
                   VLLM_API_SERVER_MAX_NUM_BATCHED_TOKENS,
                   VLLM_DEFAULT_MAX_NUM_SEQS, layout_text, row_layout, row_spec)

__all__ = [
    "AIPERF_CLIENT",
    "CAMPAIGN",
    "INFERENCEX",
    "PROCEDURES",
    "campaigns",
    "procedure_of",
    "API_SERVER_INPUT_US_PER_TOKEN",
    "CLIENTS",
    "DEFAULT_DATABASE",
    "DEFAULT_LOAD_GENERATOR",
    "DEFAULT_MODEL_CONFIGS",
    "DEPLOYMENTS",
    "LINE_KEY",
    "LOAD_GENERATORS",
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
    "group_table",
    "format_groups",
    "write_groups",
    "read_inputs",
    "read_silicon",
    "resolve_aliases",
    "row_spec",
    "row_layout",
    "layout_text",
    "run_row",
    "settings_text",
    "write_mape",
    "write_plot",
    "write_rows",
]
