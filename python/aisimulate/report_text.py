"""The text table of a replay's result (:meth:`aisimulate.ReplayReport.table`): the
summary's counts, rates, GPU hours and token totals, then the latency statistics in
fixed-width columns, as vLLM's benchmark_serving prints its result. It reads the
report's ``summary`` and ``metadata`` dicts only; :func:`none_completed`, the note of a
replay in which nothing completed, reads its records too."""

from __future__ import annotations

import math
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any

#: The statistics the table shows, in column order (a stats dict's keys but ``std``).
_TABLE_STATS = ("mean", "p50", "p90", "p95", "p99", "min", "max")
#: Rows of the table's latency section (ms).
_TABLE_METRICS = ("ttft_ms", "ttst_ms", "tpot_ms", "itl_ms", "e2e_ms")
_DASH = "\u2014"
#: Rows newer reports have; one from before such a metric existed skips it.
_NEWER_METRICS = frozenset({"ttst_ms"})


def table_stats(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The table's statistic columns: mean, the percentiles the replay was asked for
    (``metadata["percentiles"]``; p50, p90, p95, p99 without them), min, max."""
    from .io.names import percentile_key

    chosen = metadata.get("percentiles")
    if not isinstance(chosen, list) or not chosen:
        return _TABLE_STATS
    return ("mean", *(percentile_key(p) for p in chosen), "min", "max")


def summary_table(summary: Mapping[str, Any], metadata: Mapping[str, Any],
                  cost: Mapping[str, Any] | None = None) -> str:
    """The table of a report's ``summary`` and ``metadata``, with ``cost`` (a
    :meth:`aisimulate.ReplayReport.cost` dict) when one is given."""
    s = summary
    stat_cols = table_stats(metadata)
    # label column + a column per statistic, at least the default's 7 (the rows above
    # the latency section keep their room)
    width = 11 + 10 * max(len(stat_cols), len(_TABLE_STATS))
    lines = [" aisimulate replay ".center(width, "=")]
    title = report_title(metadata)
    if title:
        lines.append(title)
    saturation = s.get("saturation")
    if isinstance(saturation, Mapping) and isinstance(saturation.get("diagnosis"), str):
        diagnosis = saturation["diagnosis"]
        lines.append(diagnosis[:1].upper() + diagnosis[1:])  # the deployment did not keep up
    rows = [
        ("Completed requests", _fmt_int(s.get("completed"))),
        ("Rejected requests", _fmt_int(s.get("rejected"))),
        ("Failed requests", _fmt_int(s.get("failed"))),
        ("Canceled requests", _fmt_int(s.get("canceled"))),
        ("Duration (ms)", _fmt(s.get("duration_ms"), 2)),
        ("Request throughput (req/s)", _fmt(s.get("request_throughput_rps"), 3)),
        ("Output token throughput (tok/s)", _fmt(s.get("output_token_throughput_tps"), 2)),
    ]
    per_user = s.get("output_token_throughput_per_user")
    if isinstance(per_user, Mapping) or "output_token_throughput_per_user" in s:
        rows.append(("Output tok/s per user (mean)", _fmt(_stat(per_user, "mean"), 2)))
    goodput = s.get("goodput")
    if isinstance(goodput, Mapping):
        bounds = ", ".join(f"{k} \u2264 {v:g}" for k, v in (goodput.get("slo") or {}).items())
        att = goodput.get("slo_attainment")
        rows.append(("SLO (ms)", bounds))
        rows.append(("Good requests (within the SLO)",
                     f"{_fmt_int(goodput.get('good_requests'))} "
                     f"({_fmt(None if _bad(att) else 100 * att, 1)} %)"))
        rows.append(("Request goodput (req/s)", _fmt(goodput.get("goodput_rps"), 3)))
    rows.append(("GPU hours", _fmt_small(s.get("gpu_hours"))))
    if cost is not None:
        c = cost
        rows.append((f"Cost at {c['price_per_gpu_hour']:g} per GPU hour", _fmt(c["total"], 2)))
        rows.append(("Cost per million output tokens", _fmt(c["per_million_output_tokens"], 3)))
    # Totals the core adds (completed requests' tokens, all requests' preemptions).
    for key, label in (("total_input_tokens", "Total input tokens"),
                       ("total_output_tokens", "Total output tokens"),
                       ("total_cached_tokens", "Total cached (prefix-hit) tokens"),
                       ("preemptions", "Preemptions")):
        if key in s:
            rows.append((label, _fmt_int(s[key])))
    if "input_sequence_length" in s:
        rows.append(("Mean input / output tokens (completed)",
                     f"{_fmt(_stat(s.get('input_sequence_length'), 'mean'), 1)} / "
                     f"{_fmt(_stat(s.get('output_sequence_length'), 'mean'), 1)}"))
    in_flight = s.get("in_flight")
    if isinstance(in_flight, Mapping):
        rows.append(("In-flight requests (mean / peak)",
                     f"{_fmt(in_flight.get('mean'), 1)} / {_fmt_int(in_flight.get('peak'))}"))
    # Aggregated: the workers' share of the run in passes (summary.worker_utilization).
    util = s.get("worker_utilization")
    if not metadata.get("disaggregated") and isinstance(util, Mapping):
        rows.append(("Worker busy % (mean / min / max)",
                     " / ".join(_fmt(100 * util[k], 1) for k in ("mean", "min", "max"))))
    # P/D: each pool's GPU hours and busy share (time in passes / duration).
    pools = metadata.get("pools")
    if metadata.get("disaggregated") and isinstance(pools, list):
        duration = s.get("duration_ms") or 0
        for p in pools:
            busy = p.get("worker_busy_ms") or []
            share = (sum(busy) / (len(busy) * duration)) if busy and duration else None
            value = f"{_fmt_small(p.get('gpu_hours'))} GPU h, busy {_fmt(None if share is None else 100 * share, 1)} %"
            rows.append((f"{str(p.get('name')).capitalize()} pool", value))
    for label, value in rows:
        lines.append(f"{label + ':':<40}{value:>{width - 40}}")
    lines.append("-" * width)
    header = f"{'metric (ms)':<11}" + "".join(f" {h:>9}" for h in stat_cols)
    lines.append(header)
    for metric in _TABLE_METRICS:
        if metric in _NEWER_METRICS and metric not in s:
            continue  # a report from before the metric existed
        stats = s.get(metric)
        cells = []
        for h in stat_cols:
            v = stats.get(h) if isinstance(stats, Mapping) else None
            cells.append(f" {_fmt(v, 2):>9}")  # always one space between cells
        lines.append(f"{metric:<11}" + "".join(cells))
    lines.append("=" * width)
    return "\n".join(lines)


def none_completed(report: Any) -> str | None:
    """For a replay whose requests all ended without completing (every latency statistic
    null), the counts and the first such request's reason (its records read until one has
    a reason; never read otherwise); None when a request completed or none was sent."""
    summary = report.summary
    ended = {k: summary.get(k) or 0 for k in ("rejected", "failed", "canceled")}
    if summary.get("completed") or not any(ended.values()):
        return None
    counts = ", ".join(f"{n} {k}" for k, n in ended.items() if n)
    first = next((r for r in report.requests if r.get("status") != "completed" and r.get("reason")), None)
    if first is None:
        return f"no request completed ({counts})"
    return f"no request completed ({counts}); request {first['request_id']} was {first['status']}: {first['reason']}"


def version_notes(metadata: Mapping[str, Any] | None) -> list[str]:
    """The notes on ``engine.backend_version`` (``metadata.backend_version.notes``: the
    release it resolves to, and what stands in for what that release does and is not
    modelled, such as vLLM's V0 engine before 0.8.0 or a release newer than the newest
    known), each prefixed with the field and the version given; [] without any. The
    commands print them (``aisimulate: note: …``) so that a stand-in is not silent."""
    bv = metadata.get("backend_version") if isinstance(metadata, Mapping) else None
    if not isinstance(bv, Mapping):
        return []
    return [f"engine.backend_version {bv.get('given')}: {n}" for n in bv.get("notes") or ()]


def some_not_completed(report: Any) -> str | None:
    """For a replay in which some requests completed and others were rejected, failed or
    canceled, the counts and the first such request's reason (the table shows only the
    counts: a trace whose prompts pass max_model_len, or TensorRT-LLM's max_num_tokens
    without chunked prefill, rejects them silently otherwise); None when every request
    completed or none did (:func:`none_completed` says that)."""
    summary = report.summary
    ended = {k: summary.get(k) or 0 for k in ("rejected", "failed", "canceled")}
    if not summary.get("completed") or not any(ended.values()):
        return None
    counts = ", ".join(f"{n} {k}" for k, n in ended.items() if n)
    first = next((r for r in report.requests if r.get("status") != "completed" and r.get("reason")), None)
    if first is None:
        return f"{counts} of {summary.get('completed', 0) + sum(ended.values())} requests"
    return (f"{counts} of {summary.get('completed', 0) + sum(ended.values())} requests; request "
            f"{first['request_id']} was {first['status']}: {first['reason']}")


def report_title(metadata: Mapping[str, Any]) -> str:
    """``model on system, N workers × TPn[ × DPd][ (EP)], perf model``, or "" when the
    metadata names no model or system."""
    m = metadata
    spec = m.get("spec") if isinstance(m.get("spec"), Mapping) else {}
    engine = spec.get("engine") if isinstance(spec.get("engine"), Mapping) else {}
    model = m.get("model") or engine.get("model")
    system = m.get("system") or engine.get("system")
    if not isinstance(model, str) or not isinstance(system, str):
        return ""
    title = f"{model} on {system}"
    workers, tp, perf = m.get("workers"), m.get("tp"), m.get("perf_model")
    pools = m.get("pools")
    if m.get("disaggregated") and isinstance(pools, list):
        title += ", P/D " + " + ".join(
            f"{p.get('name')} {p.get('workers')} \u00d7 TP{p.get('tp')}{_layout(p)}" for p in pools)
    elif isinstance(workers, int) and isinstance(tp, int):
        title += f", {workers} worker{'s' if workers != 1 else ''} \u00d7 TP{tp}{_layout(m)}"
    if isinstance(perf, str):
        title += f", {perf} perf model"
    return title


def _layout(meta: Mapping[str, Any]) -> str:
    """`` × DP2`` and `` (EP)`` for a data-parallel or expert-parallel worker, else ""."""
    out = ""
    dp = meta.get("data_parallel_size")
    if isinstance(dp, int) and dp > 1:
        out += f" \u00d7 DP{dp}"
    if meta.get("enable_expert_parallel") is True:
        out += " (EP)"
    return out


def _stat(stats: Any, key: str) -> Any:
    """``stats[key]`` of a stats dict, or None."""
    return stats.get(key) if isinstance(stats, Mapping) else None


def _bad(v: Any) -> bool:
    return v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or (
        isinstance(v, float) and not math.isfinite(v))


def _fmt(v: Any, decimals: int) -> str:
    """A number with ``decimals`` decimals (4 when it is small but not zero), or ``—``."""
    if _bad(v):
        return _DASH
    if v != 0 and abs(v) < 0.1:
        decimals = max(decimals, 4)
    return f"{v:.{decimals}f}"


def _fmt_int(v: Any) -> str:
    if _bad(v):
        return _DASH
    return str(int(v))


def _fmt_small(v: Any) -> str:
    """GPU hours: 4 decimals, or 3 significant digits in scientific notation below 0.01."""
    if _bad(v):
        return _DASH
    if v != 0 and abs(v) < 0.01:
        return f"{v:.3e}"
    return f"{v:.4f}"
