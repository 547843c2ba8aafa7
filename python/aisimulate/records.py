"""A replay's per-request records as column arrays (the core's columnar result):
sorting them into ``request_id`` order, the :class:`RequestRecords` sequence of dicts
over them, and the conversions to a pandas DataFrame and from a list of dicts. The
numbers are the core's; nothing is rescaled."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Iterator
    from typing import Any

from .binding import lazy as _lazy


def sorted_columns(layout: Mapping[str, Any], buf) -> dict[str, Any]:
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


def _labels(cols: Mapping[str, Any], info: Mapping[str, Any]):
    """The strings a labelled column indexes, with ``None`` last (so -1 is null)."""
    np = _lazy.module("numpy")

    return np.array(list(cols["_" + info["labels"]]) + [None], dtype=object)


def columns_to_pandas(pd, cols: Mapping[str, Any]):
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
        return columns_to_records(self._cols, start, stop)

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


def columns_to_records(cols: Mapping[str, Any] | None, start: int = 0,
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


#: Columns written as strings, by the header's list their integers index; session_id
#: only when the trace named its sessions by strings.
_LABELLED = {"status": "statuses", "reason": "reasons", "session_id": "sessions"}


def records_to_columns(records: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> dict[str, Any]:
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
