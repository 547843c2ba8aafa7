"""aisimulate bench -- inference-perf --config_file …: its config file as traffic.benchmark
(tool inference_perf) and its lifecycle metrics by release."""

from __future__ import annotations

import json

import pytest

from aisimulate import cli
from aisimulate.cli import bench_inference_perf as ip
from aisimulate.cli.bench import _BenchUsageError, parse_command

ENGINE = "engine: {model: Qwen/Qwen3-8B, system: h100_sxm, backend_version: 0.15.1}\n"
CONFIG = """\
api: {type: completion, streaming: true}
data:
  type: shared_prefix
  shared_prefix: {num_unique_system_prompts: 2, num_users_per_system_prompt: 3, system_prompt_len: 256,
                  question_len: 64, output_len: 16}
load:
  type: constant
  interval: 2
  stages: [{rate: 2, duration: 3}, {rate: 2.5, duration: 3}]
  num_workers: 4
  base_seed: 7
server: {type: vllm, base_url: "http://localhost:8000", model_name: Qwen/Qwen3-8B, ignore_eos: true}
tokenizer: {pretrained_model_name_or_path: Qwen/Qwen3-8B}
report: {request_lifecycle: {summary: true, per_stage: true}}
"""


def test_the_config_file_is_the_benchmark(tmp_path):
    cfg = tmp_path / "config.yml"
    cfg.write_text(CONFIG)
    bench, run = parse_command(["inference-perf", "--config_file", str(cfg), "--load.type", "poisson"])
    assert bench == {"tool": "inference_perf", "api": {"type": "completion", "streaming": True},
                     "data": {"type": "shared_prefix", "shared_prefix": {
                         "num_groups": 2, "num_prompts_per_group": 3, "system_prompt_len": 256,
                         "question_len": 64, "output_len": 16}},
                     "load": {"type": "poisson", "interval": 2, "stages": [{"rate": 2, "duration": 3},
                                                                           {"rate": 2.5, "duration": 3}],
                              "num_workers": 4},
                     "ignore_eos": True}
    assert run == {"seed": 7}
    assert ip.stage_requests(bench) == [6, 7]  # int(rate × duration): 6 and int(7.5)


@pytest.mark.parametrize("extra, match", [
    (["--load.sweep", '{"type": "linear"}'], "load.sweep: not simulated"),
    (["--load.request_timeout", "30"], "load.request_timeout: not simulated"),
    (["--data.shared_prefix.enable_multi_turn_chat", "true"], "data.shared_prefix.enable_multi_turn_chat: not simulated"),
    (["--circuit_breakers", '["x"]'], "circuit_breakers: not simulated"),
    (["--analyze", "dir"], "--analyze: analyses reports of earlier runs"),
    (["--tokenizer_x", "1"], "tokenizer_x: not a section the simulation takes"),
])
def test_what_cannot_be_honoured_is_named(tmp_path, extra, match):
    cfg = tmp_path / "config.yml"
    cfg.write_text(CONFIG)
    with pytest.raises(_BenchUsageError, match=match):
        parse_command(["inference-perf", "-c", str(cfg), *extra])


# The lifecycle metrics by hand, seconds: a request sent at 1.0 s whose first token
# comes at 1.2 s and whose 5th and last at 1.6 s. From 0.5.0 the tokens are timed:
# TPOT (1.6 − 1.2) / 4 = 0.1, ITL the same; before, the SSE messages ([DONE] with the
# last token): 5 gaps, 0.08 (and for chat, with the role chunk, 6: 0.0667). A 1-token
# response counts only before 0.5.0.
def test_lifecycle_by_release():
    rec = {"status": "completed", "send_ms": 1000.0, "first_token_ms": 1200.0, "end_ms": 1600.0,
           "output_tokens": 5, "input_tokens": 100}
    one = dict(rec, output_tokens=1, first_token_ms=1300.0, end_ms=1300.0)
    new = ip.lifecycle([rec, one], token_times=True, chat=False)["successes"]["latency"]
    assert new["time_to_first_token"]["mean"] == pytest.approx(0.2)
    assert new["time_per_output_token"]["mean"] == pytest.approx(0.1)
    assert new["inter_token_latency"]["mean"] == pytest.approx(0.1)
    assert new["request_latency"]["mean"] == pytest.approx((0.6 + 0.3) / 2)
    assert new["normalized_time_per_output_token"]["mean"] == pytest.approx((0.6 / 5 + 0.3 / 1) / 2)
    old = ip.lifecycle([rec, one], token_times=False, chat=False)["successes"]["latency"]
    assert old["time_per_output_token"]["mean"] == pytest.approx((0.08 + 0.0) / 2)
    assert old["time_to_first_token"]["mean"] == pytest.approx((0.2 + 0.3) / 2)
    assert old["inter_token_latency"]["mean"] == pytest.approx(0.4 / 6)
    chat = ip.lifecycle([rec], token_times=False, chat=True)["successes"]["latency"]
    assert chat["time_per_output_token"]["mean"] == pytest.approx(0.4 / 6)
    assert ip.token_times("0.5.0") and ip.token_times("v0.6.1") and not ip.token_times("0.4.0")


def test_bench_prints_the_stages(capsys, tmp_path):
    eng, cfg = tmp_path / "engine.yaml", tmp_path / "config.yml"
    eng.write_text(ENGINE)
    cfg.write_text(CONFIG)
    code = cli.main(["bench", str(eng), "-q", "--format", "json", "--", "inference-perf", "-c", str(cfg)])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["tool"] == "inference_perf"
    assert doc["result"]["stage_0"]["successes"]["count"] == 6
    assert doc["result"]["stage_1"]["successes"]["count"] == 7
    assert doc["result"]["summary"]["successes"]["count"] == 13
    ttft = doc["result"]["summary"]["successes"]["latency"]["time_to_first_token"]["mean"]
    assert ttft * 1e3 == pytest.approx(doc["summary"]["ttft_ms"]["mean"], rel=1e-9)
    code = cli.main(["bench", str(eng), "-q", "--tool-version", "0.4.0", "--", "inference-perf", "-c", str(cfg)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "inference-perf 0.4.0: 2 stage(s) of [6 7] requests" in out.out and "TTFT mean" in out.out


def test_the_readme_example_runs(capsys):
    from pathlib import Path
    ex = Path(__file__).resolve().parent.parent / "examples" / "bench"
    code = cli.main(["bench", str(ex / "engine.yaml"), "-q", "--", "inference-perf", "--config_file",
                     str(ex / "inference-perf.yaml")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "stage_0" in out.out and "stage_1" in out.out and "TTFT mean" in out.out


def test_the_clients_cap_on_requests_in_flight(capsys, tmp_path):
    # inference-perf's workers each hold at most worker_max_concurrency requests
    # (load_generator.py, Worker.loop): 1 × 1 binds at 2.5 requests/s of 16-token
    # responses that overlap; the run is refused naming the fields, not run uncapped
    cfg, eng = tmp_path / "config.yml", tmp_path / "engine.yaml"
    cfg.write_text(CONFIG)
    eng.write_text(ENGINE)
    code = cli.main(["bench", str(eng), "-q", "--", "inference-perf", "-c", str(cfg), "--load.num_workers", "1",
                     "--load.worker_max_concurrency", "1", "--load.stages", '[{"rate": 50, "duration": 2}]'])
    err = capsys.readouterr().err
    assert code == 2 and "traffic.benchmark.load.num_workers: and worker_max_concurrency bind" in err
    code = cli.main(["bench", str(eng), "-q", "--", "inference-perf", "-c", str(cfg)])  # 4 × 100: far from it
    assert code == 0, capsys.readouterr().err
