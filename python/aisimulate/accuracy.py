"""Accuracy of predicted TTFT and TPOT against measured serving results ("silicon").

``scripts/accuracy.py`` is the command; this module is the library it calls (and that
``tests/test_accuracy.py`` exercises on a three-row slice).

A silicon CSV has the schema of ``../shared/data/silicon/vllm_dense_dev.csv``. Each row
is one measured serving run: vLLM, one aggregated worker of ``tp_size`` GPUs, a closed
loop of ``batch_size`` clients each sending its next request when the previous one ends,
every request with ``isl`` prompt and ``osl`` output tokens, no prefix reuse; the columns
``silicon_ttft_ms`` and ``silicon_tpot_ms`` are the measured means.

How a row is simulated (:func:`row_spec`)
    The same closed loop, synthetic fixed lengths, prefix caching off. Weights:
    ``precision`` empty means the checkpoint's format; ``fp8`` means fp8 weights (the
    checkpoint's fp8 or fp8_block format when it is one, else per-tensor fp8) with an
    fp8 KV cache, else the KV cache is bf16. Perf tables: the row's ``backend_version``
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

Outputs (:func:`evaluate`)
    ``rows.csv`` (one line per input row, ``ok`` or ``skipped`` with the reason), a MAPE
    table per (model, system, TP) and overall (printed and ``mape.csv``), and
    ``predicted_vs_measured.png`` (log axes). MAPE = mean over ok rows of
    ``|predicted − measured| / measured``, in %.
"""

from __future__ import annotations

import csv
import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

__all__ = ["MIN_MEASURED", "RowResult", "evaluate", "load_aliases", "mape_table",
           "read_silicon", "row_spec", "run_row", "write_plot", "write_rows"]

_REPO = Path(__file__).resolve().parent.parent.parent
SHARED_DATA = _REPO.parent / "shared" / "data"
DEFAULT_DATABASE = SHARED_DATA / "aic" / "systems"
DEFAULT_MODEL_CONFIGS = SHARED_DATA / "aic" / "model_configs"

#: Fewest requests a row's means are taken over (small concurrencies run more waves).
MIN_MEASURED = 64
#: Measured requests per client in the benchmark window (genai-perf/AIPerf
#: ``--request-count 10·c`` in AIConfigurator's evaluation).
BENCHMARK_REQUESTS_PER_CLIENT = 10
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
#: 8192 batched tokens; max_num_seqs as the spec default (256), raised to c.
VLLM_API_SERVER_MAX_NUM_BATCHED_TOKENS = 8192
VLLM_DEFAULT_MAX_NUM_SEQS = 256
#: Client models a row can be simulated with (see the module docstring).
CLIENTS = ("aiperf", "none")
#: The reference client path of DESIGN.md §6 (one public AIPerf calibration at
#: concurrency 1): send leg 0.255 ms; response overhead 1.40 ms + 3.65 µs per output
#: token; the engine's output processor 150 µs + 2 µs per token of a pass.
AIPERF_CLIENT = {
    "tokenization": {"send_ms": 0.255},
    "detokenization": {"base_us": 150.0, "per_token_us": 2.0},
    "response_overhead": {"base_ms": 1.40, "per_output_token_us": 3.65},
}
#: Most measured waves (large concurrencies already average over many requests).
MAX_WAVES = 8

ROW_COLUMNS = ("id", "status", "reason", "model", "system", "tp", "isl", "osl", "concurrency",
               "precision", "perf", "silicon_ttft_ms", "silicon_tpot_ms", "predicted_ttft_ms",
               "predicted_tpot_ms", "ttft_error_pct", "tpot_error_pct", "measured_requests",
               "deployment", "client", "window", "length_ratio", "max_num_batched_tokens", "max_num_seqs",
               "perf_model", "tables")
#: Columns a silicon CSV must have.
REQUIRED_COLUMNS = ("id", "model_path", "system", "isl", "osl", "batch_size", "tp_size",
                    "silicon_ttft_ms", "silicon_tpot_ms")
#: Key under which :func:`read_silicon` stores each row's line number in the file.
LINE_KEY = "_line"


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
    window: str = ""
    length_ratio: float = math.nan
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    perf_model: str = ""
    tables: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ttft_error_pct(self) -> float:
        return 100 * (self.predicted_ttft_ms - self.silicon_ttft_ms) / self.silicon_ttft_ms

    @property
    def tpot_error_pct(self) -> float:
        return 100 * (self.predicted_tpot_ms - self.silicon_tpot_ms) / self.silicon_tpot_ms


def read_silicon(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Rows of a silicon CSV as dicts of strings, in file order, each with its line
    number in the file under :data:`LINE_KEY` (the header is line 1). A UTF-8 byte-order
    mark is allowed. Values are checked per row when the row is simulated
    (:func:`run_row`), so one bad row is skipped with its reason, not the whole file.

    Raises:
        OSError: the file cannot be read.
        ValueError: no header, a required column missing, a line with more fields than
            the header, no data rows, or an ``id`` used twice (the message names the
            file, the column or the lines).
    """
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        cols = set(reader.fieldnames or [])
        if not cols:
            raise ValueError(f"{path}: empty file (no header line)")
        missing = [c for c in REQUIRED_COLUMNS if c not in cols]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
        rows = []
        for r in reader:
            if None in r:
                raise ValueError(f"{path}: line {reader.line_num} has {len(r[None])} field(s) more than the header")
            r[LINE_KEY] = str(reader.line_num)
            rows.append(r)
    if not rows:
        raise ValueError(f"{path}: no data rows after the header")
    seen: dict[str, str] = {}
    for r in rows:
        rid = (r.get("id") or "").strip()
        if rid and rid in seen:
            raise ValueError(f"{path}: id {rid!r} on lines {seen[rid]} and {r[LINE_KEY]}")
        seen.setdefault(rid, r[LINE_KEY])
    return rows


def load_aliases(path: str | os.PathLike[str]) -> dict[str, str]:
    """``model_path`` → config file name, from ``model_aliases.csv``.

    Raises:
        OSError: the file cannot be read.
        ValueError: the ``model_path`` or ``config_file`` column is missing."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("model_path", "config_file") if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
        return {r["model_path"]: r["config_file"] for r in reader}


def _int(row: dict[str, str], key: str, default: int | None = None) -> int:
    """Column ``key`` as an integer ("8" or "8.0"); empty gives ``default``.

    Raises:
        ValueError: empty without a default, or not a finite whole number (names the
            column and the value)."""
    v = (row.get(key) or "").strip()
    if v == "":
        if default is None:
            raise ValueError(f"{key} is empty")
        return default
    try:
        x = float(v)
    except ValueError:
        raise ValueError(f"{key} = {v!r} is not a number") from None
    if not math.isfinite(x) or x != int(x):
        raise ValueError(f"{key} = {v!r} is not a whole number")
    return int(x)


def _positive(row: dict[str, str], key: str) -> float:
    """Column ``key`` as a finite number > 0.

    Raises:
        ValueError: empty, not a number, not finite or ≤ 0 (names the column and the value)."""
    v = (row.get(key) or "").strip()
    try:
        x = float(v)
    except ValueError:
        raise ValueError(f"{key} = {v!r}: want a finite number > 0") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{key} = {v!r}: want a finite number > 0")
    return x


def _waves(concurrency: int) -> int:
    return max(1, min(MAX_WAVES, math.ceil(MIN_MEASURED / concurrency)))


def _weights_for(precision: str, config_path: str) -> str | None:
    """Spec weight format for a silicon ``precision`` (None: the checkpoint's)."""
    import json
    p = precision.strip().lower()
    if p in ("", "bf16", "bfloat16", "fp16", "float16"):
        return None if p == "" else "bf16"
    if p == "fp8":
        with open(config_path, encoding="utf-8") as f:
            q = json.load(f).get("quantization_config") or {}
        if q.get("quant_method") == "fp8" and q.get("weight_block_size"):
            return "fp8_block"
        return "fp8"
    if p == "fp8_block":
        return "fp8_block"
    raise ValueError(f"precision {precision!r} is not supported (empty, bf16, fp8, fp8_block)")


def row_spec(row: dict[str, str], *, perf: str, aliases: dict[str, str],
             model_configs: str | os.PathLike[str], database: str | os.PathLike[str],
             perf_overrides: dict[str, Any] | None = None,
             length_ratio: float = 1.0, steady_state: bool = False,
             deployment: str = "aic-generator",
             client: str = "aiperf") -> tuple[dict[str, Any], int, int]:
    """The replay spec of one silicon row, with the number of requests sent first and
    not measured (0 in the benchmark window) and the number measured after them.

    Returns:
        (spec dict, warm-up requests, measured requests).

    Raises:
        ValueError: the row cannot be simulated (the message is the skip reason).
    """
    mode = (row.get("mode") or "agg").strip()
    if mode != "agg":
        raise ValueError(f"mode {mode!r}: only aggregated serving is simulated")
    for col in ("pp_size", "attention_dp_size"):
        if _int(row, col, 1) > 1:
            raise ValueError(f"{col} = {row[col]}: not simulated (TP only)")
    backend = (row.get("backend") or "vllm").strip()
    if backend != "vllm":
        raise ValueError(f"backend {backend!r}: only vllm is simulated")
    model_path = row["model_path"].strip()
    if model_path not in aliases:
        raise ValueError(f"unknown model {model_path!r} (not in model_aliases.csv)")
    config = Path(model_configs) / aliases[model_path]
    if not config.is_file():
        raise ValueError(f"model config {config} not found")
    c, tp = _int(row, "batch_size"), _int(row, "tp_size")
    isl, osl = _int(row, "isl"), _int(row, "osl")
    if min(c, tp, isl, osl) < 1:
        raise ValueError("batch_size, tp_size, isl and osl must be ≥ 1")
    if osl < 2:
        raise ValueError(f"osl = {osl}: a TPOT needs at least 2 output tokens")
    weights = _weights_for(row.get("precision") or "", str(config))
    perf_block: dict[str, Any] = {"source": perf}
    if perf == "aic":
        perf_block["database"] = str(database)
        version = (row.get("backend_version") or "").strip()
        if version:
            perf_block["backend_version"] = version
    perf_block.update(perf_overrides or {})
    _check_deployment(deployment)
    _check_client(client)
    scheduler: dict[str, Any] = {"enable_prefix_caching": False}
    if deployment == "aic-generator":
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
        "workers": {"aggregated": {"count": 1, "tp": tp}},
        "scheduler": scheduler,
    }
    # fp8 serving quantizes the KV cache too: NVIDIA's FP8 checkpoints carry an fp8
    # KV scale, and the measured fp8 TPOTs sit below the bf16-KV memory bound.
    fp8 = weights in ("fp8", "fp8_block") or (weights is None and "fp8" in (row.get("precision") or ""))
    quant: dict[str, str] = {"kv_cache": "fp8" if fp8 else "bf16"}
    if weights:
        quant["weights"] = weights
    engine["quantization"] = quant
    load: dict[str, Any] = {"mode": "concurrency", "concurrency": c}
    if client == "aiperf":
        engine["tokenization"] = dict(AIPERF_CLIENT["tokenization"])
        engine["detokenization"] = dict(AIPERF_CLIENT["detokenization"])
        load["response_overhead"] = dict(AIPERF_CLIENT["response_overhead"])
    if steady_state:
        waves = _waves(c)
        warm, measured, total = c, waves * c, c * (waves + 2)
    else:
        warm, measured = 0, c * BENCHMARK_REQUESTS_PER_CLIENT
        total = measured
    spec = {
        "engine": engine,
        "traffic": {
            "source": {"type": "synthetic", "num_requests": total,
                       "isl": _lengths(isl, length_ratio), "osl": _lengths(osl, length_ratio)},
            "load": load,
        },
        "execution": {"mode": "offline", "seed": 1},
    }
    return spec, warm, measured


def _check_deployment(deployment: str) -> None:
    if deployment not in DEPLOYMENTS:
        raise ValueError(f"deployment {deployment!r}: want one of {', '.join(DEPLOYMENTS)}")


def _check_client(client: str) -> None:
    if client not in CLIENTS:
        raise ValueError(f"client {client!r}: want one of {', '.join(CLIENTS)}")


def _lengths(n: int, ratio: float) -> Any:
    """A token length for the synthetic source: ``n`` itself at ratio 1, else uniform
    integers in [⌊ratio·n⌋, n] (how benchmark generators such as vLLM's random dataset
    with a range ratio draw lengths)."""
    if ratio >= 1:
        return n
    return {"kind": "uniform", "min": max(1, int(n * ratio)), "max": n}


def run_row(row: dict[str, str], perf: str, aliases: dict[str, str], model_configs: str,
            database: str, perf_overrides: dict[str, Any] | None = None,
            length_ratio: float = 1.0, steady_state: bool = False,
            deployment: str = "aic-generator", client: str = "aiperf") -> RowResult:
    """Simulate one silicon row; a row that cannot be served comes back ``skipped``."""
    import aisimulate

    res = RowResult(id=row.get("id", ""), status="skipped", model=row.get("model_path", ""),
                    system=row.get("system", ""), precision=row.get("precision", ""), perf=perf,
                    deployment=deployment, client=client,
                    window="steady-state" if steady_state else "benchmark", length_ratio=length_ratio)
    where = f"line {row[LINE_KEY]}: " if row.get(LINE_KEY) else ""
    # every column on its own, so the valid ones still reach rows.csv
    problems = []
    for attr, key, parse in (("tp", "tp_size", _int), ("isl", "isl", _int), ("osl", "osl", _int),
                             ("concurrency", "batch_size", _int), ("silicon_ttft_ms", "silicon_ttft_ms", _positive),
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
                                        deployment=deployment, client=client)
    except (ValueError, KeyError) as exc:
        res.reason = where + str(exc)
        return res
    try:
        report = aisimulate.replay(spec)
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
    sched = spec["engine"]["scheduler"]
    res.max_num_batched_tokens, res.max_num_seqs = sched["max_num_batched_tokens"], sched["max_num_seqs"]
    md = report.metadata
    res.perf_model = str(md.get("perf_model", ""))
    tables = (md.get("perf_metadata") or {}).get("tables") or []
    res.tables = ";".join(f"{t['table']}@{t['read_from_version']}" for t in tables)
    res.status = "ok"
    return res


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
             deployment: str = "aic-generator", client: str = "aiperf") -> list[RowResult]:
    """Simulate every row (in input order); ``jobs`` > 1 uses that many processes.
    ``length_ratio`` < 1 draws each request's ISL and OSL uniformly in [ratio·L, L]
    instead of using the row's fixed lengths (1, the default). ``steady_state``
    measures whole waves after the first instead of the benchmark window of 10·c
    requests from an idle engine; ``deployment`` chooses the engine limits and
    ``client`` the load generator's path (module docstring).

    Raises:
        ValueError: ``length_ratio`` outside (0, 1], an unknown ``deployment`` or an
            unknown ``client``."""
    check_length_ratio(length_ratio)
    _check_deployment(deployment)
    _check_client(client)
    args = [(r, perf, aliases, str(model_configs), str(database), perf_overrides, length_ratio,
             steady_state, deployment, client) for r in rows]
    if jobs > 1 and len(args) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            return list(ex.map(_run_star, args, chunksize=1))
    return [_run_star(a) for a in args]


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.4f}"
    return str(v)


def write_rows(results: Iterable[RowResult], path: str | os.PathLike[str]) -> None:
    """Write ``rows.csv``: :data:`ROW_COLUMNS`, one line per input row."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(ROW_COLUMNS)
        for r in results:
            ok = r.status == "ok"
            w.writerow([_fmt(getattr(r, c)) if (ok or not c.endswith("error_pct")) else ""
                        for c in ROW_COLUMNS])


def mape_table(results: Sequence[RowResult]) -> list[dict[str, Any]]:
    """MAPE of TTFT and TPOT (%) per (model, system, TP), then one ``overall`` line and,
    when the ok rows mix precisions, one ``overall [precision]`` line per precision
    (``[checkpoint]`` for an empty one).

    Each dict has ``model``, ``system``, ``tp``, ``rows`` (ok rows), ``ttft_mape_pct``,
    ``tpot_mape_pct``. Groups are sorted by (model, system, TP). With no ok row the
    list is empty (a MAPE of nothing is not a number).
    """
    ok = [r for r in results if r.status == "ok"]
    if not ok:
        return []
    groups: dict[tuple[str, str, int], list[RowResult]] = {}
    for r in ok:
        groups.setdefault((r.model, r.system, r.tp), []).append(r)

    def line(model: str, system: str, tp: Any, rs: list[RowResult]) -> dict[str, Any]:
        n = len(rs)
        return {"model": model, "system": system, "tp": tp, "rows": n,
                "ttft_mape_pct": sum(abs(r.ttft_error_pct) for r in rs) / n,
                "tpot_mape_pct": sum(abs(r.tpot_error_pct) for r in rs) / n}

    out = [line(*k, groups[k]) for k in sorted(groups)]
    out.append(line("overall", "", "", ok))
    by_precision: dict[str, list[RowResult]] = {}
    for r in ok:
        by_precision.setdefault(r.precision.strip() or "checkpoint", []).append(r)
    if len(by_precision) > 1:
        out += [line(f"overall [{p}]", "", "", by_precision[p]) for p in sorted(by_precision)]
    return out


def format_mape(table: Sequence[dict[str, Any]], skipped: int, perf: str, settings: str = "") -> str:
    """The MAPE table as fixed-width text; ``settings`` (how the rows were simulated)
    goes on the first line after the perf source."""
    lines = [f"perf source: {perf}" + (f"; {settings}" if settings else ""),
             f"{'model':36s} {'system':9s} {'TP':>3s} {'rows':>4s} {'TTFT MAPE %':>11s} {'TPOT MAPE %':>11s}"]
    for t in table:
        lines.append(f"{t['model']:36s} {t['system']:9s} {str(t['tp']):>3s} {t['rows']:4d} "
                     f"{t['ttft_mape_pct']:11.1f} {t['tpot_mape_pct']:11.1f}")
    lines.append(f"skipped rows: {skipped}")
    return "\n".join(lines)


def settings_text(*, deployment: str, client: str, steady_state: bool, length_ratio: float) -> str:
    """How the rows were simulated, in one line (for the printed table and the plot)."""
    window = "steady-state waves" if steady_state else "benchmark window (10·c from idle)"
    lengths = "fixed lengths" if length_ratio >= 1 else f"lengths uniform in [{length_ratio:g}·L, L]"
    return f"deployment {deployment}; client {client}; {window}; {lengths}"


def write_mape(table: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["model", "system", "tp", "rows", "ttft_mape_pct", "tpot_mape_pct"])
        w.writeheader()
        for t in table:
            w.writerow({k: _fmt(v) if isinstance(v, float) else v for k, v in t.items()})


def write_plot(results: Sequence[RowResult], path: str | os.PathLike[str], title: str) -> None:
    """Predicted vs measured TTFT and TPOT, log axes, the y = x line and ±20 % / ±10 %."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in results if r.status == "ok"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    for ax, metric, band in ((axes[0], "ttft", 0.20), (axes[1], "tpot", 0.10)):
        xs = [getattr(r, f"silicon_{metric}_ms") for r in ok]
        ys = [getattr(r, f"predicted_{metric}_ms") for r in ok]
        systems = sorted({r.system for r in ok})
        for s in systems:
            pts = [(x, y) for x, y, r in zip(xs, ys, ok) if r.system == s]
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, label=s)
        if xs:
            lo, hi = min(xs + ys) / 1.5, max(xs + ys) * 1.5
            ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
            ax.plot([lo, hi], [lo * (1 + band), hi * (1 + band)], "k:", lw=0.6)
            ax.plot([lo, hi], [lo * (1 - band), hi * (1 - band)], "k:", lw=0.6)
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"measured mean {metric.upper()} (ms)")
        ax.set_ylabel(f"predicted mean {metric.upper()} (ms)")
        ax.set_title(f"{metric.upper()} (dotted: ±{int(band * 100)} %)")
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
