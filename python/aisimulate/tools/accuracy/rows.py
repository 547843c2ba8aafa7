"""Reading a silicon CSV and its columns (the input side of the accuracy harness)."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

from .paths import SHARED_DATA

#: Columns a silicon CSV must have.
REQUIRED_COLUMNS = ("id", "model_path", "system", "isl", "osl", "batch_size", "tp_size",
                    "silicon_ttft_ms", "silicon_tpot_ms")
#: Key under which :func:`read_silicon` stores each row's line number in the file.
LINE_KEY = "_line"


def read_silicon(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Rows of a silicon CSV as dicts of strings, in file order, each with its line
    number in the file under :data:`LINE_KEY` (the header is line 1). A UTF-8 byte-order
    mark is allowed. Values are checked per row when the row is simulated
    (:func:`run_row`), so one bad row is skipped with its reason, not the whole file.

    Raises:
        OSError: the file cannot be read.
        ValueError: no header, a required column missing, a line with more fields than
            the header, no data rows, or an ``id`` used twice (the message names the
            file, the column or the lines).
    """
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        cols = set(reader.fieldnames or [])
        if not cols:
            raise ValueError(f"{path}: empty file (no header line)")
        missing = [c for c in REQUIRED_COLUMNS if c not in cols]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
        rows = []
        for r in reader:
            if None in r:
                raise ValueError(f"{path}: line {reader.line_num} has {len(r[None])} field(s) more than the header")
            r[LINE_KEY] = str(reader.line_num)
            rows.append(r)
    if not rows:
        raise ValueError(f"{path}: no data rows after the header")
    seen: dict[str, str] = {}
    for r in rows:
        rid = (r.get("id") or "").strip()
        if rid and rid in seen:
            raise ValueError(f"{path}: id {rid!r} on lines {seen[rid]} and {r[LINE_KEY]}")
        seen.setdefault(rid, r[LINE_KEY])
    return rows


def load_aliases(path: str | os.PathLike[str]) -> dict[str, str]:
    """``model_path`` → config file name, from ``model_aliases.csv``.

    Raises:
        OSError: the file cannot be read.
        ValueError: the ``model_path`` or ``config_file`` column is missing."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("model_path", "config_file") if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
        return {r["model_path"]: r["config_file"] for r in reader}


def _int(row: dict[str, str], key: str, default: int | None = None) -> int:
    """Column ``key`` as an integer ("8" or "8.0"); empty gives ``default``.

    Raises:
        ValueError: empty without a default, or not a finite whole number (names the
            column and the value)."""
    v = (row.get(key) or "").strip()
    if v == "":
        if default is None:
            raise ValueError(f"{key} is empty")
        return default
    try:
        x = float(v)
    except ValueError:
        raise ValueError(f"{key} = {v!r} is not a number") from None
    if not math.isfinite(x) or x != int(x):
        raise ValueError(f"{key} = {v!r} is not a whole number")
    return int(x)


def _positive(row: dict[str, str], key: str) -> float:
    """Column ``key`` as a finite number > 0.

    Raises:
        ValueError: empty, not a number, not finite or ≤ 0 (names the column and the value)."""
    v = (row.get(key) or "").strip()
    try:
        x = float(v)
    except ValueError:
        raise ValueError(f"{key} = {v!r}: want a finite number > 0") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{key} = {v!r}: want a finite number > 0")
    return x


def read_inputs(silicon: str | os.PathLike[str],
                aliases: str | os.PathLike[str] | None = None) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The rows of a silicon CSV and the ``model_path`` → config map (:func:`resolve_aliases`
    picks the aliases file).

    Raises:
        OSError: a file cannot be read.
        ValueError: as :func:`read_silicon`, :func:`load_aliases` and :func:`resolve_aliases`."""
    aliases_path = resolve_aliases(silicon, aliases)
    return read_silicon(silicon), load_aliases(aliases_path)


def resolve_aliases(silicon: str | os.PathLike[str], given: str | os.PathLike[str] | None = None) -> Path:
    """The ``model_aliases.csv`` to use: ``given``, else the one beside the silicon CSV,
    else the shared one.

    Raises:
        ValueError: ``given`` is not a file."""
    if given is not None:
        path = Path(given)
        if not path.is_file():
            raise ValueError(f"--aliases {path}: no such file")
        return path
    beside = Path(silicon).parent / "model_aliases.csv"
    return beside if beside.is_file() else SHARED_DATA / "silicon" / "model_aliases.csv"
