"""AIPerf's per-request export (``profile_export.jsonl``) read: :func:`read_aiperf_records`
for the client path's calibration (:mod:`aisimulate.calibration`), and
:func:`read_profile_export` for :func:`aisimulate.compare` (every record, with its
session, timing and latencies). What ``aisimulate replay --export aiperf`` writes is
:mod:`aisimulate.io.exports`.

AIPerf writes one JSON object per line per request sent, shaped (only the parts read
here are shown)::

    {"metadata": {"request_start_ns": <int>, "request_end_ns": <int>, ...},
     "metrics":  {"output_sequence_length": {"value": <int>, "unit": "tokens"},
                  "output_token_count":     {"value": <int>, "unit": "tokens"}, ...},
     "error":    null | {"code": ..., "type": ..., "message": ...}}

Field meanings, per AIPerf's documentation ("Working with Profile Export Files" and the
metrics reference): ``request_start_ns`` is the wall-clock epoch time in ns at which
AIPerf initiated the request; ``request_end_ns`` the epoch time in ns at which the last
response was received; ``output_sequence_length`` the completion tokens of the request
(output + reasoning), ``output_token_count`` the output tokens excluding reasoning.
Metrics are null/absent for failed requests, which carry a non-null ``error``.
"""

from __future__ import annotations

import json
import math
import os
from numbers import Real
from typing import Any, Iterator

from ..binding.strict_json import DuplicateKey, unique_keys
from ..errors import DataError

__all__ = ["OUTPUT_TOKEN_METRICS", "PROFILE_EXPORT", "read_aiperf_records", "read_profile_export",
           "profile_export_path"]

#: Metrics tried, in order, for a record's output token count. The engine generates
#: reasoning tokens too, so the total (output_sequence_length) comes first.
OUTPUT_TOKEN_METRICS = ("output_sequence_length", "output_token_count")


def read_aiperf_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read an AIPerf ``profile_export.jsonl`` into the records the client fits take.

    Fields needed in every record (line):

    - ``metadata.request_start_ns`` and ``metadata.request_end_ns``: numbers (epoch ns);
    - for a successful record (``error`` absent or null): an output token count,
      ``metrics.output_sequence_length.value``, else ``metrics.output_token_count.value``
      (a number ≥ 0; a bare number instead of ``{"value": ...}`` is accepted too).

    A failed record (non-null ``error``) needs only the timestamps: its output count is
    not read. Blank lines are skipped. Records are returned in file order.

    Args:
        path: the JSONL file.

    Returns:
        One dict per record, with keys

        - ``line``: 1-based line in the file;
        - ``request_start_ns``, ``request_end_ns``: the raw timestamps (int ns);
        - ``start_ms``, ``end_ms``: the same in ms relative to the earliest
          ``request_start_ns`` in the file (differences taken in integer ns first, so
          no precision is lost to the ~1.7e18 epoch);
        - ``output_tokens``: int (float if the file has a fraction), or ``None`` for a
          failed record;
        - ``error``: ``None``, or the error's ``type`` (or ``"error"``) for a failed record;
        - ``benchmark_phase``: ``"warmup"`` or ``"profiling"`` (AIPerf's
          ``metadata.benchmark_phase``; ``"profiling"`` when the field is absent; any other
          value is a DataError naming the line and field).

        This is the records form :func:`fit_response_overhead` accepts directly (and
        ``pandas.DataFrame(records)`` works too).

    Raises:
        DataError (a ValueError): the file has no records, a line is not a JSON object,
            or a record lacks a needed field or has a non-numeric / negative / non-finite
            value there; ``str(err)`` starts with ``"file:line: "`` and ``err.field`` is
            the dotted field path (e.g. ``"metadata.request_end_ns"``).
        OSError: the file cannot be opened.
    """
    file = os.fspath(path)
    raw = [_parse_record(obj, file, line_no) for line_no, obj in json_objects(file)]
    if not raw:
        raise DataError("no AIPerf records in the file", file=file)
    origin = min(r["request_start_ns"] for r in raw)
    for r in raw:
        r["start_ms"] = (r["request_start_ns"] - origin) / 1e6
        r["end_ms"] = (r["request_end_ns"] - origin) / 1e6
    return raw


#: Longest line of a JSON Lines file, in bytes (16 MiB): the core's trace readers'
#: bound (``core/workload.MaxLineBytes``); an AIPerf record is a few KB, so a longer
#: line is a damaged file, refused before it is held in memory.
MAX_LINE_BYTES = 16 << 20


def json_objects(file: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` for each non-blank line of a JSON Lines file (a UTF-8 BOM is
    accepted).

    Raises:
        DataError: a line is longer than :data:`MAX_LINE_BYTES`, not UTF-8, not valid
            JSON (including nesting past Python's recursion limit and an integer past its
            4300 digits), or not a JSON object (file and line named).
        OSError: the file cannot be opened.
    """
    with open(file, "rb") as handle:
        line_no = 0
        while raw := handle.readline(MAX_LINE_BYTES + 1):
            line_no += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise DataError(f"line longer than {MAX_LINE_BYTES} bytes (16 MiB)",
                                file=file, line=line_no)
            if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"not UTF-8 text (byte {exc.start + 1} of the line)",
                                file=file, line=line_no) from None
            if not text.strip():
                continue
            try:
                obj = json.loads(text, object_pairs_hook=unique_keys)
            except DuplicateKey:
                path = _duplicate_path(text)
                raise DataError(f"key {path!r} given twice: JSON leaves which value counts "
                                f"undefined; keep one", file=file, line=line_no, field=path) from None
            except json.JSONDecodeError as exc:
                # json's message may end in "at" itself ("Invalid control character at")
                msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
                raise DataError(f"not valid JSON ({msg} at column {exc.colno})",
                                file=file, line=line_no) from None
            except RecursionError:
                raise DataError("not valid JSON (nested too deeply)", file=file, line=line_no) from None
            except ValueError as exc:  # an integer of more than 4300 digits
                raise DataError(f"not valid JSON ({str(exc).split(':')[0]})",
                                file=file, line=line_no) from None
            if not isinstance(obj, dict):
                raise DataError(f"expected a JSON object per line, got "
                                f"{type(obj).__name__}", file=file, line=line_no)
            yield line_no, obj


class _Repeated(dict):
    """An object of the line that repeats ``key`` (_duplicate_path)."""
    key = ""


def _duplicate_path(text: str) -> str:
    """The dotted path of the first repeated key of a line (``metadata.request_start_ns``),
    found by parsing it again, only once json_objects has met one."""
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        try:
            return unique_keys(pairs)
        except DuplicateKey as exc:
            out = _Repeated(pairs)
            out.key = exc.key
            return out

    def find(value: Any, prefix: str) -> str | None:
        if isinstance(value, _Repeated):
            return prefix + value.key
        items = value.items() if isinstance(value, dict) else \
            enumerate(value) if isinstance(value, list) else ()
        for k, v in items:
            if (hit := find(v, f"{prefix}{k}.")) is not None:
                return hit
        return None

    return find(json.loads(text, object_pairs_hook=hook), "") or ""


def _parse_record(obj: dict[str, Any], file: str, line: int) -> dict[str, Any]:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        raise DataError("missing field 'metadata' (an object)", file=file, line=line,
                        field="metadata")
    start, end = record_timestamps(metadata, file, line)
    phase = benchmark_phase(metadata, file, line)
    error = obj.get("error")
    if error is not None:
        kind = error.get("type") if isinstance(error, dict) else None
        return {"line": line, "request_start_ns": start, "request_end_ns": end,
                "output_tokens": None, "error": str(kind or "error"), "benchmark_phase": phase}
    metrics = obj.get("metrics")
    if not isinstance(metrics, dict):
        raise DataError("missing field 'metrics' (an object) in a record without an error",
                        file=file, line=line, field="metrics")
    tokens = None
    for name in OUTPUT_TOKEN_METRICS:
        if metrics.get(name) is not None:
            tokens = metric_value(metrics[name], f"metrics.{name}", file, line)
            break
    if tokens is None:
        wanted = " or ".join(f"metrics.{n}.value" for n in OUTPUT_TOKEN_METRICS)
        raise DataError(f"missing field {wanted} (the output token count) in a record "
                        f"without an error", file=file, line=line,
                        field=f"metrics.{OUTPUT_TOKEN_METRICS[0]}")
    return {"line": line, "request_start_ns": start, "request_end_ns": end,
            "output_tokens": tokens, "error": None, "benchmark_phase": phase}


#: AIPerf's credit phases (``metadata.benchmark_phase``): warm-up requests load the
#: server before the measured (profiling) ones and are not part of its statistics.
BENCHMARK_PHASES = ("warmup", "profiling")


def benchmark_phase(metadata: dict[str, Any], file: str, line: int) -> str:
    """A record's ``metadata.benchmark_phase``: ``"warmup"`` or ``"profiling"`` (an
    export without the field is all profiling); another value is a DataError naming
    the field, so a new phase is not silently measured."""
    phase = metadata.get("benchmark_phase")
    if phase is None:
        return "profiling"
    if phase not in BENCHMARK_PHASES:
        raise DataError(f"field 'metadata.benchmark_phase' must be one of AIPerf's phases "
                        f"{', '.join(BENCHMARK_PHASES)}, got {phase!r}", file=file, line=line,
                        field="metadata.benchmark_phase")
    return phase


def _timestamp(metadata: dict[str, Any], key: str, file: str, line: int) -> int:
    field = f"metadata.{key}"
    if metadata.get(key) is None:
        raise DataError(f"missing field {field!r}", file=file, line=line, field=field)
    value = metadata[key]
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value < 0:
        raise DataError(f"field {field!r} must be a number of ns ≥ 0 (epoch time), got {value!r}",
                        file=file, line=line, field=field)
    return int(value)


def record_timestamps(metadata: dict[str, Any], file: str, line: int) -> tuple[int, int]:
    """A record's ``request_start_ns`` and ``request_end_ns``; the end may not come
    before the start."""
    start = _timestamp(metadata, "request_start_ns", file, line)
    end = _timestamp(metadata, "request_end_ns", file, line)
    if end < start:
        raise DataError(f"field 'metadata.request_end_ns' ({end}) is before "
                        f"'metadata.request_start_ns' ({start})", file=file, line=line,
                        field="metadata.request_end_ns")
    return start, end


def metric_value(entry: Any, field: str, file: str, line: int, what: str = "a token count") -> int | float:
    """A metric's value (``{"value": v, ...}`` or a bare v): a finite number ≥ 0, else a
    DataError saying the field must be ``what`` (its meaning and unit: "a token count",
    "a latency in ms")."""
    value = entry.get("value") if isinstance(entry, dict) else entry
    if (isinstance(value, bool) or not isinstance(value, Real)
            or not math.isfinite(value) or value < 0):
        raise DataError(f"field '{field}.value' must be {what} ≥ 0, got {value!r}",
                        file=file, line=line, field=field)
    return int(value) if float(value).is_integer() else float(value)


#: The per-request file AIPerf writes in its artifact folder.
PROFILE_EXPORT = "profile_export.jsonl"


def profile_export_path(path: str | os.PathLike[str]) -> str:
    """``path``, or ``path/profile_export.jsonl`` when ``path`` is a folder that holds it
    (AIPerf's artifact folder).

    Raises:
        DataError: ``path`` is a folder without that file (``.file`` names the folder).
    """
    file = os.fspath(path)
    if os.path.isdir(file):
        inner = os.path.join(file, PROFILE_EXPORT)
        if not os.path.isfile(inner):
            raise DataError(f"a folder without {PROFILE_EXPORT}: give AIPerf's per-request export, or "
                            "the artifact folder AIPerf wrote it in", file=file)
        return inner
    return file


#: A latency metric's ``unit`` → its factor to ms (AIPerf writes "ms"; its time units
#: are ns, us, ms and sec). A value without a unit is taken in ms.
TIME_UNITS_MS: dict[str, float] = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, "sec": 1e3}


def time_unit(entry: Any, field: str, file: str, line: int) -> tuple[str, float]:
    """``entry``'s time unit (``"ms"`` when it has none) and the factor that converts
    its value to ms.

    Raises:
        DataError: a unit that is not a time unit of :data:`TIME_UNITS_MS` (file, line and
            ``field.unit`` named).
    """
    unit = entry.get("unit") if isinstance(entry, dict) else None
    if unit is None:
        return "ms", 1.0
    if not isinstance(unit, str) or unit not in TIME_UNITS_MS:
        raise DataError(f"field '{field}.unit' must be a time unit ({', '.join(TIME_UNITS_MS)}), got {unit!r}",
                        file=file, line=line, field=f"{field}.unit")
    return unit, TIME_UNITS_MS[unit]


#: The largest token count a record may give: the core's int64.
MAX_TOKENS = 2**63 - 1


def _token_count(value: int | float, field: str, file: str, line: int) -> int:
    """A record's token count (≥ 0 already): a whole number of at most
    :data:`MAX_TOKENS`, else a DataError naming the field."""
    if not float(value).is_integer() or value > MAX_TOKENS:
        raise DataError(f"field '{field}.value' must be a whole number of tokens ≤ {MAX_TOKENS} "
                        f"(2^63 − 1), got {value!r}", file=file, line=line, field=field)
    return int(value)


#: How far the sum of a record's ``inter_chunk_latency`` may be from its
#: ``request_latency`` − ``time_to_first_token``: a relative part and ms. AIPerf takes
#: the gaps, the first token and the last from the same response timestamps, so the
#: two agree but for rounding and the stream's end after its last chunk.
ICL_SUM_TOLERANCE = (0.01, 1.0)


def _check_chunk_gaps(rec: dict[str, Any], file: str, line: int) -> None:
    """A successful record's chunk gaps fit the record: when there are any, their sum is
    within :data:`ICL_SUM_TOLERANCE` of ``e2e_ms`` − ``ttft_ms`` (AIPerf's metrics take
    the gaps, the first chunk and the last from the same responses:
    ``inter_chunk_latency_metric.py``, ``ttft_metric.py``, ``request_latency_metric.py``),
    else a DataError naming the field. Their count is not checked against
    ``output_sequence_length``: AIPerf counts the output with its own tokenizer on the
    text (``output_sequence_length_metric.py``), which can merge the tokens of two chunks,
    so a real record may hold more chunks than counted tokens."""
    gaps = rec["icl_ms"]
    if not gaps:
        return
    field = "metrics.inter_chunk_latency"
    total, span = sum(gaps), rec["e2e_ms"] - rec["ttft_ms"]  # sum, not fsum: inf past float max, refused
    rel, ms = ICL_SUM_TOLERANCE
    if not abs(total - span) <= rel * abs(span) + ms:
        raise DataError(f"field '{field}.value' sums to {total:.6g} ms, but request_latency − "
                        f"time_to_first_token is {span:.6g} ms (the gaps run from the first chunk to "
                        f"the last; within {rel:.0%} + {ms:g} ms)", file=file, line=line, field=field)


def read_profile_export(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read AIPerf's per-request ``profile_export.jsonl`` (``path`` may be the artifact
    folder AIPerf wrote it in).

    Returns:
        One dict per line in file order: ``line``; ``start_ns``, ``end_ns``;
        ``isl``, ``osl`` (tokens; ``osl`` ``None`` for a failed record); ``ttft_ms``,
        ``tpot_ms`` (AIPerf's ``inter_token_latency``), ``e2e_ms`` (``request_latency``),
        ``icl_ms`` (list); ``conversation``, ``session``, ``turn``; ``phase`` (AIPerf's
        ``metadata.benchmark_phase``: ``warmup`` or ``profiling``, the latter when absent);
        ``error`` (``None`` or its type).

    Raises:
        DataError: a line that is not a JSON object, a record without timestamps, or a
            successful record without ``input_sequence_length``,
            ``output_sequence_length``, ``time_to_first_token`` or ``request_latency``, or
            whose ``inter_chunk_latency`` does not fit it (a gap not finite and ≥ 0, more
            than ``output_sequence_length`` − 1 gaps, a sum off ``request_latency`` −
            ``time_to_first_token`` by more than :data:`ICL_SUM_TOLERANCE`), or whose
            ``request_latency`` is below its ``time_to_first_token``
            (``.file``, ``.line`` and ``.field`` say where); AIPerf's aggregate export
            (``profile_export_aiperf.json`` or ``.csv``) given in its place, said so; a file without records; a
            file that cannot be read (missing, a folder, no permission: ``.file`` names
            it, the ``OSError`` is its ``__cause__``).
    """
    file = profile_export_path(path)
    try:
        with open(file, "rb"):
            pass
    except OSError as exc:
        raise DataError(f"cannot read the AIPerf export: {exc.strerror or exc}", file=file) from exc
    out: list[dict[str, Any]] = []
    try:
        for line, obj in json_objects(file):
            if not isinstance(obj.get("metadata"), dict):
                raise DataError("expected an AIPerf record: a JSON object with 'metadata'" + _aggregate_hint(file),
                                file=file, line=line, field="metadata")
            out.append(_profile_record(obj, file, line))
    except DataError as exc:
        if exc.line == 1 and exc.reason.startswith(("not valid JSON", "not UTF-8")) and (hint := _aggregate_hint(file)):
            raise DataError(exc.reason + hint, file=file, line=1) from None
        raise
    if not out:
        raise DataError("no AIPerf records in the file", file=file)
    return out


def binary_kind(head: bytes) -> str:
    """The binary format whose magic number opens ``head`` (a file's first bytes:
    ``"gzip-compressed"``, ``"Parquet"``, …) or ``""``, as the core's trace readers name
    it: the one table of them is the core's (``core/workload/format_hint.go``
    ``BinaryKind``, through ``pybind.BinaryKind``)."""
    from ..binding import native

    return native.call("BinaryKind", head[:_BINARY_HEAD_BYTES].hex(), "binary")["kind"]


#: The first bytes ``pybind.BinaryKind`` reads (its ``BinaryKindHeadBytes``).
_BINARY_HEAD_BYTES = 16


def _aggregate_hint(file: str) -> str:
    """``": …"`` saying that ``file`` is a compressed or Parquet file (by its magic
    number, :func:`binary_kind`), or AIPerf's aggregate export, not its per-request
    records, when it looks like one (and naming the records file beside it when it is
    there), else "". AIPerf writes both into its artifact folder: ``profile_export_aiperf.json``
    is one JSON document of statistics (a metric's ``avg``, ``p50`` …; AIPerf's
    ``JsonExporter``), ``profile_export_aiperf.csv`` their table under a ``Metric`` header
    (``CsvExporter``), and ``profile_export.jsonl`` one record per request, the file compare
    and the calibration fits read."""
    try:
        with open(file, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return ""
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if what := binary_kind(head):
        return f": the file is {what}: AIPerf's {PROFILE_EXPORT} is read as text; decompress or convert it first"
    if text.startswith(b"Metric,"):
        kind = "AIPerf's aggregate statistics table (profile_export_aiperf.csv)"
    elif text.startswith(b"{") and (b'"avg"' in head or b'"records"' in head or b'"input_config"' in head) \
            and b'"metadata"' not in head:
        kind = "AIPerf's aggregate statistics (profile_export_aiperf.json)"
    else:
        return ""
    beside = os.path.join(os.path.dirname(file), PROFILE_EXPORT)
    where = f" ({beside} is there)" if os.path.isfile(beside) and os.path.abspath(beside) != os.path.abspath(file) else ""
    return (f": the file is {kind}, not its per-request records; give the {PROFILE_EXPORT} "
            f"AIPerf wrote beside it{where}, or the artifact folder")


def _profile_record(obj: dict[str, Any], file: str, line: int) -> dict[str, Any]:
    """One line of :func:`read_profile_export` (its object ``obj``) as its record."""
    md = obj["metadata"]
    metrics = obj.get("metrics") if isinstance(obj.get("metrics"), dict) else {}
    start_ns, end_ns = record_timestamps(md, file, line)
    rec: dict[str, Any] = {
        "line": line, "start_ns": start_ns, "end_ns": end_ns,
        "conversation": md.get("conversation_id") or md.get("x_correlation_id") or f"line{line}",
        "session": md.get("x_correlation_id") or md.get("conversation_id") or f"line{line}",
        "turn": int(md.get("turn_index") or 0), "error": None,
        "phase": benchmark_phase(md, file, line),
    }
    if obj.get("error") is not None:
        err = obj["error"]
        rec["error"] = str((err.get("type") if isinstance(err, dict) else None) or "error")
        # canceled by the client (AIPerf's RequestCancellationError, code 499): it loaded
        # the server from its send to its cancel, so compare replays it
        rec["canceled"] = bool(md.get("was_cancelled")) or (isinstance(err, dict) and err.get("code") == 499)
        if rec["canceled"]:
            name = "error_isl" if metrics.get("error_isl") is not None else "input_sequence_length"
            if metrics.get(name) is None:
                raise DataError("missing field 'metrics.error_isl' in a canceled record: its prompt length "
                                "is needed to replay it", file=file, line=line, field="metrics.error_isl")
            rec["isl"] = _token_count(metric_value(metrics[name], f"metrics.{name}", file, line),
                                      f"metrics.{name}", file, line)
            cancel = md.get("cancellation_time_ns")
            rec["cancel_ns"] = cancel if isinstance(cancel, int) and not isinstance(cancel, bool) else end_ns
        return rec

    def need(name: str, what: str) -> Any:
        if metrics.get(name) is None:
            raise DataError(f"missing field 'metrics.{name}' in a record without an error",
                            file=file, line=line, field=f"metrics.{name}")
        return metric_value(metrics[name], f"metrics.{name}", file, line, what)

    def latency(name: str, required: bool = True) -> float | None:
        """A latency metric in ms, converted from its unit."""
        if metrics.get(name) is None:
            return need(name, "") if required else None  # need raises
        unit, factor = time_unit(metrics[name], f"metrics.{name}", file, line)
        return float(need(name, f"a latency in {unit}")) * factor

    tokens = "a token count"
    rec["isl"], rec["osl"] = (_token_count(need(name, tokens), f"metrics.{name}", file, line)
                              for name in ("input_sequence_length", "output_sequence_length"))
    rec["ttft_ms"], rec["e2e_ms"] = latency("time_to_first_token"), latency("request_latency")
    # AIPerf takes both from the same responses: TTFT the first's time less the send,
    # request latency the last's (ttft_metric.py, request_latency_metric.py), so a
    # latency below the TTFT is a damaged record (a tolerance of 1e-9 for unit rounding)
    if rec["e2e_ms"] < rec["ttft_ms"] * (1 - 1e-9):
        raise DataError(f"field 'metrics.request_latency.value' ({rec['e2e_ms']:.6g} ms) is below "
                        f"'metrics.time_to_first_token' ({rec['ttft_ms']:.6g} ms): AIPerf measures both from "
                        f"the send, to the last response and to the first", file=file, line=line,
                        field="metrics.request_latency")
    rec["tpot_ms"] = latency("inter_token_latency", required=False)
    icl = metrics.get("inter_chunk_latency")
    icl_ms = time_unit(icl, "metrics.inter_chunk_latency", file, line)[1]
    icl = icl.get("value") if isinstance(icl, dict) else icl
    if icl is not None and not isinstance(icl, list):
        raise DataError(f"field 'metrics.inter_chunk_latency.value' must be a list of latencies "
                        f"in ms ≥ 0, got {icl!r}", file=file, line=line, field="metrics.inter_chunk_latency")
    bad = next((i for i, x in enumerate(icl or ()) if isinstance(x, bool) or not isinstance(x, (int, float))
                or not math.isfinite(x) or x < 0), None)
    if bad is not None:
        raise DataError(f"field 'metrics.inter_chunk_latency.value' must be a list of latencies in ms "
                        f"≥ 0, got {icl[bad]!r} at index {bad}", file=file, line=line,
                        field="metrics.inter_chunk_latency")
    rec["icl_ms"] = [float(x) * icl_ms for x in icl or ()]
    _check_chunk_gaps(rec, file, line)
    return rec
