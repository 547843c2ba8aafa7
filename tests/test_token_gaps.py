"""Chunk times (``replay(token_gaps=True)``, ``--token-gaps``): the AIPerf export's
per-record ``inter_chunk_latency`` worked by hand, read back, and compared."""

import json

import pytest

import aisimulate
from aisimulate.io.aiperf import read_profile_export
from conftest import LINEAR_PERF, run_cli


def _spec():
    # three requests one after another (one client), 100 prompt and 4 output tokens:
    # pass ms = 2.0 + 0.01 × prompt tokens + 0.1 × decoding requests, so each request's
    # prefill pass is 2 + 1 = 3.0 ms (its first token) and its three decode passes
    # 2 + 0.1 = 2.1 ms: chunks at 3.0, 5.1, 7.2, 9.3 ms after its send, the next one
    # sent at its end
    return {"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "perf": dict(LINEAR_PERF),
                       "scheduler": {"num_gpu_blocks": 1000, "max_model_len": 16000}},
            "traffic": {"source": {"type": "synthetic", "num_requests": 3, "isl": 100, "osl": 4},
                        "load": {"mode": "concurrency", "concurrency": 1}}}


def test_chunk_times_by_hand_and_the_aiperf_round_trip(tmp_path):
    rep = aisimulate.replay(_spec(), token_gaps=True, progress=False)
    ct = rep.chunk_times
    assert list(ct["count"]) == [4, 4, 4]
    first = ct["times"][ct["start"][0]:ct["start"][0] + 4] / 1e6
    assert list(first) == pytest.approx([3.0, 5.1, 7.2, 9.3])
    second = ct["times"][ct["start"][1]:ct["start"][1] + 4] / 1e6
    assert list(second) == pytest.approx([9.3 + 3.0, 9.3 + 5.1, 9.3 + 7.2, 9.3 + 9.3])
    # the same report without them
    plain = aisimulate.replay(_spec(), progress=False)
    assert plain.chunk_times is None and plain.to_json() == rep.to_json()
    rep.save(tmp_path / "out", exports=["aiperf"])
    lines = (tmp_path / "out" / "profile_export.jsonl").read_text().splitlines()
    icl = [json.loads(x)["metrics"]["inter_chunk_latency"] for x in lines]
    assert icl == [{"value": [2.1, 2.1, 2.1], "unit": "ms"}] * 3
    # AIPerf's reader (ours) takes them back as each record's gaps
    back = read_profile_export(tmp_path / "out" / "profile_export.jsonl")
    assert [r["icl_ms"] for r in back] == [[2.1, 2.1, 2.1]] * 3
    # and compare scores the simulated gaps against them: the same run, no error
    c = aisimulate.compare(_spec(), tmp_path / "out" / "profile_export.jsonl", progress=False)
    itl = c.metrics.loc["itl_ms"]
    assert itl["n"] == 9 and itl["predicted_mean"] == pytest.approx(2.1)
    assert itl["mape_pct"] == pytest.approx(0, abs=1e-9)
    # profile_export_aiperf.json pools them, as AIPerf's record metric: 9 gaps of 2.1 ms
    doc = json.loads((tmp_path / "out" / "profile_export_aiperf.json").read_text())
    block = doc["inter_chunk_latency"]
    assert block["unit"] == "ms" and block["count"] == 9
    assert block["avg"] == pytest.approx(2.1) and block["sum"] == pytest.approx(18.9)
    assert "Inter Chunk Latency (ms)" in (tmp_path / "out" / "profile_export_aiperf.csv").read_text()
    # without chunk times the export has none (as before)
    plain.save(tmp_path / "plain", exports=["aiperf"])
    assert "inter_chunk_latency" not in (tmp_path / "plain" / "profile_export.jsonl").read_text()
    assert "inter_chunk_latency" not in (tmp_path / "plain" / "profile_export_aiperf.json").read_text()


def test_token_gaps_refusals():
    with pytest.raises(TypeError, match="token_gaps"):
        aisimulate.replay(_spec(), token_gaps="yes", progress=False)
    with pytest.raises(ValueError, match="token_gaps holds the chunk times"):
        aisimulate.replay(_spec(), token_gaps=True, output_dir="x", progress=False)


def test_cli_token_gaps_export(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_spec()))
    out = tmp_path / "out"
    p = run_cli("replay", str(path), "--token-gaps", "--output-dir", str(out), "--export", "aiperf", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    first = json.loads((out / "profile_export.jsonl").read_text().splitlines()[0])
    assert first["metrics"]["inter_chunk_latency"] == {"value": [2.1, 2.1, 2.1], "unit": "ms"}
    assert (out / "requests.parquet").exists() and (out / "prediction.json").exists()


def test_cli_token_gaps_needs_the_aiperf_export(tmp_path):
    # the chunk times are written by --export aiperf alone: without it --token-gaps would
    # only slow the replay down, so it is refused as --export is without --output-dir
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_spec()))
    for extra in ((), ("--output-dir", str(tmp_path / "a")),
                  ("--output-dir", str(tmp_path / "b"), "--export", "vllm")):
        p = run_cli("replay", str(path), "--token-gaps", *extra, cwd=tmp_path)
        assert p.returncode == 2, (extra, p.stderr)
        assert "--token-gaps" in p.stderr and "--export aiperf" in p.stderr, p.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_estimate_memory_counts_the_chunk_times():
    # 3 requests of 4 output tokens: 3 × (8 × 4 + 12) = 132 bytes more
    plain = aisimulate.estimate_memory(_spec())
    with_gaps = aisimulate.estimate_memory(_spec(), token_gaps=True)
    assert with_gaps["records_bytes"] - plain["records_bytes"] == 132
    assert with_gaps["total_bytes"] - plain["total_bytes"] == 132


def test_pooled_chunk_gaps_of_uneven_records():
    import numpy as np

    from aisimulate.io.exports import _chunk_gaps_ms

    # record 0: chunks at 0, 10, 30 ms (gaps 10, 20); record 1: one chunk (none);
    # record 2: 200, 205 ms (gap 5), its times stored before record 1's
    chunks = {"start": np.array([0, 5, 3]), "count": np.array([3, 1, 2], dtype=np.int32),
              "times": np.array([0, 10, 30, 200, 205, 100]) * 1_000_000}
    assert list(_chunk_gaps_ms(chunks, np.array([True, True, True]))) == [10.0, 20.0, 5.0]
    assert list(_chunk_gaps_ms(chunks, np.array([False, True, True]))) == [5.0]
