"""replay(spec, output_dir=DIR): the records stream into the result folder as requests
finish, and the folder is the one ``report.save`` writes, byte for byte."""

from __future__ import annotations

import hashlib
import os

import pytest

import aisimulate
from aisimulate import _stream, _tables
import pyarrow.parquet as pq

ALL = ("parquet", "csv", "jsonl")

_ENGINE = {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
           "workers": {"aggregated": {"count": 2}}, "scheduler": {"max_num_seqs": 256}}

#: 5,001 short requests: five chunks of 1,024 records streamed by the core (the fixture
#: below) cut into row groups of 1,000 (the first chunk is short of its warm-up request,
#: not reported).
CHUNKED = {"engine": _ENGINE,
           "traffic": {"source": {"type": "synthetic", "num_requests": 5_001,
                                  "isl": {"kind": "uniform", "min": 1, "max": 4_000}, "osl": 1},
                       "load": {"mode": "concurrency", "concurrency": 64, "warmup_requests": 1}}}


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """Chunks of 2^10 records from the core, row groups of 1,000 rows: many of both from
    a small replay, their boundaries apart."""
    monkeypatch.setattr(_stream, "CHUNK_SHIFT", 10)
    monkeypatch.setattr(_tables, "CHUNK_ROWS", 1000)

#: sessions: turns interleave, so the rows come out of the core out of request_id order
SESSIONS = {"engine": _ENGINE,
            "traffic": {"source": {"type": "sessions", "num_sessions": 300,
                                   "turns": {"kind": "uniform", "min": 1, "max": 6}, "isl": 100, "osl": 5},
                        "load": {"mode": "concurrency", "concurrency": 16}}}


def _digests(folder) -> dict[str, str]:
    return {name: hashlib.md5((folder / name).read_bytes()).hexdigest() for name in sorted(os.listdir(folder))}


@pytest.mark.parametrize("spec", [CHUNKED, SESSIONS], ids=["two chunks", "sessions"])
def test_a_streamed_result_is_the_saved_one(tmp_path, spec):
    held = aisimulate.replay(spec, progress=False)
    held.save(tmp_path / "saved", formats=ALL, exports=("aiperf", "vllm"))
    streamed = aisimulate.replay(spec, progress=False, output_dir=tmp_path / "streamed", formats=ALL,
                                 exports=("aiperf", "vllm"))
    assert _digests(tmp_path / "streamed") == _digests(tmp_path / "saved")
    assert streamed.to_json() == held.to_json()
    # the report reads its records back from requests.parquet, with the held dtypes
    assert streamed.to_pandas().equals(held.to_pandas())
    assert streamed.requests[:50] == held.requests[:50]


def test_the_chunked_spec_streams_two_chunks_with_reasons_and_a_warmup(tmp_path, monkeypatch):
    chunks = []
    real = _stream.RecordStream._append
    monkeypatch.setattr(_stream.RecordStream, "_append",
                        lambda self, head, data: (chunks.append((head["n"], list(head["reasons"]))),
                                                  real(self, head, data))[1])
    rep = aisimulate.replay(CHUNKED, progress=False, output_dir=tmp_path)
    # 5,001 sent, the first a warm-up: 1,023 reported from the first chunk, then 1,024 …
    assert [n for n, _ in chunks] == [1023, 1024, 1024, 1024, 905]
    assert rep._count() == 5000
    # … cut into row groups of 1,000 rows, as save() writes them
    meta = pq.ParquetFile(tmp_path / "requests.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [1000] * 5


def test_ctrl_c_while_streaming_leaves_the_previous_result(tmp_path, monkeypatch):
    out = tmp_path / "out"
    aisimulate.replay(SESSIONS, progress=False).save(out)
    before = _digests(out)

    def interrupt(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(_stream.RecordStream, "poll", interrupt)
    with pytest.raises(KeyboardInterrupt):
        aisimulate.replay(CHUNKED, progress=False, output_dir=out)
    assert _digests(out) == before  # no temporary table left, nothing replaced


def test_streaming_needs_parquet(tmp_path):
    with pytest.raises(ValueError, match="needs 'parquet'"):
        aisimulate.replay(SESSIONS, output_dir=tmp_path, formats=("csv",))
