"""A binary file given as text is named by one table of magic numbers, the core's
(``core/workload/format_hint.go`` ``BinaryKind``): ``compare`` asks it through
``pybind.BinaryKind`` for an AIPerf export, as the trace readers do for a trace. Python
kept a copy of the table, which had drifted: a bzip2 export was "not UTF-8 text"
there, while the trace readers named it."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import zipfile
from pathlib import Path

import pytest

import aisimulate
from aisimulate import DataError
from aisimulate.compare import read_profile_export
from aisimulate.io.aiperf import binary_kind

ROW = b'{"timestamp": 0, "input_length": 10, "output_length": 3, "hash_ids": []}\n'


def _zip(data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("profile_export.jsonl", data)
    return buf.getvalue()


def _parquet(data: bytes) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"line": [data.decode()]}), buf)
    return buf.getvalue()


# each format written by its own library (zstd by hand: its frame magic, RFC 8878 3.1.1)
FILES = {"gzip-compressed": gzip.compress(ROW), "bzip2-compressed": bz2.compress(ROW),
         "xz-compressed": lzma.compress(ROW), "zstd-compressed": b"\x28\xb5\x2f\xfd\x20\x00" + ROW,
         "a ZIP archive": _zip(ROW), "Parquet": _parquet(ROW)}


@pytest.mark.parametrize("kind", list(FILES))
def test_compare_and_the_trace_readers_name_a_binary_file_alike(tmp_path, kind):
    p = tmp_path / "f"
    p.write_bytes(FILES[kind])
    assert binary_kind(FILES[kind]) == kind
    with pytest.raises(DataError) as export:
        read_profile_export(p)
    assert str(export.value).endswith(f": the file is {kind}: AIPerf's profile_export.jsonl is read as text; "
                                      "decompress or convert it first")
    spec = {"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "workers": {"aggregated": {"tp": 2}}},
            "traffic": {"source": {"type": "mooncake", "path": str(p)}, "load": {"mode": "trace"}}}
    with pytest.raises(DataError) as trace:
        aisimulate.replay(spec, progress=False)
    assert f"(the file is {kind}: a trace is read as text" in str(trace.value)


def test_text_is_no_binary_kind():
    assert binary_kind(ROW) == ""
    assert binary_kind(b"BZh,ContextTokens") == ""  # the letters of a magic, then text
    assert binary_kind(b"") == ""


def test_python_keeps_no_magic_numbers_of_its_own():
    # the core's table is the one: a magic number written in the package is a second copy
    magics = [r"\x1f\x8b", r"\x28\xb5\x2f\xfd", r"\xfd7zXZ", r"PK\x03\x04", "PAR1", '"BZh']
    package = Path(aisimulate.__file__).parent
    sources = sorted(package.rglob("*.py"))
    assert len(sources) > 50  # the scan found the package
    found = [(str(f.relative_to(package)), m) for f in sources for m in magics if m in f.read_text()]
    assert found == []
    assert re.search(r"\bBinaryKindHeadBytes = 16\b", (package.parents[1] / "pybind" / "dataerr.go").read_text())
