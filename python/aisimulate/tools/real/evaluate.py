"""Replaying real runs and comparing the metrics."""

from __future__ import annotations

import csv
import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

from .runs import RealRun

#: Compared metrics: means and percentiles in ms, throughput in requests/s. TPOT is
#: each source's own definition (llmservingsim: per-request mean; apex_plus:
#: token-weighted decode time per output token).
METRICS = ("ttft_mean", "ttft_p50", "ttft_p90", "tpot_mean", "e2e_mean", "throughput_rps")


@dataclass
class RunResult:
    """One run under one perf source: measured and predicted metrics, or a skip reason."""
    source: str
    name: str
    perf: str
    status: str  # "ok" | "skipped"
    reason: str = ""
    exact_tables: bool = True
    measured: dict[str, float] = field(default_factory=dict)
    predicted: dict[str, float] = field(default_factory=dict)
    tables: str = ""

    def error_pct(self, metric: str) -> float:
        """100·(predicted − measured)/measured, NaN when either is missing."""
        m, p = self.measured.get(metric), self.predicted.get(metric)
        if m is None or p is None or not m:
            return math.nan
        return 100 * (p - m) / m


def predicted_metrics(report: Any, source: str) -> dict[str, float]:
    """The replay's metrics in the source's definitions (see :data:`METRICS`); times
    from the request's arrival at the engine (no client path)."""
    import numpy as np

    done = [r for r in report.requests if r["status"] == "completed"]
    if not done:
        raise ValueError("no request completed")
    ttft = [r["first_token_ms"] - r["arrival_ms"] for r in done if r["first_token_ms"] is not None]
    e2e = [r["end_ms"] - r["arrival_ms"] for r in done]
    out: dict[str, float] = {"ttft_mean": float(np.mean(ttft)), "ttft_p50": float(np.percentile(ttft, 50)),
                             "ttft_p90": float(np.percentile(ttft, 90)), "e2e_mean": float(np.mean(e2e))}
    if source == "apex_plus":
        # Σ(t_last − t_first) / Σ output tokens (first tokens counted), apex_plus's "TPOT"
        decode = sum(r["end_ms"] - r["first_token_ms"] for r in done if r["first_token_ms"] is not None)
        out["tpot_mean"] = decode / sum(r["output_tokens"] for r in done)
    else:
        tp = [(r["end_ms"] - r["first_token_ms"]) / (r["output_tokens"] - 1) for r in done if r["output_tokens"] >= 2]
        out["tpot_mean"] = float(np.mean(tp))
        span = max(r["end_ms"] for r in done) - min(r["arrival_ms"] for r in report.requests)
        out["throughput_rps"] = len(done) / (span / 1e3)
    return out


def _replay(args: tuple[RealRun, str, str]) -> RunResult:
    import aisimulate

    run, perf, database = args
    res = RunResult(run.source, run.name, perf, "skipped", exact_tables=run.exact_tables, measured=dict(run.measured))
    if run.spec is None:
        res.reason = run.skip or "no replay spec"
        return res
    spec = run.spec_for(perf, database)
    try:
        aisimulate.check(spec)  # the model and deployment first: its reason beats a run-level skip
    except (aisimulate.ConfigError, aisimulate.SimulationError) as exc:
        res.reason = str(exc)
        return res
    if run.skip:
        res.reason = run.skip
        return res
    try:
        report = aisimulate.replay(spec)
        res.predicted = predicted_metrics(report, run.source)
    except (aisimulate.ConfigError, aisimulate.DataError, aisimulate.SimulationError, ValueError) as exc:
        res.reason = f"simulation: {exc}"
        return res
    tables = (report.metadata.get("perf_metadata") or {}).get("tables") or []
    res.tables = ";".join(f"{t['table']}@{t['read_from_version']}" for t in tables)
    res.status = "ok"
    return res


def evaluate(runs: Sequence[RealRun], perfs: Sequence[str], database: str | os.PathLike[str],
             jobs: int = 1) -> list[RunResult]:
    """Replay every run under every perf source (runs × perfs, in that order)."""
    args = [(r, p, str(database)) for p in perfs for r in runs]
    if jobs > 1 and len(args) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            return list(ex.map(_replay, args, chunksize=1))
    return [_replay(a) for a in args]


def mape_by_source(results: Sequence[RunResult], exact_only: bool = False) -> list[dict[str, Any]]:
    """MAPE % per (source, perf) and metric over the ok runs (``exact_only``: only runs
    whose perf tables are for their GPU and vLLM version). A metric no run measured is
    NaN there."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        if r.status == "ok" and (r.exact_tables or not exact_only):
            groups.setdefault((r.source, r.perf), []).append(r)
    rows = []
    for (source, perf), rs in sorted(groups.items()):
        row: dict[str, Any] = {"source": source, "perf": perf, "runs": len(rs)}
        for m in METRICS:
            errs = [abs(r.error_pct(m)) for r in rs if not math.isnan(r.error_pct(m))]
            row[m] = sum(errs) / len(errs) if errs else math.nan
        rows.append(row)
    return rows


def write_results(results: Sequence[RunResult], path: str | os.PathLike[str]) -> None:
    """One CSV line per (run, perf): status, reason, measured, predicted and error % per metric."""
    cols = ["source", "name", "perf", "status", "reason", "exact_tables", "tables"]
    for m in METRICS:
        cols += [f"measured_{m}", f"predicted_{m}", f"error_pct_{m}"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in results:
            line = [r.source, r.name, r.perf, r.status, r.reason, r.exact_tables, r.tables]
            for m in METRICS:
                e = r.error_pct(m)
                line += [_fmt(r.measured.get(m)), _fmt(r.predicted.get(m)), "" if math.isnan(e) else f"{e:.2f}"]
            w.writerow(line)


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.4f}"
