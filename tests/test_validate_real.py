"""Validation against real runs (scripts/validate_real.py, aisimulate.tools.real)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from aisimulate.tools import accuracy, real
from aisimulate.tools.real import apex, llmservingsim

REPO = Path(__file__).resolve().parent.parent
REAL = accuracy.SHARED_DATA / "real"
needs_real = pytest.mark.skipif(not (REAL / "llmservingsim").is_dir(), reason="shared real runs not found")


def test_async_scheduling_by_vllm_version():
    # async scheduling is vLLM's default from 0.14.0
    assert [real.async_default(v) for v in ("0.6.0", "0.12.0", "0.13.2", "0.14.0", "0.19.0", "1.0")] == \
        [False, False, False, True, True, True]
    assert real.version_tuple("0.14.0rc1") == (0, 14, 0)
    # as the core reads engine.backend_version: a v prefix, and a build from main (an
    # image tag such as InferenceX's nightly-dev-…-75c2eef) after every release
    assert real.version_tuple("v0.20.0") == (0, 20, 0)
    assert real.version_tuple("main") > real.version_tuple("99.0") and real.async_default("nightly-75c2eef")
    with pytest.raises(ValueError, match="MAJOR.MINOR"):
        real.version_tuple("dev")


def test_measured_metrics_by_hand():
    # three requests; request 0 sets the clock mapping (arrival 100.0 s wall ↔ 5.0 s
    # monotonic). Request 1 arrives 0.5 s later (5.5 s mono), first token 5.6, last 6.6
    # with 11 tokens: TTFT 100 ms, E2E 1100 ms, TPOT 1000/10 = 100 ms. Request 0: TTFT
    # 200 ms (5.2 − 5.0), E2E 400 ms, TPOT (5.4 − 5.2)/3 = 66.67 ms. Request 2: 1 output
    # token (no TPOT), arrives 1.0 s later (6.0), first = last = 6.3: TTFT = E2E = 300.
    reqs = [
        {"request_id": "a", "output_toks": 4, "arrival_time": 100.0, "queued_ts": 5.0, "first_token_ts": 5.2, "last_token_ts": 5.4},
        {"request_id": "b", "output_toks": 11, "arrival_time": 100.5, "queued_ts": 5.52, "first_token_ts": 5.6, "last_token_ts": 6.6},
        {"request_id": "c", "output_toks": 1, "arrival_time": 101.0, "queued_ts": 6.01, "first_token_ts": 6.3, "last_token_ts": 6.3},
    ]
    m = llmservingsim.measured_metrics(reqs)
    assert m["ttft_mean"] == pytest.approx(200.0)       # (200 + 100 + 300) / 3
    assert m["ttft_p50"] == pytest.approx(200.0)
    assert m["ttft_p90"] == pytest.approx(280.0)        # 200 + 0.8·(300 − 200)
    assert m["e2e_mean"] == pytest.approx(600.0)        # (400 + 1100 + 300) / 3
    assert m["tpot_mean"] == pytest.approx((200 / 3 + 100) / 2)
    assert m["throughput_rps"] == pytest.approx(3 / 1.6)  # 3 requests over 6.6 − 5.0 s
    with pytest.raises(ValueError, match="missing timestamps"):
        llmservingsim.measured_metrics([dict(reqs[0], first_token_ts=None)])


def test_apex_deployments_and_trace(tmp_path):
    assert apex.deployment_args("llama", "8TP") == {
        "tp": 8, "max_model_len": 131072, "max_num_batched_tokens": 512, "gpu_memory_utilization": 0.97,
        "custom_all_reduce": True}
    assert apex.deployment_args("llama", "4DP2TP_3")["max_num_batched_tokens"] == 24272
    m = apex.deployment_args("mistral", "4DP2TP_fp8_0")
    assert (m["tp"], m["max_model_len"], m["gpu_memory_utilization"], m["custom_all_reduce"]) == (2, 20560, 0.85, False)
    assert apex.deployment_args("mistral", "2DP4TP_fp8_1")["tp"] == 4
    with pytest.raises(ValueError, match="unknown apex_plus deployment"):
        apex.deployment_args("llama", "3PP")
    src = tmp_path / "r.csv"
    src.write_text("RequestID,StartTimeOffset_ns,ContextTokens_trace,GeneratedTokens_trace,prompt_tokens_vllm,completion_tokens_vllm\n"
                   "a,1500000,10,20,12,7\nb,2000000000,5,5,5,1\n")
    out = tmp_path / "t.jsonl"
    assert apex.write_trace(src, out) == 2
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"timestamp": 1.5, "input_length": 12, "output_length": 7},
                    {"timestamp": 2000.0, "input_length": 5, "output_length": 1}]
    src.write_text("RequestID,StartTimeOffset_ns,prompt_tokens_vllm,completion_tokens_vllm\na,x,1,1\n")
    with pytest.raises(ValueError, match=r"r\.csv:2"):
        apex.write_trace(src, out)


@needs_real
def test_llmservingsim_runs_match_the_headline_numbers():
    # derived/headline.csv (anchor B rows, "frontend_arrival"), computed by the data's own script
    runs = {r.name: r for r in real.llmservingsim_runs(REAL / "llmservingsim", accuracy.DEFAULT_MODEL_CONFIGS)}
    with open(REAL / "llmservingsim" / "derived" / "headline.csv", newline="") as f:
        heads = {row["run"]: row for row in csv.DictReader(f) if row["anchor"] == "frontend_arrival"}
    assert set(runs) == set(heads)
    for name, h in heads.items():
        m = runs[name].measured
        assert m["ttft_mean"] == pytest.approx(float(h["ttft_mean"]), abs=0.05)
        assert m["ttft_p90"] == pytest.approx(float(h["ttft_p90"]), abs=0.05)
        assert m["tpot_mean"] == pytest.approx(float(h["tpot_mean"]), abs=0.005)
        assert m["e2e_mean"] == pytest.approx(float(h["e2e_mean"]), abs=0.05)
        assert m["throughput_rps"] == pytest.approx(float(h["req_per_s"]), abs=0.0005)
    pro = runs["RTXPRO6000/Qwen3-32B"]
    spec = pro.spec_for("aic", "/db")
    assert spec["engine"]["scheduler"] == {"max_num_seqs": 128, "max_num_batched_tokens": 2048, "block_size": 16,
                                           "enable_prefix_caching": True, "async_scheduling": True}
    assert spec["engine"]["perf"] == {"source": "aic", "database": "/db", "backend_version": "0.19.0"}
    assert (pro.system, pro.tp, pro.exact_tables) == ("rtx_pro_6000_server", 2, True)
    rtx4090 = runs["RTX4090/Llama-3.1-8B"].spec_for("roofline", "/db")
    assert rtx4090["engine"]["scheduler"]["num_gpu_blocks"] == 2588  # vLLM's own count of the run
    assert rtx4090["engine"]["system"] == "l40s" and not runs["RTX4090/Llama-3.1-8B"].exact_tables


@needs_real
def test_moe_run_is_simulated_with_its_layout():
    # Qwen3-30B-A3B on the RTX PRO 6000: vLLM launched with data_parallel_size 2 and
    # enable_expert_parallel; the spec keeps both and the run is predicted
    [run] = [r for r in real.llmservingsim_runs(REAL / "llmservingsim", accuracy.DEFAULT_MODEL_CONFIGS)
             if "A3B" in r.name]
    assert run.spec_for("roofline", "/db")["engine"]["workers"]["aggregated"] == {
        "count": 1, "tp": 1, "data_parallel_size": 2, "enable_expert_parallel": True}
    [res] = real.evaluate([run], ["roofline"], accuracy.DEFAULT_DATABASE)
    assert res.status == "ok", res.reason


def test_script_rejects_a_missing_data_folder(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "validate_real.py"), "--data", str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "--data" in proc.stderr and "folder not found" in proc.stderr
