"""--trace-out / report.to_chrome_trace: a Chrome / Perfetto JSON trace of the passes and
the requests, read back with json and checked against the Trace Event Format's rules
(no Perfetto trace processor runs offline here: its Python package downloads the
trace_processor_shell binary on first use)."""

from __future__ import annotations

import json
import os
from collections import defaultdict

import pytest

import aisimulate
from aisimulate.io.chrome_trace import CLIENT_PID, POOL_PIDS
from aisimulate.cli import main
from conftest import EXAMPLE1_ROWS, example1_spec, write_mooncake

# Trace Event Format: the phases written and the keys each must carry.
REQUIRED = {"M": {"name", "pid", "args"}, "X": {"name", "ph", "ts", "dur", "pid", "tid"},
            "C": {"name", "ts", "pid", "args"}, "b": {"name", "cat", "id", "ts", "pid"},
            "e": {"name", "cat", "id", "ts", "pid"}}


def _load(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    events = doc["traceEvents"]
    for e in events:
        assert e["ph"] in REQUIRED, e
        assert REQUIRED[e["ph"]] <= set(e), e
    return events


def test_trace_of_worked_example_1(tmp_path):
    # Worked example 1's passes (tests/test_timeline.py): 0 → 7.12 → 14.00 → 17.10 → 19.30 ms,
    # prefill, prefill, mixed (r1 decodes while r2 prefills), decode.
    trace = write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS)
    rep = aisimulate.replay(example1_spec(trace), timeline=True)
    events = _load(rep.to_chrome_trace(tmp_path / "run.trace.json"))
    passes = [e for e in events if e["ph"] == "X"]
    assert [p["name"] for p in passes] == ["prefill", "prefill", "mixed", "decode"]
    assert [p["ts"] for p in passes] == pytest.approx([0, 7120, 14000, 17100])  # µs
    assert [p["dur"] for p in passes] == pytest.approx([7120, 6880, 3100, 2200])
    assert {(p["pid"], p["tid"]) for p in passes} == {(POOL_PIDS["aggregated"], 1)}
    assert [p["args"]["kv_blocks_used"] for p in passes] == [32, 63, 70, 70]
    assert [p["args"]["prefill_tokens"] for p in passes] == [512, 488, 100, 0]
    counters = [e for e in events if e["ph"] == "C"]
    assert [c["args"]["used"] for c in counters] == [32, 63, 70, 70]
    names = {(e["name"], e["args"]["name"]) for e in events if e["ph"] == "M" and "name" in e["args"]}
    assert ("process_name", "aggregated workers") in names and ("thread_name", "worker 0") in names
    # every request: a begin and an end with the same id, the end at its end_ms; a nested
    # ttft span ends at its first token
    spans = defaultdict(list)
    for e in events:
        if e["ph"] in "be":
            assert e["pid"] == CLIENT_PID
            spans[(e["id"], e["name"])].append(e)
    for r in rep.requests:
        b, e = spans[(r["request_id"], "request")]
        assert (b["ph"], e["ph"]) == ("b", "e")
        assert b["ts"] == pytest.approx(r["send_ms"] * 1000) and e["ts"] == pytest.approx(r["end_ms"] * 1000)
        assert b["args"]["status"] == r["status"] and b["args"]["output_tokens"] == r["output_tokens"]
        if r["first_token_ms"] is not None:
            tb, te = spans[(r["request_id"], "ttft")]
            assert te["ts"] == pytest.approx(r["first_token_ms"] * 1000)


def test_trace_needs_the_timeline(tmp_path):
    trace = write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS)
    rep = aisimulate.replay(example1_spec(trace))
    with pytest.raises(ValueError, match="timeline=True"):
        rep.to_chrome_trace(tmp_path / "x.json")
    assert list(tmp_path.glob("*.json")) == []  # nothing half-written


def test_cli_trace_out(tmp_path, capsys):
    trace = write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS)
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(example1_spec(trace)), encoding="utf-8")
    out = tmp_path / "run.trace.json"
    assert main(["replay", str(cfg), "--trace-out", str(out), "--quiet", "--format", "json"]) == 0
    assert len([e for e in _load(out) if e["ph"] == "X"]) == 4
    assert "timeline" not in json.loads(capsys.readouterr().out)  # stdout unchanged by the trace
    assert main(["replay", str(cfg), "--trace-out", " "]) == 2
    assert "--trace-out" in capsys.readouterr().err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_cli_trace_out_that_cannot_be_written_names_the_option(tmp_path, capsys):
    # /dev/full passes the checks before the replay (a device is writable) and fails
    # on the write after it: the message names the option, not only the file
    trace = write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS)
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(example1_spec(trace)), encoding="utf-8")
    assert main(["replay", str(cfg), "--trace-out", "/dev/full", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "error: --trace-out /dev/full: cannot write: No space left on device" in err
