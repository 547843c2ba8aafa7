"""A report's per-request table as Parquet, CSV or JSON lines: written in bulk, and read
back into columns (:func:`columns_from_table`, for a report whose records were streamed
into a result folder).

The report holds its records as numpy columns (:meth:`ReplayReport.from_columnar`).
Parquet goes through pyarrow (zero-copy arrays, one row group per chunk). CSV and JSON
lines are formatted by the core (``pybind.WriteTable``) from the same column bytes,
handed over in one unnamed temporary file; Python never loops over records. Both are
written in chunks of :data:`CHUNK_ROWS`, so a progress bar can move and Ctrl-C is taken
between chunks.

Nulls follow the core's column header: a NaN float, and -1 in a ``nullable`` integer or a
labelled column (``worker``, ``session_id``, ``reason`` …) is null — empty in CSV,
``null`` in JSON lines, null in Parquet; labelled columns (``status``, ``reason``) are
written as their strings. Floats are written as Python's ``repr`` writes them (the shortest text
that reads back to the same number), so ``requests.jsonl`` is byte-identical to
``json.dumps`` of each record of :attr:`ReplayReport.requests`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Callable, Mapping, Sequence

from ..binding import lazy as _lazy, native as _native
from .names import FILES

#: Rows per chunk (one Parquet row group, one core call for CSV and JSON lines): a
#: Ctrl-C is taken between chunks, and a chunk of 65,536 rows takes about 0.1 s of CPU
#: in any format (JSON lines, the slowest: 1.7 s per 10⁶ rows), so a stop comes well
#: within 0.5 s even on a loaded machine; larger chunks are no faster.
CHUNK_ROWS = 65_536

#: Record table formats, with the file each writes.

def columns_of(head: Mapping[str, Any], buf) -> dict[str, Any]:
    """The column arrays of a columnar header (``n`` and ``columns``: ``name``,
    ``dtype``, ``offset``) and its bytes (views into ``buf``, in the core's order), with
    :func:`label_lists`."""
    np = _lazy.module("numpy")

    n = int(head["n"])
    cols: dict[str, Any] = {c["name"]: np.frombuffer(buf, dtype=np.dtype(c["dtype"]), count=n,
                                                     offset=int(c["offset"]))
                            for c in head["columns"]}
    cols.update(label_lists(head))
    return cols


def label_lists(head: Mapping[str, Any]) -> dict[str, Any]:
    """What a report's columns keep beside the arrays, from the header: ``_statuses``,
    ``_reasons``, ``_sessions`` (the strings the labelled columns index; ``_sessions``
    a trace's string session ids) and ``_header`` (name → the column's header)."""
    return {"_statuses": list(head.get("statuses") or []), "_reasons": list(head.get("reasons") or []),
            "_sessions": list(head.get("sessions") or []),
            "_header": {c["name"]: c for c in head["columns"]}}


def _labels(cols: Mapping[str, Any], name: str) -> list[str] | None:
    """The strings a labelled column (status, reason) indexes, from the core's header."""
    info = cols["_header"][name]
    return list(cols["_" + info["labels"]]) if info.get("labels") else None


def _negative_null(cols: Mapping[str, Any], name: str) -> bool:
    """Whether a negative value is null in this column (nullable integers, labels)."""
    info = cols["_header"][name]
    return bool(info.get("nullable") or info.get("labels"))


def arrow_table(cols: Mapping[str, Any], fields: Sequence[str], start: int = 0, stop: int | None = None):
    """Rows [start, stop) of the columns as a ``pyarrow.Table`` (strings for status and
    reason, nulls per the module doc).

    The arrays are made from the columns' buffers (:func:`_arrow_array`), not by
    ``pyarrow.array``, which imports pandas on its first call (to check whether its
    argument is a pandas object): 0.15 s of CPU with a warm disk cache, 0.5 s cold, in a
    command that otherwise never loads pandas."""
    np = _lazy.module("numpy")
    pa = _lazy.module("pyarrow")

    arrays = []
    for name in fields:
        v = cols[name][start:stop]
        labels = _labels(cols, name)
        if labels is not None:
            codes = v.astype(np.int32)
            text = [s.encode() for s in labels]
            offsets = np.cumsum([0] + [len(b) for b in text], dtype=np.int32)
            dictionary = pa.Array.from_buffers(pa.string(), len(text),
                                               [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(text))])
            arr = pa.DictionaryArray.from_arrays(_arrow_array(pa, np, codes, codes >= 0), dictionary)
            arrays.append(arr.dictionary_decode())
        elif _negative_null(cols, name):
            arrays.append(_arrow_array(pa, np, v, v >= 0))
        elif v.dtype.kind == "f":
            arrays.append(_arrow_array(pa, np, v, ~np.isnan(v)))  # NaN → null
        else:
            arrays.append(_arrow_array(pa, np, v, None))
    return pa.Table.from_arrays(arrays, names=list(fields))


def _arrow_array(pa, np, v, valid):
    """The numpy column ``v`` as an Arrow array over the same memory (a copy only when it
    is not contiguous), null where ``valid`` (a bool array, or None: no nulls) is False."""
    v = np.ascontiguousarray(v)
    nulls = 0 if valid is None else len(v) - int(np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(pa.from_numpy_dtype(v.dtype), len(v), [bitmap, pa.py_buffer(v)],
                                 null_count=nulls)


def write_table(cols: Mapping[str, Any], fields: Sequence[str], n: int, path: Path, fmt: str,
                advance: Callable[[int], None]) -> None:
    """Write the table to ``path`` in ``fmt`` (a key of :data:`FILES`):
    :func:`write_parquet` or :func:`write_text`."""
    if fmt == "parquet":
        write_parquet(cols, fields, n, path, advance)
    else:
        write_text(cols, fields, n, path, fmt, advance)


def write_parquet(cols: Mapping[str, Any], fields: Sequence[str], n: int, path: Path,
                  advance: Callable[[int], None]) -> None:
    """Write the table to ``path`` as Parquet (zstd), one row group per chunk.

    Dictionary encoding is asked for only on the string and integer columns, whose
    values repeat (status, token counts, workers); on the float times it rarely pays
    and costs more than half the write (at 10⁶ rows: 1.4 s of CPU with it on every
    column, 0.5 s so, and a smaller file). The float columns are written
    BYTE_STREAM_SPLIT (Parquet's encoding for floats: byte k of every value stored
    together, which zstd compresses better): the writer alone, 10⁶ rows of a Poisson
    replay at 300 req/s, 0.23 → 0.17 s of CPU and 64.4 → 53.8 MB; ``save()`` of
    scripts/bench.py's 10⁶ rows at 500 req/s, 0.21–0.27 s either way and 41.8 → 36.9 MB."""
    writer = None
    try:
        for start in range(0, max(n, 1), CHUNK_ROWS):
            table = arrow_table(cols, fields, start, min(start + CHUNK_ROWS, n))
            if writer is None:
                writer = parquet_writer(path, table.schema, cols, fields)
            writer.write_table(table)
            advance(table.num_rows)
    finally:
        if writer is not None:
            writer.close()


def parquet_writer(path: Path, schema, cols: Mapping[str, Any], fields: Sequence[str]):
    """The ``pyarrow.parquet.ParquetWriter`` of :func:`write_parquet` (zstd, dictionaries
    on the non-float columns, BYTE_STREAM_SPLIT on the float ones), also used by a
    streamed replay (:mod:`aisimulate.run.stream`) so that its file is the same."""
    pq = _lazy.module("pyarrow.parquet")

    floats = [name for name in fields if cols[name].dtype.kind == "f"]
    dictionary = [name for name in fields if name not in floats]
    return pq.ParquetWriter(str(path), schema, compression="zstd", use_dictionary=dictionary,
                            use_byte_stream_split=floats)


def write_text(cols: Mapping[str, Any], fields: Sequence[str], n: int, path: Path, fmt: str,
               advance: Callable[[int], None], times=None) -> None:
    """Write the table to ``path`` as ``"csv"``, ``"jsonl"`` or ``"aiperf"`` through the
    core; ``times`` (``"aiperf"``, with the columns ``chunk_offset`` and ``chunk_count``)
    are the records' flat chunk times, ns (:attr:`ReplayReport.chunk_times`)."""
    tempfile = _lazy.module("tempfile")

    np = _lazy.module("numpy")

    layout = []
    with tempfile.TemporaryFile(prefix="aisimulate-", suffix=".cols") as fh:
        offset = 0
        for name in fields:
            v = np.ascontiguousarray(cols[name])
            col = {"name": name, "dtype": v.dtype.str, "offset": offset}
            if _negative_null(cols, name):
                col["null"] = "negative"
            elif v.dtype.kind == "f":
                col["null"] = "nan"
            labels = _labels(cols, name)
            if labels is not None:
                col["labels"] = labels
            layout.append(col)
            fh.write(v.tobytes())  # one copy per column: C memcpy, no per-record work
            offset += v.nbytes
        flat = None
        if times is not None:
            v = np.ascontiguousarray(times, dtype="<i8")
            flat = {"offset": offset, "n": len(v)}
            fh.write(v.tobytes())
        fh.flush()
        data = f"/proc/self/fd/{fh.fileno()}"
        if not os.path.exists(data) or _native.forked():  # a named copy, removed below
            fd, data = tempfile.mkstemp(prefix="aisimulate-", suffix=".cols")
            with os.fdopen(fd, "wb") as named:
                fh.seek(0)
                named.write(fh.read())
        try:
            if n == 0:
                _write_chunk(layout, n, 0, 0, fmt, data, path, append=False, times=flat)
            for start in range(0, n, CHUNK_ROWS):
                stop = min(start + CHUNK_ROWS, n)
                _write_chunk(layout, n, start, stop, fmt, data, path, append=start > 0, times=flat)
                advance(stop - start)
        finally:
            if not data.startswith("/proc/"):
                os.unlink(data)


def _write_chunk(layout, n, start, stop, fmt, data, path, *, append, times=None):
    req = {"n": n, "columns": layout, "from": start, "to": stop, "format": fmt, "append": append}
    if times is not None:
        req["times"] = times
    _native.call("WriteTable", json.dumps(req), "written", data, str(path))


def write_records_slow(records: Sequence[Mapping[str, Any]], fields: Sequence[str], path: Path,
                       fmt: str) -> None:
    """The same files from a report built of dicts (:meth:`ReplayReport.from_dict`,
    small by nature): record by record."""
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8", newline="\n") as f:
            for r in records:
                f.write(json.dumps(r, allow_nan=False))
                f.write("\n")
    elif fmt == "csv":
        import csv

        with path.open("w", encoding="utf-8", newline="") as f:
            keys = list(dict.fromkeys([*fields, *(k for r in records for k in r)]))
            w = csv.DictWriter(f, keys, lineterminator="\n", extrasaction="ignore")
            w.writeheader()
            w.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in records)
    else:
        pa = _lazy.module("pyarrow")
        pq = _lazy.module("pyarrow.parquet")

        pq.write_table(pa.Table.from_pylist(list(records)), str(path), compression="zstd")


#: The formats a streamed report reads its records back from, the first written one
#: (Parquet keeps the types; the CSV and JSON lines tables are read with the header's).
READ_BACK = ("parquet", "csv", "jsonl")


def read_back_format(formats: Sequence[str]) -> str:
    """The table a replay streamed with these record formats reads its records from."""
    return next(f for f in READ_BACK if f in formats)


def columns_from_table(path: Path, fmt: str, head: Mapping[str, Any]) -> dict[str, Any]:
    """The column arrays of a streamed table (``fmt``: ``"parquet"``, ``"csv"`` or
    ``"jsonl"``), as :meth:`ReplayReport.from_columnar` keeps them: the core's dtypes,
    -1 for a null integer or label, NaN for a null float, ``status`` and ``reason`` as
    indices into the header's labels."""
    np = _lazy.module("numpy")
    pa = _lazy.module("pyarrow")
    pc = _lazy.module("pyarrow.compute")

    table = _read_table(path, fmt, head)
    cols: dict[str, Any] = {}
    for c in head["columns"]:
        arr = table.column(c["name"])
        dtype = np.dtype(c["dtype"])
        if c.get("labels"):
            labels = list(head[c["labels"]])
            codes = pc.index_in(arr, value_set=pa.array(labels, type=arr.type))
            cols[c["name"]] = codes.fill_null(-1).to_numpy().astype(dtype)
        elif dtype.kind == "f":
            cols[c["name"]] = arr.fill_null(float("nan")).to_numpy().astype(dtype)
        elif c.get("nullable"):
            cols[c["name"]] = arr.fill_null(-1).to_numpy().astype(dtype)
        else:
            cols[c["name"]] = arr.to_numpy().astype(dtype)
    cols.update(label_lists(head))
    return cols


#: The Arrow type a text table's column is read as, by the core's dtype.
_ARROW_TYPES = {"<i8": "int64", "<i4": "int32", "<f8": "float64"}


def _read_table(path: Path, fmt: str, head: Mapping[str, Any]):
    """The table at ``path`` as a ``pyarrow.Table``; CSV and JSON lines read with the
    header's column types (labels as strings; an empty CSV cell or a JSON null is null).
    Both hold floats as the shortest text that reads back to the same number, which
    Arrow's parsers read exactly (tests/test_stream.py compares every record)."""
    pa = _lazy.module("pyarrow")
    if fmt == "parquet":
        return _lazy.module("pyarrow.parquet").read_table(str(path))
    schema = pa.schema([(c["name"], pa.string() if c.get("labels") else pa.type_for_alias(_ARROW_TYPES[c["dtype"]]))
                        for c in head["columns"]])
    if fmt == "csv":
        pcsv = _lazy.module("pyarrow.csv")
        opts = pcsv.ConvertOptions(column_types=schema, null_values=[""], strings_can_be_null=True,
                                   include_columns=schema.names)
        return pcsv.read_csv(str(path), convert_options=opts)
    pj = _lazy.module("pyarrow.json")
    return pj.read_json(str(path), parse_options=pj.ParseOptions(explicit_schema=schema,
                                                                   unexpected_field_behavior="ignore"))
