"""replay(spec, output_dir=DIR): the records stream into the result folder as requests
finish, and the folder is the one ``report.save`` writes, byte for byte."""

from __future__ import annotations

import hashlib
import os

import pytest

import aisimulate
from aisimulate.run import stream as _stream
from aisimulate.io import tables as _tables
import pyarrow.parquet as pq

from conftest import EXAMPLE1_ROWS, example1_spec, write_mooncake

ALL = ("parquet", "csv", "jsonl")

_ENGINE = {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
           "workers": {"aggregated": {"count": 2}}, "scheduler": {"max_num_seqs": 256}}

#: 5,001 short requests, a warm-up one and 5,000 measured: five chunks of 1,024 records
#: streamed by the core (the fixture below) cut into row groups of 1,000 (the first chunk
#: is short of its warm-up request, not reported).
CHUNKED = {"engine": _ENGINE,
           "traffic": {"source": {"type": "synthetic", "num_requests": 5_000,
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
    assert rep.record_count() == 5000
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


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("spec", [CHUNKED, SESSIONS], ids=["two chunks", "sessions"])
def test_a_text_table_streams_alone_and_its_records_read_back(tmp_path, spec, fmt):
    """Without Parquet the report reads its records back from the CSV or JSON lines
    table, every value exactly (floats, nulls, status and reason labels)."""
    held = aisimulate.replay(spec, progress=False)
    held.save(tmp_path / "saved", formats=(fmt,))
    streamed = aisimulate.replay(spec, progress=False, output_dir=tmp_path / "streamed", formats=(fmt,))
    assert _digests(tmp_path / "streamed") == _digests(tmp_path / "saved")
    assert streamed.to_json() == held.to_json()
    assert streamed.to_pandas().equals(held.to_pandas())
    assert streamed.requests == held.requests


def test_read_back_takes_nulls_labels_and_floats_from_each_table(tmp_path):
    """test_save's P/D replay with a rejected request and a session (no worker, no
    session, a reason, no first token): each text table reads back as the held records."""
    rows = [dict(EXAMPLE1_ROWS[0]), dict(EXAMPLE1_ROWS[1]),
            {"timestamp": 20, "input_length": 50_000, "output_length": 3},  # > max_model_len
            {"timestamp": 30, "input_length": 64, "output_length": 2, "session_id": 7, "delay": 0}]
    spec = example1_spec(write_mooncake(tmp_path / "t.jsonl", rows))
    spec["engine"]["workers"] = {"disaggregated": {
        "prefill": {"count": 1}, "decode": {"count": 2},
        "kv_transfer": {"bandwidth_gb_per_s": 50, "latency_ms": 0.2}}}
    held = aisimulate.replay(spec, progress=False)
    assert {r["status"] for r in held.requests} == {"completed", "rejected"}
    assert any(r["reason"] for r in held.requests) and any(r["session_id"] is None for r in held.requests)
    assert any(r["first_token_ms"] is None for r in held.requests)
    for fmt in ("csv", "jsonl"):
        rep = aisimulate.replay(spec, progress=False, output_dir=tmp_path / fmt, formats=(fmt,))
        assert rep.requests == held.requests, fmt


@pytest.mark.parametrize("formats", [(), ("xml",), ("parquet", "xlsx")])
def test_streaming_formats_are_checked_by_name(tmp_path, formats):
    with pytest.raises(ValueError, match=r"\bformats\b"):
        aisimulate.replay(SESSIONS, output_dir=tmp_path, formats=formats)
    assert not any(tmp_path.iterdir())


def test_a_trace_naming_its_first_session_late_streams_its_names(tmp_path):
    # 2,500 rows without a session, then a session named by a string: the core's chunks
    # before it carry session_id as integers (all null), those after as strings; the
    # streamed Parquet is rewritten to strings once, and equals the saved one
    rows = [{"timestamp": i, "input_length": 10, "output_length": 2} for i in range(2_500)]
    rows += [{"timestamp": 2_500, "input_length": 10, "output_length": 2, "session_id": "late"},
             {"input_length": 10, "output_length": 2, "session_id": "late", "delay": 1}]
    trace = write_mooncake(tmp_path / "t.jsonl", rows)
    spec = {"engine": _ENGINE, "traffic": {"source": {"type": "mooncake", "path": str(trace)}, "load": {"mode": "trace"}}}
    held = aisimulate.replay(spec, progress=False)
    held.save(tmp_path / "saved", formats=ALL, exports=("aiperf",))
    streamed = aisimulate.replay(spec, progress=False, output_dir=tmp_path / "streamed", formats=ALL,
                                 exports=("aiperf",))
    assert _digests(tmp_path / "streamed") == _digests(tmp_path / "saved")
    names = pq.read_table(tmp_path / "streamed" / "requests.parquet").column("session_id").to_pylist()
    assert names[:2_500] == [None] * 2_500 and names[2_500:] == ["late", "late"]
    assert [r["session_id"] for r in streamed.requests[-3:]] == [None, "late", "late"]


def test_a_scratch_folder_whose_process_is_gone_is_reclaimed(tmp_path, monkeypatch, base_spec):
    """A replay killed while it streamed (SIGKILL, the OOM killer) left its
    aisimulate-stream-* folder of chunks (26–100 MB) that nothing removed: the next
    streamed replay removes every such folder whose owner is gone. A folder's name holds
    its owner's process id and start time, so one whose id now belongs to another
    process (started at another time) is reclaimed too; a live owner's is kept, and so is
    anything not named that way."""
    from aisimulate.run import stream as _stream

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    pid = os.getpid()
    mine = _stream.scratch_prefix()
    assert mine.startswith(f"aisimulate-stream-{pid}.") and mine.endswith("-")
    live = temp / (mine + "abc")  # this process's own: its owner runs
    reused = temp / f"aisimulate-stream-{pid}.1-def"  # this id, but a process started at tick 1
    gone = temp / "aisimulate-stream-4194304.77-ghi"  # above Linux's largest process id
    other = temp / "aisimulate-stream-xyz"  # not named by aisimulate's rule: left alone
    for d in (live, reused, gone, other):
        d.mkdir()
        (d / "chunk-0.bin").write_bytes(b"x" * 100)
    aisimulate.replay(base_spec, output_dir=tmp_path / "out")
    assert sorted(p.name for p in temp.iterdir()) == sorted([live.name, other.name])
