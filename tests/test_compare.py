"""aisimulate.compare: an AIPerf profile_export.jsonl made from a simulation compares with
zero error against the same deployment, and a measurement 25 % slower by hand gives the
errors worked out below; multi-turn prefix sharing; the CLI."""

from __future__ import annotations

import importlib
import json
import re
import math

import pytest

import aisimulate
from aisimulate import DataError
from aisimulate.compare import _hash_ids, _trace_rows, read_profile_export
from aisimulate.io.exports import write_aiperf
from conftest import LINEAR_PERF, write_mooncake

T0_NS = 1_759_813_207_532_900_363  # an epoch start, as AIPerf writes it


def _deployment() -> dict:
    return {"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "perf": LINEAR_PERF,
                       "workers": {"aggregated": {"count": 1}}, "scheduler": {"num_gpu_blocks": 2000, "max_model_len": 32000}},
            "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 1, "osl": 1},
                        "load": {"mode": "concurrency", "concurrency": 1}}}


def _export(tmp_path, scale: dict[str, float] | None = None):
    """Replay a 12-request trace (integer ms send times) and write what AIPerf would have
    recorded of it, each metric multiplied by ``scale[metric]`` (then without
    ``inter_chunk_latency``: its gaps must sum to the scaled E2E − TTFT)."""
    scale = scale or {}
    rows = [{"timestamp": 7 * i, "input_length": 200 + 50 * (i % 4), "output_length": 5 + i % 3}
            for i in range(12)]
    spec = _deployment()
    spec["traffic"] = {"source": {"type": "mooncake", "path": str(write_mooncake(tmp_path / "t.jsonl", rows))},
                       "load": {"mode": "trace"}}
    report = aisimulate.replay(spec)
    path = tmp_path / "profile_export.jsonl"
    with path.open("w") as fh:
        for r in report.requests:
            ttft, tpot, e2e = (r[k] * scale.get(k, 1.0) for k in ("ttft_ms", "tpot_ms", "e2e_ms"))
            start = T0_NS + int(r["send_ms"] * 1_000_000)
            fh.write(json.dumps({
                "metadata": {"x_request_id": f"r{r['request_id']}", "conversation_id": f"c{r['request_id']}",
                             "turn_index": 0, "request_start_ns": start,
                             "request_end_ns": start + int(e2e * 1e6), "benchmark_phase": "profiling"},
                "metrics": {"input_sequence_length": {"value": r["input_tokens"], "unit": "tokens"},
                            "output_sequence_length": {"value": r["output_tokens"], "unit": "tokens"},
                            "time_to_first_token": {"value": ttft, "unit": "ms"},
                            "inter_token_latency": {"value": tpot, "unit": "ms"},
                            "request_latency": {"value": e2e, "unit": "ms"},
                            **({} if scale else
                               {"inter_chunk_latency": {"value": [tpot] * (r["output_tokens"] - 1), "unit": "ms"}})},
                "error": None}) + "\n")
        # canceled after every other request ended: replayed, not scored, loads no one
        fh.write(json.dumps({"metadata": {"request_start_ns": T0_NS + 10**9, "request_end_ns": T0_NS + 10**9 + 9},
                             "metrics": {"error_isl": {"value": 300, "unit": "tokens"}},
                             "error": {"code": 499, "type": "RequestCancellationError", "message": "x"}}) + "\n")
    return path, report


def test_a_run_compared_with_itself_has_no_error(tmp_path):
    path, report = _export(tmp_path)
    c = aisimulate.compare(_deployment(), path)
    assert c.counts == {"records": 13, "failed_in_measurement": 1, "replayed": 13, "completed_in_simulation": 12}
    for m in ("ttft_ms", "tpot_ms", "e2e_ms"):
        row = c.metrics.loc[m]
        assert row["n"] == 12
        assert row["mape_pct"] == pytest.approx(0, abs=1e-6) and row["bias_pct"] == pytest.approx(0, abs=1e-6)
        assert row["pearson_r"] == pytest.approx(1.0)
        assert row["predicted_p90"] == pytest.approx(report.summary[m]["p90"])
    assert list(c.requests["predicted_ttft_ms"]) == pytest.approx([r["ttft_ms"] for r in report.requests])
    # n is a count in the JSON too (12 requests; ITL: one gap per output token after the first)
    d = c.to_dict()["metrics"]
    assert d["ttft_ms"]["n"] == 12 and type(d["ttft_ms"]["n"]) is int
    gaps = sum(r["output_tokens"] - 1 for r in report.requests)
    assert d["itl_ms"]["n"] == gaps and type(d["itl_ms"]["n"]) is int
    assert '"n": 12,' in json.dumps(d)


def _timed_record(start_ms: float, end_ms: float, isl: int, osl: int | None = None, phase: str = "profiling",
                  **metrics_ms) -> str:
    """One AIPerf record: successful with ``osl`` and latencies (ms), else canceled."""
    md = {"request_start_ns": T0_NS + int(start_ms * 1e6), "request_end_ns": T0_NS + int(end_ms * 1e6),
          "benchmark_phase": phase}
    if osl is None:
        md.update(was_cancelled=True, cancellation_time_ns=md["request_end_ns"])
        return json.dumps({"metadata": md, "metrics": {"error_isl": {"value": isl, "unit": "tokens"}},
                           "error": {"code": 499, "type": "RequestCancellationError", "message": "timeout"}})
    metrics = {"input_sequence_length": {"value": isl, "unit": "tokens"},
               "output_sequence_length": {"value": osl, "unit": "tokens"}}
    metrics.update({k: {"value": v, "unit": "ms"} for k, v in metrics_ms.items()})
    return json.dumps({"metadata": md, "metrics": metrics, "error": None})


def test_a_canceled_request_is_replayed_until_its_timeout_and_not_scored(tmp_path):
    # Sent together at 0: a canceled 1000-token prompt (canceled at
    # 20 ms: the only cancel, and the successful request took less, so the client's
    # timeout is 20 ms) and a successful 200-token prompt of 3 output tokens. Linear perf
    # 2 ms + 0.01 ms per prefill token + 0.1 ms per decode sequence: both prompts in one
    # pass, 2 + 0.01 × 1200 = 14 ms = TTFT; two decode passes of both sequences,
    # 2 + 0.2 = 2.2 ms each: E2E 18.4 ms, TPOT 2.2 ms. The canceled one still runs (its
    # output is unknown) until the timeout at 20 ms. Before: the 200-token request alone,
    # TTFT 4 ms, E2E 8.2 ms.
    path = tmp_path / "profile_export.jsonl"
    path.write_text(_timed_record(0, 20, 1000) + "\n"
                    + _timed_record(0, 18.4, 200, 3, time_to_first_token=14, inter_token_latency=2.2,
                              request_latency=18.4) + "\n")
    c = aisimulate.compare(_deployment(), path)
    assert c.counts == {"records": 2, "failed_in_measurement": 1, "replayed": 2, "completed_in_simulation": 1}
    assert len(c.requests) == 1 and c.requests["line"][0] == 2
    assert c.requests["predicted_ttft_ms"][0] == pytest.approx(14.0)
    assert c.requests["predicted_e2e_ms"][0] == pytest.approx(18.4)
    assert c.requests["predicted_tpot_ms"][0] == pytest.approx(2.2)
    sim = {r["request_id"]: r for r in c.report.requests}
    assert sim[0]["status"] == "canceled" and sim[0]["e2e_ms"] == pytest.approx(20.0)
    for m in ("ttft_ms", "e2e_ms"):
        assert c.metrics.loc[m]["n"] == 1 and c.metrics.loc[m]["mape_pct"] == pytest.approx(0, abs=1e-9)
    # a successful request that outlasted the cancel: no single timeout made it, so the
    # canceled request is its prompt and one token: same first pass, then B decodes alone
    # at 2.1 ms a pass once A ends with its first token: E2E 14 + 2 × 2.1 = 18.2 ms
    path.write_text(_timed_record(0, 10, 1000) + "\n"
                    + _timed_record(0, 18.4, 200, 3, time_to_first_token=14, inter_token_latency=2.2,
                              request_latency=18.4) + "\n")
    c = aisimulate.compare(_deployment(), path)
    assert c.requests["predicted_ttft_ms"][0] == pytest.approx(14.0)
    assert c.requests["predicted_e2e_ms"][0] == pytest.approx(18.2)
    assert {r["request_id"]: r["status"] for r in c.report.requests} == {0: "completed", 1: "completed"}


def test_warmup_records_are_replayed_not_scored(tmp_path):
    # Sent together at 0: a warm-up record (1000-token prompt, 1 output
    # token) and a profiling one (200 tokens, 3 out). Linear perf: one pass prefills
    # both, 2 + 0.01 × 1200 = 14 ms (the warm-up one ends there); the profiling one then
    # decodes alone, 2 + 0.1 = 2.1 ms a pass: E2E 14 + 4.2 = 18.2 ms. Only it is scored:
    # n 1, its measured ITL gaps alone (2.1, 2.1), while the warm-up record's TTFT of
    # 40 ms is not in the measured mean (14).
    path = tmp_path / "profile_export.jsonl"
    path.write_text(_timed_record(0, 40, 1000, 1, "warmup", time_to_first_token=40, request_latency=40) + "\n"
                    + _timed_record(0, 18.2, 200, 3, time_to_first_token=14, inter_token_latency=2.1,
                                    request_latency=18.2, inter_chunk_latency=[2.1, 2.1]) + "\n")
    c = aisimulate.compare(_deployment(), path)
    assert c.counts == {"records": 2, "failed_in_measurement": 0, "replayed": 2, "completed_in_simulation": 1,
                        "warmup": 1}
    assert list(c.requests["line"]) == [2]
    assert c.requests["predicted_ttft_ms"][0] == pytest.approx(14.0)
    assert c.requests["predicted_e2e_ms"][0] == pytest.approx(18.2)
    ttft = c.metrics.loc["ttft_ms"]
    assert ttft["n"] == 1 and ttft["measured_mean"] == pytest.approx(14.0) and ttft["error_mean_pct"] == pytest.approx(0)
    assert c.metrics.loc["itl_ms"]["n"] == 2 and c.metrics.loc["itl_ms"]["measured_mean"] == pytest.approx(2.1)
    assert len(c.report.requests) == 2
    # an unknown phase is named; an export of warm-up records alone has nothing to score
    path.write_text(_timed_record(0, 18.2, 200, 3, "cooldown", time_to_first_token=14, request_latency=18.2) + "\n")
    with pytest.raises(DataError) as exc:
        aisimulate.compare(_deployment(), path)
    assert (exc.value.file, exc.value.line, exc.value.field) == (str(path), 1, "metadata.benchmark_phase")
    assert "'cooldown'" in str(exc.value)
    with pytest.raises(DataError) as exc:
        aisimulate.calibration.read_aiperf_records(path)
    assert (exc.value.line, exc.value.field) == (1, "metadata.benchmark_phase")
    path.write_text(_timed_record(0, 18.2, 200, 3, "warmup", time_to_first_token=14, request_latency=18.2) + "\n")
    with pytest.raises(DataError, match="no successful profiling request"):
        aisimulate.compare(_deployment(), path)
    assert [r["benchmark_phase"] for r in aisimulate.calibration.read_aiperf_records(path)] == ["warmup"]


def test_a_string_session_and_a_lone_request_of_one_number_stay_apart(tmp_path):
    # session "1" (turns at 0 and right after its first ends) and lone
    # request 1 between them shared x_correlation_id / conversation_id "1", so compare
    # took the lone request for the session's turn 0 (a prefix hit it never had) and
    # linked the session's turn 1 to its prompt. Now the ids are "session-1" and
    # "request-1", and compare predicts exactly what the replay of the trace gave.
    rows = [{"session_id": "1", "timestamp": 0, "input_length": 100, "output_length": 5},
            {"timestamp": 1, "input_length": 300, "output_length": 5},
            {"session_id": "1", "delay": 0, "input_length": 120, "output_length": 5}]
    spec = _deployment()
    spec["traffic"] = {"source": {"type": "mooncake", "path": str(write_mooncake(tmp_path / "t.jsonl", rows))},
                       "load": {"mode": "trace"}}
    rep = aisimulate.replay(spec)
    rep.to_aiperf(tmp_path / "out")
    meta = [json.loads(x)["metadata"] for x in (tmp_path / "out" / "profile_export.jsonl").open()]
    assert [(m["x_correlation_id"], m["conversation_id"]) for m in meta] == \
        [("session-1", "session-1"), ("request-1", "request-1"), ("session-1", "session-1")]
    c = aisimulate.compare(_deployment(), tmp_path / "out")
    # Linear perf 2 ms + 0.01 ms/prefill token + 0.1 ms/decode sequence. Turn 0: 2 + 1 =
    # 3 ms. The lone request (sent at 1) is prefilled with turn 0's decode: 2 + 3 + 0.1,
    # 3 → 8.1 ms, TTFT 7.1, nothing cached. Decode passes of both (2.2 ms) end turn 0's
    # 5th token at 14.7, when turn 1 is sent; it finds turn 0's prompt blocks, 6 × 16
    # (compare caches a turn's prompt, not its output), and is prefilled with the lone
    # request's last decode: 2 + 0.01 × (120 − 96) + 0.1 = 2.34 ms.
    assert [r["cached_tokens"] for r in c.report.requests] == [0, 0, 96]
    assert list(c.requests["predicted_ttft_ms"]) == pytest.approx([3.0, 7.1, 2.34])


def test_a_missing_or_unreadable_export_is_a_data_error_naming_it(tmp_path):
    path = tmp_path / "nope.jsonl"
    with pytest.raises(aisimulate.DataError) as exc:
        aisimulate.compare(_deployment(), path)
    assert exc.value.file == str(path)
    assert str(exc.value).startswith(f"{path}: cannot read the AIPerf export: ")
    assert isinstance(exc.value.__cause__, OSError)
    # a folder without AIPerf's file (test_cli_compare_takes_aiperfs_artifact_folder)
    with pytest.raises(aisimulate.DataError) as exc:
        aisimulate.compare(_deployment(), tmp_path)
    assert str(exc.value).startswith(f"{tmp_path}: a folder without profile_export.jsonl")


def test_a_slower_measurement_by_hand(tmp_path):
    # measured TTFT = 1.25 × predicted for every request: each relative error is
    # (p − 1.25 p) / 1.25 p = −0.2, so MAPE 20 %, bias −20 %, r = 1 (a linear relation),
    # and every statistic's error −20 %. TPOT and E2E untouched: 0.
    path, _ = _export(tmp_path, {"ttft_ms": 1.25})
    c = aisimulate.compare(_deployment(), path)
    ttft = c.metrics.loc["ttft_ms"]
    assert ttft["mape_pct"] == pytest.approx(20.0) and ttft["bias_pct"] == pytest.approx(-20.0)
    assert ttft["pearson_r"] == pytest.approx(1.0)
    for s in ("mean", "p50", "p90", "p99"):
        assert ttft[f"error_{s}_pct"] == pytest.approx(-20.0)
    assert c.metrics.loc["e2e_ms"]["mape_pct"] == pytest.approx(0, abs=1e-6)
    text = c.table()
    assert "ttft_ms" in text and "-20.0" in text
    d = c.to_dict()
    assert d["metrics"]["ttft_ms"]["bias_pct"] == pytest.approx(-20.0)
    json.dumps(d)  # JSON-ready
    pytest.importorskip("matplotlib")
    fig = c.plot()
    assert len(fig.axes) == 4
    fig.savefig(tmp_path / "c.png", dpi=50)


def test_concurrency_replay(tmp_path):
    path, _ = _export(tmp_path)
    c = aisimulate.compare(_deployment(), path, concurrency=1)
    # one client: each request is sent when the previous ends, so none waits (TTFT is
    # its prefill pass alone: 2 + 0.01 × ISL ms); the first request's is 2 + 0.01·200 = 4 ms
    assert c.requests["predicted_ttft_ms"][0] == pytest.approx(4.0)
    assert (c.requests["predicted_ttft_ms"] == 2 + 0.01 * c.requests["isl"]).all()
    with pytest.raises(aisimulate.ConfigError):
        aisimulate.compare(_deployment(), path, concurrency=0)


def test_multi_turn_prefix_blocks_by_hand():
    # session s1, conversation c: turn 0 ISL 1000, OSL 100; turn 1 ISL 1600. Session s2
    # sends the same dataset entry's turn 0. Session s3 (conversation d): turn 0 ISL 1000,
    # OSL 5; turn 1 ISL 1200. Block j of (conversation, turn) number k is k·stride + j + 1.
    recs = [{"line": 1, "start_ns": 0, "isl": 1000, "osl": 100, "conversation": "c", "session": "s1", "turn": 0},
            {"line": 2, "start_ns": 5, "isl": 1600, "osl": 10, "conversation": "c", "session": "s1", "turn": 1},
            {"line": 3, "start_ns": 9, "isl": 1000, "osl": 80, "conversation": "c", "session": "s2", "turn": 0},
            {"line": 4, "start_ns": 12, "isl": 1000, "osl": 5, "conversation": "d", "session": "s3", "turn": 0},
            {"line": 5, "start_ns": 15, "isl": 1200, "osl": 1, "conversation": "d", "session": "s3", "turn": 1}]
    # 512-token blocks: ⌈1000/512⌉ = 2, ⌈1600/512⌉ = 4 (stride 4), ⌈1200/512⌉ = 3. c's turn 1
    # shares ⌊(1000 + 100)/512⌋ = 2 blocks, its own are 1·4 + 2 + 1 = 7 and 8; d's turn 1
    # shares ⌊1005/512⌋ = 1, its own 3·4 + 1 + 1 = 14 and 15
    assert list(_hash_ids(recs, 512)) == [[1, 2], [1, 2, 7, 8], [1, 2], [9, 10], [9, 14, 15]]
    # 16-token blocks: ⌈1000/16⌉ = 63, ⌈1600/16⌉ = 100 (stride 100), ⌈1200/16⌉ = 75. c's turn 1:
    # ⌊1100/16⌋ = 68 blocks lie in turn 0's prompt and output, but turn 0's prompt has 63
    # ids: 63 shared, its own blocks 63..99 are 100 + 63 + 1 = 164 … 200. d's turn 1:
    # ⌊1005/16⌋ = 62 shared (block 62, tokens [992, 1008), passes turn 0's 1005 tokens),
    # its own blocks 62..74 are 300 + 62 + 1 = 363 … 375.
    ids = list(_hash_ids(recs, 16))
    assert ids[0] == ids[2] == list(range(1, 64))
    assert ids[1] == list(range(1, 64)) + list(range(164, 201))
    assert ids[3] == list(range(201, 264))
    assert ids[4] == list(range(201, 263)) + list(range(363, 376))


def _sessions_export(tmp_path, osl: int, block_size: int = 16):
    """A sessions run (20 sessions × 5 turns, 300 new tokens a turn, ``osl`` output
    tokens, 8 clients) and its AIPerf export."""
    spec = _deployment()
    spec["engine"]["scheduler"].update(block_size=block_size, num_gpu_blocks=32000 // block_size)
    spec["traffic"] = {"source": {"type": "sessions", "num_sessions": 20, "turns": 5, "isl": 300, "osl": osl},
                       "load": {"mode": "concurrency", "concurrency": 8}}
    report = aisimulate.replay(spec)
    write_aiperf(report, tmp_path / "run")
    return tmp_path / "run", report


@pytest.mark.parametrize("block_size, cached", [
    # turn k's prompt is 301k + 300 tokens (300 new and 1 output a turn): the cached part
    # is ⌊previous prompt / block⌋ · block: 288, 592, 896, 1200 for turns 1..4 at 16,
    # 296, 600, 896, 1200 at 8
    (16, {300: 0, 601: 288, 902: 592, 1203: 896, 1504: 1200}),
    (8, {300: 0, 601: 296, 902: 600, 1203: 896, 1504: 1200})])
def test_a_multi_turn_run_compared_with_itself_shares_every_block(tmp_path, block_size, cached):
    # One output token a turn: vLLM never writes the KV of the last (sampled) token, so
    # a later turn finds cached exactly the previous prompt's full blocks, and so does
    # the compare trace, whose ids are of the deployment's own blocks: the prediction is
    # the measurement (with 512-token ids it was +571 % mean TTFT; 16-token ids on
    # 8-token blocks would miss 8 tokens of turns 1 and 2).
    path, report = _sessions_export(tmp_path, osl=1, block_size=block_size)
    deployment = _deployment()
    deployment["engine"]["scheduler"].update(block_size=block_size, num_gpu_blocks=32000 // block_size)
    c = aisimulate.compare(deployment, path)
    assert c.counts["completed_in_simulation"] == 100
    assert c.report.summary["ttft_ms"] == pytest.approx(report.summary["ttft_ms"])
    for m in ("ttft_ms", "e2e_ms"):
        row = c.metrics.loc[m]
        assert row["mape_pct"] == pytest.approx(0, abs=1e-6) and row["error_mean_pct"] == pytest.approx(0, abs=1e-6)
    assert {r["input_tokens"]: r["cached_tokens"] for r in c.report.requests} == cached
    assert {r["input_tokens"]: r["cached_tokens"] for r in report.requests} == cached


def test_a_multi_turn_run_compared_with_itself_caches_each_reply(tmp_path):
    # 100 output tokens a turn: vLLM caches the previous turn's prompt and output but its
    # last token, ⌊(prompt + 99)/16⌋ blocks (384, 784, 1184, 1584 tokens for turns 1..4).
    # The compare trace gives each later turn its own input only (ISL_k − ISL_{k−1} −
    # OSL_{k−1} = 300 tokens) in AIPerf's deltas_without_responses form, so the replay's
    # turn holds the previous prompt and reply and finds the same blocks: the prediction
    # is the measurement (caching the prompts alone, it was +33.7 % mean TTFT).
    path, report = _sessions_export(tmp_path, osl=100)
    c = aisimulate.compare(_deployment(), path)
    cached = {300: 0, 700: 384, 1100: 784, 1500: 1184, 1900: 1584}
    assert {r["input_tokens"]: r["cached_tokens"] for r in report.requests} == cached
    assert {r["input_tokens"]: r["cached_tokens"] for r in c.report.requests} == cached
    assert c.report.metadata["spec"]["traffic"]["source"]["context_mode"] == "deltas_without_responses"
    for m in ("ttft_ms", "tpot_ms", "e2e_ms"):
        row = c.metrics.loc[m]
        assert row["mape_pct"] == pytest.approx(0, abs=1e-6) and row["error_mean_pct"] == pytest.approx(0, abs=1e-6)


def test_an_export_whose_turns_lack_the_history_stays_whole_prompts():
    # a later turn's ISL below the previous prompt and reply (1000 + 100 > 1050): the
    # export does not hold the conversation in its ISLs, so every row is its whole prompt
    recs = [{"line": 1, "start_ns": 0, "isl": 1000, "osl": 100, "conversation": "c", "session": "s", "turn": 0},
            {"line": 2, "start_ns": 5, "isl": 1050, "osl": 10, "conversation": "c", "session": "s", "turn": 1}]
    deltas, rows = _trace_rows(recs, 512)
    assert not deltas and [(sid, n) for sid, n, _ in rows] == [(None, 1000), (None, 1050)]
    # with it (1200 = 1000 + 100 + 100 new): the later turn is its 100 new tokens, ids of its own
    recs[1]["isl"] = 1200
    deltas, rows = _trace_rows(recs, 512)
    assert deltas and rows == [("s", 1000, [1, 2]), ("s", 100, [4])]  # stride ⌈1200/512⌉ = 3: 1·3 + 0 + 1


@pytest.mark.parametrize("line, field", [
    ('{"metadata": {"request_start_ns": 1}}', "metadata.request_end_ns"),
    ('{"metadata": {"request_start_ns": 1, "request_end_ns": 2}, "metrics": {}, "error": null}',
     "metrics.input_sequence_length"),
    ('{"metrics": {}}', "metadata"),
    ('{"metadata": {"request_start_ns": -1, "request_end_ns": 2}}', "metadata.request_start_ns"),
    ('{"metadata": {"request_start_ns": 5, "request_end_ns": 2}}', "metadata.request_end_ns"),
    ('{"metadata": {"request_start_ns": 1, "request_start_ns": 0, "request_end_ns": 2}}',
     "metadata.request_start_ns"),
])
def test_bad_export_names_the_line_and_field(tmp_path, line, field):
    p = tmp_path / "e.jsonl"
    p.write_text("\n" + line + "\n")
    with pytest.raises(DataError) as e:
        read_profile_export(p)
    assert e.value.line == 2 and e.value.field == field


@pytest.mark.parametrize("icl, message", [
    ('[1, "x"]', "got 'x' at index 1"), ("[0.5, -2]", "got -2 at index 1"), ("[true]", "got True at index 0"),
    ('"oops"', "got 'oops'"), ("{}", "got {}"),
])
def test_bad_inter_chunk_latencies_are_named(tmp_path, icl, message):
    # they were a raw ValueError (a string), or dropped silently (not a list), or kept (negative)
    p = tmp_path / "e.jsonl"
    p.write_text('{"metadata": {"request_start_ns": 1, "request_end_ns": 2}, "metrics": {'
                 '"input_sequence_length": 3, "output_sequence_length": 3, "time_to_first_token": 1, '
                 '"request_latency": 2, "inter_chunk_latency": {"value": ' + icl + '}}}\n')
    with pytest.raises(DataError) as e:
        read_profile_export(p)
    assert (e.value.line, e.value.field) == (1, "metrics.inter_chunk_latency")
    assert str(e.value) == f"{p}:1: field 'metrics.inter_chunk_latency.value' must be a list of latencies " \
                           f"in ms ≥ 0, {message}"
    p.write_text(p.read_text().replace(icl, "[0.5, 0.5]"))  # 0.5 + 0.5 = 2 − 1 ms
    assert read_profile_export(p)[0]["icl_ms"] == [0.5, 0.5]


def test_a_bad_metric_value_says_its_unit(tmp_path):
    # a latency is not a token count: each message names what the value must be
    md = '{"metadata": {"request_start_ns": 1, "request_end_ns": 2}, "metrics": {'
    lengths = '"input_sequence_length": {"value": 10}, "output_sequence_length": {"value": 3}, '
    p = tmp_path / "e.jsonl"
    for metrics, field, what in [
        ('"input_sequence_length": {"value": -1}, "output_sequence_length": {"value": 3}',
         "metrics.input_sequence_length", "a token count"),
        (lengths + '"time_to_first_token": {"value": -2.5, "unit": "ms"}, "request_latency": {"value": 9}',
         "metrics.time_to_first_token", "a latency in ms"),
        (lengths + '"time_to_first_token": {"value": 2}, "request_latency": {"value": "slow"}',
         "metrics.request_latency", "a latency in ms"),
        (lengths + '"time_to_first_token": {"value": 2}, "request_latency": {"value": 9}, '
         '"inter_token_latency": {"value": null}', "metrics.inter_token_latency", "a latency in ms"),
    ]:
        p.write_text(md + metrics + "}}\n")
        with pytest.raises(DataError) as e:
            read_profile_export(p)
        assert e.value.field == field
        assert f"field '{field}.value' must be {what} ≥ 0, got " in str(e.value)


def test_cli_compare(tmp_path, capsys):
    from aisimulate.cli import main
    import yaml

    path, _ = _export(tmp_path, {"e2e_ms": 0.5})
    cfg = tmp_path / "deploy.yaml"
    cfg.write_text(yaml.safe_dump(_deployment()))
    assert main(["compare", "--aiperf", str(path), "--config", str(cfg), "--format", "json",
                 "--plot", str(tmp_path / "p.png")]) == 0
    out = json.loads(capsys.readouterr().out)
    # measured E2E = half the predicted: each error (p − p/2) / (p/2) = +100 %
    assert out["metrics"]["e2e_ms"]["bias_pct"] == pytest.approx(100.0)
    assert math.isnan(float("nan")) and (tmp_path / "p.png").stat().st_size > 2000
    assert main(["compare", str(cfg), "--aiperf", str(tmp_path / "missing.jsonl")]) == 2


def test_cli_compare_takes_a_config_of_the_engine_alone(tmp_path, capsys):
    # the traffic is swapped in before the config is checked
    from aisimulate.cli import main
    import yaml

    path, _ = _export(tmp_path, {"e2e_ms": 0.5})
    engine_only = {"engine": _deployment()["engine"]}
    cfg = tmp_path / "deploy.yaml"
    cfg.write_text(yaml.safe_dump(engine_only))
    assert main(["compare", "--aiperf", str(path), "--config", str(cfg), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["e2e_ms"]["bias_pct"] == pytest.approx(100.0)  # as test_cli_compare
    c = aisimulate.compare(engine_only, path)  # the API alike
    assert c.counts["completed_in_simulation"] == 12
    assert c.metrics.loc["ttft_ms", "mape_pct"] == pytest.approx(0, abs=1e-6)
    # a bad engine field is still named, after the swap
    cfg.write_text(yaml.safe_dump({"engine": {**engine_only["engine"], "modle": "x"}}))
    assert main(["compare", str(cfg), "--aiperf", str(path)]) == 2
    assert "engine.modle" in capsys.readouterr().err


def test_cli_compare_without_a_config_names_the_command(tmp_path, capsys):
    from aisimulate.cli import main

    path, _ = _export(tmp_path)
    assert main(["compare", "--aiperf", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == ("aisimulate: error: a config is required: aisimulate compare CONFIG "
                   "(or --config FILE, or - to read it from stdin)\n")


def test_cli_compare_output_paths_are_checked_before_the_replay(tmp_path, capsys, monkeypatch):
    # each bad path is exit 2, one line naming the option and the path,
    # before anything is simulated
    from aisimulate.cli import main

    path, _ = _export(tmp_path)
    cfg = tmp_path / "deploy.json"
    cfg.write_text(json.dumps(_deployment()))

    def replayed(*a, **k):
        raise AssertionError("replayed before the output paths were checked")

    link = tmp_path / "same.png"  # the figure's name, a link to the pairs' file
    link.symlink_to(tmp_path / "same.csv")
    cases = [
        (["--plot", str(tmp_path)], ["--plot", str(tmp_path), "is a folder"]),
        (["--plot", f"{path}/p.png"], ["--plot", f"{path} is a file"]),
        (["--plot", "p.xyz"], ["--plot p.xyz", ".png", ".svg"]),
        (["--requests-out", str(path)], ["--requests-out", "would overwrite the input file", str(path)]),
        (["--requests-out", str(cfg)], ["--requests-out", "would overwrite the input file", str(cfg)]),
        (["--requests-out", "r.txt"], ["--requests-out r.txt", ".csv", ".parquet"]),
        (["--requests-out", "/proc/self/r.csv"], ["--requests-out /proc/self/r.csv", "cannot write in /proc/self"]),
        (["--plot", str(link), "--requests-out", str(tmp_path / "same.csv")],
         [f"--requests-out {tmp_path / 'same.csv'} is also the file of --plot"]),
    ]
    with monkeypatch.context() as m:
        m.setattr(aisimulate, "replay", replayed)
        for extra, needles in cases:
            assert main(["compare", str(cfg), "--aiperf", str(path), *extra]) == 2, extra
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith("aisimulate: error: "), err
            for n in needles:
                assert n in err[0], (n, err[0])
    # missing folders are created; the files are whole
    plot, pairs = tmp_path / "new/a/p.png", tmp_path / "new/b/pairs.csv"
    assert main(["compare", str(cfg), "--aiperf", str(path), "--plot", str(plot),
                 "--requests-out", str(pairs)]) == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(pairs.read_text().splitlines()) == 1 + 12  # header + the 12 replayed requests
    # now they exist: replaced only with --force, as every output file (docs in README)
    capsys.readouterr()
    for flag, existing in (("--requests-out", pairs), ("--plot", plot)):
        before = existing.read_bytes()
        assert main(["compare", str(cfg), "--aiperf", str(path), flag, str(existing)]) == 2
        assert capsys.readouterr().err.startswith(f"aisimulate: error: {flag} {existing}: {existing} exists: "
                                                  "it is not overwritten")
        assert existing.read_bytes() == before
        assert main(["compare", str(cfg), "--aiperf", str(path), flag, str(existing), "--force"]) == 0
        capsys.readouterr()


def test_cli_compare_does_not_overwrite_the_artifact_folders_other_files(tmp_path, capsys, monkeypatch):
    # --requests-out / --plot into the AIPerf folder compare reads do not
    # replace the measurement's other files (AIPerf's summary CSV) without --force
    from aisimulate.cli import main

    path, _ = _export(tmp_path)
    cfg = tmp_path / "sub" / "deploy.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps(_deployment()))
    summary = tmp_path / "profile_export_aiperf.csv"
    summary.write_text("Metric,avg\nTime to First Token (ms),12.5\n")
    raw = tmp_path / "notes.png"
    raw.write_bytes(b"not a figure")

    def replayed(*a, **k):
        raise AssertionError("replayed before the output paths were checked")

    with monkeypatch.context() as m:
        m.setattr(aisimulate, "replay", replayed)
        for extra, out in ((["--requests-out", str(summary)], summary), (["--plot", str(raw)], raw)):
            for aiperf in (tmp_path, path):  # the folder, or its profile_export.jsonl
                assert main(["compare", str(cfg), "--aiperf", str(aiperf), *extra]) == 2
                err = capsys.readouterr().err
                assert err == (f"aisimulate: error: {extra[0]} {out}: {out} is a file of {tmp_path}, the "
                               "folder this run reads: it is not overwritten; choose another file, move "
                               "it away, or add --force\n")
    assert summary.read_text() == "Metric,avg\nTime to First Token (ms),12.5\n"
    assert raw.read_bytes() == b"not a figure"
    # a new file there is written; --force replaces the summary; the export read never
    assert main(["compare", str(cfg), "--aiperf", str(tmp_path), "--requests-out", str(tmp_path / "pairs.csv")]) == 0
    assert main(["compare", str(cfg), "--aiperf", str(tmp_path), "--requests-out", str(summary), "--force"]) == 0
    assert summary.read_text().splitlines()[0].startswith("line,isl,osl,")
    assert len(summary.read_text().splitlines()) == 1 + 12
    capsys.readouterr()
    assert main(["compare", str(cfg), "--aiperf", str(tmp_path), "--requests-out", str(path), "--force"]) == 2
    assert "would overwrite the input file" in capsys.readouterr().err


def test_cli_compare_takes_aiperfs_artifact_folder(tmp_path, capsys):
    # AIPerf writes profile_export.jsonl into its artifact folder: the folder is taken;
    # a folder without it is named as a folder, not "file not found"
    from aisimulate.cli import main
    import yaml

    path, _ = _export(tmp_path, {"e2e_ms": 0.5})
    cfg = tmp_path / "deploy.yaml"
    cfg.write_text(yaml.safe_dump(_deployment()))
    assert main(["compare", "--aiperf", str(tmp_path), "--config", str(cfg), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["e2e_ms"]["bias_pct"] == pytest.approx(100.0)
    assert aisimulate.compare(_deployment(), tmp_path).counts["completed_in_simulation"] == 12
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["compare", str(cfg), "--aiperf", str(empty)]) == 2
    assert capsys.readouterr().err == (f"aisimulate: error: --aiperf: {empty}: a folder without profile_export.jsonl: "
                                       "give AIPerf's per-request export, or the artifact folder AIPerf wrote it in\n")
    with pytest.raises(DataError) as e:
        read_profile_export(empty)
    assert e.value.file == str(empty) and "a folder without profile_export.jsonl" in str(e.value)


def _record(start_ns: int, osl: int = 3, **metrics) -> str:
    m = {"input_sequence_length": {"value": 10, "unit": "tokens"},
         "output_sequence_length": {"value": osl, "unit": "tokens"},
         "time_to_first_token": {"value": 2.0, "unit": "ms"}, "request_latency": {"value": 9.0, "unit": "ms"}}
    m.update(metrics)
    return json.dumps({"metadata": {"request_start_ns": start_ns, "request_end_ns": start_ns + 9_000_000},
                       "metrics": m, "error": None}) + "\n"


@pytest.mark.parametrize("osl, ttft, e2e, icl, message", [
    # 127 gaps of 1e300 ms on a 2.1 s request: finite each, but summing to 1.27e302 ms
    (128, 100, 2100, [1e300] * 127, "sums to 1.27e+302 ms, but request_latency − time_to_first_token is 2000 ms"),
    # gaps summing to 3 ms where the chunks span 2000 − 100 = 1900 ms
    (128, 100, 2000, [1.5, 1.5], "sums to 3 ms, but request_latency − time_to_first_token is 1900 ms"),
    # 1000 ms span: within 1 % + 1 ms is ± 11 ms, so 1011.5 is out
    (3, 0, 1000, [500, 511.5], "sums to 1011.5 ms, but request_latency − time_to_first_token is 1000 ms"),
    # a sum past float max is inf: refused, not an overflow
    (4, 0, 1000, [1.7e308, 1.7e308, 1.7e308], "sums to inf ms"),
])
def test_inter_chunk_latencies_must_fit_the_record(tmp_path, osl, ttft, e2e, icl, message):
    p = tmp_path / "g.jsonl"
    p.write_text(_record(T0_NS) + _record(T0_NS, osl=osl, time_to_first_token={"value": ttft, "unit": "ms"},
                                          request_latency={"value": e2e, "unit": "ms"},
                                          inter_chunk_latency={"value": icl, "unit": "ms"}))
    with pytest.raises(DataError, match=re.escape(message)) as e:
        read_profile_export(p)
    assert (e.value.file, e.value.line, e.value.field) == (str(p), 2, "metrics.inter_chunk_latency")


def test_inter_chunk_latencies_within_the_tolerance_are_read(tmp_path):
    # span 1000 ms: ± (1 % × 1000 + 1) = ± 11 ms; 989.5 and 1010.5 are in, and so are
    # 127 gaps beside an output_sequence_length of 100 (AIPerf's tokenizer counts the
    # text, and can merge two chunks' tokens into one)
    p = tmp_path / "g.jsonl"
    p.write_text("".join(_record(T0_NS, osl=osl, time_to_first_token={"value": 100, "unit": "ms"},
                                 request_latency={"value": 1100, "unit": "ms"},
                                 inter_chunk_latency={"value": icl, "unit": "ms"})
                         for osl, icl in ((128, [489.5, 500]), (128, [510.5, 500]), (100, [1000 / 127] * 127))))
    assert [len(r["icl_ms"]) for r in read_profile_export(p)] == [2, 2, 127]


def test_latency_units_are_converted_to_ms(tmp_path):
    """41,000,000 ns = 41,000 us = 0.041 s = 41 ms; ICL [500, 2000] us =
    [0.5, 2] ms; a unit that is not a time unit is refused, naming file:line and field."""
    p = tmp_path / "u.jsonl"
    p.write_text(_record(T0_NS) +
                 _record(T0_NS, time_to_first_token={"value": 41_000_000, "unit": "ns"},
                         request_latency={"value": 43.5, "unit": "ms"},  # 41 + 0.5 + 2: the gaps' span
                         inter_chunk_latency={"value": [500, 2000], "unit": "us"}) +
                 _record(T0_NS, time_to_first_token={"value": 41_000, "unit": "us"},
                         request_latency={"value": 0.5, "unit": "sec"}) +
                 _record(T0_NS, time_to_first_token={"value": 0.041, "unit": "s"},
                         request_latency={"value": 0.05, "unit": "s"}))  # not below the TTFT
    recs = read_profile_export(p)
    assert [r["ttft_ms"] for r in recs] == [2.0, 41.0, 41.0, 41.0]
    assert recs[1]["icl_ms"] == [0.5, 2.0] and recs[2]["e2e_ms"] == 500.0
    p.write_text(_record(T0_NS) + _record(T0_NS, inter_token_latency={"value": 1, "unit": "min"}))
    with pytest.raises(DataError) as e:
        read_profile_export(p)
    assert (e.value.file, e.value.line, e.value.field) == (str(p), 2, "metrics.inter_token_latency.unit")
    assert "must be a time unit (ns, us, ms, s, sec), got 'min'" in str(e.value)


def test_compare_names_the_export_line_of_a_record_it_cannot_replay(tmp_path):
    """Line 1 a failed record, line 3 a record with 0 output tokens: the
    error names the export, line 3 and metrics.output_sequence_length (it named compare's
    deleted trace, line 2 of it, and output_length); a send time past the virtual clock's
    end (2^61 ns after the first) names metadata.request_start_ns on its own line."""
    failed = json.dumps({"metadata": {"request_start_ns": T0_NS, "request_end_ns": T0_NS + 5},
                         "error": {"code": 500, "type": "X", "message": "x"}}) + "\n"
    p = tmp_path / "pe.jsonl"
    p.write_text(failed + _record(T0_NS) + _record(T0_NS + 1_000_000, osl=0) + _record(T0_NS + 2_000_000))
    with pytest.raises(DataError) as e:
        aisimulate.compare(_deployment(), p, progress=False)
    assert (e.value.file, e.value.line, e.value.field) == (str(p), 3, "metrics.output_sequence_length")
    assert "must be ≥ 1 to replay the request, got 0" in str(e.value)
    p.write_text(failed + _record(T0_NS) + _record(T0_NS + 2**61))
    with pytest.raises(DataError) as e:
        aisimulate.compare(_deployment(), p, progress=False)
    assert (e.value.file, e.value.line, e.value.field) == (str(p), 3, "metadata.request_start_ns")
    assert str(e.value).startswith(f"{p}:3: metadata.request_start_ns: ")


@pytest.mark.parametrize("isl", [2**63 - 1, 10**8, 2**40])
def test_a_prompt_past_max_model_len_is_replayed_as_rejected_without_its_blocks(tmp_path, monkeypatch, isl):
    """DEFECTS-s5 #17, #18: an AIPerf record of an absurd prompt (2^63 − 1, 2^40 tokens)
    made compare build one hash id per 16-token block (18 GB in 60 s, a MemoryError),
    and 10^8 tokens a 50 MB trace line refused as "line longer than 16 MiB" against the
    user's 600-byte line. A prompt longer than the deployment's max_model_len (32,000
    here) is rejected by the engine before it looks a block up, so it gets no ids and is
    replayed as rejected, as a trace row is; the canceled record's error_isl of 2^50
    too. The record beside it is replayed as ever."""
    compare_module = importlib.import_module("aisimulate.compare")
    built = []
    real = compare_module._hash_ids

    def counted(records, block):
        for ids in real(records, block):
            built.append(len(ids))
            yield ids

    monkeypatch.setattr(compare_module, "_hash_ids", counted)
    p = tmp_path / "pe.jsonl"
    p.write_text(_timed_record(0, 20, 200, 3, time_to_first_token=4, inter_token_latency=2.1, request_latency=8.2)
                 + "\n" + _timed_record(1, 30, isl, 3, time_to_first_token=4, inter_token_latency=2.1,
                                        request_latency=8.2)
                 + "\n" + _timed_record(2, 40, 2**50) + "\n")
    c = aisimulate.compare(_deployment(), p, progress=False)
    assert built == [13, 0, 0]  # ⌈200 / 16⌉ ids, none for the prompts past max_model_len
    assert c.counts == {"records": 3, "failed_in_measurement": 1, "replayed": 3, "completed_in_simulation": 1,
                        "rejected_in_simulation": 1}
    assert list(c.requests["status"]) == ["completed", "rejected"]
    assert c.table().splitlines()[2] == (f"rejected in simulation: line 2: prompt ({isl}) + output (3) tokens "
                                         "exceed max_model_len (32000)")
    assert {r["request_id"]: r["status"] for r in c.report.requests}[2] == "rejected"


@pytest.mark.parametrize("value", [2**63, 2**70, 5.5])
def test_a_token_count_past_int64_or_not_whole_is_named(tmp_path, value):
    # the core holds token counts as int64; 5.5 tokens was read as 5
    p = tmp_path / "pe.jsonl"
    p.write_text(_timed_record(0, 20, 200, 3, time_to_first_token=4, request_latency=8.2) + "\n"
                 + _timed_record(1, 30, 200, 3, time_to_first_token=4, request_latency=8.2).replace(
                     '"value": 200', f'"value": {value}') + "\n")
    with pytest.raises(DataError) as e:
        read_profile_export(p)
    assert (e.value.file, e.value.line, e.value.field) == (str(p), 2, "metrics.input_sequence_length")
    assert str(e.value) == (f"{p}:2: field 'metrics.input_sequence_length.value' must be a whole number of tokens "
                            f"≤ 9223372036854775807 (2^63 − 1), got {value!r}")


def test_a_prompt_of_more_ids_than_a_trace_line_holds_names_the_record(tmp_path, monkeypatch):
    # A row of compare's trace longer than the trace reader's line bound (16 MiB; 1,000
    # bytes here: a 16 MiB row needs a max_model_len of ~2 million blocks) is named
    # before the replay, as the user's record and field, not as the deleted trace's line
    monkeypatch.setattr(importlib.import_module("aisimulate.compare"), "_MAX_LINE_BYTES", 1_000)
    p = tmp_path / "pe.jsonl"
    p.write_text(_timed_record(0, 20, 200, 3, time_to_first_token=4, request_latency=8.2) + "\n"
                 + _timed_record(1, 20, 20_000, 3, time_to_first_token=4, request_latency=8.2) + "\n")
    with pytest.raises(DataError) as e:
        aisimulate.compare(_deployment(), p, progress=False)
    assert (e.value.file, e.value.line, e.value.field) == (str(p), 2, "metrics.input_sequence_length")
    assert str(e.value) == (f"{p}:2: metrics.input_sequence_length: a prompt of 20,000 tokens takes 1,250 hash "
                            "ids of 16-token blocks, more than one line of the trace compare replays holds "
                            "(1,000 bytes)")


def test_itl_is_scored_chunk_by_chunk_from_inter_chunk_latency(tmp_path):
    # As test_warmup_records_are_replayed_not_scored: the warm-up record and the
    # profiling one share the first pass (14 ms), then the profiling one decodes alone at
    # 2 + 0.1 = 2.1 ms a pass, so its simulated chunks (one token each) arrive 2.1 ms
    # apart: predicted gaps [2.1, 2.1]. Measured [3.0, 3.0]: the mean is off by
    # (2.1 − 3.0) / 3.0 = −30 %, and the one pair of mean gaps gives MAPE 30 %, bias −30 %.
    # The warm-up request's gaps are in neither (it has none: one token).
    path = tmp_path / "profile_export.jsonl"
    path.write_text(_timed_record(0, 40, 1000, 1, "warmup", time_to_first_token=40, request_latency=40) + "\n"
                    + _timed_record(0, 20, 200, 3, time_to_first_token=14, inter_token_latency=3.0,
                                    request_latency=20, inter_chunk_latency=[3.0, 3.0]) + "\n")
    c = aisimulate.compare(_deployment(), path)
    assert c.report.chunk_times is not None
    itl = c.metrics.loc["itl_ms"]
    assert itl["n"] == 2 and itl["measured_mean"] == pytest.approx(3.0)
    assert itl["predicted_mean"] == pytest.approx(2.1) and itl["predicted_p99"] == pytest.approx(2.1)
    assert itl["error_mean_pct"] == pytest.approx(-30.0)
    assert itl["mape_pct"] == pytest.approx(30.0) and itl["bias_pct"] == pytest.approx(-30.0)
    # without inter_chunk_latency the replay records no chunk times: the core's pooled ITL
    path.write_text(_timed_record(0, 20, 200, 3, time_to_first_token=14, inter_token_latency=3.0,
                                  request_latency=20) + "\n")
    c = aisimulate.compare(_deployment(), path)
    assert c.report.chunk_times is None and c.metrics.loc["itl_ms"]["n"] == 0
