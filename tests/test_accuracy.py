"""The accuracy harness (scripts/accuracy.py, aisimulate.tools.accuracy) on a three-row slice."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from aisimulate.tools import accuracy

REPO = Path(__file__).resolve().parent.parent
SILICON = accuracy.SHARED_DATA / "silicon" / "vllm_dense_dev.csv"
ALIASES = accuracy.SHARED_DATA / "silicon" / "model_aliases.csv"

pytestmark = pytest.mark.skipif(not SILICON.is_file(), reason="shared silicon data not found")


@pytest.fixture
def slice_csv(tmp_path) -> Path:
    """Three dev rows (Qwen3-32B, 1024/128, c8, TP 2/4/8) plus one unknown model."""
    rows = accuracy.read_silicon(SILICON)[:3]
    bad = dict(rows[0], id="unknown_model_row", model_path="acme/NotAModel")
    path = tmp_path / "slice.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows + [bad])
    return path


def test_script_writes_rows_mape_and_plot(tmp_path, slice_csv):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "accuracy.py"), "--silicon", str(slice_csv),
                           "--perf", "aic", "--out", str(out), "--aliases", str(ALIASES), "--jobs", "1"],
                          capture_output=True, text=True, check=True)
    assert "overall" in proc.stdout and "TPOT MAPE" in proc.stdout
    with open(out / "rows.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "skipped"]
    for col in ("id", "status", "reason", "silicon_ttft_ms", "silicon_tpot_ms",
                "predicted_ttft_ms", "predicted_tpot_ms"):
        assert col in rows[0]
    assert "unknown model 'acme/NotAModel'" in rows[3]["reason"]
    assert all(float(r["predicted_tpot_ms"]) > 0 for r in rows[:3])
    assert "gemm_perf@0.14.0" in rows[0]["tables"]  # 0.12.0 rows: nearest tables
    assert all(r["fallbacks"] == "" for r in rows)  # every lookup on its own table point
    assert "table fallbacks" not in proc.stdout
    assert (out / "predicted_vs_measured.png").stat().st_size > 1000
    with open(out / "mape.csv", newline="") as f:
        mape = list(csv.DictReader(f))
    assert mape[-1]["model"] == "overall" and mape[-1]["rows"] == "3"


def test_mape_is_mean_absolute_percentage_error():
    r = [accuracy.RowResult(id="a", status="ok", model="m", system="s", tp=1, silicon_ttft_ms=100,
                            silicon_tpot_ms=10, predicted_ttft_ms=110, predicted_tpot_ms=9),
         accuracy.RowResult(id="b", status="ok", model="m", system="s", tp=1, silicon_ttft_ms=200,
                            silicon_tpot_ms=20, predicted_ttft_ms=170, predicted_tpot_ms=20),
         accuracy.RowResult(id="c", status="skipped", reason="x")]
    table = accuracy.mape_table(r)
    # TTFT: (10 % + 15 %) / 2 = 12.5 %; TPOT: (10 % + 0 %) / 2 = 5 %
    assert table[-1]["ttft_mape_pct"] == pytest.approx(12.5)
    assert table[-1]["tpot_mape_pct"] == pytest.approx(5.0)
    assert table[-1]["rows"] == 2


def test_row_spec_window_deployment_and_precision():
    rows = accuracy.read_silicon(SILICON)
    aliases = accuracy.load_aliases(ALIASES)
    fp8 = next(r for r in rows if r["precision"] == "fp8" and r["model_path"] == "Qwen/Qwen3-32B")
    kw = dict(perf="aic", aliases=aliases, model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE)
    c, isl, osl = int(fp8["batch_size"]), int(fp8["isl"]), int(fp8["osl"])
    # default: AIPerf as AIConfigurator's cluster workflow runs it: c warm-up requests
    # (run, not reported), then 20·c measured from an idle engine, over a dataset of
    # 20·c shuffled entries with vLLM's prefix caching; AIConfigurator 0.5.0's generated
    # limits: c seqs, c + ISL + 1500 tokens; vLLM 0.12.0 schedules synchronously
    spec, warm, measured = accuracy.row_spec(fp8, **kw)
    # (num_requests is the measured count: the warm-up is sent besides it, as AIPerf's)
    assert (warm, measured, spec["traffic"]["source"]["num_requests"]) == (0, 20 * c, 20 * c)
    assert spec["traffic"]["load"]["warmup_requests"] == c
    assert spec["traffic"]["source"]["dataset"] == {"entries": 20 * c, "sampling": "shuffle"}
    assert spec["engine"]["scheduler"] == {"enable_prefix_caching": True, "max_num_seqs": c,
                                           "max_num_batched_tokens": c + isl + 1500}
    # the bare-metal script: 2·c warm-up requests, AIPerf's default 100 entries
    spec, warm, measured = accuracy.row_spec(fp8, load_generator="aiperf-baremetal", **kw)
    assert (measured, spec["traffic"]["source"]["num_requests"]) == (20 * c, 20 * c)
    assert spec["traffic"]["load"]["warmup_requests"] == 2 * c
    assert spec["traffic"]["source"]["dataset"]["entries"] == 100
    # the earlier genai-perf evaluation: 10·c from idle, every prompt new, no warm-up
    spec, warm, measured = accuracy.row_spec(fp8, load_generator="genai-perf", **kw)
    assert (warm, measured, spec["traffic"]["source"]["num_requests"]) == (0, 10 * c, 10 * c)
    assert "warmup_requests" not in spec["traffic"]["load"] and "dataset" not in spec["traffic"]["source"]
    assert spec["engine"]["scheduler"]["enable_prefix_caching"] is False
    # vLLM from 0.14.0 schedules asynchronously by default
    spec, _, _ = accuracy.row_spec(dict(fp8, backend_version="0.19.0"), **kw)
    assert spec["engine"]["scheduler"]["async_scheduling"] is True
    # an image's names for a release: v0.20.0 is release 0.20.0's tables; a nightly
    # build is the engine's own version (the core reads it as its newest release known,
    # tables included), with that release's async scheduling
    spec, _, _ = accuracy.row_spec(dict(fp8, backend_version="v0.20.0"), **kw)
    assert spec["engine"]["perf"]["backend_version"] == "0.20.0" and "backend_version" not in spec["engine"]
    spec, _, _ = accuracy.row_spec(dict(fp8, backend_version="nightly-75c2eef"), **kw)
    assert spec["engine"]["backend_version"] == "nightly-75c2eef" and "backend_version" not in spec["engine"]["perf"]
    assert spec["engine"]["scheduler"]["async_scheduling"] is True
    with pytest.raises(ValueError, match="load_generator 'locust'"):
        accuracy.row_spec(fp8, load_generator="locust", **kw)
    # aiconfigurator 0.7.0's rule: at least 512 seqs, 512 + ISL + 1500 tokens, ISL + OSL + 1500 long
    spec, _, _ = accuracy.row_spec(fp8, deployment="aic-generator-0.7", **kw)
    assert spec["engine"]["scheduler"] == {"enable_prefix_caching": True, "max_num_seqs": 512,
                                           "max_num_batched_tokens": 512 + isl + 1500,
                                           "max_model_len": isl + osl + 1500}
    assert spec["engine"]["quantization"] == {"weights": "fp8", "kv_cache": "fp8"}
    # fp4 rows: NVFP4 weights with an fp8 KV cache; bf16 a bf16 KV cache; an empty
    # precision the checkpoint's own formats
    for precision, quant in (("fp4", {"weights": "nvfp4", "kv_cache": "fp8"}),
                             ("nvfp4", {"weights": "nvfp4", "kv_cache": "fp8"}),
                             ("bf16", {"weights": "bf16", "kv_cache": "bf16"}),
                             ("", {"kv_cache": "auto"})):
        spec_p, _, _ = accuracy.row_spec(dict(fp8, precision=precision), **kw)
        assert spec_p["engine"]["quantization"] == quant, precision
    # int4 is a checkpoint's own int4 weights: Qwen3-32B has none
    with pytest.raises(ValueError, match="precision 'int4': the checkpoint Qwen--Qwen3-32B_config.json stores no int4 weights"):
        accuracy.row_spec(dict(fp8, precision="int4"), **kw)
    with pytest.raises(ValueError, match="precision 'int3' is not supported"):
        accuracy.row_spec(dict(fp8, precision="int3"), **kw)
    # Kimi-K2.5's int4 experts, gpt-oss's MXFP4 experts and DeepSeek-V4's fp4 experts
    # (expert_dtype, beside fp8 linear layers; InferenceX calls its H200 runs fp8) are the
    # checkpoint's formats (its bf16 attention stays bf16): no weights override
    for model, precision in (("moonshotai/Kimi-K2.5", "int4"), ("openai/gpt-oss-120b", "fp4"),
                             ("openai/gpt-oss-120b", "mxfp4"), ("deepseek-ai/DeepSeek-V4-Pro", "fp4"),
                             ("deepseek-ai/DeepSeek-V4-Pro", "fp8")):
        row = dict(fp8, model_path=model, precision=precision, moe_tp_size="1", moe_ep_size="1", tp_size="1")
        spec_p, _, _ = accuracy.row_spec(row, **kw)
        assert spec_p["engine"]["quantization"] == {"kv_cache": "auto"}, (model, precision)
    # default client: the reference AIPerf client path (docs/design.md): the calibration's
    # 152 µs for a one-request pass split into 123 µs per pass + 29 µs per request; the
    # row's vLLM 0.12.0 is a V1 engine, whose input processing shares the API server's loop
    assert spec["engine"]["tokenization"] == {"send_ms": 0.255, "per_token_us": 2.0, "shared_event_loop": True}
    assert spec["engine"]["detokenization"] == {"base_us": 123.0, "per_token_us": 29.0}
    assert spec["traffic"]["load"] == {"mode": "concurrency", "concurrency": c, "warmup_requests": c,
                                       "response_overhead": {"base_ms": 1.40, "per_output_token_us": 3.65}}
    bare, _, _ = accuracy.row_spec(fp8, client="none", **kw)
    assert "tokenization" not in bare["engine"] and "detokenization" not in bare["engine"]
    assert bare["traffic"]["load"] == {"mode": "concurrency", "concurrency": c, "warmup_requests": c}
    with pytest.raises(ValueError, match="client 'locust'"):
        accuracy.row_spec(fp8, client="locust", **kw)
    # steady state: first and last waves unmeasured; vLLM defaults: 8192 tokens
    spec, warm, measured = accuracy.row_spec(fp8, steady_state=True, deployment="vllm-defaults", **kw)
    assert warm == c and measured % c == 0 and measured >= accuracy.MIN_MEASURED
    assert spec["traffic"]["source"]["num_requests"] == warm + measured + c  # + drain wave
    assert spec["engine"]["scheduler"]["max_num_batched_tokens"] == 8192
    with pytest.raises(ValueError, match="deployment 'sglang'"):
        accuracy.row_spec(fp8, deployment="sglang", **kw)
    with pytest.raises(ValueError, match="prefill_num_workers is empty"):  # a P/D row needs its sides (disagg.py)
        accuracy.row_spec(dict(fp8, mode="disagg"), perf="aic", aliases=aliases,
                          model_configs=accuracy.DEFAULT_MODEL_CONFIGS, database=accuracy.DEFAULT_DATABASE)


def test_row_spec_length_ratio_option():
    # Qwen3-32B 1024/128 at c = 8: R = 0.8 gives lengths uniform in [819, 1024] and
    # [102, 128]; the earlier genai-perf window sends 10 requests a client, all measured.
    row = accuracy.read_silicon(SILICON)[0]
    aliases = accuracy.load_aliases(ALIASES)
    spec, warm, measured = accuracy.row_spec(
        row, perf="roofline", aliases=aliases, model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
        database=accuracy.DEFAULT_DATABASE, length_ratio=0.8, load_generator="genai-perf")
    src = spec["traffic"]["source"]
    assert src["isl"] == {"kind": "uniform", "min": 819, "max": 1024}
    assert src["osl"] == {"kind": "uniform", "min": 102, "max": 128}
    assert (warm, measured, src["num_requests"]) == (0, 80, 80)
    spec, warm, measured = accuracy.row_spec(
        row, perf="roofline", aliases=aliases, model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
        database=accuracy.DEFAULT_DATABASE, steady_state=True)
    assert spec["traffic"]["source"]["isl"] == 1024 and warm == 8
    with pytest.raises(ValueError):
        accuracy.evaluate([row], aliases=aliases, length_ratio=0)
    with pytest.raises(ValueError, match="deployment"):
        accuracy.evaluate([row], aliases=aliases, deployment="tgi")
    with pytest.raises(ValueError, match="client"):
        accuracy.evaluate([row], aliases=aliases, client="wrk")


def test_dataset_entries_reuse_prompts_with_prefix_caching():
    # Qwen3-32B 1024/128 TP 2, one client (c = 1), genai-perf's window of 10 requests.
    # One dataset entry: the first request computes its prompt; the other nine find its
    # 64 blocks of 16 cached and recompute the last (vLLM always computes the last
    # token): 63 · 16 = 1008 cached tokens each.
    row = dict(accuracy.read_silicon(SILICON)[0], batch_size="1")
    aliases = accuracy.load_aliases(ALIASES)
    kw = dict(perf="roofline", aliases=aliases, model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE, load_generator="genai-perf")
    spec, warm, measured = accuracy.row_spec(row, dataset_entries=1, sampling="sequential", **kw)
    assert spec["traffic"]["source"]["dataset"] == {"entries": 1, "sampling": "sequential"}
    assert spec["engine"]["scheduler"]["enable_prefix_caching"] is True
    import aisimulate
    rep = aisimulate.replay(spec)
    assert [r["cached_tokens"] for r in rep.requests] == [0] + [1008] * 9
    res = accuracy.run_row(row, dataset_entries=1, sampling="sequential", **kw)
    assert res.status == "ok" and (res.dataset_entries, res.sampling) == (1, "sequential")
    assert res.predicted_ttft_ms == pytest.approx(sum(r["ttft_ms"] for r in rep.requests) / 10)
    fresh = accuracy.run_row(row, **kw)
    assert (fresh.dataset_entries, fresh.sampling) == (0, "")
    assert res.predicted_ttft_ms < 0.5 * fresh.predicted_ttft_ms  # 9 of 10 prefills nearly free
    for bad, match in (({"dataset_entries": -1}, "dataset_entries -1"),
                       ({"dataset_entries": accuracy.MAX_DATASET_ENTRIES + 1}, r"want an integer in \[0, 1000000\]"),
                       ({"dataset_entries": 5, "sampling": "zipf"}, "sampling 'zipf'")):
        with pytest.raises(ValueError, match=match):
            accuracy.evaluate([row], aliases=aliases, **bad)
    # the harness's bound is the core's
    spec["traffic"]["source"]["dataset"]["entries"] = accuracy.MAX_DATASET_ENTRIES + 1
    with pytest.raises(aisimulate.ConfigError, match="must be ≤ 1000000"):
        aisimulate.replay(spec)


def test_a_row_vllm_would_refuse_at_the_default_max_model_len_runs_as_launched():
    # Qwen3-32B 1024/128 at TP 1 on one H100, c = 1 (max_num_batched_tokens 1 + 1024 +
    # 1500): the KV cache holds 1,805 blocks (28,880 tokens), less than one request of
    # the default max_model_len 40,960, so vLLM (and the core) refuse to start. The measured run started, so its operator lowered
    # max_model_len; the harness uses AIConfigurator's generator value, ISL + OSL + 1500
    # = 1024 + 128 + 1500 = 2652, and the row runs.
    import aisimulate
    row = dict(accuracy.read_silicon(SILICON)[0], tp_size="1", batch_size="1")
    assert (row["isl"], row["osl"]) == ("1024", "128")
    kw = dict(perf="roofline", aliases=accuracy.load_aliases(ALIASES), model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE)
    spec, _, _ = accuracy.row_spec(row, **kw)
    with pytest.raises(aisimulate.ConfigError, match="largest max_model_len that fits is 28880") as err:
        aisimulate.replay(spec)
    assert err.value.field == "engine.scheduler.max_model_len"
    res = accuracy.run_row(row, **kw)
    assert res.status == "ok", res.reason
    spec["engine"]["scheduler"]["max_model_len"] = 2652
    rep = aisimulate.replay(spec)
    # the c = 1 warm-up request is run but not reported: the 20 measured ones
    assert len(rep.requests) == 20
    assert res.predicted_tpot_ms == pytest.approx(sum(r["tpot_ms"] for r in rep.requests) / 20)


def test_script_without_matplotlib_writes_the_tables(tmp_path, slice_csv):
    """A virtualenv of the core dependencies (``make build``) has no matplotlib: the
    harness writes rows.csv and mape.csv, prints its table and says why there is no
    plot and what installs it; it ended in a ModuleNotFoundError traceback."""
    out = tmp_path / "out"
    argv = [str(REPO / "scripts" / "accuracy.py"), "--silicon", str(slice_csv), "--perf", "aic",
            "--out", str(out), "--aliases", str(ALIASES), "--jobs", "1"]
    code = ("import runpy, sys; sys.modules['matplotlib'] = None; "
            f"sys.argv = {argv!r}; runpy.run_path({argv[0]!r}, run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "overall" in proc.stdout
    assert "no predicted_vs_measured.png: matplotlib is not installed" in proc.stderr
    assert "pip install 'aisimulate[plot]'" in proc.stderr
    assert (out / "rows.csv").is_file() and (out / "mape.csv").is_file()
    assert not (out / "predicted_vs_measured.png").exists()
