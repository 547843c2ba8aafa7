"""A trace that names its sessions by strings keeps the names in every output:
the per-request records, the tables (Parquet, CSV, JSON lines, streamed or saved),
pandas, and the AIPerf export's conversation_id — so users can join back to their trace.
Integer ids stay integers."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
import pytest

import aisimulate
from aisimulate import ReplayReport
from aisimulate.cli import main
from conftest import LINEAR_PERF, write_mooncake

# Two sessions named by strings (one with a comma, a quote and a non-ASCII letter, to
# be written as CSV and JSON write them) and a second turn of the first.
ROWS = [
    {"timestamp": 0, "input_length": 100, "output_length": 3, "session_id": "abc"},
    {"timestamp": 5, "input_length": 50, "output_length": 2, "session_id": 'x,"y"\u00e9'},
    {"input_length": 60, "output_length": 2, "session_id": "abc", "delay": 10},
]
# by request_id (the row): the name the trace gave
NAMES = ["abc", 'x,"y"\u00e9', "abc"]
TURNS = [0, 0, 1]


def _spec(trace) -> dict:
    return {"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "perf": dict(LINEAR_PERF),
                       "scheduler": {"num_gpu_blocks": 1000, "max_model_len": 16000}},
            "traffic": {"source": {"type": "mooncake", "path": str(trace)}, "load": {"mode": "trace"}}}


@pytest.fixture
def trace(tmp_path):
    return write_mooncake(tmp_path / "tr.jsonl", ROWS)


def test_records_and_pandas_keep_the_names(trace):
    rep = aisimulate.replay(_spec(trace))
    assert [r["session_id"] for r in rep.requests] == NAMES
    assert [r["turn"] for r in rep.requests] == TURNS
    assert rep.to_pandas()["session_id"].tolist() == NAMES
    assert rep.metadata["trace_session_ids"] == ["abc", 'x,"y"\u00e9']


def _check_folder(out):
    with (out / "requests.csv").open(newline="", encoding="utf-8") as f:
        assert [r["session_id"] for r in csv.DictReader(f)] == NAMES
    lines = (out / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["session_id"] for x in lines] == NAMES
    assert pq.read_table(out / "requests.parquet").column("session_id").to_pylist() == NAMES
    aiperf = [json.loads(x)["metadata"] for x in (out / "profile_export.jsonl").read_text().splitlines()]
    # the session's own name after "session-": lone requests are "request-<id>"
    assert [m["conversation_id"] for m in aiperf] == ["session-" + n for n in NAMES]
    assert [m["x_correlation_id"] for m in aiperf] == ["session-" + n for n in NAMES]
    assert [m["turn_index"] for m in aiperf] == TURNS
    assert [m["session_num"] for m in aiperf] == [0, 1, 0]  # numbered in order of first appearance


def test_cli_streamed_tables_and_aiperf_export_keep_the_names(trace, tmp_path):
    cfg = tmp_path / "tr.json"
    cfg.write_text(json.dumps(_spec(trace)))
    out = tmp_path / "o"
    assert main(["replay", str(cfg), "--output-dir", str(out), "--records", "csv,jsonl,parquet",
                 "--export", "aiperf", "-q", "--format", "json"]) == 0
    _check_folder(out)


def test_save_and_a_report_of_dicts_keep_the_names(trace, tmp_path):
    rep = aisimulate.replay(_spec(trace))
    rep.save(tmp_path / "a", formats=["csv", "jsonl", "parquet"], exports="aiperf")
    _check_folder(tmp_path / "a")
    again = ReplayReport(rep.summary, rep.requests, rep.metadata)  # a report made of dicts
    again.save(tmp_path / "b", formats=["csv", "jsonl", "parquet"], exports="aiperf")
    _check_folder(tmp_path / "b")


def test_integer_session_ids_stay_integers(tmp_path):
    rows = [{**r, "session_id": 42 if r["session_id"] == "abc" else 7} for r in ROWS]
    rep = aisimulate.replay(_spec(write_mooncake(tmp_path / "int.jsonl", rows)))
    assert [r["session_id"] for r in rep.requests] == [42, 7, 42]
    assert "trace_session_ids" not in rep.metadata
    rep.save(tmp_path / "o", formats="csv", exports="aiperf")
    aiperf = [json.loads(x)["metadata"] for x in (tmp_path / "o" / "profile_export.jsonl").read_text().splitlines()]
    assert [m["conversation_id"] for m in aiperf] == ["session-42", "session-7", "session-42"]
