"""A sweep's or a comparison's table written to a file by its extension (``sweep --out``,
``compare --requests-out``): Parquet, CSV or JSON lines, replaced only when complete."""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any

from ..binding import lazy as _lazy
from ..io.files import write_replacing
from .common import UsageError


#: The suffixes :func:`write_frame` writes (``sweep --out``, ``compare --requests-out``).
TABLE_SUFFIXES = (".csv", ".parquet", ".jsonl", ".json")


def check_out(path: str) -> str:
    """``path``'s extension, lower case, when :func:`write_frame` writes it; else a
    :class:`~aisimulate.cli.common.UsageError` naming ``--out``."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in TABLE_SUFFIXES:
        raise UsageError(f"--out {path}: use a .parquet, .csv or .jsonl file")
    return ext


def write_frame(df: Any, path: str) -> None:
    """Write the DataFrame ``df`` to ``path`` by its extension (.parquet, .csv, .jsonl/.json), to a
    temporary name in the same folder renamed when complete.

    Raises:
        UsageError: an unknown extension.
        OSError: the file cannot be written.
    """
    ext = check_out(path)

    def write_to(tmp: str) -> None:
        if ext == ".parquet":
            out = df.copy()
            for c in out.columns:  # a mixed object column (a field's values) as text
                if out[c].dtype == object and c not in ("status", "reason"):
                    out[c] = out[c].map(lambda v: None if v is None else (v if isinstance(v, str) else json.dumps(v)))
            out.to_parquet(tmp, index=False)
        elif ext == ".csv":
            df.to_csv(tmp, index=False)
        else:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(json_lines(df))

    write_replacing(path, ".aisimulate-sweep-", write_to)


def json_lines(df: Any) -> str:
    """``df`` as JSON lines, one object per row, every float at full precision (Python's
    shortest repr that reads back as the same double: pandas' ``to_json`` rounds to 10
    decimals, which leaves a ``gpu_hours`` of 5.5555e-10 as 6e-10); NaN and a missing
    value are null."""
    pd = _lazy.module("pandas")

    def plain(v: Any) -> Any:
        if isinstance(v, (dict, list, str, bool)) or v is None:
            return v
        if pd.api.types.is_scalar(v) and pd.isna(v):
            return None
        return v.item() if hasattr(v, "item") else v  # a numpy scalar as its Python value

    cols = list(df.columns)
    rows = (dict(zip(cols, map(plain, r))) for r in df.itertuples(index=False, name=None))
    return "".join(json.dumps(r, separators=(",", ":"), allow_nan=False) + "\n" for r in rows)
