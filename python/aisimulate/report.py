"""The result of one replay: per-request records, a summary, run metadata.

Formulas, units and inclusion rules of every field are in ``docs/metrics.md``. In short, all times are milliseconds from the start of the replay (virtual clock);
token counts are tokens:

- ``requests``: one dict per request, keys in the order of the core's record schema
  (:data:`REQUEST_FIELDS`, from ``core/report/fields.go``; docs/metrics.md lists
  them): ``request_id``, ``status``, ``reason``, token counts, the client's timeline
  (``send_ms`` … ``release_ms``), ``ttft_ms``, ``e2e_ms``, ``tpot_ms``, the workers,
  ``transfer_ms``, ``preemptions``, ``session_id`` (the trace's own id: a string when
  the trace names its sessions by strings), ``turn``. A null is ``None``. The
  columnar reader decodes whatever columns the core's header lists, so a field the
  core adds reaches :attr:`ReplayReport.requests` and :meth:`ReplayReport.to_pandas`
  without an edit here.
- ``summary``: ``completed``, ``rejected``, ``failed``, ``canceled`` (counts),
  ``duration_ms``, ``request_throughput_rps`` (completed / s), ``output_token_throughput_tps``
  (tokens / s), ``gpu_hours``, and for each of ``ttft_ms``, ``tpot_ms``, ``e2e_ms``,
  ``itl_ms`` a dict ``{mean, std, min, max, p50, p90, p95, p99}`` in ms over completed
  requests (numpy's linear percentiles), or ``None`` when there is no value; the core
  also reports ``total_input_tokens``, ``total_output_tokens``, ``total_cached_tokens``
  (completed requests) and ``preemptions`` (all requests).
- ``metadata``: facts about the run (spec, versions, derived capacities) as the core
  reports them.

The numbers are the core's; this module never rescales or recomputes them.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from collections.abc import Iterator
    from typing import Any, Iterable

from .binding import lazy as _lazy

__all__ = ["ReplayReport", "RequestRecords", "REQUEST_FIELDS", "LATENCY_METRICS", "STAT_FIELDS", "SLO_FIELDS", "TIMELINE_FIELDS"]

_request_fields: tuple[str, ...] | None = None


def __getattr__(name: str) -> Any:
    """``REQUEST_FIELDS``: the per-request keys in record order (the column order of
    requests.jsonl and pandas), from the core's schema (``pybind.Fields``), read once.

    Raises:
        ImportError: the native core has not been built (``make build``).
    """
    global _request_fields
    if name == "REQUEST_FIELDS":
        if _request_fields is None:
            from .binding import native as _native
            _request_fields = tuple(f["name"] for f in _native.call("Fields", "", "fields")["fields"])
        return _request_fields
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Columns of :attr:`ReplayReport.timeline`, one value per engine pass (the Go type is
#: ``report.Pass``): ``pool`` (``"aggregated"``, ``"prefill"`` or ``"decode"``),
#: ``worker`` (index in its pool, as the records' ``worker``), ``start_ms`` and
#: ``end_ms`` (virtual clock), ``prefill_tokens`` (prompt tokens computed) over
#: ``prefill_requests`` chunks, ``decode_requests`` (one token each), ``running`` and
#: ``waiting`` (the worker's running set and queue after scheduling),
#: ``kv_blocks_used`` (held by requests), ``kv_blocks_cached`` (unreferenced, holding
#: prefix-cache content) and ``kv_blocks_total`` (the worker's capacity), at the start.
TIMELINE_FIELDS: tuple[str, ...] = (
    "pool", "worker", "start_ms", "end_ms", "prefill_tokens", "prefill_requests",
    "decode_requests", "running", "waiting", "kv_blocks_used", "kv_blocks_cached",
    "kv_blocks_total",
)

#: Summary latency metrics (each a stats dict or None), in table order.
LATENCY_METRICS: tuple[str, ...] = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")

#: Keys of a latency stats dict; the table shows all but ``std``.
STAT_FIELDS: tuple[str, ...] = ("mean", "std", "min", "max", "p50", "p90", "p95", "p99")

#: SLO bounds :func:`aisimulate.replay` and :func:`aisimulate.sweep` take (per-request
#: metrics, ms), as vLLM's ``--goodput`` (ttft, tpot, e2el) and AIPerf's
#: (time_to_first_token, inter_token_latency, request_latency) name them.
SLO_FIELDS: tuple[str, ...] = ("ttft_ms", "tpot_ms", "e2e_ms")

_TABLE_STATS = ("mean", "p50", "p90", "p95", "p99", "min", "max")
#: Rows of the table's latency section (ms).
_TABLE_METRICS = ("ttft_ms", "ttst_ms", "tpot_ms", "itl_ms", "e2e_ms")
_DASH = "\u2014"


#: The summary's counts (requests, tokens, preemptions; ``goodput.good_requests``): the
#: integers of the core's ``report.Summary``. Every other number of the summary is a
#: float64 there (latencies, durations, rates, statistics, SLO thresholds).
SUMMARY_COUNTS: frozenset[str] = frozenset({
    "completed", "rejected", "failed", "canceled", "total_input_tokens", "total_output_tokens",
    "total_cached_tokens", "preemptions", "good_requests", "peak"})


def typed_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """``summary`` with each number typed as the core types it: a count
    (:data:`SUMMARY_COUNTS`) an int, every other number a float. JSON drops the
    difference (Go writes the float64 11.0 as ``11``, read back as an int), and a
    latency's type must not depend on whether its value happens to be whole (a column
    of a sweep, Parquet's schema, ``mean / 2`` in user code)."""
    def typed(key: str, v: Any) -> Any:
        if isinstance(v, Mapping):
            return {k: typed(k, x) for k, x in v.items()}
        if isinstance(v, int) and not isinstance(v, bool) and key not in SUMMARY_COUNTS:
            return float(v)
        return v

    return {k: typed(k, v) for k, v in summary.items()}


def _ordered(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with the schema's keys first (those present), then the rest in their order."""
    out = {k: record[k] for k in __getattr__("REQUEST_FIELDS") if k in record}
    for k, v in record.items():
        if k not in out:
            out[k] = v
    return out


def _sort_key(record: Mapping[str, Any]) -> tuple[int, Any]:
    rid = record.get("request_id")
    if isinstance(rid, (int, float)) and not isinstance(rid, bool):
        return (0, rid)
    return (1, str(rid))


class ReplayReport:
    """The report of one replay.

    Attributes:
        summary: dict, see the module docstring (docs/metrics.md).
        requests: the per-request dicts in ``request_id`` order, keys in
            :data:`REQUEST_FIELDS` order: a list, or of a report from the core a
            read-only sequence that makes each dict as it is read (:attr:`requests`).
        metadata: dict of run facts from the core.
        timeline: every engine pass, when the replay recorded it
            (``aisimulate.replay(spec, timeline=True)``), else ``None``: a dict of
            equal-length numpy arrays, one entry per pass in start order
            (:data:`TIMELINE_FIELDS`); :meth:`timeline_to_pandas` makes it a DataFrame.
        config_file: the config file the replay was given (:func:`aisimulate.replay`
            sets it), else ``None``: a save never writes over it (:meth:`input_files`).

    Build it from the core's ``{"metadata", "summary", "requests"}`` object with
    :meth:`from_dict`; :func:`aisimulate.replay` does that for you.
    """

    __slots__ = ("summary", "metadata", "timeline", "_requests", "_cols", "_raw", "_streamed", "config_file")

    def __init__(self, summary: Mapping[str, Any], requests: Iterable[Mapping[str, Any]],
                 metadata: Mapping[str, Any] | None = None) -> None:
        self.summary: dict[str, Any] = typed_summary(summary)
        self._requests: list[dict[str, Any]] | None = sorted(
            (_ordered(r) for r in requests), key=_sort_key)
        self._cols: dict[str, Any] | None = None
        self._raw: tuple[Mapping[str, Any], Any] | None = None  # the core's header and bytes
        self._streamed: tuple[Path, dict[str, Any], str] | None = None  # path, header, format
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.timeline: dict[str, Any] | None = None
        self.config_file: str | None = None

    @property
    def _columns(self) -> dict[str, Any] | None:
        """The per-request columns, made on first use: from the core's bytes
        (:meth:`from_columnar`), or a streamed report's table (:meth:`from_streamed`)."""
        if self._cols is None and self._raw is not None:
            self._cols, self._raw = _sorted_columns(*self._raw), None
        if self._cols is None and self._streamed is not None:
            from .io.tables import columns_from_table

            path, head, fmt = self._streamed
            self._cols = columns_from_table(path, fmt, head)
        return self._cols

    @classmethod
    def from_streamed(cls, report: Mapping[str, Any], buf, path: Path, fmt: str = "parquet") -> "ReplayReport":
        """A report whose records the core streamed into the table at ``path`` (of
        format ``fmt``: ``requests.parquet``, ``.csv`` or ``.jsonl`` of a result folder,
        :mod:`aisimulate.run.stream`) instead of returning them: ``report`` is the core's
        head (its ``columns`` header has ``streamed``), ``buf`` the timeline's bytes.
        The records are read from the file when first used."""
        self = cls.__new__(cls)
        self.summary, self.metadata = typed_summary(report["summary"]), dict(report.get("metadata") or {})
        self._requests, self._cols, self._raw = None, None, None
        self._streamed = (Path(path), dict(report["columns"]), fmt)
        self.config_file = None
        self.timeline = _timeline(report.get("timeline"), buf)
        return self

    @property
    def requests(self) -> Sequence[dict[str, Any]]:
        """Per-request dicts in ``request_id`` order. Of a report from the core, a
        read-only sequence made from its columns as it is read
        (:class:`RequestRecords`: ``len``, indexing, slicing,
        iteration and ``==`` as a list's, one dict built per row read, so that millions
        of requests are not held as dicts); ``list(report.requests)`` makes the list."""
        if self._requests is None:
            cols = self._columns
            if cols is None:
                return []
            self._requests = RequestRecords(cols)
        return self._requests

    @classmethod
    def from_columnar(cls, report: Mapping[str, Any], buf: bytes) -> "ReplayReport":
        """Build a report from the core's columnar result (``pybind.Replay``):
        ``report`` is ``{"metadata", "summary", "columns": {n, columns, statuses,
        reasons}}`` and ``buf`` the little-endian column arrays it describes. Each
        column of the header (``name``, ``dtype``, ``offset``) is read as it says: a
        float column's null is NaN; a ``nullable`` integer column's null is -1; a
        column with ``labels`` holds indices into that list of the header
        (``statuses``, ``reasons``, ``sessions``: a trace's string session ids; -1 is
        null). Columns become numpy arrays, sorted by
        ``request_id``, when they are first used (a report whose summary alone is read,
        as the CLI's table, never loads numpy); per-request dicts are only built if
        :attr:`requests` is read.

        Raises:
            ValueError: the result is not well formed.
        """
        summary, layout = report.get("summary"), report.get("columns")
        if not isinstance(summary, Mapping) or not isinstance(layout, Mapping) \
                or not isinstance(layout.get("n"), int) or not isinstance(layout.get("columns"), list):
            raise ValueError("columnar report needs 'summary' and 'columns' objects")
        self = cls.__new__(cls)
        self.summary, self.metadata = typed_summary(summary), dict(report.get("metadata") or {})
        self._requests, self._cols, self._raw, self._streamed = None, None, (layout, buf), None
        self.config_file = None
        self.timeline = _timeline(report.get("timeline"), buf)
        return self

    @classmethod
    def from_dict(cls, report: Mapping[str, Any]) -> "ReplayReport":
        """Build a report from the core's JSON object ``{"metadata", "summary", "requests"}``.

        Raises:
            ValueError: ``summary`` is missing or not a dict, or ``requests`` not a list.
        """
        summary = report.get("summary")
        requests = report.get("requests") or []
        if not isinstance(summary, Mapping):
            raise ValueError("report has no 'summary' object")
        if not isinstance(requests, list):
            raise ValueError("report 'requests' is not a list")
        return cls(summary, requests, report.get("metadata") or {})

    def __repr__(self) -> str:
        s = self.summary
        return (f"ReplayReport(requests={len(self.requests)}, completed={s.get('completed')}, "
                f"rejected={s.get('rejected')}, failed={s.get('failed')}, "
                f"canceled={s.get('canceled')}, duration_ms={s.get('duration_ms')})")

    # --- views -------------------------------------------------------------------------

    def to_pandas(self):  # -> pandas.DataFrame
        """The per-request records as a ``pandas.DataFrame``, one row per request.

        Columns are the core's columns in header order (:data:`REQUEST_FIELDS` for
        a report from the core) or, for a report built from dicts, :data:`REQUEST_FIELDS`
        then any extra keys. A null is ``NaN`` in a float column and ``<NA>`` in a
        nullable integer column (pandas' ``Int64``); ``status`` and ``reason`` are
        strings (``reason`` ``None`` when null).

        Raises:
            ImportError: pandas is not installed (``pip install 'aisimulate[pandas]'``).
        """
        try:
            pd = _lazy.module("pandas")
        except ImportError as exc:
            raise ImportError("ReplayReport.to_pandas() needs pandas: "
                              "pip install 'aisimulate[pandas]' (or pandas>=2.0)") from exc
        if self._columns is not None:  # the same dtypes whether or not .requests was read
            return _columns_to_pandas(pd, self._columns)
        columns = list(__getattr__("REQUEST_FIELDS"))
        for r in self.requests:
            for k in r:
                if k not in columns:
                    columns.append(k)
        return pd.DataFrame.from_records(self.requests, columns=columns)

    @property
    def plot(self):
        """Figures of this report (:class:`aisimulate.plot.ReportPlots`):
        ``report.plot.cdf()``, ``.timeline()``, ``.throughput()``, each a matplotlib
        Figure (needs matplotlib)."""
        ReportPlots = _lazy.module("aisimulate.plot").ReportPlots

        return ReportPlots(self)

    def timeline_to_pandas(self):  # -> pandas.DataFrame
        """The pass timeline as a ``pandas.DataFrame`` (columns :data:`TIMELINE_FIELDS`,
        one row per pass in start order).

        Raises:
            ValueError: the replay did not record a timeline (pass ``timeline=True``).
            ImportError: pandas is not installed.
        """
        if self.timeline is None:
            raise ValueError("this report has no timeline: replay with timeline=True "
                             "(aisimulate.replay(spec, timeline=True))")
        pd = _lazy.module("pandas")

        return pd.DataFrame({k: self.timeline[k] for k in TIMELINE_FIELDS})

    def cost(self, price_per_gpu_hour: float) -> dict[str, Any]:
        """What the replay's GPUs cost at ``price_per_gpu_hour`` (any currency per GPU
        and hour, as a cloud prices them): ``{"price_per_gpu_hour", "total"`` (price ×
        ``gpu_hours``: every GPU of the deployment over the measured window)``,
        "per_million_output_tokens"`` (total / the completed requests' output tokens ×
        10^6; None without output tokens)``}``.

        Raises:
            TypeError: the price is not a number. ValueError: it is not finite and > 0.
        """
        if isinstance(price_per_gpu_hour, bool) or not isinstance(price_per_gpu_hour, (int, float)):
            raise TypeError(f"price_per_gpu_hour must be a number, got {price_per_gpu_hour!r}")
        if not math.isfinite(price_per_gpu_hour) or price_per_gpu_hour <= 0:
            raise ValueError(f"price_per_gpu_hour must be a finite number > 0, got {price_per_gpu_hour!r}")
        total = float(price_per_gpu_hour) * float(self.summary.get("gpu_hours") or 0.0)
        tokens = self.summary.get("total_output_tokens") or 0
        return {"price_per_gpu_hour": float(price_per_gpu_hour), "total": total,
                "per_million_output_tokens": total / tokens * 1e6 if tokens else None}

    def table(self, *, price_per_gpu_hour: float | None = None) -> str:
        """A fixed-width, human-readable summary (like vLLM's benchmark_serving output).

        Counts, duration (ms), throughputs (and the mean output tokens/s per user, the
        goodput when the replay had an SLO), GPU hours (and with ``price_per_gpu_hour``
        their cost and the cost per million output tokens, :meth:`cost`), token totals,
        then one row per latency metric (``ttft_ms``, ``ttst_ms``, ``tpot_ms``, ``itl_ms``, ``e2e_ms``)
        with mean, p50, p90, p95, p99, min and max in ms. A missing value shows as ``—``.
        """
        s = self.summary
        width = 11 + 10 * len(_TABLE_STATS)  # label column + 7 stat columns
        lines = [" aisimulate replay ".center(width, "=")]
        title = self._title()
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
        if price_per_gpu_hour is not None:
            c = self.cost(price_per_gpu_hour)
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
        if not self.metadata.get("disaggregated") and isinstance(util, Mapping):
            rows.append(("Worker busy % (mean / min / max)",
                         " / ".join(_fmt(100 * util[k], 1) for k in ("mean", "min", "max"))))
        # P/D: each pool's GPU hours and busy share (time in passes / duration).
        pools = self.metadata.get("pools")
        if self.metadata.get("disaggregated") and isinstance(pools, list):
            duration = s.get("duration_ms") or 0
            for p in pools:
                busy = p.get("worker_busy_ms") or []
                share = (sum(busy) / (len(busy) * duration)) if busy and duration else None
                value = f"{_fmt_small(p.get('gpu_hours'))} GPU h, busy {_fmt(None if share is None else 100 * share, 1)} %"
                rows.append((f"{str(p.get('name')).capitalize()} pool", value))
        for label, value in rows:
            lines.append(f"{label + ':':<40}{value:>{width - 40}}")
        lines.append("-" * width)
        header = f"{'metric (ms)':<11}" + "".join(f" {h:>9}" for h in _TABLE_STATS)
        lines.append(header)
        for metric in _TABLE_METRICS:
            if metric not in s and metric not in LATENCY_METRICS:
                continue  # a report from before the metric existed
            stats = s.get(metric)
            cells = []
            for h in _TABLE_STATS:
                v = stats.get(h) if isinstance(stats, Mapping) else None
                cells.append(f" {_fmt(v, 2):>9}")  # always one space between cells
            lines.append(f"{metric:<11}" + "".join(cells))
        lines.append("=" * width)
        return "\n".join(lines)

    def _title(self) -> str:
        m = self.metadata
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

    # --- files -------------------------------------------------------------------------

    def to_json(self) -> str:
        """``{"metadata", "summary"}`` as JSON text (sorted keys, indent 2, newline-ended):
        the content of ``prediction.json``; byte-identical for an identical report."""
        return json.dumps({"metadata": self.metadata, "summary": self.summary},
                          sort_keys=True, indent=2, allow_nan=False) + "\n"

    def save(self, directory: str | os.PathLike[str], *, formats: str | Sequence[str] = ("parquet",),
             exports: str | Sequence[str] = (), progress: bool | None = None,
             force: bool = False) -> dict[str, Path]:
        """Write the report into ``directory`` (created if needed), atomically: every
        file goes to a temporary name in the folder and is moved into place only when
        all are complete, ``prediction.json`` last; until then the previous result in
        the folder (if any) stays as it was, and a save that fails or is interrupted
        leaves it so (see :mod:`aisimulate.io.files`).

        Files:
            ``prediction.json``: metadata and summary (as :meth:`to_json`) plus
            ``records``: ``{"count": N, "files": {name: {"format", "bytes"}}}``, the
            record count and each table's size, so a reader can tell the files belong
            together.
            ``requests.parquet`` / ``requests.csv`` / ``requests.jsonl``, one per entry
            of ``formats``: one row per request in ``request_id`` order, columns
            :data:`REQUEST_FIELDS` (units as in :mod:`aisimulate.report`; null for a
            value that does not apply). JSON lines are byte-identical to ``json.dumps``
            of each of :attr:`requests`.
            With ``exports``: ``"aiperf"``, the files of :meth:`to_aiperf`;
            ``"vllm"``, ``vllm_bench_result.json`` (:meth:`to_vllm_bench_json`). They
            are part of the same atomic result and listed in ``records.files``, so a
            later save into the folder without them removes them.

        Args:
            formats: any of ``"parquet"`` (default; pyarrow, zstd), ``"csv"``,
                ``"jsonl"``: one name or a list of them, in any case (``"CSV"``).
            exports: any of ``"aiperf"``, ``"vllm"``: one name or a list of them, in
                any case.
            progress: a progress bar for saves over 2 s (``None``: when stderr is a
                terminal or in a notebook).
            force: replace files of the result's names that no earlier aisimulate
                result in the folder wrote (by default such a file is refused: a real
                AIPerf ``profile_export.jsonl``, a user's own ``prediction.json``).

        Returns:
            file name → path of every file written, ``prediction.json`` last.

        Raises:
            ValueError: ``directory`` or ``formats`` is empty, or a format or export is
                unknown or given twice.
            TypeError: ``formats`` or ``exports`` is neither a name nor a list of names.
            ConfigError: a file would overwrite an input of the replay (its trace or
                a config file), or ``directory`` is a file, or (without ``force``;
                :class:`aisimulate.io.files.ForeignFileError`) a file aisimulate did not write.
            OSError: a file cannot be written (a full disk): nothing is replaced.
            KeyboardInterrupt: Ctrl-C; nothing is replaced.
        """
        from .io import files as _files, tables as _tables
        from .io.names import result_formats
        from .binding.calls import save_progress

        formats, exports = result_formats(formats, exports)
        out = _files.ResultDir(directory, inputs=self.input_files(), force=force)
        out.check_names(_files.result_files(formats, exports))
        n = self.record_count()
        fields = list(self._columns["_header"]) if self._columns is not None \
            else list(__getattr__("REQUEST_FIELDS"))
        files: dict[str, dict[str, Any]] = {}
        with save_progress(progress, n * (len(formats) + ("aiperf" in exports))) as advance, out:
            for fmt in formats:
                name = _tables.FILES[fmt]
                tmp = out.temp(name)
                if self._columns is None:
                    _tables.write_records_slow(self.requests, fields, tmp, fmt)
                    advance(n)
                else:
                    _tables.write_table(self._columns, fields, n, tmp, fmt, advance)
                files[name] = {"format": fmt, "bytes": tmp.stat().st_size}
            return self._commit(out, files, exports, advance)

    def _commit(self, out, files: dict[str, dict[str, Any]], exports: Sequence[str],
                advance) -> dict[str, Path]:
        """The last steps of a save into ``out`` (an open ResultDir) whose tables are
        written (``files``: name → {format, bytes}): the exports, ``prediction.json``,
        and the move into place."""
        from .io import files as _files, exports as _exports

        for export in exports:
            for name, path in _exports.write_export(self, export, out, advance).items():
                files[name] = {"format": export, "bytes": path.stat().st_size}
        doc = {"metadata": self.metadata, "records": {"count": self.record_count(), "files": files},
               "summary": self.summary}
        out.temp(_files.MARKER).write_text(
            json.dumps(doc, sort_keys=True, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return out.commit()

    def finish_streamed(self, out, targets: Mapping[str, Path], exports: Sequence[str], source: str,
                        rewrite: bool, advance) -> "ReplayReport":
        """The end of a streamed replay (:func:`aisimulate.run.stream.replay_into`) whose
        tables ``targets`` (format → temporary path in ``out``, an open
        :class:`~aisimulate.io.files.ResultDir`) were streamed: the tables rewritten in
        ``request_id`` order when the rows were streamed out of it (``rewrite``; the
        records are then held), the exports and ``prediction.json``, the move into place;
        from then on the records are read from the committed ``source`` table.
        ``advance(k)`` counts records written. Returns the report itself."""
        from .io import tables as _tables

        if rewrite:  # rewrite the tables in request_id order
            np = _lazy.module("numpy")

            cols = self._columns
            order = np.argsort(cols["request_id"], kind="stable")
            self._cols = {k: (v if k.startswith("_") else v[order]) for k, v in cols.items()}
            self._streamed = None  # held from here on
            n = self.record_count()
            fields = list(cols["_header"])
            for fmt, path in targets.items():
                _tables.write_table(self._cols, fields, n, path, fmt, advance)
        files = {_tables.FILES[f]: {"format": f, "bytes": p.stat().st_size} for f, p in targets.items()}
        final = self._streamed is not None
        written = self._commit(out, files, exports, advance)
        if final:  # from now on the records are read from the committed table
            self._streamed = (written[_tables.FILES[source]], *self._streamed[1:])
        return self

    def to_aiperf(self, directory: str | os.PathLike[str], *, progress: bool | None = None,
                  force: bool = False) -> dict[str, Path]:
        """Write the run as AIPerf writes a profile run, into ``directory`` (created),
        atomically: ``profile_export.jsonl`` (one AIPerf record per request: metadata,
        metrics with AIPerf's tags and units, error), ``profile_export_aiperf.json`` and
        ``profile_export_aiperf.csv`` (per-metric statistics), so ``aiperf plot`` and
        scripts written for AIPerf read a simulated run. docs/exports.md maps each field
        and names the AIPerf metrics without a simulated counterpart.

        Returns:
            file name → path.

        Raises:
            ValueError: ``directory`` is empty.
            ConfigError: a file would overwrite an input of the replay, or (without
                ``force``, as :meth:`save`) a file aisimulate did not write.
            OSError: a file cannot be written; nothing is replaced.
        """
        from .io.exports import write_aiperf

        return write_aiperf(self, directory, progress=progress, inputs=self.input_files(), force=force)

    def to_vllm_bench_json(self, percentiles: float | Sequence[float] = (99,)) -> dict[str, Any]:
        """The summary as the flat keys ``vllm bench serve --save-result`` writes
        (``completed``, ``duration`` in s, ``request_throughput``, ``output_throughput``,
        ``mean_ttft_ms``, ``median_ttft_ms``, ``p99_ttft_ms`` … for ttft, tpot, itl and
        e2el); see :func:`aisimulate.io.exports.vllm_bench_json`.

        Args:
            percentiles: any of 50, 90, 95, 99: one number or a list of them.

        Raises:
            ValueError: a percentile other than 50, 90, 95, 99.
            TypeError: ``percentiles`` is neither a number nor a list of numbers.
        """
        from .io.exports import vllm_bench_json

        return vllm_bench_json(self, percentiles)

    def to_chrome_trace(self, path: str | os.PathLike[str]) -> Path:
        """Write the replay as a Chrome / Perfetto JSON trace (open it in
        ui.perfetto.dev): one track per worker with each engine pass and its KV blocks,
        and each request's lifetime as an async span (:mod:`aisimulate.io.chrome_trace`).
        Needs the pass timeline (``aisimulate.replay(spec, timeline=True)``).

        Its folder is created when missing.

        Raises:
            ValueError: the report has no timeline, or ``path`` is empty.
            ConfigError: ``path`` is a folder, or a file the replay read (its config,
                trace, model or system file).
            OSError: the file cannot be written (nothing is left behind).
        """
        from .io.chrome_trace import write_chrome_trace

        return write_chrome_trace(self, path)

    def record_columns(self) -> dict[str, Any]:
        """The per-request columns as :meth:`from_columnar` holds them (numpy arrays,
        ``_header``, ``_statuses``, ``_reasons``), built from the records for a report
        made of dicts: what the writers of :mod:`aisimulate.io` read, never record by
        record."""
        if self._columns is not None:
            return self._columns
        return _records_to_columns(self.requests, list(__getattr__("REQUEST_FIELDS")))

    def completed_values(self, names: Sequence[str]) -> dict[str, Any]:
        """``{name: float64 array}``: the per-request values of the completed requests
        (NaN for a null), straight from the columns when the report has them (no pandas:
        a sweep computes this once per point; the figures of :mod:`aisimulate.plot` too).
        ``names`` are per-request fields (:data:`REQUEST_FIELDS`)."""
        np = _lazy.module("numpy")

        cols = self._columns
        if cols is not None:
            statuses = list(cols["_statuses"])
            if "completed" not in statuses:
                return {k: np.empty(0) for k in names}
            mask = cols["status"] == statuses.index("completed")
            return {k: np.asarray(cols[k], dtype=float)[mask] for k in names}
        rows = [r for r in self.requests if r.get("status") == "completed"]
        return {k: np.array([np.nan if r.get(k) is None else r[k] for r in rows], dtype=float)
                for k in names}

    def record_count(self) -> int:
        """The number of per-request records, without building them (a writer's
        progress bar counts to it)."""
        if self._cols is None and self._raw is not None:
            return int(self._raw[0]["n"])
        if self._cols is None and self._streamed is not None:
            return int(self._streamed[1]["n"])
        if self._columns is not None:
            return len(self._columns["request_id"])
        return len(self._requests or [])

    def input_files(self) -> list[str]:
        """Files the replay read (an output must not overwrite them): the config file
        it was given, and from the spec in the metadata the trace and the model and
        system files when given as paths."""
        from .io.files import input_files

        return input_files(self.metadata.get("spec"), self.config_file)


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


# --- columnar results -------------------------------------------------------------------

def _sorted_columns(layout: Mapping[str, Any], buf) -> dict[str, Any]:
    """The columns of the core's header ``layout`` over ``buf`` (:func:`_tables.columns_of`),
    in ``request_id`` order."""
    from .io.tables import columns_of

    np = _lazy.module("numpy")

    cols = columns_of(layout, buf)
    ids = cols["request_id"]
    if len(ids) > 1 and not bool(np.all(ids[1:] >= ids[:-1])):  # the core sends in id order mostly
        order = np.argsort(ids, kind="stable")
        cols = {k: (v if k.startswith("_") else v[order]) for k, v in cols.items()}
    return cols


def _timeline(layout: Mapping[str, Any] | None, buf: bytes) -> dict[str, Any] | None:
    """The timeline's column arrays (views into ``buf``) from the core's layout, with
    ``pool`` as names and ``kv_blocks_total`` per pass; ``None`` without a layout."""
    if not layout:
        return None
    np = _lazy.module("numpy")

    n = int(layout["n"])
    cols = {c["name"]: np.frombuffer(buf, dtype=np.dtype(c["dtype"]), count=n, offset=int(c["offset"]))
            for c in layout["columns"]}
    codes = cols["pool"]
    cols["pool"] = np.array(list(layout["pools"]), dtype=object)[codes]
    cols["kv_blocks_total"] = np.array(layout["kv_blocks_total"], dtype=np.int64)[codes]
    return {k: cols[k] for k in TIMELINE_FIELDS}


def _labels(cols: Mapping[str, Any], info: Mapping[str, Any]):
    """The strings a labelled column indexes, with ``None`` last (so -1 is null)."""
    np = _lazy.module("numpy")

    return np.array(list(cols["_" + info["labels"]]) + [None], dtype=object)


def _columns_to_pandas(pd, cols: Mapping[str, Any]):
    """A DataFrame straight from the column arrays, in header order: floats keep NaN
    for null, nullable integer columns become pandas' Int64, labelled columns strings."""
    np = _lazy.module("numpy")

    data: dict[str, Any] = {}
    for name, info in cols["_header"].items():
        v = cols[name]
        if info.get("labels"):
            data[name] = _labels(cols, info)[v]
        elif info.get("nullable"):
            data[name] = pd.array(np.where(v < 0, 0, v), dtype="Int64")
            data[name][v < 0] = pd.NA
        else:
            data[name] = v
    return pd.DataFrame(data, columns=list(cols["_header"]))


#: Rows converted at a time while iterating: each column's slice becomes Python values
#: in one ``tolist()`` call (the cost of the whole list of dicts, a slice at a time).
_CHUNK = 4096


class RequestRecords(Sequence):
    """The per-request dicts of a report, in ``request_id`` order, keys in the columns'
    header order, ``None`` for a null: the same values as a list of them, made from the
    columns one row (or, iterating, one chunk of rows) at a time. ``len``, indexing
    (negative too), slicing (a list of dicts), iteration, ``in`` and ``==`` with any
    sequence of dicts (a list compares equal to it) work as on a list; it cannot be
    changed. ``list(report.requests)`` makes the list (``json.dumps`` needs one)."""

    __slots__ = ("_cols", "_names", "_n")

    def __init__(self, cols: Mapping[str, Any]) -> None:
        self._cols = cols
        self._names = list(cols["_header"])
        self._n = len(cols[self._names[0]]) if self._names else 0

    def __len__(self) -> int:
        return self._n

    def _rows(self, start: int, stop: int) -> list[dict[str, Any]]:
        """The dicts of rows ``start`` … ``stop`` − 1."""
        return _columns_to_records(self._cols, start, stop)

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step == 1:
                return self._rows(start, max(start, stop))
            return [self._rows(k, k + 1)[0] for k in range(start, stop, step)]
        try:
            k = i.__index__()
        except AttributeError:
            raise TypeError(f"request indices must be integers or slices, not {type(i).__name__}") from None
        if k < 0:
            k += self._n
        if not 0 <= k < self._n:
            raise IndexError("request index out of range")
        return self._rows(k, k + 1)[0]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for start in range(0, self._n, _CHUNK):
            yield from self._rows(start, min(start + _CHUNK, self._n))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(other) == self._n and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # equal to a list, which has none

    def __repr__(self) -> str:
        return f"<{self._n:,} request records (a sequence of dicts; list() makes the list)>"


def _columns_to_records(cols: Mapping[str, Any] | None, start: int = 0,
                        stop: int | None = None) -> list[dict[str, Any]]:
    """Per-request dicts (header order; None for nulls) from the column arrays: rows
    ``start`` … ``stop`` − 1 (every row by default)."""
    if cols is None:
        return []
    names = list(cols["_header"])
    lists = []
    for name, info in cols["_header"].items():
        v = cols[name][start:stop]
        if info.get("labels"):
            values = _labels(cols, info)[v].tolist()
        elif info.get("nullable"):
            values = [None if x < 0 else x for x in v.tolist()]
        elif v.dtype.kind == "f":
            values = [None if math.isnan(x) else x for x in v.tolist()]
        else:
            values = v.tolist()
        lists.append(values)
    return [dict(zip(names, row)) for row in zip(*lists)]


def _layout(meta: Mapping[str, Any]) -> str:
    """`` × DP2`` and `` (EP)`` for a data-parallel or expert-parallel worker, else ""."""
    out = ""
    dp = meta.get("data_parallel_size")
    if isinstance(dp, int) and dp > 1:
        out += f" \u00d7 DP{dp}"
    if meta.get("enable_expert_parallel") is True:
        out += " (EP)"
    return out


#: Columns written as strings, by the header's list their integers index; session_id
#: only when the trace named its sessions by strings.
_LABELLED = {"status": "statuses", "reason": "reasons", "session_id": "sessions"}


def _records_to_columns(records: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> dict[str, Any]:
    """Column arrays in :meth:`ReplayReport.from_columnar`'s layout from per-request
    dicts: ``status``, ``reason`` and a string ``session_id`` as indices into
    ``_statuses`` / ``_reasons`` / ``_sessions`` (-1 null), times (``*_ms``) and
    other columns with a float value float64 (NaN null),
    the rest int64 (-1 null, marked ``nullable``)."""
    np = _lazy.module("numpy")

    names = list(dict.fromkeys([*fields, *(k for r in records for k in r)]))
    cols: dict[str, Any] = {"_header": {}, "_statuses": [], "_reasons": [], "_sessions": []}
    for name in names:
        values = [r.get(name) for r in records]
        if name in _LABELLED and (name != "session_id" or any(isinstance(v, str) for v in values)):
            labels, index = cols["_" + _LABELLED[name]], {}
            for v in values:
                if v is not None and v not in index:
                    index[v] = len(labels)
                    labels.append(v)
            cols[name] = np.array([-1 if v is None else index[v] for v in values], dtype=np.int64)
            cols["_header"][name] = {"name": name, "labels": _LABELLED[name]}
        elif name.endswith("_ms") or any(isinstance(v, float) for v in values):
            cols[name] = np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
            cols["_header"][name] = {"name": name}
        elif all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
            cols[name] = np.array([-1 if v is None else v for v in values], dtype=np.int64)
            cols["_header"][name] = {"name": name, "nullable": any(v is None for v in values)}
    return cols
