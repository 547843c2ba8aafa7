"""aisimulate bench ENGINE_CONFIG -- <a benchmark's own command line>."""

from __future__ import annotations

import json

import pytest

import aisimulate
from aisimulate import cli
from aisimulate.cli.bench import _BenchUsageError as BenchUsageError, parse_command

ENGINE = "engine: {model: Qwen/Qwen3-8B, system: h100_sxm, backend_version: 0.15.1}\n"

# as InferenceX's benchmark_lib.sh writes it (c = 4)
INFERENCEX = ("python3 /workspace/utils/bench_serving/benchmark_serving.py --model Qwen/Qwen3-8B --backend vllm "
              "--base-url http://0.0.0.0:8888 --dataset-name random --random-input-len 1024 --random-output-len 128 "
              "--random-range-ratio 0.8 --num-prompts 40 --max-concurrency 4 --request-rate inf --ignore-eos "
              "--save-result --num-warmups 8 --percentile-metrics ttft,tpot,itl,e2el --result-dir /workspace/ "
              "--result-filename r.json")
VLLM = ("vllm bench serve --model Qwen/Qwen3-8B --dataset-name random --random-input-len 512 "
        "--random-output-len 64 --num-prompts 30 --max-concurrency 6 --ignore-eos --metric-percentiles 50,99")
AIPERF = ("aiperf profile -m Qwen/Qwen3-8B --url localhost:8000 --endpoint-type chat --streaming --concurrency 4 "
          "--request-count 24 --warmup-request-count 4 --isl 600 --osl 50 --num-dataset-entries 24 "
          "--extra-inputs ignore_eos:true --random-seed 100")


def test_parse_the_tools_command_lines():
    b, run = parse_command([INFERENCEX])
    assert b == {"tool": "vllm_bench_serve", "variant": "inferencex", "dataset_name": "random",
                 "random_input_len": 1024, "random_output_len": 128, "random_range_ratio": 0.8,
                 "num_prompts": 40, "max_concurrency": 4, "num_warmups": 8, "ignore_eos": True}
    assert run == {"percentile_metrics": ["ttft", "tpot", "itl", "e2el"]}
    b, run = parse_command(VLLM.split())
    assert b["variant"] == "vllm" and b["num_prompts"] == 30 and "request_rate" not in b
    assert run == {"percentiles": [50.0, 99.0]}
    b, run = parse_command([AIPERF])
    assert b == {"tool": "aiperf", "concurrency": 4, "request_count": 24, "warmup_request_count": 4,
                 "synthetic_input_tokens_mean": 600, "output_tokens_mean": 50, "num_dataset_entries": 24,
                 "ignore_eos": True}
    assert run == {"seed": 100}
    b, _ = parse_command(["vllm", "bench", "serve", "--request-rate", "2.5", "--ignore-eos", "--burstiness=0.5"])
    assert (b["request_rate"], b["burstiness"]) == (2.5, 0.5)


@pytest.mark.parametrize("command, match", [
    ("vllm bench serve --dataset-name random --use-chat-template --ignore-eos", "--use-chat-template: not simulated"),
    ("vllm bench serve --num-prompts many", "want an integer"),
    ("aiperf profile --streaming --osl 10 --extra-inputs n:2", "n:2: not simulated"),
    ("aiperf profile --streaming --osl 10 --extra-inputs temperature:warm", "temperature:warm: want a number"),
    # a sampling option without its value is the usage error, not an IndexError
    ("vllm bench serve --temperature --num-prompts 3", "--temperature takes one value, got 0"),
    ("vllm bench serve --ignore-eos --top-k many", "--top-k 'many': want an integer"),
    ("genai-perf profile -m x --streaming --request-rate 2 --osl 5", "--request-rate: not simulated"),
    ("locust -f x.py", "not a benchmark command"),
])
def test_what_cannot_be_honoured_is_named(command, match):
    with pytest.raises(BenchUsageError, match=match):
        parse_command([command])


def run_cli(capsys, tmp_path, command, *extra):
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    code = cli.main(["bench", str(cfg), "-q", *extra, "--", *command.split()])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_bench_prints_vllms_result_names(capsys, tmp_path):
    code, out, err = run_cli(capsys, tmp_path, VLLM)
    assert code == 0, err
    assert "Serving Benchmark Result" in out and "mean_ttft_ms" in out and "p50_ttft_ms" in out
    # the same numbers as replaying the benchmark block
    spec = aisimulate.load_config({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm", "backend_version": "0.15.1"},
                                   "traffic": {"benchmark": parse_command(VLLM.split())[0]}})
    rep = aisimulate.replay(spec, progress=False)
    line = next(x for x in out.splitlines() if "mean_ttft_ms" in x)
    assert float(line.split()[3]) == pytest.approx(rep.summary["ttft_ms"]["mean"], abs=0.005)
    code, out, _ = run_cli(capsys, tmp_path, VLLM, "--format", "json")
    doc = json.loads(out)
    assert doc["tool"] == "vllm_bench_serve" and doc["result"]["completed"] == 30
    assert doc["result"]["mean_tpot_ms"] == pytest.approx(rep.summary["tpot_ms"]["mean"])
    assert doc["benchmark"]["version"] == "0.15.1"  # the engine's release is the client's


def test_bench_prints_aiperfs_table(capsys, tmp_path):
    code, out, err = run_cli(capsys, tmp_path, AIPERF)
    assert code == 0, err
    assert "Time to First Token (ms)" in out and "ttft_ms" in out and "Inter Token Latency (ms)" in out


def test_bench_errors_are_exit_2(capsys, tmp_path):
    # vLLM 0.11.0's client sends the random dataset as --ignore-eos says; from 0.11.1 with ignore_eos always
    code, _, err = run_cli(capsys, tmp_path, "vllm bench serve --num-prompts 5", "--tool-version", "0.11.0")
    assert code == 2 and "traffic.benchmark.ignore_eos" in err
    code, out, err = run_cli(capsys, tmp_path, "vllm bench serve --num-prompts 5 --max-concurrency 5", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["benchmark"]["ignore_eos"] is True
    code, _, err = run_cli(capsys, tmp_path, "vllm bench serve --profile --ignore-eos")
    assert code == 2 and "--profile: not simulated" in err
    cfg = tmp_path / "with_traffic.yaml"
    cfg.write_text(ENGINE + "traffic: {source: {type: synthetic, num_requests: 1, isl: 1, osl: 1}}\n")
    code = cli.main(["bench", str(cfg), "-q", "--", "vllm", "bench", "serve", "--ignore-eos"])
    assert code == 2 and "the command line is the traffic" in capsys.readouterr().err


def test_the_bench_examples_run(capsys):
    # examples/bench: a benchmark as a config, and the deployment alone for aisimulate bench
    from pathlib import Path
    ex = Path(__file__).resolve().parent.parent / "examples" / "bench"
    rep = aisimulate.replay(ex / "vllm-bench-serve.yaml", progress=False)
    assert rep.summary["completed"] == 200 and rep.metadata["warmup_requests"] == 16  # no test request from 0.14.0
    assert min(r["input_tokens"] for r in rep.requests) >= 819 and max(r["input_tokens"] for r in rep.requests) <= 1229
    code = cli.main(["bench", str(ex / "engine.yaml"), "-q", "--", "vllm", "bench", "serve", "--dataset-name", "random",
                     "--random-input-len", "512", "--num-prompts", "100", "--max-concurrency", "8", "--ignore-eos"])
    assert code == 0 and "mean_ttft_ms" in capsys.readouterr().out


def test_a_rate_after_the_warmups(capsys, tmp_path):
    # vllm bench serve --request-rate: the test request and the warm-ups go first, then
    # the Poisson arrivals, counted from the warm-up's end
    code, out, err = run_cli(capsys, tmp_path, "vllm bench serve --dataset-name random --random-input-len 256 "
                             "--random-output-len 32 --num-prompts 20 --request-rate 4 --num-warmups 2 --ignore-eos "
                             "--seed 3", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["result"]["completed"] == 20 and doc["benchmark"]["request_rate"] == 4


def test_genai_perf_command_line():
    b, run = parse_command(["genai-perf profile -m Qwen/Qwen3-8B --endpoint-type chat --streaming --concurrency 4 "
                            "--request-count 40 --warmup-request-count 8 --synthetic-input-tokens-mean 1000 "
                            "--output-tokens-mean 100 --extra-inputs ignore_eos:true --random-seed 5"])
    assert b == {"tool": "genai_perf", "concurrency": 4, "request_count": 40, "warmup_request_count": 8,
                 "synthetic_input_tokens_mean": 1000, "output_tokens_mean": 100, "ignore_eos": True}
    assert run == {"seed": 5}


def test_an_option_given_twice_takes_the_last():
    # argparse's store action (vllm bench serve): a script appends an override
    b, _ = parse_command(["vllm bench serve --dataset-name random --random-input-len 128 --num-prompts 20 "
                          "--ignore-eos --num-prompts 5 --goodput ttft:100 --goodput tpot:5"])
    assert b["num_prompts"] == 5
    assert parse_command(["vllm bench serve --ignore-eos --goodput ttft:100 --goodput tpot:5"])[1]["slo"] == {"tpot_ms": 5.0}


def test_vllms_general_lengths_and_inert_options():
    # --input-len / --output-len map onto the random dataset's lengths whatever the order
    # (main_async in vllm/benchmarks/serve.py); --request-id-prefix only names requests
    b, _ = parse_command(["vllm bench serve --input-len 256 --random-input-len 100 --output-len 16 --ignore-eos "
                          "--request-id-prefix y --header x-a=1"])
    assert (b["random_input_len"], b["random_output_len"]) == (256, 16)


def test_metric_percentiles_outside_0_to_100_are_refused(capsys, tmp_path):
    # numpy.percentile takes [0, 100]: nan and inf are refused by name like 101, not a traceback
    for p in ("101", "-1", "nan", "inf"):
        code, _, err = run_cli(capsys, tmp_path, "vllm bench serve --ignore-eos --num-prompts 5 --metric-percentiles 50," + p)
        assert code == 2 and f"--metric-percentiles {p}: percentiles must be in [0, 100]" in err, err


def test_metric_percentiles_with_an_empty_item_are_refused(capsys, tmp_path):
    # vLLM splits at commas and calls float on each item: "50,,99" fails on the empty one
    for given in ("50,,99", "50,", ",99"):
        code, _, err = run_cli(capsys, tmp_path, "vllm bench serve --ignore-eos --num-prompts 5 --metric-percentiles " + given)
        assert code == 2 and f"--metric-percentiles {given!r}: want percentiles separated by commas" in err, err


def test_a_tiny_percentile_is_named_as_vllm_names_it(capsys, tmp_path):
    # vLLM's key is p + str(p): 1e-05 and 1e-300 keep Python's exponent, in our column too
    code, out, err = run_cli(capsys, tmp_path, "vllm bench serve --ignore-eos --random-input-len 64 --random-output-len 4 "
                             "--num-prompts 4 --metric-percentiles 1e-300,0.00001,0.0001", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert {"p1e-300_ttft_ms", "p1e-05_ttft_ms", "p0.0001_ttft_ms"} <= set(doc["result"])
    assert {"p1e-300", "p1e-05", "p0.0001"} <= set(doc["summary"]["ttft_ms"])


def test_a_rate_must_be_positive(capsys, tmp_path):
    # vLLM's get_request asserts a positive rate; inf (the default) is every prompt at once
    for rate in ("-5", "0"):
        code, _, err = run_cli(capsys, tmp_path, "vllm bench serve --ignore-eos --num-prompts 5 --request-rate " + rate)
        assert code == 2 and "bench: --request-rate: must be > 0" in err and "(traffic.benchmark.request_rate)" in err
    code, _, err = run_cli(capsys, tmp_path, "vllm bench serve --ignore-eos --num-prompts 9223372036854775807")
    assert code == 2 and "bench: --num-prompts: must be ≤ 16777216" in err


def test_a_failed_ready_check_stops_the_benchmark(capsys, tmp_path):
    # a prompt longer than max_model_len (40960 for Qwen3-8B): vLLM's test request fails
    cmd = "vllm bench serve --ignore-eos --random-input-len 1000000 --random-output-len 16 --num-prompts 5"
    code, _, err = run_cli(capsys, tmp_path, cmd + " --ready-check-timeout-sec 600")
    assert code == 2 and "Initial test run failed" in err and "max_model_len (40960)" in err
    code, out, err = run_cli(capsys, tmp_path, cmd)  # vLLM 0.15.1: no ready check unless given
    assert code == 0, err
    assert [ln.split()[2] for ln in out.splitlines() if ln.startswith(("Successful", "Failed"))] == ["0", "5"]
    # a result of zeros says why on stderr, as `aisimulate replay` does
    assert ("aisimulate: warning: no request completed (5 rejected); request 0 was rejected: prompt (1000000) "
            "+ output (16) tokens exceed max_model_len (40960)") in err


def test_a_bench_where_nothing_completed_says_why(capsys, tmp_path):
    # AIPerf's table of a run whose every prompt (50,000 tokens) is longer than Qwen3-8B's 40,960
    code, out, err = run_cli(capsys, tmp_path, "aiperf profile --streaming --concurrency 2 --request-count 4 "
                             "--isl 50000 --osl 8 --extra-inputs ignore_eos:true")
    assert code == 0, err
    assert "Request Count" in out
    assert "warning: no request completed (4 rejected); request 0 was rejected:" in err
    code, _, err = run_cli(capsys, tmp_path, "aiperf profile --streaming --concurrency 2 --request-count 4 "
                           "--isl 500 --osl 8 --extra-inputs ignore_eos:true")
    assert code == 0 and "warning" not in err


def test_vllm_goodput_counts_one_token_responses_good(capsys, tmp_path):
    # calculate_metrics: "if output_len <= 1, we regard tpot as 0 for goodput"
    code, out, err = run_cli(capsys, tmp_path, "vllm bench serve --ignore-eos --random-input-len 128 "
                             "--random-output-len 1 --num-prompts 10 --goodput tpot:5", "--format", "json")
    assert code == 0, err
    res = json.loads(out)["result"]
    assert res["request_goodput"] == res["request_throughput"] > 0


def test_percentile_metrics_choose_the_sections(capsys, tmp_path):
    import numpy as np
    base = "vllm bench serve --ignore-eos --random-input-len 256 --random-output-len 16 --num-prompts 6 --max-concurrency 2"
    code, out, err = run_cli(capsys, tmp_path, base)
    assert code == 0, err
    # vLLM's default: ttft, tpot, itl (no E2EL section)
    assert "Time to First Token" in out and "Inter-token Latency" in out and "End-to-end" not in out
    code, out, err = run_cli(capsys, tmp_path, base + " --percentile-metrics ttft,e2el,client_queue_time "
                             "--metric-percentiles 25,75", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    res = doc["result"]
    assert "mean_tpot_ms" not in res and "mean_itl_ms" not in res
    # the percentiles are numpy's over the measured requests; the client queue is the
    # wait on the semaphore: each send less the first one
    spec = aisimulate.load_config({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm", "backend_version": "0.15.1"},
                                   "traffic": {"benchmark": parse_command(base.split())[0]}})
    recs = aisimulate.replay(spec, progress=False).requests
    assert res["p25_ttft_ms"] == pytest.approx(np.percentile([r["ttft_ms"] for r in recs], 25))
    assert res["p75_e2el_ms"] == pytest.approx(np.percentile([r["e2e_ms"] for r in recs], 75))
    # client_queue_time is a section of vLLM 0.30.0 and later: the engine's 0.15.1 client
    # prints none (and says so); a 0.30.0 client's is the wait on the semaphore, each send
    # less the first one (every task is created at once at rate inf)
    assert "mean_client_queue_time_ms" not in res
    code, out, err = run_cli(capsys, tmp_path, base + " --percentile-metrics ttft,client_queue_time")
    assert code == 0 and "client_queue_time: a metric of vllm bench serve 0.30.0 and later, not of 0.15.1" in out
    code, out, err = run_cli(capsys, tmp_path, base + " --percentile-metrics ttft,e2el,client_queue_time",
                             "--tool-version", "0.30.0", "--format", "json")
    assert code == 0, err
    res30 = json.loads(out)["result"]
    sends = sorted(r["send_ms"] for r in recs)
    assert sends[0] == sends[1] and res30["mean_client_queue_time_ms"] == pytest.approx(np.mean(sends) - sends[0])
    # any percentile of the inter-token latency too: the replay is asked for it, and its
    # summary computes it over the pooled gaps (core/report: TestChosenPercentiles)
    code, out, err = run_cli(capsys, tmp_path, base + " --metric-percentiles 25,99.9", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    res, itl = doc["result"], doc["summary"]["itl_ms"]
    assert res["p25_itl_ms"] == itl["p25"] and res["p99.9_itl_ms"] == itl["p99.9"]
    assert itl["min"] <= itl["p25"] <= itl["p50"] <= itl["p99"] <= itl["p99.9"] <= itl["max"]
    assert res["p99.9_ttft_ms"] == pytest.approx(np.percentile([r["ttft_ms"] for r in recs], 99.9))


def test_aiperf_command_lines_as_written():
    # AIPerf's own server-metrics example: --extra-inputs once per key (a list option)
    b, run = parse_command(["aiperf profile --model Qwen/Qwen3-8B --endpoint-type chat --endpoint /v1/chat/completions "
                            "--streaming --url localhost:8000 --synthetic-input-tokens-mean 100 "
                            "--synthetic-input-tokens-stddev 0 --output-tokens-mean 200 --output-tokens-stddev 0 "
                            "--extra-inputs min_tokens:200 --extra-inputs ignore_eos:true --concurrency 4 "
                            "--request-count 64 --warmup-request-count 1 --num-dataset-entries 8 --random-seed 100"])
    assert (b["output_tokens_mean"], b["ignore_eos"], b["num_dataset_entries"]) == (200, True, 8) and run == {"seed": 100}
    # the JSON form, max_tokens standing for the length, and output/telemetry-only options
    b, _ = parse_command(["aiperf profile -m m --streaming --isl 100 --extra-inputs '{\"ignore_eos\":true,\"max_tokens\":20}' "
                          "--no-server-metrics --server-metrics http://x --no-gpu-telemetry --gpu-telemetry "
                          "--record-processors 16 --output-artifact-dir x --header X:1 --tokenizer-revision main"])
    assert (b["output_tokens_mean"], b["ignore_eos"]) == (20, True)
    # one option under all its names (ConversationConfig.num), the last one given wins
    for name in ("--num-conversations", "--conversation-num", "--num-sessions", "--num-prompts"):
        b, _ = parse_command([f"aiperf profile --streaming --osl 5 --extra-inputs ignore_eos:true --num-dataset-entries 9 {name} 3"])
        assert b["num_dataset_entries"] == 3, name
    # from AIPerf 0.3.0 the conversations are an option of their own (the core reads them by release)
    for name in ("--num-conversations", "--conversation-num", "--num-sessions"):
        b, _ = parse_command([f"aiperf profile --streaming --osl 5 --extra-inputs ignore_eos:true --num-dataset-entries 9 "
                              f"{name} 3"], "0.9.0")
        assert (b["num_dataset_entries"], b["num_conversations"]) == (9, 3), name
    # --goodput's metric tags (ms; the per-user rate is a TPOT bound of 1000 / X)
    _, run = parse_command(["aiperf profile --streaming --osl 5 --extra-inputs ignore_eos:true --goodput "
                            "time_to_first_token:100 inter_token_latency:8 request_latency:900"])
    assert run["slo"] == {"ttft_ms": 100.0, "tpot_ms": 8.0, "e2e_ms": 900.0}
    _, run = parse_command(["aiperf profile --streaming --osl 5 --extra-inputs ignore_eos:true --goodput "
                            "output_token_throughput_per_user:200"])
    assert run["slo"] == {"tpot_ms": 5.0}


@pytest.mark.parametrize("options, match", [
    ("--endpoint-type embeddings", r"--endpoint-type embeddings: not simulated \(its responses are no generated tokens"),
    ("--endpoint-type rankings", "--endpoint-type rankings: not simulated"),
    ("--extra-inputs max_tokens:30", "max_tokens:30: not simulated beside a different"),
    ("--extra-inputs ignore_eos:false", "ignore_eos:false"),
    ("--goodput time_to_second_token:5", "want METRIC:VALUE"),
])
def test_aiperf_refusals_name_the_option(options, match):
    with pytest.raises(BenchUsageError, match=match):
        parse_command([f"aiperf profile --streaming --osl 20 --extra-inputs ignore_eos:true {options}"])


def test_aiperf_benchmark_duration_runs_for_the_duration(capsys, tmp_path):
    # AIPerf's time-based quick start: sent until 60 s, not the default 10 requests
    cmd = ("aiperf profile --model Qwen/Qwen3-8B --url localhost:8000 --endpoint-type chat --streaming "
           "--concurrency 10 --benchmark-duration 60 --isl 256 --osl 32 --extra-inputs ignore_eos:true")
    code, out, err = run_cli(capsys, tmp_path, cmd, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert "request_count" not in doc["benchmark"] and doc["summary"]["completed"] > 1000
    assert 60_000 <= doc["summary"]["duration_ms"] < 61_000  # the last ones sent before 60 s finish
    code, _, err = run_cli(capsys, tmp_path, cmd + " --request-count 5")
    assert code == 2 and "bench: --request-count: cannot be given with benchmark_duration" in err


def test_aiperf_goodput_in_the_table(capsys, tmp_path):
    code, out, err = run_cli(capsys, tmp_path, AIPERF + " --goodput time_to_first_token:1")
    assert code == 0, err
    assert "Good Request Count" in out and "goodput.goodput_rps" in out


def test_aiperf_rate_behind_a_concurrency(capsys, tmp_path):
    # aiperf profile --request-rate with --concurrency: the arrivals, at most 2 in flight; a
    # request that waited for a slot counts its TTFT from its send, so TTFT is lower than the
    # uncapped rate's, whose requests queue at the engine instead
    cmd = ("aiperf profile -m Qwen/Qwen3-8B --streaming --request-rate 1000 --request-count 12 --isl 600 --osl 20 "
           "--extra-inputs ignore_eos:true --random-seed 1")
    code, out, err = run_cli(capsys, tmp_path, cmd + " --concurrency 2", "--format", "json")
    assert code == 0, err
    capped = json.loads(out)
    assert capped["benchmark"]["concurrency"] == 2 and capped["benchmark"]["request_rate"] == 1000
    code, out, err = run_cli(capsys, tmp_path, cmd, "--format", "json")
    assert code == 0, err
    uncapped = json.loads(out)
    assert capped["summary"]["in_flight"]["peak"] == 2 and uncapped["summary"]["in_flight"]["peak"] == 12
    assert capped["summary"]["ttft_ms"]["mean"] < uncapped["summary"]["ttft_ms"]["mean"]


def test_aiperf_tool_version(capsys, tmp_path):
    # AIPerf 0.9.0: --num-conversations 6 beside --request-count 20 stops at 6 sessions (one
    # request each) and makes the dataset's 6 entries; 0.4.0 refuses the two together
    cmd = ("aiperf profile -m Qwen/Qwen3-8B --streaming --concurrency 2 --request-count 20 --num-conversations 6 "
           "--isl 100 --osl 4 --extra-inputs ignore_eos:true")
    code, out, err = run_cli(capsys, tmp_path, cmd, "--tool-version", "0.9.0", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["completed"] == 6 and doc["benchmark"]["num_dataset_entries"] == 6
    assert doc["benchmark"]["version"] == "0.9.0"
    code, _, err = run_cli(capsys, tmp_path, cmd, "--tool-version", "0.4.0")
    assert code == 2 and "traffic.benchmark.request_count" in err


def test_aiperf_arrival_patterns():
    # --request-rate-mode / --arrival-pattern and --arrival-smoothness / --vllm-burstiness
    b, _ = parse_command(["aiperf profile --streaming --osl 5 --extra-inputs ignore_eos:true --request-rate 4 "
                          "--arrival-pattern gamma --vllm-burstiness 2"])
    assert (b["request_rate_mode"], b["arrival_smoothness"]) == ("gamma", 2.0)
    b, _ = parse_command(["aiperf profile --streaming --osl 5 --extra-inputs ignore_eos:true --concurrency 3 "
                          "--request-rate-mode concurrency_burst"])
    assert "request_rate_mode" not in b and b["concurrency"] == 3


def test_vllm_rate_behind_max_concurrency(capsys, tmp_path):
    # vllm bench serve --request-rate with --max-concurrency: the arrivals keep their times and
    # queue at the client for the semaphore; at most 3 in flight
    code, out, err = run_cli(capsys, tmp_path, "vllm bench serve --dataset-name random --random-input-len 256 "
                             "--random-output-len 16 --num-prompts 12 --request-rate 500 --max-concurrency 3 --seed 2",
                             "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["completed"] == 12 and doc["summary"]["in_flight"]["peak"] == 3


@pytest.mark.parametrize("command, warned", [
    (VLLM, None),  # the deployment's model
    (VLLM.replace("--model Qwen/Qwen3-8B", "--model Qwen/Qwen3-32B"), "--model Qwen/Qwen3-32B"),
    # vLLM's client tokenizes with --tokenizer where given: the served name may be an alias
    (VLLM.replace("--model Qwen/Qwen3-8B", "--model qwen --tokenizer Qwen/Qwen3-8B"), None),
    (AIPERF.replace("-m Qwen/Qwen3-8B", "-m meta-llama/Llama-3.1-8B-Instruct"), "-m meta-llama/Llama-3.1-8B-Instruct"),
    (AIPERF.replace("-m Qwen/Qwen3-8B", "--model-names qwen/qwen3-8b,other"), None),  # the first name, any case
])
def test_a_command_for_another_model_is_warned(capsys, tmp_path, command, warned):
    code, _, err = run_cli(capsys, tmp_path, command)
    assert code == 0, err
    if warned is None:
        assert "warning" not in err
    else:
        assert err == (f"aisimulate: warning: bench: {warned} is not the deployment's engine.model Qwen/Qwen3-8B: "
                       "the requests are simulated with Qwen/Qwen3-8B's lengths as the command gives them "
                       "(set engine.model to the model the command benchmarks)\n")


# AIPerf's trace replay (docs/benchmark_modes/trace_replay.md), three rows written here
TRACE_ROWS = ('{"timestamp": 0, "input_length": 600, "output_length": 4, "hash_ids": [1, 2]}\n'
              '{"timestamp": 250, "input_length": 100, "output_length": 3}\n'
              '\n'
              '{"timestamp": 1000, "input_length": 512, "output_length": 5, "hash_ids": [1]}\n')


def trace_command(path, *more, fixed=True, kind=True):
    return ["aiperf", "profile", "-m", "Qwen/Qwen3-8B", "--url", "localhost:8000", "--endpoint-type", "chat",
            "--streaming", "--input-file", str(path), *(["--custom-dataset-type", "mooncake_trace"] if kind else []),
            *(["--fixed-schedule"] if fixed else []), *more]


def test_aiperf_trace_replay_sends_each_row_at_its_timestamp(tmp_path):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(TRACE_ROWS)
    b, run = parse_command(trace_command(trace, "--concurrency", "4", "--fixed-schedule-auto-offset"))
    assert b == {"tool": "aiperf"}
    assert run["traffic"] == {"source": {"type": "mooncake", "path": str(trace)},
                              "load": {"mode": "trace", "speedup": 1.0}}
    spec = aisimulate.load_config({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm",
                                              "backend_version": "0.15.1"}, "traffic": run["traffic"]})
    rep = aisimulate.replay(spec, progress=False)
    rows = sorted(rep.requests, key=lambda r: r["send_ms"])
    assert [r["send_ms"] for r in rows] == [0.0, 250.0, 1000.0]  # the rows' timestamps (ms)
    assert [(r["input_tokens"], r["output_tokens"]) for r in rows] == [(600, 4), (100, 3), (512, 5)]
    # without --fixed-schedule, a first row with a timestamp makes the schedule fixed (AIPerf's
    # validate_timing_mode); --isl-block-size is the hash ids' tokens
    _, run2 = parse_command(trace_command(trace, "--isl-block-size", "16", fixed=False))
    assert run2["traffic"]["source"]["isl_block_size"] == 16 and run2["traffic"]["load"]["mode"] == "trace"
    assert parse_command(trace_command(trace, kind=False))[1]["traffic"] == run["traffic"]  # mooncake_trace: the default


def test_aiperf_trace_replay_through_the_cli(capsys, tmp_path):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(TRACE_ROWS)
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    code = cli.main(["bench", str(cfg), "-q", "--format", "json", "--", *trace_command(trace)])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["result"]["request_count"]["avg"] == 3
    assert doc["traffic"]["source"]["type"] == "mooncake" and doc["traffic"]["load"]["mode"] == "trace"
    assert doc["result"]["output_sequence_length"]["avg"] == pytest.approx((4 + 3 + 5) / 3)
    assert doc["result"]["input_sequence_length"]["avg"] == pytest.approx((600 + 100 + 512) / 3)


@pytest.mark.parametrize("more, match", [
    (["--fixed-schedule-start-offset", "100"], r"--fixed-schedule-start-offset: not simulated \(AIPerf drops"),
    (["--fixed-schedule-end-offset", "500"], "--fixed-schedule-end-offset: not simulated"),
    (["--custom-dataset-type", "multi_turn"], "--custom-dataset-type multi_turn: not simulated"),
    (["--isl", "100"], "--isl: not simulated with a mooncake_trace --input-file"),
    (["--warmup-request-count", "2"], "--warmup-request-count: not simulated with a mooncake_trace"),
    (["--extra-inputs", "max_tokens:9"], "max_tokens:9: not simulated with a mooncake_trace"),
])
def test_aiperf_trace_refusals_name_the_option(tmp_path, more, match):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(TRACE_ROWS)
    with pytest.raises(BenchUsageError, match=match):
        parse_command(trace_command(trace, *more))


def test_aiperf_trace_file_errors_name_the_option_and_place(capsys, tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(BenchUsageError, match=f"--input-file {missing}: no such file"):
        parse_command(trace_command(missing))
    with pytest.raises(BenchUsageError, match=f"--input-file {tmp_path}: is a folder, not a trace file"):
        parse_command(trace_command(tmp_path))
    with pytest.raises(BenchUsageError, match="--input-file /dev/null: not a regular file"):
        parse_command(trace_command("/dev/null"))
    with pytest.raises(BenchUsageError, match="--custom-dataset-type mooncake_trace: needs --input-file"):
        parse_command(["aiperf", "profile", "--streaming", "--custom-dataset-type", "mooncake_trace"])
    with pytest.raises(BenchUsageError, match="--fixed-schedule: needs --input-file"):
        parse_command(["aiperf", "profile", "--streaming", "--fixed-schedule"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"timestamp": 0, "input_length": 10, "output_length": 2}\n{"timestamp": 5, "input_length": 10}\n')
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    code = cli.main(["bench", str(cfg), "-q", "--", *trace_command(bad)])
    err = capsys.readouterr().err
    assert code != 0 and f"{bad}:2" in err and "output_length" in err


def test_aiperf_without_streaming_reports_only_what_it_measures(capsys, tmp_path):
    # AIPerf runs without --streaming: each response arrives whole, and BaseMetricsProcessor
    # leaves out its STREAMING_ONLY metrics (TTFT, TTST, ITL, per-user throughput); the
    # trace example of AIPerf's docs/benchmark_modes/trace_replay.md is written so. Same run,
    # so the request latency is the streaming run's.
    trace = tmp_path / "trace.jsonl"
    trace.write_text(TRACE_ROWS)
    streamed = [w for w in trace_command(trace) if w != "--streaming"]
    code, out, err = run_cli(capsys, tmp_path, " ".join(streamed), "--format", "json")
    assert code == 0, err
    whole = json.loads(out)["result"]
    code, out, err = run_cli(capsys, tmp_path, " ".join(trace_command(trace)), "--format", "json")
    assert code == 0, err
    streaming = json.loads(out)["result"]
    only = {"time_to_first_token", "time_to_second_token", "inter_token_latency", "output_token_throughput_per_user"}
    assert only <= set(streaming) and not only & set(whole)
    assert whole["request_latency"] == streaming["request_latency"] and whole["request_count"]["avg"] == 3
    code, out, err = run_cli(capsys, tmp_path, " ".join(streamed))
    assert code == 0 and "Time to First Token" not in out and "Request Latency (ms)" in out
    assert "without --streaming each response arrives whole" in out
    # genai-perf's console exporter skips the same four (ConsoleExporter._should_skip)
    code, out, err = run_cli(capsys, tmp_path, "genai-perf profile -m Qwen/Qwen3-8B --concurrency 2 --request-count 4 "
                             "--isl 100 --osl 5 --extra-inputs ignore_eos:true")
    assert code == 0, err
    assert "Inter Token Latency" not in out and "Request Latency (ms)" in out
    # a streaming-only SLO is refused, as AIPerf's _configure_goodput refuses it
    with pytest.raises(BenchUsageError, match="time_to_first_token is not measured without --streaming"):
        parse_command(streamed + ["--goodput", "time_to_first_token:300"])
    assert parse_command(streamed + ["--goodput", "request_latency:3000"])[1]["slo"] == {"e2e_ms": 3000.0}


UNTIMED_ROWS = ('{"input_length": 600, "output_length": 4, "hash_ids": [1, 2]}\n'
                '{"input_length": 100, "output_length": 3}\n'
                '\n'
                '{"input_length": 512, "output_length": 5, "hash_ids": [1], "timestamp": 50}\n')


def test_an_untimed_aiperf_trace_goes_under_concurrency_or_request_rate(tmp_path):
    # AIPerf's validate_timing_mode: a first row without a timestamp and no --fixed-schedule
    # is sent by --request-rate's strategy, else the concurrency burst (--concurrency, 1 when
    # absent); rows in file order (_use_sequential_iteration), every row once whatever
    # --request-count says (get_effective_request_count)
    trace = tmp_path / "untimed.jsonl"
    trace.write_text(UNTIMED_ROWS)
    engine = {"model": "Qwen/Qwen3-8B", "system": "h100_sxm", "backend_version": "0.15.1"}

    def sends(*more):
        _, run = parse_command(trace_command(trace, *more, fixed=False))
        rep = aisimulate.replay(aisimulate.load_config({"engine": engine, "traffic": run["traffic"]}), progress=False)
        return run["traffic"]["load"], sorted(rep.requests, key=lambda r: r["send_ms"])

    load, rows = sends("--request-count", "50")
    assert load == {"mode": "concurrency", "concurrency": 1}
    assert [r["input_tokens"] for r in rows] == [600, 100, 512]  # file order; row 3's timestamp is not used
    # a closed loop of 1: each row sent when the one before it is acted on
    assert [r["send_ms"] for r in rows[1:]] == [r["release_ms"] for r in rows[:-1]]
    assert sends("--concurrency", "2")[0] == {"mode": "concurrency", "concurrency": 2}
    # a constant rate of 2/s: one row every 500 ms, in file order
    load, rows = sends("--request-rate", "2", "--request-rate-mode", "constant")
    assert load == {"mode": "rate", "rate_rps": 2.0, "arrival": "constant"}
    assert [(r["input_tokens"], r["send_ms"]) for r in rows] == [(600, 0.0), (100, 500.0), (512, 1000.0)]
    assert sends("--request-rate", "2")[0]["arrival"] == "poisson"  # AIPerf's default
    # gamma from AIPerf 0.5.0, shape --arrival-smoothness 4: cv = 1/sqrt(4) = 0.5
    _, run = parse_command(trace_command(trace, "--request-rate", "2", "--arrival-pattern", "gamma",
                                         "--arrival-smoothness", "4", fixed=False), "0.5.0")
    assert run["traffic"]["load"] == {"mode": "rate", "rate_rps": 2.0, "arrival": "gamma", "cv": 0.5}


@pytest.mark.parametrize("more, match", [
    (["--request-rate", "2", "--concurrency", "3"], "--concurrency: a --request-rate capped by a concurrency"),
    (["--request-rate", "0"], "--request-rate 0: must be a finite number > 0"),
    (["--concurrency", "0"], "--concurrency 0: must be ≥ 1"),
    (["--request-rate-mode", "constant"], "--request-rate-mode: needs --request-rate"),
    (["--request-rate", "2", "--arrival-pattern", "gamma"], "gamma: an arrival pattern of AIPerf 0.5.0"),
    (["--request-rate", "2", "--arrival-smoothness", "2"], "--arrival-smoothness: belongs to --request-rate-mode gamma"),
    (["--isl", "100"], "--isl: not simulated with a mooncake_trace --input-file"),
])
def test_untimed_aiperf_trace_refusals_name_the_option(tmp_path, more, match):
    trace = tmp_path / "untimed.jsonl"
    trace.write_text(UNTIMED_ROWS)
    with pytest.raises(BenchUsageError, match=match):
        parse_command(trace_command(trace, *more, fixed=False))
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text('{"session_id": "a", "input_length": 10, "output_length": 2}\n'
                        '{"session_id": "a", "delay": 5, "input_length": 10, "output_length": 2}\n')
    with pytest.raises(BenchUsageError, match="rows with a session_id under --concurrency or --request-rate"):
        parse_command(trace_command(sessions, "--concurrency", "2", fixed=False))


def genai_perf_command(file, *more):
    return ["genai-perf", "profile", "-m", "Qwen/Qwen3-8B", "--endpoint-type", "chat", "--streaming",
            "--input-file", file, *more]


def test_genai_perf_payload_file_is_its_trace_replay(tmp_path):
    # genai-perf/README.md, "Use moon_cake file as input payload": --input-file payload:T
    # --fixed-schedule sends each row at its timestamp (ms) with input_length and
    # output_length (max_tokens)
    trace = tmp_path / "trace.jsonl"
    trace.write_text(TRACE_ROWS)
    want = {"source": {"type": "mooncake", "path": str(trace)}, "load": {"mode": "trace", "speedup": 1.0}}
    b, run = parse_command(genai_perf_command(f"payload:{trace}", "--fixed-schedule"))
    assert b == {"tool": "genai_perf"} and run["traffic"] == want
    rep = aisimulate.replay(aisimulate.load_config({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm",
                                                               "backend_version": "0.15.1"},
                                                    "traffic": run["traffic"]}), progress=False)
    rows = sorted(rep.requests, key=lambda r: r["send_ms"])
    assert [(r["send_ms"], r["input_tokens"], r["output_tokens"]) for r in rows] == [
        (0.0, 600, 4), (250.0, 100, 3), (1000.0, 512, 5)]


@pytest.mark.parametrize("file, more, match", [
    ("{trace}", (), r"not simulated without payload: .*this file's rows are a trace: write --input-file payload:"),
    ("{prompts}", (), r"a file of text prompts, whose token counts need the tokenizer\); a trace of"),
    ("synthetic:queries,passages", (), "synthetic files for a converter"),
    ("payload:{tmp}", (), "is a folder, not a trace file"),
    ("payload:{tmp}/nope.jsonl", (), "nope.jsonl: no such file"),
    ("payload:{trace}", ("--concurrency", "4"), "--concurrency: not simulated with --input-file payload:"),
    # genai-perf's --request-rate takes the schedule's place as --concurrency does (it was dropped)
    ("payload:{trace}", ("--request-rate", "2"), "--request-rate: not simulated with --input-file payload:"),
    ("payload:{trace}", ("--request-count", "4"), "--request-count: not simulated with --input-file payload:"),
    ("payload:{trace}", ("--isl", "100", "--fixed-schedule"), "--isl: not simulated with a payload: --input-file"),
    # genai-perf 0.0.15 on passes perf_analyzer no load option for a payload file without
    # --fixed-schedule (perf_analyzer_config.py _add_inference_load_args): its default
    # concurrency 1, the timestamps unused; it was replayed as the fixed schedule
    ("payload:{trace}", (), r"payload:.*trace.jsonl: give --fixed-schedule \(genai-perf 0.0.15 and later"),
])
def test_genai_perf_input_file_refusals_name_the_option(tmp_path, file, more, match):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(TRACE_ROWS)
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"text": "Your prompt here"}\n')
    with pytest.raises(BenchUsageError, match=match):
        parse_command(genai_perf_command(file.format(trace=trace, prompts=prompts, tmp=tmp_path), *more))
    with pytest.raises(BenchUsageError, match="--fixed-schedule: needs --input-file payload:FILE"):
        parse_command(["genai-perf", "profile", "--streaming", "--fixed-schedule"])


def test_aiperf_table_columns_never_run_together():
    # a latency of 20 minutes is 1,200,000.00 ms: 10 characters, and a wider one must not
    # touch its neighbour (the columns widen; normal values keep AIPerf's 10)
    from aisimulate.cli.bench import aiperf_text
    doc = {"request_latency": {"unit": "ms", "avg": 11477424.74, "min": 1209.23, "max": 22803510.07, "p99": 2.0,
                               "p90": 1.0, "p50": 1.0, "std": 647556.15},
           "request_count": {"unit": "requests", "avg": 3}}
    head, latency, count = aiperf_text(doc).splitlines()
    assert latency.split()[3:10] == ["11477424.74", "1209.23", "22803510.07", "2.00", "1.00", "1.00", "647556.15"]
    assert len(head) == len(latency) - len("e2e_ms") + len("aisimulate")  # the header over the same columns
    assert head.index("avg") + 3 == latency.index("11477424.74") + len("11477424.74")
    small = aiperf_text({"request_count": {"unit": "requests", "avg": 3}}).splitlines()
    assert small[0] == "Metric".ljust(52) + "".join(s.rjust(10) for s in ("avg", "min", "max", "p99", "p90", "p50",
                                                                          "std")) + "  aisimulate"


@pytest.mark.parametrize("command, message", [
    # the core checks the benchmark fields; the message names the option as the command wrote it
    ("aiperf profile --streaming --request-rate inf --osl 5 --extra-inputs ignore_eos:true",
     "bench: --request-rate: must be a finite number, got inf (traffic.benchmark.request_rate)"),
    ("aiperf profile --streaming --concurrency 0 --osl 5 --extra-inputs ignore_eos:true",
     "bench: --concurrency: must be ≥ 1, got 0 (traffic.benchmark.concurrency)"),
    ("aiperf profile --streaming --concurrency 2 --isl 0 --osl 2 --extra-inputs ignore_eos:true",
     "bench: --isl: must be ≥ 1, got 0 (traffic.benchmark.synthetic_input_tokens_mean)"),
    ("aiperf profile --streaming --concurrency 2 --osl 0 --extra-inputs ignore_eos:true", "bench: --osl 0: must be ≥ 1 (the responses' length)"),
    ("vllm bench serve --num-prompts 1 --num-prompts 0 --ignore-eos",
     "bench: --num-prompts: must be ≥ 1, got 0 (traffic.benchmark.num_prompts)"),
    ("vllm bench serve --num-prompts 3 --ignore-eos --random-range-ratio 1.5",
     "bench: --random-range-ratio: must be in [0, 1], got 1.5 (traffic.benchmark.random_range_ratio)"),
    # vLLM's --input-len sets random_input_len over --random-input-len whatever the order
    # (parse_vllm, main_async): the 0 is --input-len's, not the later --random-input-len 100's
    ("vllm bench serve --num-prompts 3 --ignore-eos --input-len 0 --random-input-len 100",
     "bench: --input-len: must be ≥ 1, got 0 (traffic.benchmark.random_input_len)"),
    # before AIPerf 0.3.0 (no --tool-version) --num-conversations is --num-dataset-entries
    ("aiperf profile --streaming --concurrency 2 --num-conversations 0 --osl 5 --extra-inputs ignore_eos:true",
     "bench: --num-conversations: must be ≥ 1, got 0 (traffic.benchmark.num_dataset_entries)"),
])
def test_a_bad_option_value_is_named_as_written(capsys, tmp_path, command, message):
    code, _, err = run_cli(capsys, tmp_path, command)
    assert code == 2 and err == f"aisimulate: error: {message}\n"


@pytest.mark.parametrize("command, match", [
    # an option of the other tool (a command copied across) gets this tool's spelling
    ("aiperf profile --streaming --concurrency 4 --osl 5 --ignore-eos",
     r"--ignore-eos: not an option of aiperf profile \(its name there is --extra-inputs ignore_eos:true\)"),
    ("vllm bench serve --concurrency 4 --ignore-eos", r"--concurrency: not an option of vllm bench serve \(its name "
                                                      r"there is --max-concurrency\)"),
    ("genai-perf profile --streaming --osl 5 --max-concurrency 3", "--max-concurrency: not an option of genai-perf profile"),
])
def test_another_tools_option_is_named_with_this_ones(command, match):
    with pytest.raises(BenchUsageError, match=match):
        parse_command([command])



# two sessions of three turns (README, "bench": sessions in a trace): a's turns at their
# timestamps, a minute apart (each turn long done before the next is due); b's last turn has
# only a delay (sent 500 ms after b's second turn ends)
SESSION_ROWS = ('{"session_id": "a", "timestamp": 0, "input_length": 100, "output_length": 10}\n'
                '{"session_id": "b", "timestamp": 1000, "input_length": 200, "output_length": 8}\n'
                '{"session_id": "a", "timestamp": 60000, "input_length": 50, "output_length": 5}\n'
                '{"session_id": "b", "timestamp": 61000, "input_length": 30, "output_length": 6}\n'
                '{"session_id": "a", "timestamp": 120000, "input_length": 20, "output_length": 4}\n'
                '{"session_id": "b", "delay": 500, "input_length": 40, "output_length": 3}\n')
# the same turns as AIPerf 0.4.x sends them: a later turn after the previous response and its delay
DELAY_ROWS = ('{"session_id": "a", "timestamp": 0, "input_length": 100, "output_length": 10}\n'
              '{"session_id": "b", "timestamp": 1000, "input_length": 200, "output_length": 8}\n'
              '{"session_id": "a", "delay": 60000, "input_length": 50, "output_length": 5}\n'
              '{"session_id": "b", "delay": 60000, "input_length": 30, "output_length": 6}\n'
              '{"session_id": "a", "delay": 60000, "input_length": 20, "output_length": 4}\n'
              '{"session_id": "b", "delay": 500, "input_length": 40, "output_length": 3}\n')
# each turn's prompt: the earlier rows' inputs, the replies received, then its own row
# a: 100; 100 + 10 + 50 = 160; 160 + 5 + 20 = 185. b: 200; 200 + 8 + 30 = 238; 238 + 6 + 40 = 284
CONVERSATION_PROMPTS = [100, 200, 160, 238, 185, 284]


def session_replay(run):
    spec = aisimulate.load_config({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm",
                                              "backend_version": "0.15.1"}, "traffic": run["traffic"]})
    rep = aisimulate.replay(spec, progress=False)
    return sorted(rep.requests, key=lambda r: r["request_id"])


@pytest.mark.parametrize("version", ["0.5.0", "0.13.0"])
def test_aiperf_sessions_are_conversations_from_0_5(tmp_path, version):
    trace = tmp_path / "sessions.jsonl"
    trace.write_text(SESSION_ROWS)
    _, run = parse_command(trace_command(trace), version)
    assert run["traffic"] == {"source": {"type": "mooncake", "path": str(trace),
                                         "context_mode": "deltas_without_responses"},
                              "load": {"mode": "trace", "speedup": 1.0}}
    rows = session_replay(run)
    assert [r["input_tokens"] for r in rows] == CONVERSATION_PROMPTS
    assert [r["output_tokens"] for r in rows] == [10, 8, 5, 6, 4, 3]
    assert [r["send_ms"] for r in rows[:5]] == [0.0, 1000.0, 60000.0, 61000.0, 120000.0]  # their timestamps
    assert rows[5]["send_ms"] == pytest.approx(rows[3]["end_ms"] + 500)  # b's turn before it, done, + the delay
    assert all(r["e2e_ms"] < 1000 for r in rows)  # every turn done long before the next is due


def test_aiperf_0_4_sends_a_later_turn_after_its_delay(tmp_path):
    trace = tmp_path / "sessions.jsonl"
    trace.write_text(DELAY_ROWS)
    _, run = parse_command(trace_command(trace), "0.4.0")
    assert run["traffic"]["source"]["context_mode"] == "deltas_without_responses"
    rows = session_replay(run)
    assert [r["input_tokens"] for r in rows] == CONVERSATION_PROMPTS
    assert [r["send_ms"] for r in rows[:2]] == [0.0, 1000.0]
    for later, before, delay in ((2, 0, 60000), (3, 1, 60000), (4, 2, 60000), (5, 3, 500)):
        assert rows[later]["send_ms"] == pytest.approx(rows[before]["end_ms"] + delay)
    trace.write_text(SESSION_ROWS)  # 0.4.x does not send a later turn at its timestamp
    with pytest.raises(BenchUsageError, match=r"sessions.jsonl:3: a later turn's timestamp is not simulated "
                                              r"for AIPerf 0\.4\.0"):
        parse_command(trace_command(trace), "0.4.0")


@pytest.mark.parametrize("version, why", [
    (None, r"AIPerf before 0\.3\.0 \(bench's default\) \(it sends a session once for each of its turns"),
    ("0.1.1", r"AIPerf 0\.1\.1 \(it ignores session_id and delay"),
    ("0.2.0", r"AIPerf 0\.2\.0 \(it sends a session once for each of its turns"),
    ("0.3.0", r"AIPerf 0\.3\.0 \(it sends a session once for each of its turns, every turn's timestamp"),
])
def test_aiperf_sessions_before_0_4_are_refused(tmp_path, version, why):
    trace = tmp_path / "sessions.jsonl"
    trace.write_text(SESSION_ROWS)
    with pytest.raises(BenchUsageError, match="rows with a session_id are not simulated for " + why):
        parse_command(trace_command(trace), version)
    trace.write_text(TRACE_ROWS)  # rows without sessions: the same at every release
    assert parse_command(trace_command(trace), version)[1]["traffic"]["source"] == {"type": "mooncake",
                                                                                    "path": str(trace)}


def test_aiperf_sessions_through_the_cli(capsys, tmp_path):
    trace = tmp_path / "sessions.jsonl"
    trace.write_text(SESSION_ROWS)
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    code = cli.main(["bench", str(cfg), "-q", "--format", "json", "--tool-version", "0.13.0", "--",
                     *trace_command(trace)])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["traffic"]["source"]["context_mode"] == "deltas_without_responses"
    assert doc["result"]["request_count"]["avg"] == 6
    assert doc["result"]["input_sequence_length"]["avg"] == pytest.approx(sum(CONVERSATION_PROMPTS) / 6)
    assert doc["result"]["output_sequence_length"]["avg"] == pytest.approx((10 + 5 + 4 + 8 + 6 + 3) / 6)
    code = cli.main(["bench", str(cfg), "-q", "--", *trace_command(trace)])
    out = capsys.readouterr()
    assert code != 0 and "give --tool-version 0.4.0 or later" in out.err


def test_sampling_parameters_are_taken_with_a_note(capsys, tmp_path):
    # vLLM's sampling parameters and AIPerf's --extra-inputs of them: the same prediction as
    # without them, and a note that says so
    base = "vllm bench serve --dataset-name random --random-input-len 64 --random-output-len 4 --num-prompts 3 --ignore-eos"
    code, plain, _ = run_cli(capsys, tmp_path, base)
    assert code == 0
    code, out, _ = run_cli(capsys, tmp_path, base + " --temperature 0.7 --top-p 0.9 --top-k 20 --min-p 0.05")
    assert code == 0
    note = ("  --temperature 0.7, --top-p 0.9, --top-k 20, --min-p 0.05: taken, and not changing the prediction (the "
            "outputs have the lengths the command gives; a simulated pass is the forward pass and its logits, with no "
            "term for the sampler)\n")
    assert note in out and out.replace(note, "", 1) == plain  # the same result, and the note
    b, run = parse_command(["aiperf profile --streaming --osl 10 --extra-inputs temperature:0.7,top_p:0.9 "
                            "--extra-inputs top_k:20 --extra-inputs ignore_eos:true"])
    assert b == {"tool": "aiperf", "output_tokens_mean": 10, "ignore_eos": True}
    assert run["notes"] == ["--extra-inputs temperature:0.7, --extra-inputs top_p:0.9, --extra-inputs top_k:20: taken, "
                            "and not changing the prediction (the outputs have the lengths the command gives; a "
                            "simulated pass is the forward pass and its logits, with no term for the sampler)"]
    code, out, _ = run_cli(capsys, tmp_path, base + " --temperature 0", "--format", "json")
    assert code == 0 and json.loads(out)["notes"][0].startswith("--temperature 0: taken")
    with pytest.raises(BenchUsageError, match="--temperature: not simulated"):  # not an option of InferenceX's script
        parse_command(["python3 utils/bench_serving/benchmark_serving.py --ignore-eos --temperature 0.7"])


def test_an_aiperf_release_written_short_or_suffixed_is_that_release():
    """--tool-version "0.4" is AIPerf 0.4.0 (not a release before it), "v0.5.0" and
    "0.5.0rc1" are 0.5.0, and a word is no release: the session rules compare these."""
    from aisimulate.cli.bench import _release
    assert _release("0.4") == (0, 4, 0) and _release("0.4") >= (0, 4, 0)
    assert _release("v0.5.0") == _release("0.5.0rc1") == _release("0.5") == (0, 5, 0)
    assert _release("0.13.0") == (0, 13, 0) and _release("1") == (1, 0, 0)
    assert _release("latest") is None and _release(None) is None and _release("") is None


def test_aiperf_warmup_isolation_by_release(capsys, tmp_path):
    # 4 entries in sequence, 4 warm-ups at concurrency 4: before 0.11.0 (and from 0.13.0 with
    # --cache-bust none) the warm-up caches every entry and each measured TTFT is the same;
    # 0.11.0-0.12.x mark the warm-up prompts, so the first measured wave computes its prompts
    # whole, as 0.13.0 does with --cache-bust warmup_isolation_first_turn
    cmd = ("aiperf profile -m Qwen/Qwen3-8B --streaming --concurrency 4 --request-count 24 --warmup-request-count 4 "
           "--isl 600 --osl 50 --num-dataset-entries 4 --dataset-sampling-strategy sequential "
           "--extra-inputs ignore_eos:true --network-latency-automatic")
    ttft = {}
    for version, more in (("0.10.0", ""), ("0.12.0", ""), ("0.13.0", ""),
                          ("0.13.0", " --cache-bust warmup_isolation_first_turn")):
        code, out, err = run_cli(capsys, tmp_path, cmd + more, "--tool-version", version, "--format", "json")
        assert code == 0, err
        doc = json.loads(out)
        ttft[version + more] = (doc["result"]["time_to_first_token"]["min"], doc["result"]["time_to_first_token"]["max"])
        assert doc["benchmark"].get("cache_bust") == (more.split()[-1] if more else None)
    assert ttft["0.10.0"][0] == ttft["0.10.0"][1] == ttft["0.13.0"][1]
    isolated = ttft["0.12.0"]
    assert isolated[1] > 2 * isolated[0] and isolated == ttft["0.13.0 --cache-bust warmup_isolation_first_turn"]
    assert isolated[0] == ttft["0.10.0"][0]


@pytest.mark.parametrize("version, more, match", [
    ("0.11.0", "--cache-bust none", "--cache-bust: is an option of AIPerf 0.12.0 and later"),
    ("0.12.0", "--cache-bust warmup_isolation_first_turn", "a target of AIPerf 0.13.0 and later"),
    ("0.13.0", "--cache-bust first_turn_prefix", "--cache-bust: first_turn_prefix is not simulated"),
    ("0.13.0", "--cache-bust warmup_isolation_system", "shared system prompt"),
    ("0.11.0", "--request-rate 4 --vllm-burstiness 2", "--vllm-burstiness: belongs to request_rate_mode gamma"),
])
def test_aiperf_release_refusals_name_the_option(capsys, tmp_path, version, more, match):
    cmd = ("aiperf profile -m Qwen/Qwen3-8B --streaming --request-count 8 --isl 100 --osl 4 "
           "--extra-inputs ignore_eos:true " + more)
    code, _, err = run_cli(capsys, tmp_path, cmd, "--tool-version", version)
    assert code == 2 and match in err, err


def test_aiperf_smoothness_alone_is_gamma_from_0_12(capsys, tmp_path):
    cmd = ("aiperf profile -m Qwen/Qwen3-8B --streaming --request-count 8 --isl 100 --osl 4 "
           "--extra-inputs ignore_eos:true --request-rate 4 --vllm-burstiness 4")
    code, out, err = run_cli(capsys, tmp_path, cmd, "--tool-version", "0.12.0", "--format", "json")
    assert code == 0, err
    b = json.loads(out)["benchmark"]
    assert (b["request_rate_mode"], b["arrival_smoothness"]) == ("gamma", 4.0)


def test_vllm_options_of_later_releases(capsys, tmp_path):
    base = ("vllm bench serve --ignore-eos --random-input-len 256 --random-output-len 16 --num-prompts 6 "
            "--max-concurrency 2")
    # --probe-request-rate (0.27.0 and later): 0, the default, sends no probe and is taken
    code, out, err = run_cli(capsys, tmp_path, base + " --probe-request-rate 0", "--tool-version", "0.34.0",
                             "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["benchmark"]["probe_request_rate"] == 0 and doc["benchmark"]["version"] == "0.34.0"
    assert doc["summary"]["completed"] == 6
    for more, version, match in [
        (" --probe-request-rate 2", "0.34.0", "--probe-request-rate: 2 is not simulated"),
        (" --probe-request-rate 0", "0.26.0", "--probe-request-rate: is an option of vLLM 0.27.0 and later"),
        (" --max-concurrency 0", "0.30.0", "--max-concurrency 0: vLLM 0.30.0 refuses it"),
        (" --request-rate 4 --percentile-metrics ttft,e2el_including_client_queue", "0.34.0",
         "e2el_including_client_queue: not simulated with --request-rate and --max-concurrency"),
    ]:
        code, _, err = run_cli(capsys, tmp_path, base + more, "--tool-version", version)
        assert code == 2 and match in err, (more, err)
    # before 0.30.0 --max-concurrency 0 is no limit: every prompt at once, as without it
    zero = run_cli(capsys, tmp_path, base.replace("--max-concurrency 2", "--max-concurrency 0"),
                   "--tool-version", "0.29.0", "--format", "json")
    none = run_cli(capsys, tmp_path, base.replace(" --max-concurrency 2", ""), "--tool-version", "0.29.0",
                   "--format", "json")
    assert zero[0] == none[0] == 0 and json.loads(zero[1])["result"] == json.loads(none[1])["result"]


def test_aiperf_grace_period_by_release(capsys, tmp_path):
    # a closed loop of 4 for 1 s: when the duration ends, 4 requests are in flight. AIPerf
    # 0.11.0 routes no default grace period and cancels them (they count as errors, in no
    # metric); 0.12.0 waits its 30 s default and counts them; --benchmark-grace-period sets it
    cmd = ("aiperf profile -m Qwen/Qwen3-8B --streaming --concurrency 4 --benchmark-duration 1 --isl 600 --osl 50 "
           "--extra-inputs ignore_eos:true")
    got = {}
    for version, more in (("0.11.0", ""), ("0.12.0", ""), ("0.12.0", " --benchmark-grace-period 0")):
        code, out, err = run_cli(capsys, tmp_path, cmd + more, "--tool-version", version, "--format", "json")
        assert code == 0, err
        doc = json.loads(out)
        s = doc["summary"]
        got[version + more] = (s["completed"], s["canceled"])
        assert doc["result"].get("error_request_count", {}).get("avg", 0) == s["canceled"]
    sent = sum(got["0.12.0"])
    assert got["0.11.0"] == (sent - 4, 4) == got["0.12.0 --benchmark-grace-period 0"]
    assert got["0.12.0"] == (sent, 0)
    code, _, err = run_cli(capsys, tmp_path, cmd.replace("--benchmark-duration 1", "--request-count 8")
                           + " --benchmark-grace-period 5", "--tool-version", "0.12.0")
    assert code == 2 and "--benchmark-grace-period: needs benchmark_duration" in err, err


def test_aiperf_random_range_ratio(capsys, tmp_path):
    # AIPerf 0.13.0's window: vllm style [⌊L(1−r)⌋, ⌈L(1+r)⌉] = [800, 1200] and [80, 120]
    # for --isl 1000 --osl 100 -r 0.2; sglang style [max(1, ⌊L·r⌋), L] = [200, 1000], [20, 100]
    cmd = ("aiperf profile -m Qwen/Qwen3-8B --streaming --concurrency 4 --request-count 40 --isl 1000 --osl 100 "
           "--random-range-ratio 0.2 --extra-inputs ignore_eos:true")
    for more, isl, osl in (("", (800, 1200), (80, 120)), (" --random-corpus-style sglang", (200, 1000), (20, 100))):
        code, out, err = run_cli(capsys, tmp_path, cmd + more, "--tool-version", "0.13.0", "--format", "json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["benchmark"]["random_range_ratio"] == 0.2
        res = doc["result"]
        assert isl[0] <= res["input_sequence_length"]["min"] <= res["input_sequence_length"]["max"] <= isl[1]
        assert osl[0] <= res["output_sequence_length"]["min"] <= res["output_sequence_length"]["max"] <= osl[1]
        assert res["input_sequence_length"]["std"] > 0
    for more, version, match in [
        ("", "0.12.0", "--random-range-ratio: is an option of AIPerf 0.13.0 and later"),
        (" --random-corpus-style lmbench", "0.13.0", "--random-corpus-style: \"lmbench\" is not a style"),
    ]:
        code, _, err = run_cli(capsys, tmp_path, cmd + more, "--tool-version", version)
        assert code == 2 and match in err, err
    with pytest.raises(BenchUsageError, match="give --isl too"):
        parse_command(["aiperf profile --streaming --osl 10 --random-range-ratio 0.2 --extra-inputs ignore_eos:true"])
    with pytest.raises(BenchUsageError, match="one ratio for both lengths"):
        parse_command(['aiperf profile --streaming --isl 9 --osl 10 --extra-inputs ignore_eos:true '
                       '--random-range-ratio={"input":0.1,"output":0.2}'])
