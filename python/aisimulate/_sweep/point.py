"""One sweep point: replay a compiled spec and flatten its report into a row of metrics.

This runs in a worker process (loky or Ray) or in the caller's process; it never
raises for a point's own failure: the outcome is a :class:`PointResult` whose
``status`` is ``ok``, ``infeasible`` (the deployment cannot start:
:class:`~aisimulate.errors.InfeasibleError`) or ``error`` (any other exception, with
the exception kept so ``errors="raise"`` can re-raise it in the caller).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..binding import lazy as _lazy
from ..errors import InfeasibleError
from ..report import LATENCY_METRICS, SLO_FIELDS, SUMMARY_COUNTS, stat_fields

__all__ = ["PointResult", "RowOptions", "run_point", "metric_columns", "SUMMARY_SCALARS", "DERIVED", "LOAD_COLUMNS", "SLO_FIELDS",
           "SLO_COLUMNS", "COUNT_COLUMNS"]

#: Scalar summary values, in column order (docs/metrics.md).
SUMMARY_SCALARS: tuple[str, ...] = (
    "completed", "rejected", "failed", "canceled", "duration_ms", "request_throughput_rps",
    "output_token_throughput_tps", "gpu_hours", "total_input_tokens", "total_output_tokens",
    "total_cached_tokens", "preemptions",
)

#: Columns derived per point (docs/metrics.md, "Sweeps"): the deployment's GPU count
#: (``metadata.gpus``); output tokens/s per GPU = output_token_throughput_tps / gpus;
#: output tokens/s per user = AIPerf's output_token_throughput_per_user averaged over
#: completed requests, mean of 1000 / tpot_ms (requests of ≥ 2 output tokens).
DERIVED: tuple[str, ...] = ("gpus", "output_tps_per_gpu", "output_tps_per_user")

#: The load columns (docs/metrics.md): the summary's in_flight mean and peak, its
#: worker_utilization mean, min and max, and its saturation diagnosis (the one line;
#: null when the deployment kept up, or a burst sent within one pass was not judged).
LOAD_COLUMNS: tuple[str, ...] = ("in_flight.mean", "in_flight.peak", "worker_utilization.mean",
                                 "worker_utilization.min", "worker_utilization.max", "saturation")

#: The metric columns that count (the summary's counts, :data:`SUMMARY_COUNTS`, and the
#: GPUs): whole numbers, float64 in the sweep's DataFrame once a failed point leaves NaN
#: in them.
COUNT_COLUMNS: tuple[str, ...] = (*(c for c in SUMMARY_SCALARS if c in SUMMARY_COUNTS), "gpus", "in_flight.peak")

#: Columns added when an SLO is given: goodput_rps = completed requests meeting every
#: threshold / duration (s) (AIPerf's goodput); slo_attainment = that count / completed.
SLO_COLUMNS: tuple[str, ...] = ("goodput_rps", "slo_attainment")


def metric_columns(slo: Mapping[str, float] | None, percentiles: Sequence[float] = ()) -> list[str]:
    """Every metric column of a sweep row, in order: summary scalars, derived values,
    the load columns, the SLO columns when ``slo`` is given, then ``metric.stat`` for each latency metric
    (ttft_ms, tpot_ms, itl_ms, e2e_ms) and stat (mean, std, min, max, p50, p90, p95, p99,
    then each of the chosen ``percentiles`` they lack: ``ttft_ms.p99.9``;
    :func:`aisimulate.report.stat_fields`)."""
    cols = list(SUMMARY_SCALARS) + list(DERIVED) + list(LOAD_COLUMNS)
    if slo:
        cols += list(SLO_COLUMNS)
    cols += [f"{m}.{s}" for m in LATENCY_METRICS for s in stat_fields(percentiles)]
    return cols


@dataclass(frozen=True)
class RowOptions:
    """What every row of a sweep is asked for beyond the fixed columns, sent with each
    point to its worker: the SLO (its columns) and the chosen percentiles (each
    point's replay is asked for them, ``replay(percentiles=…)``; both checked)."""

    slo: Mapping[str, float] | None = None
    percentiles: tuple[float, ...] = ()


@dataclass
class PointResult:
    """The outcome of one point.

    Attributes:
        index: the point's position in the sweep.
        status: ``ok``, ``infeasible`` or ``error``.
        reason: ``"ExceptionType: message"`` of a failed point; when ok, ``None``, or why
            no request completed (``no request completed (5 rejected); request 0 was …``).
        metrics: metric column → value (empty unless ok; a value the report does not
            have is ``None``).
        error: the exception of a failed point (pickled back from the worker intact).
        report: the :class:`~aisimulate.ReplayReport` when reports were asked for.
        warnings: the messages of the :class:`~aisimulate.BackendVersionWarning` its
            replay raised (in a worker process they would be lost: the caller warns).
    """

    index: int
    status: str
    reason: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    error: BaseException | None = None
    report: Any = None
    warnings: list[str] = field(default_factory=list)


def failed(index: int, exc: BaseException) -> PointResult:
    """The result of a point that raised ``exc``."""
    status = "infeasible" if isinstance(exc, InfeasibleError) else "error"
    return PointResult(index, status, f"{type(exc).__name__}: {exc}", error=exc)


def run_point(index: int, spec_data: Mapping[str, Any], row: RowOptions | None = None,
              keep_report: bool = False) -> PointResult:
    """Replay ``spec_data`` (a compiled spec) and return its row (with ``row``'s SLO
    and percentiles); never raises for the point's own errors (KeyboardInterrupt and
    SystemExit still propagate)."""
    import warnings

    from ..run.replay import replay  # in the worker process: the native core loads here
    from ..config import Spec
    from ..errors import BackendVersionWarning
    from ..report_text import none_completed

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BackendVersionWarning)
            row = row or RowOptions()
            report = replay(Spec(dict(spec_data)),  # compiled by the caller: not again
                            percentiles=list(row.percentiles) if row.percentiles else None)
        notes = [str(w.message) for w in caught if issubclass(w.category, BackendVersionWarning)]
        for w in caught:  # any other warning as it would have been shown
            if not issubclass(w.category, BackendVersionWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        metrics = flatten(report, row.slo, row.percentiles)
        reason = none_completed(report)  # ran, but every metric is null: say why
    except Exception as exc:  # every failure of the point becomes its row
        return failed(index, exc)
    return PointResult(index, "ok", reason, metrics, report=report if keep_report else None, warnings=notes)


def _number(v: Any) -> Any:
    """A finite number as is; anything else (None, NaN, a non-number) as None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def flatten(report: Any, slo: Mapping[str, float] | None, percentiles: Sequence[float] = ()) -> dict[str, Any]:
    """The metric columns of ``report`` (see :func:`metric_columns`, with the chosen
    ``percentiles`` the replay was asked for); summary values are
    the core's, unchanged; summary keys not listed there follow, flattened the same way."""
    np = _lazy.module("numpy")

    s = report.summary
    out: dict[str, Any] = {k: _number(s.get(k)) for k in SUMMARY_SCALARS}
    gpus = _number(report.metadata.get("gpus"))
    out["gpus"] = gpus
    tps = out["output_token_throughput_tps"]
    out["output_tps_per_gpu"] = tps / gpus if tps is not None and gpus else None
    done = report.completed_values(list(SLO_FIELDS))
    tpot = done["tpot_ms"]
    tpot = tpot[tpot > 0]  # NaN (fewer than 2 output tokens) compares False
    out["output_tps_per_user"] = float(np.mean(1000.0 / tpot)) if len(tpot) else None
    if slo:
        # a request meets the SLO when each of its values is within the threshold; a
        # null value (a TPOT below 2 output tokens) misses it, as AIPerf counts good
        # requests (a record without the SLO's metric is not good); NaN <= limit is False
        n = len(done["ttft_ms"])
        meets = np.ones(n, dtype=bool)
        for key, limit in slo.items():
            meets &= done[key] <= limit
        good = int(meets.sum())
        dur = out["duration_ms"]
        out["goodput_rps"] = good / (dur / 1000.0) if dur else None
        out["slo_attainment"] = good / n if n else None
    in_flight = s.get("in_flight") if isinstance(s.get("in_flight"), Mapping) else {}
    out["in_flight.mean"], out["in_flight.peak"] = _number(in_flight.get("mean")), _number(in_flight.get("peak"))
    util = s.get("worker_utilization") if isinstance(s.get("worker_utilization"), Mapping) else {}
    for k in ("mean", "min", "max"):
        out[f"worker_utilization.{k}"] = _number(util.get(k))
    saturation = s.get("saturation")
    out["saturation"] = saturation.get("diagnosis") if isinstance(saturation, Mapping) else None
    for m in LATENCY_METRICS:
        stats = s.get(m)
        for st in stat_fields(percentiles):
            out[f"{m}.{st}"] = _number(stats.get(st)) if isinstance(stats, Mapping) else None
    for k, v in s.items():  # anything the core adds later
        if k in out or k in LATENCY_METRICS:
            continue
        if isinstance(v, Mapping):
            for st, x in v.items():
                out.setdefault(f"{k}.{st}", _number(x))
        else:
            out[k] = _number(v)
    return out
