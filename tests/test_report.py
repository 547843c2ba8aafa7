"""ReplayReport views and files, on hand-built reports (the record schema comes from the core)."""

from __future__ import annotations

import json
import math

import pytest

import aisimulate
from aisimulate import ReplayReport
from aisimulate.errors import ConfigError, DataError, SimulationError, from_envelope
from aisimulate.report import REQUEST_FIELDS


def _record(rid, status="completed", **kw):
    r = {k: None for k in REQUEST_FIELDS}
    r.update(request_id=rid, status=status, reason="", worker=0, preemptions=0)
    r.update(kw)
    return r


def _stats(mean, lo, hi):
    return {"mean": mean, "std": 0.5, "min": lo, "max": hi, "p50": mean, "p90": hi,
            "p95": hi, "p99": hi}


def _report():
    # Keys deliberately shuffled and records out of order: the report must reorder both.
    r2 = dict(reversed(list(_record(2, ttft_ms=7.1, e2e_ms=9.3, tpot_ms=2.2,
                                    output_tokens=2).items())))
    r1 = _record(1, ttft_ms=14.0, e2e_ms=19.3, tpot_ms=2.65, output_tokens=3)
    r10 = _record(10, status="rejected", reason="prompt longer than max_model_len")
    return {
        "metadata": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "z": 1, "a": 2},
        "summary": {
            "completed": 2, "rejected": 1, "failed": 0, "canceled": 0,
            "duration_ms": 19.3, "request_throughput_rps": 103.6269430051813,
            "output_token_throughput_tps": 259.0673575129534, "gpu_hours": 5.3611e-06,
            "ttft_ms": _stats(10.55, 7.1, 14.0), "tpot_ms": _stats(2.425, 2.2, 2.65),
            "e2e_ms": _stats(14.3, 9.3, 19.3), "itl_ms": None,
        },
        "requests": [r10, r2, r1],
    }


def test_requests_are_in_request_id_order_with_section8_keys():
    rep = ReplayReport.from_dict(_report())
    assert [r["request_id"] for r in rep.requests] == [1, 2, 10]  # numeric, not "1","10","2"
    for r in rep.requests:
        assert tuple(r)[:len(REQUEST_FIELDS)] == REQUEST_FIELDS


def test_extra_keys_follow_section8_keys():
    raw = _report()
    raw["requests"][0] = {"itl_ms": [], **raw["requests"][0]}
    rep = ReplayReport.from_dict(raw)
    rec = next(r for r in rep.requests if r["request_id"] == 10)
    assert list(rec)[-1] == "itl_ms"


def test_table_shows_counts_metrics_and_dashes():
    text = ReplayReport.from_dict(_report()).table()
    assert "Qwen/Qwen3-32B on h100_sxm" in text
    assert "nan" not in text.lower()
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("metric (ms)"))
    assert header.split()[2:] == ["mean", "p50", "p90", "p95", "p99", "min", "max"]
    ttft = next(line for line in lines if line.startswith("ttft_ms")).split()
    assert ttft[1:] == ["10.55", "10.55", "14.00", "14.00", "14.00", "7.10", "14.00"]
    itl = next(line for line in lines if line.startswith("itl_ms")).split()
    assert itl[1:] == ["\u2014"] * 7  # null stats
    completed = next(line for line in lines if line.startswith("Completed requests"))
    assert completed.split()[-1] == "2"
    assert next(line for line in lines if line.startswith("Duration")).split()[-1] == "19.30"
    assert next(line for line in lines if line.startswith("GPU hours")).split()[-1] == "5.361e-06"
    widths = {len(line) for line in lines}
    assert max(widths) <= 90
    assert len(widths) <= 2  # rules, rows and header share one width (title may differ)


def test_table_with_missing_values_never_shows_nan():
    raw = _report()
    raw["summary"]["duration_ms"] = None
    raw["summary"]["ttft_ms"]["p99"] = float("nan")
    text = ReplayReport.from_dict(raw).table()
    assert "nan" not in text.lower()
    assert next(line for line in text.splitlines()
                if line.startswith("Duration")).split()[-1] == "\u2014"


def test_save_writes_deterministic_files(tmp_path):
    rep = ReplayReport.from_dict(_report())
    written = rep.save(tmp_path / "a" / "b", formats=("jsonl", "csv", "parquet"))
    assert list(written) == ["requests.jsonl", "requests.csv", "requests.parquet", "prediction.json"]
    pred = json.loads((tmp_path / "a/b/prediction.json").read_text())
    assert set(pred) == {"metadata", "records", "summary"}
    assert pred["records"]["count"] == 3
    assert pred["summary"] == _report()["summary"]
    text = (tmp_path / "a/b/prediction.json").read_text()
    assert text.index('"a"') < text.index('"z"')  # sorted keys
    lines = (tmp_path / "a/b/requests.jsonl").read_text().splitlines()
    assert [json.loads(x)["request_id"] for x in lines] == [1, 2, 10]
    assert list(json.loads(lines[0])) == list(REQUEST_FIELDS)
    # A second report built from a reordered copy writes the same bytes.
    raw = _report()
    raw["metadata"] = dict(reversed(list(raw["metadata"].items())))
    raw["requests"].reverse()
    ReplayReport.from_dict(raw).save(tmp_path / "c", formats=("jsonl", "csv", "parquet"))
    for name in ("prediction.json", "requests.jsonl", "requests.csv", "requests.parquet"):
        assert (tmp_path / "a/b" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()


def test_an_interrupted_save_leaves_no_file_that_looks_whole(tmp_path, monkeypatch):
    # Ctrl-C while requests.jsonl is being written (after its second of three rows):
    # neither file exists afterwards, and no temporary file is left behind.
    import aisimulate.report as report_mod
    rows = []
    real_dumps = json.dumps

    def dumps(obj, **kw):
        rows.append(obj)
        if len(rows) == 3:
            raise KeyboardInterrupt
        return real_dumps(obj, **kw)
    monkeypatch.setattr(report_mod.json, "dumps", dumps)
    with pytest.raises(KeyboardInterrupt):
        ReplayReport.from_dict(_report()).save(tmp_path / "x", formats=("jsonl",))
    assert not (tmp_path / "x").exists()  # the folder the save made is gone with its files


def test_to_pandas():
    df = ReplayReport.from_dict(_report()).to_pandas()
    assert df.shape == (3, len(REQUEST_FIELDS))
    assert list(df.columns) == list(REQUEST_FIELDS)
    assert list(df["request_id"]) == [1, 2, 10]
    assert math.isnan(df["ttft_ms"].iloc[2])


def test_from_dict_needs_a_summary():
    with pytest.raises(ValueError):
        ReplayReport.from_dict({"requests": []})


@pytest.mark.parametrize("err, cls, text", [
    ({"kind": "config", "message": "engine.model: is required", "field": "engine.model"},
     ConfigError, "engine.model: is required"),
    ({"kind": "data", "message": "/t.jsonl:2: output_length: missing", "file": "/t.jsonl",
      "line": 2, "field": "output_length"}, DataError, "/t.jsonl:2: output_length: missing"),
    ({"kind": "data", "message": "output_length: missing", "file": "/t.jsonl", "line": 2},
     DataError, "/t.jsonl:2: output_length: missing"),
    ({"kind": "simulation", "message": "boom"}, SimulationError, "boom"),
    ({"kind": "panic", "message": "core panic"}, SimulationError, "core panic"),
])
def test_error_envelope_mapping(err, cls, text):
    exc = from_envelope(err)
    assert type(exc) is cls
    assert str(exc) == text
    if cls is ConfigError:
        assert exc.field == "engine.model"
    if cls is DataError:
        assert (exc.file, exc.line) == ("/t.jsonl", 2)
    if cls is SimulationError:
        assert exc.kind == err["kind"]
    assert isinstance(exc, ValueError if cls is not SimulationError else RuntimeError)


def test_request_fields_are_the_core_schema():
    # the names users see, in record order (core/report/fields.go)
    assert REQUEST_FIELDS == (
        "request_id", "status", "reason", "input_tokens", "output_tokens", "cached_tokens",
        "send_ms", "arrival_ms", "first_token_ms", "end_ms", "release_ms", "ttft_ms", "e2e_ms",
        "tpot_ms", "ttst_ms", "worker", "prefill_worker", "decode_worker", "transfer_ms",
        "preemptions", "session_id", "turn")


def _columnar(columns, n):
    """A columnar result as the core lays it out: ``columns`` is a list of (header,
    values); each column starts 8-byte aligned in one buffer."""
    import numpy as np

    buf, header = b"", []
    for head, values in columns:
        arr = np.asarray(values, dtype=np.dtype(head["dtype"]))
        header.append(dict(head, offset=len(buf)))
        buf += arr.tobytes()
        buf += b"\0" * (-len(buf) % 8)
    layout = {"n": n, "columns": header, "statuses": ["completed", "rejected", "failed", "canceled"],
              "reasons": ["too long"]}
    return {"metadata": {}, "summary": {"completed": 1}, "columns": layout}, buf


def test_a_column_the_core_adds_reaches_requests_and_pandas():
    # Python has no list of columns: a new float column (null NaN) and a new nullable
    # integer column (null -1) come through by the header alone.
    nan = float("nan")
    head, buf = _columnar([
        ({"name": "request_id", "dtype": "<i8"}, [1, 0]),
        ({"name": "status", "dtype": "|u1", "labels": "statuses"}, [1, 0]),
        ({"name": "reason", "dtype": "<i4", "labels": "reasons"}, [0, -1]),
        ({"name": "ttft_ms", "dtype": "<f8"}, [nan, 12.5]),
        ({"name": "queue_ms", "dtype": "<f8"}, [3.25, nan]),
        ({"name": "replica", "dtype": "<i4", "nullable": True}, [-1, 7]),
    ], 2)
    rep = ReplayReport.from_columnar(head, buf)
    assert rep.requests == [  # sorted by request_id
        {"request_id": 0, "status": "completed", "reason": None, "ttft_ms": 12.5, "queue_ms": None, "replica": 7},
        {"request_id": 1, "status": "rejected", "reason": "too long", "ttft_ms": None, "queue_ms": 3.25,
         "replica": None},
    ]
    pd = pytest.importorskip("pandas")
    df = rep.to_pandas()
    assert list(df.columns) == ["request_id", "status", "reason", "ttft_ms", "queue_ms", "replica"]
    assert str(df["replica"].dtype) == "Int64" and df["replica"].isna().tolist() == [False, True]
    assert df["queue_ms"].tolist()[1] == 3.25 and math.isnan(df["queue_ms"].tolist()[0])
    assert df["reason"].isna().tolist() == [True, False] and df["reason"][1] == "too long"


def test_requests_of_a_core_report_are_made_as_they_are_read(base_spec):
    """report.requests built every dict at once (about 1.3 KB a request): a 3-million-
    request replay that fits the memory budget died in r.requests with a MemoryError
    while to_pandas() worked. Of a report from the core it is a sequence over the
    columns: len, indexing, slicing, iteration and == give the list's values, and
    reading it holds one chunk of dicts, not one per request."""
    import tracemalloc
    from collections.abc import Sequence

    base_spec["traffic"] = {"source": {"type": "synthetic", "num_requests": 30_000, "isl": 10, "osl": 2},
                            "load": {"mode": "concurrency", "concurrency": 64}}
    rep = aisimulate.replay(base_spec, progress=False)
    tracemalloc.start()
    try:
        reqs = rep.requests
        assert len(reqs) == 30_000
        last, n_done = reqs[-1], sum(r["status"] == "completed" for r in reqs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n_done == 30_000 and last["request_id"] == 29_999
    # 30,000 dicts would be ~40 MB; one 4,096-row chunk of them is ~5 MB
    assert peak < 12e6, peak
    assert isinstance(reqs, Sequence) and not isinstance(reqs, list)
    held = list(reqs)
    assert len(held) == 30_000 and held[-1] == last and held[0] == reqs[0] == reqs[-30_000]
    assert reqs[100:103] == held[100:103] and reqs[-2:] == held[-2:] and reqs[::10_000] == held[::10_000]
    assert reqs[5:2] == [] and reqs == held and held == reqs and reqs != held[:-1]
    assert held[7] in reqs
    with pytest.raises(IndexError):
        reqs[30_000]
    with pytest.raises(TypeError):
        reqs["request_id"]
    # the same values as a report built from dicts, whose requests is a list
    assert list(aisimulate.ReplayReport(rep.summary, held, rep.metadata).requests) == held


def test_the_cost_of_a_replay_at_a_price_per_gpu_hour(base_spec, tmp_path, capsys):
    # 2.5 per GPU hour over gpu_hours GPU·h; per million output tokens: that / (tokens / 1e6)
    from aisimulate.cli import main

    rep = aisimulate.replay(base_spec, progress=False)
    s = rep.summary
    cost = rep.cost(2.5)
    assert cost == {"price_per_gpu_hour": 2.5, "total": pytest.approx(2.5 * s["gpu_hours"]),
                    "per_million_output_tokens": pytest.approx(2.5 * s["gpu_hours"] / s["total_output_tokens"] * 1e6)}
    lines = rep.table(price_per_gpu_hour=2.5).splitlines()
    at = lines.index(next(l for l in lines if l.startswith("GPU hours")))
    assert lines[at + 1].startswith("Cost at 2.5 per GPU hour:") and lines[at + 2].startswith("Cost per million output tokens:")
    assert float(lines[at + 2].split()[-1]) == pytest.approx(cost["per_million_output_tokens"], rel=1e-3)
    assert "Cost" not in rep.table()
    for bad, exc in ((0, ValueError), (float("inf"), ValueError), (float("nan"), ValueError), (1e6 * (1 + 2**-52), ValueError),
                     (1.7e308, ValueError), ("2.5", TypeError), (True, TypeError)):
        with pytest.raises(exc, match="price_per_gpu_hour must be"):
            rep.cost(bad)
    assert rep.cost(1e6)["total"] == pytest.approx(1e6 * s["gpu_hours"])  # the bound itself is a price
    # a cost that overflows is an error, never inf: 1e6 per GPU-hour over 1e303 GPU hours is 1e309 > float max
    with pytest.raises(ValueError, match="not a finite number"):
        aisimulate.ReplayReport({**s, "gpu_hours": 1e303}, [], rep.metadata).cost(1e6)
    cfg = tmp_path / "r.json"
    cfg.write_text(json.dumps(base_spec))
    assert main(["replay", str(cfg), "-q", "--format", "json", "--gpu-hour-price", "2.5"]) == 0
    assert main(["replay", str(cfg), "-q", "--format", "csv", "--gpu-hour-price", "2.5"]) == 2
    assert main(["replay", str(cfg), "-q", "--gpu-hour-price", "-1"]) == 2
    for price in ("1.7e308", "1e308", "1000001", "nan", "inf"):
        assert main(["replay", str(cfg), "-q", "--format", "json", "--gpu-hour-price", price]) == 2
    assert "--gpu-hour-price must be a number in (0, 1000000], got 1.7e+308" in capsys.readouterr().err
