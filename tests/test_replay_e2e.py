"""End to end through the Python API: worked example 1, summary statistics, determinism."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import aisimulate
from aisimulate import ReplayReport
from aisimulate.report import REQUEST_FIELDS
from conftest import EXAMPLE1_ROWS, LINEAR_PERF, example1_spec, write_mooncake


def approx(x):
    return pytest.approx(x, abs=1e-9)


@pytest.fixture
def example1(tmp_path) -> ReplayReport:
    trace = write_mooncake(tmp_path / "example1.jsonl", EXAMPLE1_ROWS)
    return aisimulate.replay(example1_spec(trace))


def test_worked_example_1(example1):
    # docs/design.md, worked example 1, pass by pass (linear model: 2 ms +
    # 0.01 ms/prompt token + 0.1 ms/decoding request; 512-token budget):
    #   P1  0     → 7.12   r1 prefill 512             2 + 5.12
    #   P2  7.12  → 14.00  r1 prefill 488, token #1   2 + 4.88
    #   P3  14.00 → 17.10  r1 decode + r2 prefill 100 2 + 0.10 + 1.00  (r1 #2, r2 #1)
    #   P4  17.10 → 19.30  r1 decode + r2 decode      2 + 0.20         (r1 #3, r2 #2)
    rep = example1
    r1, r2 = rep.requests
    assert (r1["status"], r2["status"]) == ("completed", "completed")
    assert (r1["input_tokens"], r1["output_tokens"]) == (1000, 3)
    assert (r2["input_tokens"], r2["output_tokens"]) == (100, 2)
    assert r1["send_ms"] == approx(0.0) and r2["send_ms"] == approx(10.0)
    assert r1["ttft_ms"] == approx(14.00)
    assert r1["e2e_ms"] == approx(19.30)
    assert r1["tpot_ms"] == approx((19.30 - 14.00) / 2)   # 2.65
    assert r2["ttft_ms"] == approx(17.10 - 10.0)           # 7.10
    assert r2["e2e_ms"] == approx(19.30 - 10.0)            # 9.30
    assert r2["tpot_ms"] == approx(2.20)
    assert r1["cached_tokens"] == 0 and r2["cached_tokens"] == 0
    s = rep.summary
    assert s["duration_ms"] == approx(19.30)
    assert (s["completed"], s["rejected"], s["failed"], s["canceled"]) == (2, 0, 0, 0)
    # 2 requests and 5 output tokens in 19.3 ms; 1 GPU for 19.3 ms.
    assert s["request_throughput_rps"] == pytest.approx(2 / 0.0193, rel=1e-12)
    assert s["output_token_throughput_tps"] == pytest.approx(5 / 0.0193, rel=1e-12)
    assert s["gpu_hours"] == pytest.approx(0.0193 / 3600, rel=1e-12)
    # ITL pool: r1 gaps [3.10, 2.20], r2 gap [2.20] → Σ(output − 1) = 2 + 1 = 3 values.
    itl = [3.10, 2.20, 2.20]
    assert s["itl_ms"]["mean"] == approx(np.mean(itl))
    assert s["itl_ms"]["min"] == approx(2.20) and s["itl_ms"]["max"] == approx(3.10)
    for p in (50, 90, 95, 99):
        assert s["itl_ms"][f"p{p}"] == approx(np.percentile(itl, p, method="linear"))


def test_records_follow_section8(example1):
    for r in example1.requests:
        assert tuple(r)[:len(REQUEST_FIELDS)] == REQUEST_FIELDS
        assert r["ttft_ms"] == approx(r["first_token_ms"] - r["send_ms"])
        assert r["e2e_ms"] == approx(r["end_ms"] - r["send_ms"])
        assert r["arrival_ms"] >= r["send_ms"]
        assert r["release_ms"] >= r["end_ms"]


SYNTH_N = 200
SYNTH_OSL = (2, 40)


SYNTH_SPEC = {
    "engine": {
        "model": "Qwen/Qwen3-32B",
        "system": "h100_sxm",
        "perf": dict(LINEAR_PERF),
        "workers": {"aggregated": {"count": 2, "tp": 2}},
        "scheduler": {"max_num_seqs": 8, "max_num_batched_tokens": 1024,
                      "num_gpu_blocks": 2000, "max_model_len": 32000},
    },
    "traffic": {
        "source": {"type": "synthetic", "num_requests": SYNTH_N,
                   "isl": {"kind": "uniform", "min": 64, "max": 512},
                   "osl": {"kind": "uniform", "min": SYNTH_OSL[0], "max": SYNTH_OSL[1]}},
        "load": {"mode": "rate", "rate_rps": 200.0, "arrival": "poisson"},
    },
    "execution": {"seed": 7},
}


@pytest.fixture(scope="module")
def synthetic() -> ReplayReport:
    return aisimulate.replay(SYNTH_SPEC)


def test_synthetic_counts_and_lengths(synthetic):
    rep = synthetic
    assert len(rep.requests) == SYNTH_N
    assert [r["request_id"] for r in rep.requests] == sorted(r["request_id"] for r in rep.requests)
    s = rep.summary
    assert s["completed"] + s["rejected"] + s["failed"] + s["canceled"] == SYNTH_N
    done = [r for r in rep.requests if r["status"] == "completed"]
    assert len(done) == s["completed"] > 0
    assert all(SYNTH_OSL[0] <= r["output_tokens"] <= SYNTH_OSL[1] for r in done)


def test_summary_statistics_match_numpy(synthetic):
    s = synthetic.summary
    done = [r for r in synthetic.requests if r["status"] == "completed"]
    for metric in ("ttft_ms", "e2e_ms", "tpot_ms"):
        xs = np.array([r[metric] for r in done if r[metric] is not None], dtype=float)
        assert len(xs) > 100
        stats = s[metric]
        assert stats["mean"] == pytest.approx(xs.mean(), rel=1e-9)
        assert stats["std"] == pytest.approx(xs.std(ddof=0), rel=1e-9, abs=1e-9)
        assert stats["min"] == approx(xs.min())
        assert stats["max"] == approx(xs.max())
        for p in (50, 90, 95, 99):
            assert stats[f"p{p}"] == pytest.approx(
                np.percentile(xs, p, method="linear"), rel=1e-12, abs=1e-9), (metric, p)


def test_summary_throughputs_from_records(synthetic):
    s = synthetic.summary
    done = [r for r in synthetic.requests if r["status"] == "completed"]
    duration_s = s["duration_ms"] / 1000
    # AIPerf's benchmark duration: last response received − first request sent (a
    # Poisson load's first send is after a random gap, outside the window)
    assert s["duration_ms"] == approx(max(r["end_ms"] for r in synthetic.requests)
                                      - min(r["send_ms"] for r in synthetic.requests))
    assert s["request_throughput_rps"] == pytest.approx(len(done) / duration_s, rel=1e-12)
    out_tokens = sum(r["output_tokens"] for r in done)
    assert s["output_token_throughput_tps"] == pytest.approx(out_tokens / duration_s, rel=1e-12)
    assert s["gpu_hours"] == pytest.approx(2 * 2 * duration_s / 3600, rel=1e-12)  # 2 workers × TP2


def test_itl_pool_size_and_bounds(synthetic):
    # Per-request ITLs are not in the report, but the pool is pinned by the TPOTs: a
    # request's gaps telescope, Σ gaps = end − first_token = (output − 1) × tpot. So if
    # the pool holds exactly Σ(output − 1) values, its mean is
    # Σ (output − 1)·tpot / Σ (output − 1); a pool of any other size gives another mean.
    # And min(pool) ≤ every TPOT (a mean of gaps) ≤ max(pool).
    s = synthetic.summary
    done = [r for r in synthetic.requests if r["status"] == "completed" and r["tpot_ms"] is not None]
    weights = np.array([r["output_tokens"] - 1 for r in done], dtype=float)
    tpots = np.array([r["tpot_ms"] for r in done])
    assert s["itl_ms"]["mean"] == pytest.approx(float((weights * tpots).sum() / weights.sum()),
                                                rel=1e-9)
    assert s["itl_ms"]["min"] <= tpots.min() + 1e-9
    assert s["itl_ms"]["max"] >= tpots.max() - 1e-9


def test_save_is_byte_deterministic(tmp_path, synthetic):
    again = aisimulate.replay(SYNTH_SPEC)
    synthetic.save(tmp_path / "a", formats=("parquet", "csv", "jsonl"))
    again.save(tmp_path / "b", formats=("parquet", "csv", "jsonl"))
    for name in ("prediction.json", "requests.jsonl", "requests.csv", "requests.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_two_runs_of_one_spec_are_identical(tmp_path):
    trace = write_mooncake(tmp_path / "example1.jsonl", EXAMPLE1_ROWS)
    spec = aisimulate.load_config(example1_spec(trace))
    first, second = aisimulate.replay(spec), aisimulate.replay(spec)
    first.save(tmp_path / "1", formats=("parquet", "jsonl"))
    second.save(tmp_path / "2", formats=("parquet", "jsonl"))
    for name in ("prediction.json", "requests.jsonl", "requests.parquet"):
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes()


def test_to_pandas_shape(synthetic):
    df = synthetic.to_pandas()
    assert df.shape == (SYNTH_N, len(REQUEST_FIELDS))
    assert list(df.columns) == list(REQUEST_FIELDS)
    done = df[df["status"] == "completed"]
    assert done["ttft_ms"].mean() == pytest.approx(synthetic.summary["ttft_ms"]["mean"], rel=1e-9)


def test_table_renders_without_nan(synthetic):
    text = synthetic.table()
    assert "nan" not in text.lower()
    assert not math.isnan(synthetic.summary["ttft_ms"]["p99"])


def test_replay_accepts_a_path(tmp_path):
    write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS)
    spec = example1_spec(Path("t.jsonl"))
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    rep = aisimulate.replay(tmp_path / "r.yaml")
    assert rep.summary["duration_ms"] == approx(19.30)


def test_data_error_names_file_and_line(tmp_path):
    rows = [dict(EXAMPLE1_ROWS[0]), dict(EXAMPLE1_ROWS[1])]
    del rows[1]["output_length"]
    trace = write_mooncake(tmp_path / "bad.jsonl", rows)
    with pytest.raises(aisimulate.DataError) as err:
        aisimulate.replay(example1_spec(trace))
    assert err.value.file == str(trace)
    assert err.value.line == 2
    assert str(err.value).startswith(f"{trace}:2: ")
    assert "output_length" in str(err.value)
