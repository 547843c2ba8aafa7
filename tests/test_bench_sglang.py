"""aisimulate bench -- python -m sglang.bench_serving …: SGLang's load generator."""

from __future__ import annotations

import json

import numpy as np
import pytest

import aisimulate
from aisimulate import cli
from aisimulate.cli.bench import _BenchUsageError as BenchUsageError, parse_command
from aisimulate.cli.bench_sglang import peak_concurrency

ENGINE = "engine: {model: Qwen/Qwen3-8B, system: h100_sxm, backend_version: 0.15.1}\n"

# as SGLang's docs and CI write it (python/sglang/bench_serving.py's options)
SGLANG = ("python3 -m sglang.bench_serving --backend sglang --host 127.0.0.1 --port 30000 --model Qwen/Qwen3-8B "
          "--dataset-name random --random-input-len 512 --random-output-len 64 --random-range-ratio 1 "
          "--num-prompts 24 --max-concurrency 4 --warmup-requests 3 --seed 7 --output-file /tmp/x.jsonl")


def run_cli(capsys, tmp_path, command, *extra):
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    code = cli.main(["bench", str(cfg), "-q", *extra, "--", *command.split()])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_parse_sglangs_command_line():
    b, run = parse_command([SGLANG])
    assert b == {"tool": "sglang_bench_serving", "dataset_name": "random", "random_input_len": 512,
                 "random_output_len": 64, "random_range_ratio": 1.0, "num_prompts": 24, "max_concurrency": 4,
                 "warmup_requests": 3}
    assert run == {"seed": 7}
    # python -m, a path to the file, random-ids, --request-rate inf (its default) and a rate
    b, _ = parse_command(["python", "-m", "sglang.bench_serving", "--dataset-name", "random-ids", "--request-rate", "inf"])
    assert b == {"tool": "sglang_bench_serving", "dataset_name": "random-ids"}
    b, _ = parse_command(["python3", "sglang/python/sglang/bench_serving.py", "--dataset-name", "random",
                          "--request-rate", "2.5"])
    assert b["request_rate"] == 2.5


@pytest.mark.parametrize("options, match", [
    ("", "--dataset-name sharegpt: not simulated .*the default dataset"),
    ("--dataset-name generated-shared-prefix", "generated-shared-prefix: not simulated"),
    ("--dataset-name random --disable-ignore-eos", "--disable-ignore-eos: not simulated .*end-of-sequence"),
    ("--dataset-name random --profile", "--profile: not simulated"),
    ("--dataset-name random --lora-name a b", "--lora-name: not simulated"),
    ("--dataset-name random --flush-cache", "--flush-cache: not simulated"),
    ("--dataset-name random --extra-request-body {}", "--extra-request-body: not simulated"),
    ("--dataset-name random --gsp-num-groups 4", "--gsp-num-groups: not simulated"),
    ("--dataset-name random --num-warmups 2", "--num-warmups: not an option of sglang.bench_serving .*--warmup-requests"),
    ("--dataset-name random --burstiness 0.5", "--burstiness: not an option"),
    ("--dataset-name random --backend gserver", "--backend gserver: not simulated"),
    ("--dataset-name random --bogus 1", "--bogus: not simulated"),
])
def test_what_cannot_be_honoured_is_named(options, match):
    with pytest.raises(BenchUsageError, match=match):
        parse_command(["python3", "-m", "sglang.bench_serving", *options.split()])


def test_bench_prints_sglangs_result_names_and_excludes_the_warmup(capsys, tmp_path):
    code, out, err = run_cli(capsys, tmp_path, SGLANG)
    assert code == 0, err
    for key in ("mean_ttft_ms", "median_e2e_latency_ms", "p99_tpot_ms", "p95_itl_ms", "output_throughput"):
        assert key in out
    assert "3 warm-up request(s)" in out
    code, out, err = run_cli(capsys, tmp_path, SGLANG, "--format", "json")
    doc = json.loads(out)
    res = doc["result"]
    assert doc["tool"] == "sglang_bench_serving"
    # GIVEN 3 warm-ups of at most 32 tokens and 24 measured requests of exactly 64 (range ratio 1:
    # [int(64·1), 64]), THEN no metric counts a warm-up: 24 completed, 24 × 64 output tokens
    assert res["completed"] == 24 and res["total_output_tokens"] == 24 * 64 and res["total_input_tokens"] == 24 * 512
    b = parse_command([SGLANG])[0]
    spec = aisimulate.load_config({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm",
                                              "backend_version": "0.15.1"},
                                   "traffic": {"benchmark": b}, "execution": {"seed": 7}})
    rep = aisimulate.replay(spec, progress=False)
    assert rep.metadata["warmup_requests"] == 3 and len(rep.requests) == 24
    assert all(r["output_tokens"] == 64 for r in rep.requests)  # a warm-up copy asks 32
    e2e = np.array([r["e2e_ms"] for r in rep.requests])
    ttft = np.array([r["ttft_ms"] for r in rep.requests])
    # its statistics: np.mean / np.median / np.percentile over the measured requests only
    assert res["mean_e2e_latency_ms"] == pytest.approx(e2e.mean())
    assert res["median_e2e_latency_ms"] == pytest.approx(np.median(e2e))
    assert res["p90_e2e_latency_ms"] == pytest.approx(np.percentile(e2e, 90))
    assert res["p99_ttft_ms"] == pytest.approx(np.percentile(ttft, 99))
    # the window: from the first measured send to the last response
    start = min(r["send_ms"] for r in rep.requests)
    end = max(r["send_ms"] + r["e2e_ms"] for r in rep.requests)
    assert res["duration"] == pytest.approx((end - start) / 1000, rel=1e-6)
    assert res["output_throughput"] == pytest.approx(24 * 64 / res["duration"])
    assert res["concurrency"] == pytest.approx(e2e.sum() / 1000 / res["duration"])


def test_its_tpot_leaves_out_one_token_responses(capsys, tmp_path):
    # --random-output-len 2 with the default range ratio 0: outputs uniform in [1, 2]. SGLang's TPOT of
    # a request is (latency − ttft) / (output_len − 1), kept only for output_len > 1
    code, out, err = run_cli(capsys, tmp_path, "python3 -m sglang.bench_serving --dataset-name random "
                             "--random-input-len 128 --random-output-len 2 --num-prompts 40 --max-concurrency 4",
                             "--format", "json")
    assert code == 0, err
    res = json.loads(out)["result"]
    spec = aisimulate.load_config({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm",
                                              "backend_version": "0.15.1"},
                                   "traffic": {"benchmark": parse_command(
                                       ["python3", "-m", "sglang.bench_serving", "--dataset-name", "random",
                                        "--random-input-len", "128", "--random-output-len", "2",
                                        "--num-prompts", "40", "--max-concurrency", "4"])[0]}})
    rep = aisimulate.replay(spec, progress=False)
    outs = {r["output_tokens"] for r in rep.requests}
    assert outs == {1, 2}  # both lengths drawn: [max(int(2·0), 1), 2]
    tpots = [(r["e2e_ms"] - r["ttft_ms"]) / (r["output_tokens"] - 1) for r in rep.requests if r["output_tokens"] > 1]
    assert res["mean_tpot_ms"] == pytest.approx(np.mean(tpots), rel=1e-6)
    assert res["median_tpot_ms"] == pytest.approx(np.median(tpots), rel=1e-6)


def test_peak_concurrency_as_its_one_second_buckets():
    # worked by hand: requests [0, 0.5] s, [0.2, 1.4] s and [1.9, 2.1] s. Buckets: second 0 holds the
    # first two, second 1 the second and the third, second 2 the third: the peak is 2
    rows = [{"status": "completed", "send_ms": 0.0, "e2e_ms": 500.0},
            {"status": "completed", "send_ms": 200.0, "e2e_ms": 1200.0},
            {"status": "completed", "send_ms": 1900.0, "e2e_ms": 200.0},
            {"status": "failed", "send_ms": 0.0, "e2e_ms": None}]
    assert peak_concurrency(rows) == 2
    assert peak_concurrency([]) == 0


def test_a_tool_version_is_refused(capsys, tmp_path):
    code, _, err = run_cli(capsys, tmp_path, SGLANG, "--tool-version", "0.5.9")
    assert code == 2 and "has no version" in err


def test_a_rates_window_starts_at_its_first_send(capsys, tmp_path):
    # get_request yields the first request at once and sleeps an exponential gap after each:
    # the duration runs from the first measured send (not a gap before it) to the last end
    code, out, err = run_cli(capsys, tmp_path, "python3 -m sglang.bench_serving --dataset-name random "
                             "--random-input-len 256 --random-output-len 32 --random-range-ratio 1 --num-prompts 20 "
                             "--request-rate 4 --warmup-requests 2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    res = doc["result"]
    assert res["completed"] == 20 and res["total_output_tokens"] == 20 * 32
    load = doc["benchmark"]
    assert load["request_rate"] == 4 and load["warmup_requests"] == 2
    spec = aisimulate.load_config({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm",
                                              "backend_version": "0.15.1"}, "traffic": {"benchmark": load}})
    rep = aisimulate.replay(spec, progress=False)
    start = min(r["send_ms"] for r in rep.requests)
    end = max(r["send_ms"] + r["e2e_ms"] for r in rep.requests)
    assert res["duration"] == pytest.approx((end - start) / 1000, rel=1e-9)
