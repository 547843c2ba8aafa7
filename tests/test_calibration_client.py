"""Calibration of the client path: response overhead, detokenization, AIPerf.

Recovery tests draw data from known parameters with gaussian noise under a fixed seed and
accept the fit within 5 standard errors of ordinary least squares, computed here from
the textbook formulas (independent of the code under test):

    se(slope)     = sigma / sqrt(Sxx)
    se(intercept) = sigma * sqrt(1/n + mean(x)**2 / Sxx),   Sxx = sum((x - mean(x))**2)
    se(rmse)     ~= sigma / sqrt(2 n)

Five standard errors make a false failure essentially impossible for any seed, while a
wrong unit (ms vs µs, a factor 1000) or an off-by-one pairing fails by orders of
magnitude.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from aisimulate.calibration import (
    DetokenizationFit,
    ResponseOverheadFit,
    detokenization_costs,
    fit_detokenization,
    fit_response_overhead,
    read_aiperf_records,
)
from aisimulate.errors import DataError

BASE_MS = 1.40
PER_TOKEN_US = 3.65
NOISE_MS = 0.3
SEED = 20240603


def _ols_standard_errors(x: np.ndarray, sigma: float) -> tuple[float, float]:
    sxx = float(np.sum((x - x.mean()) ** 2))
    return sigma * math.sqrt(1 / len(x) + x.mean() ** 2 / sxx), sigma / math.sqrt(sxx)


def _concurrency1_client(n: int, seed: int = SEED):
    """A concurrency-1 client timeline: each next request starts after the overhead."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(64, 2049, size=n)
    latency_ms = 20.0 + 0.025 * tokens + rng.uniform(0, 5, size=n)
    overhead_ms = BASE_MS + PER_TOKEN_US * 1e-3 * tokens + rng.normal(0, NOISE_MS, size=n)
    starts, ends = np.empty(n), np.empty(n)
    t = 1000.0
    for i in range(n):
        starts[i], ends[i] = t, t + latency_ms[i]
        t = ends[i] + overhead_ms[i]
    return tokens, starts, ends


# --------------------------------------------------------------------------- response overhead


def test_response_overhead_recovers_known_parameters():
    n = 2000
    tokens, starts, ends = _concurrency1_client(n)
    records = [{"start_ms": s, "end_ms": e, "output_tokens": int(k)}
               for s, e, k in zip(starts, ends, tokens)]
    rng = np.random.default_rng(7)
    shuffled = [records[i] for i in rng.permutation(n)]  # the fit must sort by start

    fit = fit_response_overhead(shuffled)

    assert isinstance(fit, ResponseOverheadFit)
    assert fit.n == n - 1  # the last record has no successor
    se_base, se_slope_ms = _ols_standard_errors(tokens[:-1].astype(float), NOISE_MS)
    assert abs(fit.base_ms - BASE_MS) < 5 * se_base  # se_base ≈ 0.014 ms
    assert abs(fit.per_output_token_us - PER_TOKEN_US) < 5 * se_slope_ms * 1e3  # ≈ 0.012 µs
    assert abs(fit.rmse_ms - NOISE_MS) < 5 * NOISE_MS / math.sqrt(2 * fit.n)  # ≈ 0.005 ms


def test_response_overhead_input_forms_agree():
    tokens, starts, ends = _concurrency1_client(300)
    records = [{"start_ms": s, "end_ms": e, "output_tokens": int(k)}
               for s, e, k in zip(starts, ends, tokens)]
    by_records = fit_response_overhead(records)
    by_sequences = fit_response_overhead(tokens[:-1], ends[:-1], starts[1:])
    pd = pytest.importorskip("pandas")
    by_frame = fit_response_overhead(pd.DataFrame(records))
    paired = pd.DataFrame({"output_tokens": tokens[:-1], "end_ms": ends[:-1],
                           "next_start_ms": starts[1:]})
    by_paired_frame = fit_response_overhead(paired)
    for other in (by_sequences, by_frame, by_paired_frame):
        assert other.n == by_records.n == 299
        assert other.base_ms == pytest.approx(by_records.base_ms, rel=1e-12)
        assert other.per_output_token_us == pytest.approx(by_records.per_output_token_us,
                                                          rel=1e-12)
        assert other.rmse_ms == pytest.approx(by_records.rmse_ms, rel=1e-9)


def test_response_overhead_matches_closed_form_ols():
    x = np.array([64, 100, 700, 900, 1500, 2048], dtype=float)
    y = np.array([1.9, 1.7, 4.1, 4.6, 7.2, 8.9])
    slope = np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)
    intercept = y.mean() - slope * x.mean()
    rmse = math.sqrt(np.mean((y - intercept - slope * x) ** 2))
    ends = np.arange(6) * 100.0
    fit = fit_response_overhead(x, ends, ends + y)
    assert fit.base_ms == pytest.approx(intercept, rel=1e-12)
    assert fit.per_output_token_us == pytest.approx(slope * 1e3, rel=1e-12)
    assert fit.rmse_ms == pytest.approx(rmse, rel=1e-9)
    assert fit.n == 6
    assert fit.predict_ms(1000) == pytest.approx(intercept + slope * 1000)
    assert fit.to_spec() == {"base_ms": fit.base_ms,
                             "per_output_token_us": fit.per_output_token_us}


def test_response_overhead_pairing_rule_with_failed_record():
    # Out of order on purpose. Gaps: A 11.5 - 10 = 1.5 (100 tokens), B 22 - 20 = 2.0
    # (200 tokens); C failed: it closes B's gap but has none of its own; D is last.
    records = [
        {"start_ms": 22.0, "end_ms": 22.3, "output_tokens": None, "error": "Timeout"},
        {"start_ms": 11.5, "end_ms": 20.0, "output_tokens": 200, "error": None},
        {"start_ms": 30.0, "end_ms": 40.0, "output_tokens": 300},
        {"start_ms": 0.0, "end_ms": 10.0, "output_tokens": 100},
    ]
    fit = fit_response_overhead(records)
    assert fit.n == 2
    assert fit.base_ms == pytest.approx(1.0)  # 1.5 = b + 100 s, 2.0 = b + 200 s
    assert fit.per_output_token_us == pytest.approx(5.0)
    assert fit.rmse_ms == pytest.approx(0.0, abs=1e-12)


def test_response_overhead_negative_gap_names_the_record():
    records = [{"start_ms": 0.0, "end_ms": 10.0, "output_tokens": 100},
               {"start_ms": 12.0, "end_ms": 20.0, "output_tokens": 200},
               {"start_ms": 19.0, "end_ms": 30.0, "output_tokens": 300},  # overlaps
               {"start_ms": 40.0, "end_ms": 50.0, "output_tokens": 400}]
    with pytest.raises(ValueError, match=r"record 1: the next request starts 1 ms before"):
        fit_response_overhead(records)
    with pytest.raises(ValueError, match=r"record 2: "):
        fit_response_overhead([100, 200, 300], [10.0, 20.0, 30.0], [12.0, 21.0, 29.5])


@pytest.mark.parametrize("args, message", [
    (([100], [10.0], [11.0]), r"at least 2 gaps.*got 1"),
    (([], [], []), r"at least 2 gaps.*got 0"),
    (([512, 512, 512], [0.0, 10.0, 20.0], [2.0, 12.1, 21.9]),
     r"all 3 gaps have output_tokens = 512.*two distinct"),
    (([100, 200], [10.0, float("nan")], [12.0, 25.0]), r"end_ms\[1\]: must be finite"),
    (([100, float("inf")], [10.0, 20.0], [12.0, 25.0]), r"output_tokens\[1\]: must be finite"),
    (([100, 200], [10.0, 20.0], [12.0, float("-inf")]), r"next_start_ms\[1\]: must be finite"),
    (([100, -5], [10.0, 20.0], [12.0, 25.0]), r"output_tokens\[1\]: must be ≥ 0"),
    (([100, 200], [10.0], [12.0, 25.0]), r"equal lengths"),
    ((["100", 200], [10.0, 20.0], [12.0, 25.0]), r"output_tokens\[0\]: expected a number"),
])
def test_response_overhead_degenerate_inputs_raise(args, message):
    with pytest.raises(ValueError, match=message):
        fit_response_overhead(*args)


def test_response_overhead_degenerate_records_raise():
    one = [{"start_ms": 0.0, "end_ms": 1.0, "output_tokens": 10},
           {"start_ms": 2.0, "end_ms": 3.0, "output_tokens": 20}]
    with pytest.raises(ValueError, match=r"at least 2 gaps.*got 1"):
        fit_response_overhead(one)
    with pytest.raises(ValueError, match=r"record 1 has no key 'end_ms'"):
        fit_response_overhead([{"start_ms": 0.0, "end_ms": 1.0, "output_tokens": 1},
                               {"start_ms": 2.0, "output_tokens": 2}])
    nan_tokens = one + [{"start_ms": 4.0, "end_ms": 5.0, "output_tokens": float("nan")},
                        {"start_ms": 6.0, "end_ms": 7.0, "output_tokens": 5}]
    with pytest.raises(ValueError, match=r"output_tokens\[2\]: must be finite"):
        fit_response_overhead(nan_tokens)
    with pytest.raises(TypeError, match="both end_ms and next_start_ms"):
        fit_response_overhead([1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="DataFrame or a list of dicts"):
        fit_response_overhead("records.jsonl")


def test_to_spec_refuses_negative_coefficients():
    fit = ResponseOverheadFit(base_ms=-0.2, per_output_token_us=3.0, rmse_ms=0.1, n=10)
    with pytest.raises(ValueError, match=r"traffic\.load\.response_overhead\.base_ms"):
        fit.to_spec()
    detok = DetokenizationFit(base_us=100.0, per_token_us=-1.0, rmse_us=1.0, n=10)
    with pytest.raises(ValueError, match=r"engine\.detokenization\.per_token_us"):
        detok.to_spec()


# --------------------------------------------------------------------------- detokenization


def test_detokenization_recovers_known_parameters():
    base_us, per_token_us, noise_us, n = 150.0, 2.0, 5.0, 3000
    rng = np.random.default_rng(SEED)
    tokens = rng.integers(1, 513, size=n)  # decode batch sizes 1..512
    cost = base_us + per_token_us * tokens + rng.normal(0, noise_us, size=n)
    fit = fit_detokenization(tokens, cost)
    assert fit.n == n
    se_base, se_slope = _ols_standard_errors(tokens.astype(float), noise_us)
    assert abs(fit.base_us - base_us) < 5 * se_base  # se ≈ 0.18 µs
    assert abs(fit.per_token_us - per_token_us) < 5 * se_slope  # se ≈ 0.0006 µs
    assert abs(fit.rmse_us - noise_us) < 5 * noise_us / math.sqrt(2 * n)
    rows = [{"tokens": int(k), "cost_us": float(c)} for k, c in zip(tokens, cost)]
    same = fit_detokenization(rows)
    assert same.base_us == pytest.approx(fit.base_us, rel=1e-12)
    assert same.per_token_us == pytest.approx(fit.per_token_us, rel=1e-12)


def test_detokenization_costs_remove_fifo_queueing():
    # Known costs 150 + 2 × tokens µs; passes end every 300 µs, so big jobs queue.
    tokens = np.array([8, 256, 256, 4, 64, 512, 1, 32], dtype=float)
    costs = 150.0 + 2.0 * tokens
    pass_end = 300.0 * np.arange(1, len(tokens) + 1)
    delivered, free_at = [], -math.inf
    for end, cost in zip(pass_end, costs):  # a FIFO server, simulated step by step
        free_at = max(end, free_at) + cost
        delivered.append(free_at)
    assert delivered[2] - pass_end[2] > costs[2]  # pass 2 did queue behind pass 1
    recovered = detokenization_costs(pass_end, delivered)
    np.testing.assert_allclose(recovered, costs, rtol=0, atol=1e-9)
    fit = fit_detokenization(tokens, recovered)
    assert fit.base_us == pytest.approx(150.0)
    assert fit.per_token_us == pytest.approx(2.0)
    with pytest.raises(ValueError, match=r"pass 1 ends at .* before pass 0"):
        detokenization_costs([10.0, 5.0], [20.0, 30.0])
    with pytest.raises(ValueError, match=r"pass 1 is delivered at .* before it ends"):
        detokenization_costs([10.0, 50.0], [20.0, 40.0])


@pytest.mark.parametrize("args, message", [
    (([16], [180.0]), r"at least 2 costs.*got 1"),
    (([32, 32, 32], [210.0, 215.0, 212.0]), r"all 3 costs have tokens = 32"),
    (([16, 32], [180.0, float("nan")]), r"cost_us\[1\]: must be finite"),
    (([16, float("inf")], [180.0, 200.0]), r"tokens\[1\]: must be finite"),
    (([16, 32], [180.0, -1.0]), r"cost_us\[1\]: must be ≥ 0"),
    (([16, 32, 64], [180.0, 200.0]), r"equal lengths"),
])
def test_detokenization_degenerate_inputs_raise(args, message):
    with pytest.raises(ValueError, match=message):
        fit_detokenization(*args)


# --------------------------------------------------------------------------- AIPerf reader

# Hand-written in the shape of AIPerf's profile_export.jsonl. Gaps at 1.40 ms + 3.65 µs per
# output token: record 1 (100 tokens) 1.765 ms, record 2 (1000) 5.05 ms, record 3 (2000)
# 8.7 ms; record 4 failed (cancelled); record 5 is last.
AIPERF_LINES = [
    {"metadata": {"session_num": 0, "request_start_ns": 1759813207532900363,
                  "request_ack_ns": 1759813207540000000,
                  "request_end_ns": 1759813207832900363, "benchmark_phase": "profiling",
                  "was_cancelled": False, "cancellation_time_ns": None},
     "metrics": {"output_token_count": {"value": 100, "unit": "tokens"},
                 "output_sequence_length": {"value": 100, "unit": "tokens"},
                 "request_latency": {"value": 300.0, "unit": "ms"}},
     "error": None},
    {"metadata": {"session_num": 1, "request_start_ns": 1759813207834665363,
                  "request_end_ns": 1759813209834665363},
     "metrics": {"output_token_count": {"value": 900, "unit": "tokens"},
                 "reasoning_token_count": {"value": 100, "unit": "tokens"},
                 "output_sequence_length": {"value": 1000, "unit": "tokens"}},
     "error": None},
    {"metadata": {"session_num": 2, "request_start_ns": 1759813209839715363,
                  "request_end_ns": 1759813213839715363},
     "metrics": {"output_token_count": {"value": 2000, "unit": "tokens"}},
     "error": None},
    {"metadata": {"session_num": 3, "request_start_ns": 1759813213848415363,
                  "request_ack_ns": None, "request_end_ns": 1759813213849040363,
                  "was_cancelled": True, "cancellation_time_ns": 1759813213849040363},
     "metrics": {"error_isl": {"value": 550, "unit": "tokens"}},
     "error": {"code": 499, "type": "RequestCancellationError",
               "message": "Request was cancelled after 0.000 seconds"}},
    {"metadata": {"session_num": 4, "request_start_ns": 1759813213850440363,
                  "request_end_ns": 1759813214350440363},
     "metrics": {"output_sequence_length": {"value": 50, "unit": "tokens"}},
     "error": None},
]


def _write_jsonl(path, objects, blank_after=None):
    lines = [json.dumps(o) for o in objects]
    if blank_after is not None:
        lines.insert(blank_after, "")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_read_aiperf_records_and_fit(tmp_path):
    path = tmp_path / "profile_export.jsonl"
    _write_jsonl(path, AIPERF_LINES, blank_after=2)  # a blank line 3 is skipped
    records = read_aiperf_records(path)
    assert [r["line"] for r in records] == [1, 2, 4, 5, 6]
    assert [r["output_tokens"] for r in records] == [100, 1000, 2000, None, 50]
    assert [r["error"] for r in records] == [None, None, None, "RequestCancellationError",
                                             None]
    assert records[0]["request_start_ns"] == 1759813207532900363
    assert records[0]["start_ms"] == 0.0
    assert records[0]["end_ms"] == pytest.approx(300.0, abs=1e-9)
    assert records[1]["start_ms"] == pytest.approx(301.765, abs=1e-9)
    assert records[2]["start_ms"] == pytest.approx(2306.815, abs=1e-9)

    fit = fit_response_overhead(records)
    assert fit.n == 3  # records 1-3; the failed one and the last have no fitted gap
    assert fit.base_ms == pytest.approx(1.40, abs=1e-9)
    assert fit.per_output_token_us == pytest.approx(3.65, abs=1e-9)
    assert fit.rmse_ms == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("mutate, line, field", [
    (lambda objs: objs[2]["metadata"].pop("request_end_ns"), 3, "metadata.request_end_ns"),
    (lambda objs: objs[1]["metadata"].pop("request_start_ns"), 2,
     "metadata.request_start_ns"),
    (lambda objs: objs[3]["metadata"].pop("request_start_ns"), 4,
     "metadata.request_start_ns"),
    (lambda objs: objs[0]["metrics"].clear(), 1, "metrics.output_sequence_length"),
    (lambda objs: objs.__setitem__(4, {"metrics": {}, "error": None}), 5, "metadata"),
    (lambda objs: objs[0]["metadata"].__setitem__("request_end_ns", "soon"), 1,
     "metadata.request_end_ns"),
    (lambda objs: objs[2]["metrics"]["output_token_count"].__setitem__("value", -3), 3,
     "metrics.output_token_count"),
    (lambda objs: objs[1]["metadata"].__setitem__("request_start_ns", -5), 2,
     "metadata.request_start_ns"),
    (lambda objs: objs[1]["metadata"].__setitem__("request_end_ns", objs[1]["metadata"]["request_start_ns"] - 1),
     2, "metadata.request_end_ns"),
])
def test_read_aiperf_records_missing_field(tmp_path, mutate, line, field):
    objects = json.loads(json.dumps(AIPERF_LINES))
    mutate(objects)
    path = tmp_path / "profile_export.jsonl"
    _write_jsonl(path, objects)
    with pytest.raises(DataError) as info:
        read_aiperf_records(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.file == str(path) and err.line == line and err.field == field
    assert str(err).startswith(f"{path}:{line}: ")
    assert field in str(err)


def test_read_aiperf_records_bad_files(tmp_path):
    path = tmp_path / "profile_export.jsonl"
    path.write_text(json.dumps(AIPERF_LINES[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r":2: not valid JSON"):
        read_aiperf_records(path)
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(DataError, match=r":1: expected a JSON object"):
        read_aiperf_records(path)
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="no AIPerf records"):
        read_aiperf_records(path)


def test_read_aiperf_records_refuses_a_repeated_key(tmp_path):
    # JSON leaves which of two equal keys counts undefined (Python's json keeps the last):
    # the line, the dotted path of the key, at any depth
    path = tmp_path / "profile_export.jsonl"
    good = json.dumps(AIPERF_LINES[0])
    start = AIPERF_LINES[0]["metadata"]["request_start_ns"]
    for body, field in [
        (good.replace('"request_start_ns": ', f'"request_start_ns": {start - 1}, "request_start_ns": ', 1),
         "metadata.request_start_ns"),
        ('{"error": null, ' + good[1:-1] + ', "error": {"type": "x"}}', "error"),
        ('{"metadata": {"request_start_ns": 1, "request_end_ns": 2}, "error": {"type": "a", "type": "b"}}',
         "error.type"),
    ]:
        path.write_text(good + "\n" + body + "\n", encoding="utf-8")
        with pytest.raises(DataError) as info:
            read_aiperf_records(path)
        assert (info.value.line, info.value.field) == (2, field)
        assert str(info.value) == f"{path}:2: key {field!r} given twice: JSON leaves which value " \
                                  "counts undefined; keep one"
    # the same key in two different objects is no repetition
    path.write_text('{"metadata": {"request_start_ns": 1, "request_end_ns": 2, "x": {"type": 1}}, '
                    '"error": {"type": "timeout"}}\n', encoding="utf-8")
    assert read_aiperf_records(path)[0]["error"] == "timeout"


def test_read_aiperf_records_damaged_files(tmp_path):
    """Every reader ends in a DataError naming the file and line, never a
    traceback or a line held whole in memory."""
    path = tmp_path / "profile_export.jsonl"
    good = json.dumps(AIPERF_LINES[0]) + "\n"
    for body, line, message in [
        (good + "[" * 100_000 + "]" * 100_000 + "\n", 2, "not valid JSON (nested too deeply)"),
        (good + '{"metadata": {"request_start_ns": ' + "9" * 5000 + "}}\n", 2,
         "not valid JSON (Exceeds the limit (4300 digits) for integer string conversion)"),
        (good + '{"a": "\xff\xfe"}\n', 2, "not UTF-8 text (byte 8 of the line)"),
        # a line cut inside a string (json's msg "Invalid control character at" ends in "at")
        (good + '{"a": "x\ty"}\n', 2, "not valid JSON (Invalid control character at column 9)"),
        (good + '{"a": 1,}\n', 2, "not valid JSON (Expecting property name enclosed in double quotes at column 9)"),
        (good + '{"pad": "' + "x" * (16 << 20) + '"}\n', 2, f"line longer than {16 << 20} bytes (16 MiB)"),
    ]:
        path.write_bytes(body.encode("latin-1") if "\xff" in body else body.encode())
        with pytest.raises(DataError) as info:
            read_aiperf_records(path)
        assert str(info.value) == f"{path}:{line}: {message}"
    # a byte order mark, as some tools write, and a line of exactly MAX_LINE_BYTES
    path.write_bytes(b"\xef\xbb\xbf" + good.encode())
    assert len(read_aiperf_records(path)) == 1
    pad = {**AIPERF_LINES[0], "pad": ""}
    pad["pad"] = "x" * ((16 << 20) - len(json.dumps(pad)))
    path.write_text(json.dumps(pad) + "\n", encoding="utf-8")
    assert len(json.dumps(pad)) == 16 << 20
    assert len(read_aiperf_records(path)) == 1
