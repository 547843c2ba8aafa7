"""Simulating silicon rows: one row (:func:`run_row`) or many in parallel (:func:`evaluate`)."""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

from .rows import LINE_KEY, _int, _positive
from . import campaigns, disagg, trtllm_disagg, vllm_recipes
from .trtllm import (layout_text as trtllm_layout_text, recipe_of as trtllm_recipe_of,
                     silicon_concurrency as trtllm_silicon_concurrency)
from .spec import (AIC_GENERATOR_TOKEN_SLACK, DEFAULT_DATABASE, DEFAULT_LOAD_GENERATOR, DEFAULT_MODEL_CONFIGS, INFERENCEX,
                   _check_client, _check_dataset, _check_deployment, layout_text, procedure_of, row_layout,
                   row_spec)

ROW_COLUMNS = ("id", "status", "reason", "model", "system", "tp", "isl", "osl", "concurrency",
               "precision", "perf", "silicon_ttft_ms", "silicon_tpot_ms", "predicted_ttft_ms",
               "predicted_tpot_ms", "ttft_error_pct", "tpot_error_pct", "measured_requests",
               "deployment", "client", "load_generator", "window", "length_ratio", "dataset_entries", "sampling",
               "max_num_batched_tokens", "max_num_seqs",
               "perf_model", "tables", "layout", "fallbacks", "campaign", "measured", "procedure", "recipe",
               "mode", "mtp")


@dataclass
class RowResult:
    """One silicon row's outcome; the fields are the columns of ``rows.csv``."""
    id: str
    status: str  # "ok" | "skipped"
    reason: str = ""
    model: str = ""
    system: str = ""
    tp: int | None = None
    isl: int | None = None
    osl: int | None = None
    concurrency: int | None = None
    precision: str = ""
    perf: str = ""
    silicon_ttft_ms: float = math.nan
    silicon_tpot_ms: float = math.nan
    predicted_ttft_ms: float = math.nan
    predicted_tpot_ms: float = math.nan
    measured_requests: int | None = None
    deployment: str = ""
    client: str = ""
    load_generator: str = ""
    window: str = ""
    length_ratio: float = math.nan
    dataset_entries: int | None = None
    sampling: str = ""
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    perf_model: str = ""
    tables: str = ""
    #: the row's parallel layout as simulated ("TP4", "TP1 DP2", "TP8 EP8"), with the
    #: reason when it differs from the row's columns (spec.row_layout)
    layout: str = ""
    #: the perf ops priced by a stand-in for a missing table point, "op:count;…"
    #: (perf_metadata.fallbacks: op instances per pass), "" when none
    fallbacks: str = ""
    #: the campaign that measured the row (campaigns.campaign_of), when (InferenceX),
    #: the procedure it was simulated with and the recipe whose flags applied
    campaign: str = ""
    measured: str = ""
    procedure: str = ""
    recipe: str = ""
    #: a TensorRT-LLM row's ``mode`` column (``agg`` or ``disagg``; "" for another
    #: engine's row) and the MTP draft tokens it was simulated with (its decode side's
    #: speculative_config.num_nextn_predict_layers; 0: no MTP; None: not simulated)
    mode: str = ""
    mtp: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def skip_line(self) -> str:
        """``"id: reason"`` (``(no id)`` for an empty id), how a skipped row is listed."""
        return f"{self.id or '(no id)'}: {self.reason}"

    @property
    def ttft_error_pct(self) -> float:
        return 100 * (self.predicted_ttft_ms - self.silicon_ttft_ms) / self.silicon_ttft_ms

    @property
    def tpot_error_pct(self) -> float:
        return 100 * (self.predicted_tpot_ms - self.silicon_tpot_ms) / self.silicon_tpot_ms


def run_row(row: dict[str, str], perf: str, aliases: dict[str, str], model_configs: str,
            database: str, perf_overrides: dict[str, Any] | None = None,
            length_ratio: float = 1.0, steady_state: bool = False,
            deployment: str = "aic-generator", client: str = "aiperf",
            dataset_entries: int = 0, sampling: str = "shuffle",
            load_generator: str = DEFAULT_LOAD_GENERATOR) -> RowResult:
    """Simulate one silicon row; a row that cannot be served comes back ``skipped``."""
    import aisimulate

    res = RowResult(id=row.get("id", ""), status="skipped", model=row.get("model_path", ""),
                    system=row.get("system", ""), precision=row.get("precision", ""), perf=perf,
                    deployment=deployment, client=client, load_generator=load_generator,
                    window="steady-state" if steady_state else "benchmark", length_ratio=length_ratio,
                    dataset_entries=dataset_entries, sampling=sampling if dataset_entries > 0 else "",
                    mode=(row.get("mode") or "agg").strip() if (row.get("backend") or "").strip() == "trtllm" else "")
    where = f"line {row[LINE_KEY]}: " if row.get(LINE_KEY) else ""
    procedure, camp = procedure_of(row, load_generator)
    res.campaign, res.procedure, res.load_generator = camp.name, procedure, procedure
    if row.get(campaigns.REPEAT_KEY) and camp.name != campaigns.UNKNOWN:
        res.campaign += " (repeat)"  # an unrecorded row that repeats this campaign's measurement
    res.measured = camp.measured.isoformat() if camp.measured else ""
    if procedure == INFERENCEX:
        res.deployment, res.window = "inferencex-recipe", "benchmark"
        if (row.get("backend") or "").strip() == "sglang":
            from .sglang import pd_recipe_text, recipe_flags
            res.recipe = ((pd_recipe_text(row) if disagg.is_disagg(row) else recipe_flags(row, 0, 0, 0)[1])
                          or "not tabulated: the release's SGLang defaults")
        elif trtllm_disagg.is_disagg(row):
            rec, _ = trtllm_disagg.recipe_of(row)
            res.recipe = rec.source if rec else "none known: the row's columns, the release's TensorRT-LLM defaults"
        elif camp.measured and (row.get("backend") or "").strip() == "trtllm":
            res.recipe = trtllm_recipe_of(row, camp.measured) or "not tabulated: the release's TensorRT-LLM defaults"
        elif camp.measured:
            res.recipe = vllm_recipes.recipe_of(row, camp.measured)[1] or "not tabulated: the release's vLLM defaults"
        res.load_generator = "vllm_bench_serve (inferencex)"
    # every column on its own, so the valid ones still reach rows.csv
    problems = []
    pd = disagg.is_disagg(row)  # a P/D row (disagg.py): the decode side's TP, its concurrency rule
    tp_of, conc_of = _int, (lambda r, _k: disagg.concurrency_of(r)) if pd else _int
    if trtllm_disagg.is_disagg(row):  # TensorRT-LLM's P/D rows: their recipe's (trtllm_disagg.py)
        tp_of = lambda r, _k: trtllm_disagg.decode_gpus(r)  # noqa: E731
        conc_of = lambda r, _k: trtllm_silicon_concurrency(r)  # noqa: E731
    for attr, key, parse in (("tp", "decode_tp_size" if pd else "tp_size", tp_of), ("isl", "isl", _int),
                             ("osl", "osl", _int),
                             ("concurrency", "batch_size", conc_of),
                             ("silicon_ttft_ms", "silicon_ttft_ms", _positive),
                             ("silicon_tpot_ms", "silicon_tpot_ms", _positive)):
        try:
            setattr(res, attr, parse(row, key))
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        res.reason = where + "; ".join(problems)
        return res
    try:
        spec, warm, measured = row_spec(row, perf=perf, aliases=aliases, model_configs=model_configs,
                                        database=database, perf_overrides=perf_overrides,
                                        length_ratio=length_ratio, steady_state=steady_state,
                                        deployment=deployment, client=client,
                                        dataset_entries=dataset_entries, sampling=sampling,
                                        load_generator=load_generator)
    except (ValueError, KeyError) as exc:
        res.reason = where + str(exc)
        return res
    if spec["engine"].get("backend") == "sglang":
        from .sglang import sglang_layout, single_node_row
        res.layout, res.deployment = sglang_layout(spec), "sglang " + res.deployment
        if "aggregated" in spec["engine"]["workers"] and (note := single_node_row(row)[1]):
            res.layout += f" ({note})"
            res.tp = spec["engine"]["workers"]["aggregated"]["tp"]
    elif "disaggregated" in spec["engine"]["workers"] and spec["engine"]["backend"] == "trtllm":
        res.layout = trtllm_disagg.layout_text(spec)
    elif "disaggregated" in spec["engine"]["workers"]:
        res.layout = disagg.layout_text(spec)
    elif spec["engine"]["backend"] == "trtllm":
        res.layout = trtllm_layout_text(row, spec)
    else:
        pool = spec["engine"]["workers"]["aggregated"]
        _, ep, note = row_layout(row, spec["engine"]["model"])
        res.layout = layout_text(pool["tp"], pool.get("data_parallel_size", 1), pool.get("enable_expert_parallel", False))
        if note:
            res.layout += f" ({note})"
        elif pool.get("enable_expert_parallel") and not ep:
            res.layout += " (the recipe's --enable-expert-parallel)"
    slack = campaigns.INFERENCEX_MAX_MODEL_LEN_SLACK if procedure == INFERENCEX else AIC_GENERATOR_TOKEN_SLACK
    try:
        report = _replay_as_launched(spec, res.isl + res.osl + slack)
    except (aisimulate.ConfigError, aisimulate.SimulationError) as exc:
        res.reason = f"{where}simulation: {exc}"
        return res
    reqs = sorted(report.requests, key=lambda r: (r["send_ms"], r["request_id"]))
    window = [r for r in reqs[warm:warm + measured] if r["status"] == "completed"]
    if len(window) < measured:
        res.reason = (f"{where}only {len(window)} of {measured} measured requests completed "
                      f"({report.summary.get('rejected', 0)} rejected)")
        return res
    res.predicted_ttft_ms = sum(r["ttft_ms"] for r in window) / len(window)
    tpots = [r["tpot_ms"] for r in window if r["tpot_ms"] is not None]
    if len(tpots) < len(window):
        res.reason = f"{where}{len(window) - len(tpots)} measured requests have no TPOT"
        return res
    res.predicted_tpot_ms = sum(tpots) / len(tpots)
    res.measured_requests = len(window)
    md = report.metadata
    eng = md["spec"]["engine"]
    sched = eng.get("scheduler")  # as run: the per-system defaults filled
    if eng["backend"] == "trtllm":  # TensorRT-LLM's max_num_tokens and max_batch_size (a P/D row's decode side)
        t = eng["trtllm"] if "disaggregated" not in eng["workers"] else eng["workers"]["disaggregated"]["decode"]["trtllm"]
        res.max_num_batched_tokens, res.max_num_seqs = t["max_num_tokens"], t["max_batch_size"]
        res.mtp = (t.get("speculative_config") or {}).get("num_nextn_predict_layers", 0)
    elif sched is not None:
        res.max_num_batched_tokens, res.max_num_seqs = sched["max_num_batched_tokens"], sched["max_num_seqs"]
    else:  # SGLang: its resolved chunked_prefill_size and max_running_requests
        args = md["pools"][-1].get("engine_args") or {}
        res.max_num_batched_tokens, res.max_num_seqs = args.get("chunked_prefill_size"), args.get("max_running_requests")
    res.perf_model = str(md.get("perf_model", ""))
    tables = (md.get("perf_metadata") or {}).get("tables") or []
    res.tables = ";".join(f"{t['table']}@{t['read_from_version']}" for t in tables)
    fb = (md.get("perf_metadata") or {}).get("fallbacks") or {}
    res.fallbacks = ";".join(f"{op}:{fb[op]}" for op in sorted(fb))
    res.status = "ok"
    return res


def _replay_as_launched(spec: dict[str, Any], tokens: int):
    """Replay ``spec``; if its KV cache cannot hold one request of the default
    ``max_model_len`` (vLLM refuses to start: the core's start-up check), do what the
    operator of the measured run must have done for vLLM to start, and lower it to
    ``tokens``: the value the campaign's generator writes, ISL + OSL + 1500 for
    AIConfigurator's (its ``max_seq_len`` rule), + 200 for InferenceX's sweep. A row's
    requests fit that length, so only the refusal changes."""
    import aisimulate

    try:
        return aisimulate.replay(spec)
    except aisimulate.ConfigError as exc:
        sched = spec["engine"].get("scheduler")
        if sched is None or exc.field != "engine.scheduler.max_model_len" or "max_model_len" in sched:
            raise
        sched["max_model_len"] = tokens
        return aisimulate.replay(spec)


def check_length_ratio(ratio: float) -> None:
    """Raises ValueError unless 0 < ratio ≤ 1 (NaN included)."""
    if not 0 < ratio <= 1:
        raise ValueError(f"length_ratio must be in (0, 1], got {ratio}")


def _run_star(args: tuple) -> RowResult:
    return run_row(*args)


def evaluate(rows: Sequence[dict[str, str]], *, perf: str = "aic",
             aliases: dict[str, str], model_configs: str | os.PathLike[str] = DEFAULT_MODEL_CONFIGS,
             database: str | os.PathLike[str] = DEFAULT_DATABASE, jobs: int = 1,
             perf_overrides: dict[str, Any] | None = None,
             length_ratio: float = 1.0, steady_state: bool = False,
             deployment: str = "aic-generator", client: str = "aiperf",
             dataset_entries: int = 0, sampling: str = "shuffle",
             load_generator: str = DEFAULT_LOAD_GENERATOR) -> list[RowResult]:
    """Simulate every row (in input order); ``jobs`` > 1 uses that many processes.
    ``length_ratio`` < 1 draws each request's ISL and OSL uniformly in [ratio·L, L]
    instead of using the row's fixed lengths (1, the default). ``steady_state``
    measures whole waves after the first instead of the benchmark window;
    ``load_generator`` is how the benchmark ran (warm-up, measured requests and
    prompt dataset, :data:`LOAD_GENERATORS`), ``deployment`` chooses the engine
    limits, ``client`` the load generator's path and ``dataset_entries`` /
    ``sampling`` override its prompt reuse (module docstring).

    Raises:
        ValueError: ``length_ratio`` outside (0, 1], an unknown ``deployment``,
            ``client``, ``load_generator`` or ``sampling``, or ``dataset_entries``
            outside [0, 1000000]."""
    check_length_ratio(length_ratio)
    _check_deployment(deployment)
    _check_client(client)
    _check_dataset(dataset_entries, sampling)
    procedure_of({}, load_generator)
    rows = trtllm_disagg.annotate(rows)  # a TensorRT-LLM P/D row's recipe is told by its peers
    rows = campaigns.annotate_repeats(rows)  # an unrecorded row that repeats a recorded measurement
    args = [(r, perf, aliases, str(model_configs), str(database), perf_overrides, length_ratio,
             steady_state, deployment, client, dataset_entries, sampling, load_generator) for r in rows]
    if jobs > 1 and len(args) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            return list(ex.map(_run_star, args, chunksize=1))
    return [_run_star(a) for a in args]
