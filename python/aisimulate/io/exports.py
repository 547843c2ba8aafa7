"""A report in the formats other tools read: AIPerf's profile exports and the JSON of
``vllm bench serve --save-result``. docs/exports.md maps every field and lists what has
no simulated counterpart.

- :func:`write_aiperf` (``report.to_aiperf(dir)``, ``aisimulate replay --export aiperf``):
  ``profile_export.jsonl`` (one AIPerf record per request, written by the core from the
  report's columns, never record by record in Python), ``profile_export_aiperf.json``
  (AIPerf's per-metric stats blocks) and ``profile_export_aiperf.csv`` (AIPerf's
  two-section CSV), atomically (:mod:`aisimulate.io.files`).
- :func:`vllm_bench_json` (``report.to_vllm_bench_json()``, ``--export vllm``): the flat
  keys of vLLM's saved benchmark result.

Times are the virtual clock: AIPerf's ``request_start_ns`` / ``request_end_ns`` are ns
from the start of the replay (not the Unix epoch).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from collections.abc import Mapping

from ..binding import lazy as _lazy
from .names import AIPERF_FILES, EXPORT_FILES

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Callable, Sequence

    from ..report import ReplayReport

__all__ = ["AIPERF_FILES", "AIPERF_STATS", "EXPORT_FILES", "aiperf_summary", "aiperf_csv",
           "write_aiperf", "write_export", "vllm_bench_json", "VLLM_METRICS"]

#: AIPerf's stat keys (its ``STAT_KEYS``), in its CSV column order.
AIPERF_STATS = ("avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std")

#: The AIPerf schema version whose fields the JSON carries (per-metric ``count`` and
#: ``sum``: 1.1; the later additions — run_info, warmup_metrics, telemetry — have no
#: simulated counterpart).
AIPERF_SCHEMA_VERSION = "1.1"

# AIPerf record metrics we simulate: tag → (header, unit). Order: AIPerf's console order.
_AIPERF_RECORD = {
    "time_to_first_token": ("Time to First Token", "ms"),
    "time_to_second_token": ("Time to Second Token", "ms"),
    "request_latency": ("Request Latency", "ms"),
    "inter_token_latency": ("Inter Token Latency", "ms"),
    "output_token_throughput_per_user": ("Output Token Throughput Per User", "tokens/sec/user"),
    "prefill_throughput_per_user": ("Prefill Throughput Per User", "tokens/sec/user"),
    "output_sequence_length": ("Output Sequence Length", "tokens"),
    "input_sequence_length": ("Input Sequence Length", "tokens"),
    "output_token_count": ("Output Token Count", "tokens"),
}


#: AIPerf's display header of each tag written (the CSV's metric names).
AIPERF_HEADERS: dict[str, str] = {
    **{tag: header for tag, (header, _) in _AIPERF_RECORD.items()},
    "request_count": "Request Count", "error_request_count": "Error Request Count",
    "benchmark_duration": "Benchmark Duration", "request_throughput": "Request Throughput",
    "output_token_throughput": "Output Token Throughput", "total_token_throughput": "Total Token Throughput",
    "total_output_tokens": "Total Output Tokens", "total_osl": "Total Output Sequence Length",
    "total_isl": "Total Input Sequence Length", "min_request_timestamp": "Minimum Request Timestamp",
    "max_response_timestamp": "Maximum Response Timestamp", "good_request_count": "Good Request Count",
    "goodput": "Goodput", "inter_chunk_latency": "Inter Chunk Latency",
}


def _percentile(v, q: float) -> float:
    np = _lazy.module("numpy")

    return float(np.percentile(v, q))  # numpy's linear interpolation, as AIPerf


def _record_stats(v, unit: str) -> dict[str, Any] | None:
    """AIPerf's stats block of a record metric (``None`` without observations): avg,
    min, max, p1…p99, std (population, numpy's default, as AIPerf's
    ``MetricResult``), count, sum."""
    np = _lazy.module("numpy")

    v = np.asarray(v, dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return None
    out: dict[str, Any] = {"unit": unit, "avg": float(v.mean()),
                           "min": float(v.min()), "max": float(v.max())}
    for q in (1, 5, 10, 25, 50, 75, 90, 95, 99):
        out[f"p{q}"] = _percentile(v, q)
    out["std"] = float(v.std())
    out["count"] = int(v.size)
    out["sum"] = float(v.sum())
    return out


def _chunk_gaps_ms(chunks: Mapping[str, Any], rows) -> Any:
    """Every gap between consecutive chunks of the records selected by ``rows`` (a
    boolean mask over :attr:`ReplayReport.chunk_times`' records), ms as AIPerf converts
    ns (× 1000 / 10⁹), record after record."""
    np = _lazy.module("numpy")

    starts = chunks["start"][rows].astype(np.int64)
    gaps = np.maximum(chunks["count"][rows].astype(np.int64) - 1, 0)  # a record of k chunks has k − 1
    first = np.cumsum(gaps) - gaps  # where each record's gaps begin in the pooled list
    later = np.repeat(starts + 1 - first, gaps) + np.arange(int(gaps.sum()))  # each gap's later chunk
    times = chunks["times"]
    return (times[later] - times[later - 1]) * (1000 / 1e9)


def _scalar(value: Any, unit: str) -> dict[str, Any] | None:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    # AIPerf's MetricResult types avg as a float, so a count is written 200.0 (and its
    # CSV's "Request Count,200.00")
    return {"unit": unit, "avg": float(value)}


def aiperf_summary(report: "ReplayReport") -> dict[str, Any]:
    """The content of ``profile_export_aiperf.json``: ``schema_version``, provenance,
    then one stats block per metric (AIPerf's tags, units and fields; see
    docs/exports.md), from the report's per-request columns (numpy, no record loop) and
    its summary. Record metrics are over completed requests, as AIPerf's are over valid
    records.
    """
    np = _lazy.module("numpy")

    cols = report.record_columns()
    s = report.summary
    completed = cols["status"] == cols["_statuses"].index("completed") if "completed" in cols["_statuses"] \
        else np.zeros(len(cols["request_id"]), dtype=bool)
    isl = cols["input_tokens"][completed].astype(np.float64)
    osl = cols["output_tokens"][completed].astype(np.float64)
    ttft = cols["ttft_ms"][completed]
    tpot = cols["tpot_ms"][completed]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_user = np.where(tpot > 0, 1000.0 / tpot, np.nan)
        prefill = np.where(ttft > 0, isl / (ttft / 1000.0), np.nan)
    record_values = {
        "time_to_first_token": ttft,
        "time_to_second_token": cols["ttst_ms"][completed] if "ttst_ms" in cols else np.array([]),
        "request_latency": cols["e2e_ms"][completed],
        "inter_token_latency": tpot,
        "output_token_throughput_per_user": per_user,
        "prefill_throughput_per_user": prefill,
        "output_sequence_length": osl,
        "input_sequence_length": isl,
        "output_token_count": osl,
    }
    doc: dict[str, Any] = {"schema_version": AIPERF_SCHEMA_VERSION,
                           "aisimulate_version": report.metadata.get("aisimulate_version"),
                           "was_cancelled": False}
    for tag, (_, unit) in _AIPERF_RECORD.items():
        block = _record_stats(record_values[tag], unit)
        if block is not None:
            doc[tag] = block
    chunks = getattr(report, "chunk_times", None)
    if chunks is not None:  # AIPerf pools every record's inter_chunk_latency list
        block = _record_stats(_chunk_gaps_ms(chunks, completed), "ms")
        if block is not None:
            doc["inter_chunk_latency"] = block
    errors = int(np.count_nonzero(~completed))
    duration_s = s.get("duration_ms") / 1000.0 if s.get("duration_ms") is not None else None
    total_isl, total_osl = int(isl.sum()), int(osl.sum())
    # the measured window (AIPerf: first valid request sent, last valid response received)
    start_ms = report.metadata.get("window_start_ms")
    if not isinstance(start_ms, (int, float)):
        start_ms = float(cols["send_ms"].min()) if len(cols["send_ms"]) else None
    start_ns = None if start_ms is None else int(round(start_ms * 1e6))
    scalars = {
        "request_count": (int(np.count_nonzero(completed)), "requests"),
        "error_request_count": (errors, "requests"),
        "benchmark_duration": (duration_s, "sec"),
        "request_throughput": (s.get("request_throughput_rps"), "requests/sec"),
        "output_token_throughput": (s.get("output_token_throughput_tps"), "tokens/sec"),
        "total_token_throughput": ((total_isl + total_osl) / duration_s if duration_s else None,
                                   "tokens/sec"),
        "total_output_tokens": (total_osl, "tokens"),
        "total_osl": (total_osl, "tokens"),
        "total_isl": (total_isl, "tokens"),
        "min_request_timestamp": (start_ns, "ns"),
        "max_response_timestamp": (start_ns + int(round(s["duration_ms"] * 1e6))
                                   if start_ns is not None and duration_s is not None else None, "ns"),
    }
    goodput = s.get("goodput")
    if isinstance(goodput, Mapping):
        scalars["good_request_count"] = (goodput.get("good_requests"), "requests")
        scalars["goodput"] = (goodput.get("goodput_rps"), "requests/sec")
    for tag, (value, unit) in scalars.items():
        block = _scalar(value, unit)
        if block is not None:
            doc[tag] = block
    # AIPerf's input_config is its own BenchmarkConfig; the replay's spec has its own key
    doc["aisimulate_spec"] = report.metadata.get("spec")
    return doc


def aiperf_csv(doc: Mapping[str, Any]) -> str:
    """``profile_export_aiperf.csv`` from :func:`aiperf_summary`'s document, in AIPerf's
    two-section layout: ``Metric`` + :data:`AIPERF_STATS` rows for metrics with
    percentiles (sorted by tag), a blank line, then ``Metric,Value`` rows; a metric is
    named ``Header (unit)`` (no unit for requests); numbers with 2 decimals, integers
    as integers."""
    blocks = {k: v for k, v in doc.items() if isinstance(v, Mapping) and "unit" in v and "avg" in v}
    request = {k: v for k, v in blocks.items() if "p50" in v}
    system = {k: v for k, v in blocks.items() if "p50" not in v}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")  # csv.writer's default, as AIPerf's

    def name(tag: str, b: Mapping[str, Any]) -> str:
        header = AIPERF_HEADERS.get(tag, tag)
        unit = b.get("unit") or ""
        return f"{header} ({unit})" if unit and unit.lower() not in ("count", "requests") else header

    def num(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, bool):
            return str(v)
        if isinstance(v, int):
            return str(v)
        return f"{float(v):.2f}"

    if request:
        w.writerow(["Metric", *AIPERF_STATS])
        for tag, b in sorted(request.items()):
            w.writerow([name(tag, b), *(num(b.get(k)) for k in AIPERF_STATS)])
        if system:
            w.writerow([])
    if system:
        w.writerow(["Metric", "Value"])
        for tag, b in sorted(system.items()):
            w.writerow([name(tag, b), num(b["avg"])])
    return buf.getvalue()


def write_aiperf(report: "ReplayReport", directory, *, progress: bool | None = None,
                 inputs: Sequence[str] = (), force: bool = False) -> dict[str, Path]:
    """Write :data:`AIPERF_FILES` into ``directory`` atomically (all or none replaced);
    without ``force``, files of those names that an earlier aisimulate result did not
    write are refused (:class:`aisimulate.io.files.ForeignFileError`).

    Returns:
        file name → path.

    Raises:
        ValueError: ``directory`` is empty.
        ConfigError: a file would overwrite an input of the replay, or ``directory`` is a
            file, or (ForeignFileError) one that aisimulate did not write.
        OSError: a file cannot be written (nothing is replaced).
    """
    from . import files as _files
    from ..binding.calls import save_progress

    n = report.record_count()
    out = _files.ResultDir(directory, inputs=inputs, marker=AIPERF_FILES[1], force=force)
    out.check_names(AIPERF_FILES)
    with save_progress(progress, n, "aiperf export") as advance, out:
        write_export(report, "aiperf", out, advance)
        return out.commit()


def write_export(report: "ReplayReport", export: str, out, advance: Callable[[int], None]) -> dict[str, Path]:
    """Write ``export``'s files to temporary paths of ``out`` (an open
    :class:`aisimulate.io.files.ResultDir`; the caller commits).

    Returns:
        file name → temporary path.
    """
    from . import files as _files, tables as _tables

    written: dict[str, Path] = {}
    if export == "aiperf":
        cols = dict(report.record_columns())
        n = len(cols["request_id"])
        cols["session_num"] = conversation_numbers(cols["session_id"])
        cols["_header"] = {**cols["_header"], "session_num": {"name": "session_num"}}
        entries = dataset_entries(report.metadata.get("spec"), cols["request_id"])
        if entries is not None:
            cols["dataset_entry"] = entries
            cols["_header"]["dataset_entry"] = {"name": "dataset_entry", "nullable": True}
        times = None
        chunks = getattr(report, "chunk_times", None)
        if chunks is not None:  # each completed record's inter_chunk_latency
            cols["chunk_offset"], cols["chunk_count"] = chunks["start"], chunks["count"]
            cols["_header"].update(chunk_offset={"name": "chunk_offset"}, chunk_count={"name": "chunk_count"})
            times = chunks["times"]
        written[AIPERF_FILES[0]] = out.temp(AIPERF_FILES[0])
        _tables.write_text(cols, list(cols["_header"]), n, written[AIPERF_FILES[0]], "aiperf", advance, times=times)
        doc = aiperf_summary(report)
        written[AIPERF_FILES[2]] = out.temp(AIPERF_FILES[2])
        written[AIPERF_FILES[2]].write_text(aiperf_csv(doc), encoding="utf-8", newline="")
        # the other files' sizes: a file replaced since is not taken for ours (_files.previous_result)
        doc[_files.AISIMULATE_FILES_KEY] = {n: written[n].stat().st_size for n in AIPERF_FILES[::2]}
        written[AIPERF_FILES[1]] = out.temp(AIPERF_FILES[1])
        written[AIPERF_FILES[1]].write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    elif export == "vllm":
        name = EXPORT_FILES["vllm"][0]
        written[name] = out.temp(name)
        written[name].write_text(json.dumps(vllm_bench_json(report), indent=2, allow_nan=False) + "\n",
                                 encoding="utf-8")
    else:
        raise ValueError(f"unknown export {export!r}: choose from {', '.join(EXPORT_FILES)}")
    return written


def dataset_entries(spec: Any, request_id):
    """The synthetic dataset entry of each row (by its ``request_id``), drawn as the
    replay drew them (the core's ``DatasetEntries``), or ``None`` when ``spec`` (the
    report's ``metadata.spec``) has no dataset: AIPerf's records name the dataset
    conversation a re-sent prompt came from, and ``compare`` links them by it."""
    if not isinstance(spec, Mapping):
        return None
    source = (spec.get("traffic") or {}).get("source") or {}
    if source.get("type") != "synthetic" or not source.get("dataset"):
        return None
    np = _lazy.module("numpy")

    from ..binding import native as _native

    got = _native.call("DatasetEntries", json.dumps(spec), "entries")["ids"]
    if got is None:
        return None
    return np.asarray(got, dtype=np.int64)[np.asarray(request_id, dtype=np.int64)]


def conversation_numbers(session_id):
    """AIPerf's ``session_num`` of each row (rows in ``request_id`` order): the
    conversations, a session (``session_id`` ≥ 0, its rows its turns) or a request
    outside one (``session_id`` < 0, null), numbered 0, 1, … together in order of
    first appearance, so that two conversations never share a number (AIPerf's
    exporters key records by ``session_num`` and ``turn_index``)."""
    np = _lazy.module("numpy")

    sid = np.asarray(session_id)
    rows = np.flatnonzero(sid >= 0)
    starts = np.ones(len(sid), dtype=bool)  # a row that starts a conversation
    _, first, which = np.unique(sid[rows], return_index=True, return_inverse=True)
    starts[rows] = False
    starts[rows[first]] = True
    num = np.cumsum(starts, dtype=np.int64) - 1
    num[rows] = num[rows[first]][which.reshape(-1)]
    return num


#: vLLM's metric names (``--percentile-metrics``) → the summary's statistic.
VLLM_METRICS = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2e_ms"}


def vllm_bench_json(report: "ReplayReport", percentiles: float | Sequence[float] | None = None) -> dict[str, Any]:
    """The flat keys ``vllm bench serve --save-result`` writes, from the summary:
    ``duration`` (s), ``completed``, ``failed``, ``total_input_tokens``,
    ``total_output_tokens``, ``request_throughput``, ``request_goodput`` (None without
    an SLO), ``output_throughput``, ``total_token_throughput``, and for each of ttft,
    tpot, itl, e2el ``mean_X_ms``, ``median_X_ms``, ``std_X_ms`` (population, as
    numpy's default that vLLM uses) and ``pP_X_ms`` per percentile, ``P`` written as
    vLLM writes it (``p99_ttft_ms``, ``p99.9_ttft_ms``: ``str(int(p))`` for a whole
    number, else ``str(p)``).

    Args:
        percentiles: the percentiles the summary holds: 50, 90, 95, 99, those the
            replay was asked for (``replay(percentiles=…)``, ``metadata["percentiles"]``)
            and 0 (numpy's 0th percentile, the minimum); one number or a list of them.
            ``None`` (default): the replay's chosen percentiles, or 99 (vLLM's default
            ``--metric-percentiles``) when it had none.

    Raises:
        ValueError: a percentile the summary does not hold.
        TypeError: ``percentiles`` is neither a number nor a list of numbers.
    """
    import numbers

    from .names import percentile_key, vllm_percentile_word

    s = report.summary
    chosen = report.metadata.get("percentiles") or []
    if percentiles is None:
        percentiles = chosen or [99]
    given = percentiles
    if isinstance(given, numbers.Real) and not isinstance(given, bool):
        percentiles = [given]
    elif not isinstance(given, (str, bytes, Mapping)) and hasattr(given, "__iter__"):
        percentiles = list(given)
    else:
        percentiles = [None]
    held = sorted({0.0, 50.0, 90.0, 95.0, 99.0, *map(float, chosen)})
    words = ", ".join(f"{p:g}" for p in held)
    if not all(isinstance(p, numbers.Real) and not isinstance(p, bool) for p in percentiles):
        raise TypeError(f"percentiles must be one of {words} or a list of them, "
                        f"got {given!r} ({type(given).__name__})")
    bad = [p for p in percentiles if float(p) not in held]
    if bad:
        raise ValueError(f"percentiles {bad}: the report holds {words} (replay(..., percentiles=[...]) "
                         "adds others)")
    duration_s = s["duration_ms"] / 1000.0 if s.get("duration_ms") is not None else None
    total_in, total_out = s.get("total_input_tokens"), s.get("total_output_tokens")
    goodput = s.get("goodput")
    out: dict[str, Any] = {
        "backend": "aisimulate",
        "model_id": report.metadata.get("model"),
        "num_prompts": sum(int(s.get(k) or 0) for k in ("completed", "rejected", "failed", "canceled")),
        "duration": duration_s,
        "completed": s.get("completed"),
        "failed": sum(int(s.get(k) or 0) for k in ("rejected", "failed", "canceled")),
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": s.get("request_throughput_rps"),
        "request_goodput": goodput.get("goodput_rps") if isinstance(goodput, Mapping) else None,
        "output_throughput": s.get("output_token_throughput_tps"),
        "total_token_throughput": (total_in + total_out) / duration_s
        if duration_s and total_in is not None and total_out is not None else None,
    }
    for k in ("duration", "request_throughput", "output_throughput", "total_token_throughput"):
        out[k] = None if out[k] is None else float(out[k])  # vLLM's are floats (numpy's)

    def stat(st: Mapping[str, Any], k: str) -> float:
        # vLLM's calculate_metrics takes np.mean(x or 0) etc.: 0.0 without a sample
        return 0.0 if st.get(k) is None else float(st[k])

    for name, key in VLLM_METRICS.items():
        st = s.get(key) if isinstance(s.get(key), Mapping) else {}
        out[f"mean_{name}_ms"] = stat(st, "mean")
        out[f"median_{name}_ms"] = stat(st, "p50")
        out[f"std_{name}_ms"] = stat(st, "std")
        for p in percentiles:
            out[f"p{vllm_percentile_word(p)}_{name}_ms"] = stat(st, "min" if p == 0 else percentile_key(p))
    return out
