"""Exports for other tools: AIPerf's profile exports and vLLM's benchmark JSON, each read
back by the reader of that format (json, csv, and AIPerf's own record model when AIPerf
is installed)."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

import aisimulate
from aisimulate import ReplayReport
from aisimulate.io.exports import AIPERF_FILES, AIPERF_STATS, aiperf_csv, aiperf_summary, vllm_bench_json
from aisimulate.report import REQUEST_FIELDS
from aisimulate.cli import main
from conftest import REPO


def _record(rid, status="completed", **kw):
    r = {k: None for k in REQUEST_FIELDS}
    r.update(request_id=rid, status=status, reason=None, worker=0, preemptions=0, cached_tokens=0)
    r.update(kw)
    return r


def _hand_report():
    """Two completed requests and one rejected one, times worked by hand:
    r0 sent at 0, first token 10, end 40, 4 output tokens → e2e 40, tpot (40−10)/3 = 10;
    r1 sent at 5, first token 35, end 45, 2 output tokens → e2e 40, tpot 10/1 = 10;
    r2 rejected at 6. Window 0 … 45 ms."""
    recs = [
        _record(0, input_tokens=100, output_tokens=4, send_ms=0.0, first_token_ms=10.0, end_ms=40.0,
                release_ms=40.0, arrival_ms=0.0, ttft_ms=10.0, ttst_ms=10.0, e2e_ms=40.0, tpot_ms=10.0),
        _record(1, input_tokens=300, output_tokens=2, send_ms=5.0, first_token_ms=35.0, end_ms=45.0,
                release_ms=45.0, arrival_ms=5.0, ttft_ms=30.0, ttst_ms=10.0, e2e_ms=40.0, tpot_ms=10.0),
        _record(2, status="rejected", reason="prompt longer than max_model_len", input_tokens=9000,
                output_tokens=0, send_ms=6.0, end_ms=6.0, release_ms=6.0, arrival_ms=6.0, e2e_ms=0.0),
    ]
    summary = {"completed": 2, "rejected": 1, "failed": 0, "canceled": 0, "duration_ms": 45.0,
               "request_throughput_rps": 2 / 0.045, "output_token_throughput_tps": 6 / 0.045,
               "total_input_tokens": 400, "total_output_tokens": 6,
               "ttft_ms": {"mean": 20.0, "std": 10.0, "min": 10.0, "max": 30.0, "p50": 20.0, "p90": 28.0,
                           "p95": 29.0, "p99": 29.8},
               "tpot_ms": {"mean": 10.0, "std": 0.0, "min": 10.0, "max": 10.0, "p50": 10.0, "p90": 10.0,
                           "p95": 10.0, "p99": 10.0},
               "itl_ms": {"mean": 10.0, "std": 0.0, "min": 10.0, "max": 10.0, "p50": 10.0, "p90": 10.0,
                          "p95": 10.0, "p99": 10.0},
               "e2e_ms": {"mean": 40.0, "std": 0.0, "min": 40.0, "max": 40.0, "p50": 40.0, "p90": 40.0,
                          "p95": 40.0, "p99": 40.0}}
    return ReplayReport(summary, recs, {"model": "Qwen/Qwen3-32B", "window_start_ms": 0.0})


def test_aiperf_summary_by_hand():
    doc = aiperf_summary(_hand_report())
    ttft = doc["time_to_first_token"]
    # TTFT over completed requests [10, 30]: mean 20, population std 10, numpy's linear
    # p25 = 10 + 0.25 × 20 = 15, count 2, sum 40.
    assert ttft["unit"] == "ms"
    assert (ttft["avg"], ttft["std"], ttft["p25"], ttft["p50"], ttft["count"], ttft["sum"]) == (20, 10, 15, 20, 2, 40)
    assert doc["request_latency"]["avg"] == 40 and doc["request_latency"]["count"] == 2
    # per user: 1000 / 10 ms = 100 tokens/s; prefill: 100 / 0.010 s = 10000 and 300 / 0.030 s = 10000
    assert doc["output_token_throughput_per_user"] == pytest.approx(
        {**doc["output_token_throughput_per_user"], "avg": 100.0, "min": 100.0, "max": 100.0})
    assert doc["output_token_throughput_per_user"]["unit"] == "tokens/sec/user"
    assert doc["prefill_throughput_per_user"]["avg"] == pytest.approx(10000.0)
    assert doc["input_sequence_length"]["sum"] == 400 and doc["output_sequence_length"]["sum"] == 6
    # aggregate / derived: a value and a unit only (AIPerf's rule), no count
    assert doc["request_count"] == {"unit": "requests", "avg": 2}
    assert doc["error_request_count"] == {"unit": "requests", "avg": 1}
    # AIPerf's MetricResult types avg as a float: 2.0, not 2
    assert type(doc["request_count"]["avg"]) is float and type(doc["min_request_timestamp"]["avg"]) is float
    assert doc["benchmark_duration"] == {"unit": "sec", "avg": 0.045}
    assert doc["total_token_throughput"]["avg"] == pytest.approx(406 / 0.045)
    assert doc["min_request_timestamp"]["avg"] == 0 and doc["max_response_timestamp"]["avg"] == 45_000_000
    assert "goodput" not in doc and doc["schema_version"] == "1.1"


def test_aiperf_csv_two_sections():
    text = aiperf_csv(aiperf_summary(_hand_report()))
    head, tail = text.split("\r\n\r\n")
    rows = list(csv.reader(io.StringIO(head)))
    assert rows[0] == ["Metric", *AIPERF_STATS]
    ttft = next(r for r in rows if r[0] == "Time to First Token (ms)")
    assert ttft[1:4] == ["20.00", "10.00", "30.00"] and ttft[-1] == "10.00"
    system = dict(csv.reader(io.StringIO(tail)))
    assert system["Metric"] == "Value"
    # 2 requests / 0.045 s = 44.44 requests/s, two decimals as AIPerf writes them, counts
    # too (its avg is a float: "Request Count,200.00" in AIPerf's docs)
    assert system["Request Count"] == "2.00" and system["Request Throughput (requests/sec)"] == "44.44"
    assert system["Error Request Count"] == "1.00"


def test_vllm_bench_json_by_hand():
    out = vllm_bench_json(_hand_report(), percentiles=(90, 99))
    assert out["completed"] == 2 and out["failed"] == 1 and out["num_prompts"] == 3
    assert out["duration"] == 0.045
    assert out["total_token_throughput"] == pytest.approx(406 / 0.045)
    assert (out["mean_ttft_ms"], out["median_ttft_ms"], out["std_ttft_ms"], out["p90_ttft_ms"], out["p99_ttft_ms"]) \
        == (20.0, 20.0, 10.0, 28.0, 29.8)
    assert out["mean_e2el_ms"] == 40.0 and out["p99_itl_ms"] == 10.0
    assert out["request_goodput"] is None
    # vLLM writes floats (numpy's), and 0.0 for a statistic without a sample
    # (np.mean(tpots or 0)): one output token each → no TPOT or ITL
    assert all(type(out[k]) is float for k in out if k.endswith("_ms") or k in ("duration", "request_throughput"))
    rep = _hand_report()
    rep.summary["tpot_ms"] = rep.summary["itl_ms"] = None
    rep.summary["ttft_ms"] = {**rep.summary["ttft_ms"], "mean": 20, "p50": 20}
    out = vllm_bench_json(rep)
    assert (out["mean_tpot_ms"], out["std_itl_ms"], out["p99_itl_ms"]) == (0.0, 0.0, 0.0)
    assert type(out["mean_tpot_ms"]) is float and type(out["mean_ttft_ms"]) is float and out["mean_ttft_ms"] == 20.0
    with pytest.raises(ValueError, match=r"the report holds 0, 50, 90, 95, 99 \(replay"):
        vllm_bench_json(_hand_report(), percentiles=(75,))
    # 0 is numpy's 0th percentile, the minimum
    assert vllm_bench_json(_hand_report(), percentiles=0)["p0_ttft_ms"] == 10.0
    # one number is the list of it; a string or a mapping is refused, naming the forms
    assert vllm_bench_json(_hand_report(), percentiles=90)["p90_ttft_ms"] == 28.0
    assert vllm_bench_json(_hand_report(), percentiles=iter([90]))["p90_ttft_ms"] == 28.0
    for bad in ("99", {99: 1}, [99, "90"], True):
        with pytest.raises(TypeError, match=r"^percentiles must be one of 0, 50, 90, 95, 99 or a list of them, got "):
            vllm_bench_json(_hand_report(), percentiles=bad)


def test_vllm_bench_json_chosen_percentiles():
    # a replay asked for 99.9 holds it in every statistic (metadata.percentiles names
    # it): the export writes it under vLLM's key, and by default the chosen ones only
    rep = _hand_report()
    rep.metadata["percentiles"] = [50.0, 99.9]
    # TTFT [10, 30]: p99.9 at v = 0.999 is 10 + 20·0.999 = 29.98
    rep.summary["ttft_ms"]["p99.9"] = 29.98
    for k in ("tpot_ms", "itl_ms", "e2e_ms"):
        rep.summary[k]["p99.9"] = rep.summary[k]["max"]
    out = vllm_bench_json(rep)
    assert out["p99.9_ttft_ms"] == 29.98 and out["p50_ttft_ms"] == 20.0 and "p99_ttft_ms" not in out
    assert out["p99.9_e2el_ms"] == 40.0
    assert vllm_bench_json(rep, percentiles=(99, 99.9))["p99_ttft_ms"] == 29.8
    with pytest.raises(ValueError, match=r"0, 50, 90, 95, 99, 99.9"):
        vllm_bench_json(rep, percentiles=(99.99,))


@pytest.fixture(scope="module")
def replayed():
    spec = aisimulate.load_config(REPO / "examples" / "quickstart.yaml",
                                  overrides={"traffic.source.num_requests": 200})
    return aisimulate.replay(spec, progress=False, slo={"ttft_ms": 200})


def test_to_aiperf_files_agree_with_the_report(replayed, tmp_path):
    files = replayed.to_aiperf(tmp_path / "aiperf")
    assert sorted(files) == sorted(AIPERF_FILES)
    lines = (tmp_path / "aiperf" / "profile_export.jsonl").read_text().splitlines()
    assert len(lines) == replayed.record_count() == 200
    recs = [json.loads(line) for line in lines]
    by_id = {r["request_id"]: r for r in replayed.requests}
    for rec in recs:
        r = by_id[int(rec["metadata"]["x_request_id"])]
        m = rec["metrics"]
        assert m["time_to_first_token"] == {"value": r["ttft_ms"], "unit": "ms"}
        assert m["request_latency"]["value"] == r["e2e_ms"]
        assert m["output_sequence_length"]["value"] == r["output_tokens"]
        assert rec["metadata"]["request_start_ns"] == round(r["send_ms"] * 1e6)
        assert rec["error"] is None
    doc = json.loads((tmp_path / "aiperf" / "profile_export_aiperf.json").read_text())
    s = replayed.summary
    # the same numbers as the core's summary, by numpy on the same values
    assert doc["time_to_first_token"]["avg"] == pytest.approx(s["ttft_ms"]["mean"], rel=1e-12)
    assert doc["time_to_first_token"]["p99"] == pytest.approx(s["ttft_ms"]["p99"], rel=1e-12)
    assert doc["inter_token_latency"]["p50"] == pytest.approx(s["tpot_ms"]["p50"], rel=1e-12)
    assert doc["request_count"]["avg"] == s["completed"]
    assert doc["good_request_count"]["avg"] == s["goodput"]["good_requests"]
    assert doc["benchmark_duration"]["avg"] == pytest.approx(s["duration_ms"] / 1000)
    assert not any(isinstance(v, float) and not math.isfinite(v) for b in doc.values()
                   if isinstance(b, dict) for v in b.values())


def test_aiperf_records_validate_with_aiperf_models(replayed, tmp_path):
    """AIPerf's own pydantic model reads every record (when AIPerf is installed)."""
    models = pytest.importorskip("aiperf.common.models")
    replayed.to_aiperf(tmp_path)
    for line in (tmp_path / "profile_export.jsonl").read_text().splitlines():
        rec = models.MetricRecordInfo.model_validate_json(line)
        assert rec.metadata.benchmark_phase == "profiling"
    from aiperf.common.models.export_models import JsonExportData

    doc = JsonExportData.model_validate_json((tmp_path / "profile_export_aiperf.json").read_text())
    assert doc.request_count.avg == replayed.summary["completed"]
    assert doc.time_to_first_token.p99 == pytest.approx(replayed.summary["ttft_ms"]["p99"], rel=1e-12)


def test_cli_export_is_part_of_the_atomic_result(tmp_path, capsys):
    out = tmp_path / "run"
    cfg = str(REPO / "examples" / "quickstart.yaml")
    small = ["--set", "traffic.source.num_requests=50", "--quiet"]
    assert main(["replay", cfg, *small, "--output-dir", str(out), "--export", "aiperf,vllm",
                 "--format", "json"]) == 0
    stdout = capsys.readouterr().out
    listed = json.loads((out / "prediction.json").read_text())["records"]["files"]
    assert {"profile_export.jsonl", "profile_export_aiperf.json", "vllm_bench_result.json"} <= set(listed)
    vllm = json.loads((out / "vllm_bench_result.json").read_text())
    assert vllm["completed"] == json.loads(stdout)["summary"]["completed"] == 50
    # a later result without exports removes them: nothing stale looks like this run's
    assert main(["replay", cfg, *small, "--output-dir", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["prediction.json", "requests.parquet"]
    capsys.readouterr()
    assert main(["replay", cfg, "--export", "vllm"]) == 2
    assert "--output-dir" in capsys.readouterr().err
    assert main(["replay", cfg, "--export", "xml", "--output-dir", str(out)]) == 2
    assert "aiperf, vllm" in capsys.readouterr().err


def test_aiperf_session_num_numbers_conversations_once(tmp_path):
    """Rows lone (ts 0), session 5 (ts 1, then delay 1), lone (ts 2), session 0
    (ts 3, then delay 1): conversations in order of first appearance are request 0 → 0,
    session 5 → 1, request 2 → 2, session 0 → 3; before, the lone request 0 and session 0
    both had session_num 0."""
    from conftest import write_mooncake, example1_spec

    rows = [{"timestamp": 0, "input_length": 40, "output_length": 2},
            {"session_id": 5, "timestamp": 1, "input_length": 100, "output_length": 2},
            {"session_id": 5, "delay": 1, "input_length": 30, "output_length": 2},
            {"timestamp": 2, "input_length": 40, "output_length": 2},
            {"session_id": 0, "timestamp": 3, "input_length": 100, "output_length": 2},
            {"session_id": 0, "delay": 1, "input_length": 30, "output_length": 2}]
    spec = example1_spec(write_mooncake(tmp_path / "s.jsonl", rows))
    aisimulate.replay(spec, progress=False).to_aiperf(tmp_path / "out")
    meta = [json.loads(line)["metadata"] for line in (tmp_path / "out" / "profile_export.jsonl").open()]
    got = {int(m["x_request_id"]): (m["session_num"], m["turn_index"]) for m in meta}
    assert got == {0: (0, 0), 1: (1, 0), 2: (1, 1), 3: (2, 0), 4: (3, 0), 5: (3, 1)}


def test_aiperf_conversation_is_the_dataset_entry(tmp_path):
    """A synthetic dataset of 2 entries drawn sequentially (request i takes
    entry i mod 2), one warm-up request (id 0, entry 0) then 3 measured: requests 1, 2, 3
    are conversations entry-1, entry-0, entry-1 (each its own x_correlation_id and
    session_num, as AIPerf's re-sent dataset conversations); before, conversation_id was
    the request id, so compare saw no re-sent prompt. Without the warm-up (not exported,
    as AIPerf exports none), compare of the export against the same config predicts the
    TTFT exactly: requests 2 and 3 find entries 0 and 1 cached."""
    spec = {"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm",
                       "perf": {"source": "linear", "base_ms": 2, "per_prefill_token_ms": 0.01,
                                "per_decode_seq_ms": 0.1},
                       "workers": {"aggregated": {"count": 1}},
                       "scheduler": {"num_gpu_blocks": 2000, "max_model_len": 32000}},
            "traffic": {"source": {"type": "synthetic", "num_requests": 3, "isl": 600, "osl": 3,
                                   "dataset": {"entries": 2, "sampling": "sequential"}},
                        "load": {"mode": "concurrency", "concurrency": 1, "warmup_requests": 1}}}
    rep = aisimulate.replay(spec, progress=False)
    rep.to_aiperf(tmp_path / "out")
    meta = [json.loads(line)["metadata"] for line in (tmp_path / "out" / "profile_export.jsonl").open()]
    assert [(m["x_request_id"], m["x_correlation_id"], m["conversation_id"], m["session_num"]) for m in meta] == \
        [("1", "request-1", "entry-1", 0), ("2", "request-2", "entry-0", 1), ("3", "request-3", "entry-1", 2)]
    del spec["traffic"]["load"]["warmup_requests"]
    spec["traffic"]["source"]["num_requests"] = 4
    rep = aisimulate.replay(spec, progress=False)
    assert [r["cached_tokens"] for r in rep.requests] == [0, 0, 592, 592]  # 37 full 16-token blocks of 600
    rep.to_aiperf(tmp_path / "out2")
    c = aisimulate.compare(spec, tmp_path / "out2", concurrency=1, progress=False)
    assert c.metrics.loc["ttft_ms"]["mape_pct"] == pytest.approx(0, abs=1e-9)
