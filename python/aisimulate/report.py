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
from .records import RequestRecords, columns_to_pandas, records_to_columns, sorted_columns

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

#: The highest price per GPU-hour :meth:`ReplayReport.cost` (``--gpu-hour-price``)
#: takes: a hundred thousand times a cloud's price, and low enough that a cost stays a
#: number a table or JSON can print (1e308 × GPU hours is ``inf``).
MAX_PRICE_PER_GPU_HOUR = 1e6


def is_gpu_hour_price(price: Any) -> bool:
    """Whether ``price`` is a price per GPU-hour :meth:`ReplayReport.cost` takes: a number
    (not a bool) in (0, :data:`MAX_PRICE_PER_GPU_HOUR`] (NaN is not)."""
    return (not isinstance(price, bool) and isinstance(price, (int, float))
            and 0 < price <= MAX_PRICE_PER_GPU_HOUR)
#: Summary latency metrics (each a stats dict or None), in table order.
LATENCY_METRICS: tuple[str, ...] = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")

#: Keys of a latency stats dict; the table shows all but ``std``.
STAT_FIELDS: tuple[str, ...] = ("mean", "std", "min", "max", "p50", "p90", "p95", "p99")


def stat_fields(percentiles: Sequence[float] = ()) -> tuple[str, ...]:
    """A latency stats dict's keys in a replay asked for ``percentiles``
    (``replay(percentiles=…)``): :data:`STAT_FIELDS`, then those of the chosen
    percentiles it lacks (``p99.9``), in their order."""
    from .io.names import percentile_key

    return (*STAT_FIELDS, *(k for k in map(percentile_key, percentiles) if k not in STAT_FIELDS))


#: SLO bounds :func:`aisimulate.replay` and :func:`aisimulate.sweep` take (per-request
#: metrics, ms), as vLLM's ``--goodput`` (ttft, tpot, e2el) and AIPerf's
#: (time_to_first_token, inter_token_latency, request_latency) name them.
SLO_FIELDS: tuple[str, ...] = ("ttft_ms", "tpot_ms", "e2e_ms")



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
        chunk_times: when the client received each chunk of each response, when the
            replay recorded them (``aisimulate.replay(spec, token_gaps=True)``), else
            ``None``: ``{"start", "count"}`` per record (in ``request_id`` order) into
            ``"times"`` (ns on the replay's clock); the tokens received at one instant
            are one chunk. :meth:`to_aiperf` writes their gaps as each record's
            ``inter_chunk_latency``. A saved report read back has none.
        config_file: the config file the replay was given (:func:`aisimulate.replay`
            sets it), else ``None``: a save never writes over it (:meth:`input_files`).

    Build it from the core's ``{"metadata", "summary", "requests"}`` object with
    :meth:`from_dict`; :func:`aisimulate.replay` does that for you.
    """

    __slots__ = ("summary", "metadata", "timeline", "chunk_times", "_requests", "_cols", "_raw", "_streamed",
                 "config_file")

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
        self.chunk_times: dict[str, Any] | None = None
        self.config_file: str | None = None

    @property
    def _columns(self) -> dict[str, Any] | None:
        """The per-request columns, made on first use: from the core's bytes
        (:meth:`from_columnar`), or a streamed report's table (:meth:`from_streamed`)."""
        if self._cols is None and self._raw is not None:
            self._cols, self._raw = sorted_columns(*self._raw), None
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
        self.chunk_times = None
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
        self.chunk_times = _chunk_times(report.get("chunks"), layout, buf)
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
            return columns_to_pandas(pd, self._columns)
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
            TypeError: the price is not a number. ValueError: it is not in
            (0, :data:`MAX_PRICE_PER_GPU_HOUR`], or a cost is not finite.
        """
        if isinstance(price_per_gpu_hour, bool) or not isinstance(price_per_gpu_hour, (int, float)):
            raise TypeError(f"price_per_gpu_hour must be a number, got {price_per_gpu_hour!r}")
        if not is_gpu_hour_price(price_per_gpu_hour):
            raise ValueError(f"price_per_gpu_hour must be a number in (0, {MAX_PRICE_PER_GPU_HOUR:.0f}], "
                             f"got {price_per_gpu_hour!r}")
        total = float(price_per_gpu_hour) * float(self.summary.get("gpu_hours") or 0.0)
        tokens = self.summary.get("total_output_tokens") or 0
        per_million = total / tokens * 1e6 if tokens else None
        if not math.isfinite(total) or (per_million is not None and not math.isfinite(per_million)):
            raise ValueError(f"the cost at price_per_gpu_hour {price_per_gpu_hour!r} over "
                             f"{self.summary.get('gpu_hours')!r} GPU hours is not a finite number")
        return {"price_per_gpu_hour": float(price_per_gpu_hour), "total": total,
                "per_million_output_tokens": per_million}

    def table(self, *, price_per_gpu_hour: float | None = None) -> str:
        """A fixed-width, human-readable summary (like vLLM's benchmark_serving output).

        Counts, duration (ms), throughputs (and the mean output tokens/s per user, the
        goodput when the replay had an SLO), GPU hours (and with ``price_per_gpu_hour``
        their cost and the cost per million output tokens, :meth:`cost`), token totals,
        then one row per latency metric (``ttft_ms``, ``ttst_ms``, ``tpot_ms``, ``itl_ms``, ``e2e_ms``)
        with mean, p50, p90, p95, p99 (or the percentiles the replay was asked for:
        ``metadata["percentiles"]``), min and max in ms. A missing value shows as ``—``.
        """
        from .report_text import summary_table

        cost = None if price_per_gpu_hour is None else self.cost(price_per_gpu_hour)
        return summary_table(self.summary, self.metadata, cost)

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

    def to_vllm_bench_json(self, percentiles: float | Sequence[float] | None = None) -> dict[str, Any]:
        """The summary as the flat keys ``vllm bench serve --save-result`` writes
        (``completed``, ``duration`` in s, ``request_throughput``, ``output_throughput``,
        ``mean_ttft_ms``, ``median_ttft_ms``, ``p99_ttft_ms`` … for ttft, tpot, itl and
        e2el); see :func:`aisimulate.io.exports.vllm_bench_json`.

        Args:
            percentiles: any of 0, 50, 90, 95, 99 and the replay's chosen percentiles
                (``replay(percentiles=…)``): one number or a list of them; ``None``
                (default): the chosen ones, or 99 (vLLM's default) without them.

        Raises:
            ValueError: a percentile the summary does not hold.
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
        return records_to_columns(self.requests, list(__getattr__("REQUEST_FIELDS")))

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


def _chunk_times(head: Mapping[str, Any] | None, layout: Mapping[str, Any], buf: bytes) -> dict[str, Any] | None:
    """The chunk times of a replay with ``token_gaps`` (the core's ``chunks`` header):
    ``start`` and ``count`` per record, in ``request_id`` order as the columns, into
    ``times`` (ns, flat); ``None`` without them."""
    if not head:
        return None
    np = _lazy.module("numpy")

    n = int(head["n"])
    start = np.frombuffer(buf, dtype="<i8", count=n, offset=int(head["start"]))
    count = np.frombuffer(buf, dtype="<i4", count=n, offset=int(head["count"]))
    times = np.frombuffer(buf, dtype="<i8", count=int(head["times_n"]), offset=int(head["times"]))
    ids_col = next(c for c in layout["columns"] if c["name"] == "request_id")
    ids = np.frombuffer(buf, dtype=np.dtype(ids_col["dtype"]), count=n, offset=int(ids_col["offset"]))
    if n > 1 and not bool(np.all(ids[1:] >= ids[:-1])):  # the order sorted_columns gives the records
        order = np.argsort(ids, kind="stable")
        start, count = start[order], count[order]
    return {"start": start, "count": count, "times": times}


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
