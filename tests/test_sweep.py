"""aisimulate.sweep: grids, coupled fields and scenarios; every point a row with its status;
errors recorded or raised; derived and SLO columns worked out by hand; the hangs
as subprocesses that must finish."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import pytest

import aisimulate
from aisimulate import ConfigError, InfeasibleError
from aisimulate.sweep import SUMMARY_COLUMNS, metric_columns
from conftest import REPO


def test_sweep_grid_and_monotone_ttft(base_spec):
    base_spec["traffic"]["source"]["num_requests"] = 40
    base_spec["traffic"]["load"] = {"mode": "concurrency", "concurrency": 4}
    df = aisimulate.sweep(base_spec, {"engine.workers.aggregated.count": [1, 2],
                                      "traffic.load.concurrency": [1, 4]}, jobs=2)
    assert len(df) == 4
    assert list(df.columns[:4]) == ["engine.workers.aggregated.count", "traffic.load.concurrency",
                                    "status", "reason"]
    assert list(df.columns[4:]) == list(SUMMARY_COLUMNS)
    # the last key varies fastest
    assert list(zip(df["engine.workers.aggregated.count"], df["traffic.load.concurrency"])) == [
        (1, 1), (1, 4), (2, 1), (2, 4)]
    assert (df["status"] == "ok").all() and df["reason"].isna().all()
    assert (df["completed"] == 40).all()
    # each point equals its own replay run directly
    spec = dict(base_spec)
    spec["engine"] = dict(base_spec["engine"], workers={"aggregated": {"count": 2}})
    spec["traffic"] = dict(base_spec["traffic"], load={"mode": "concurrency", "concurrency": 4})
    direct = aisimulate.replay(spec).summary
    row = df[(df["engine.workers.aggregated.count"] == 2) & (df["traffic.load.concurrency"] == 4)].iloc[0]
    assert row["ttft_ms.p50"] == direct["ttft_ms"]["p50"]
    assert row["ttft_ms.p95"] == direct["ttft_ms"]["p95"]
    assert row["gpu_hours"] == direct["gpu_hours"]
    assert row["gpus"] == 2  # two workers of TP 1


def test_derived_and_slo_columns_by_hand(base_spec):
    # One closed-loop client, 5 requests of 100 prompt / 4 output tokens, linear perf
    # (2 ms + 0.01 ms/prompt token + 0.1 ms/decoding request):
    #   prefill pass 2 + 0.01·100 = 3.0 ms = TTFT; 3 decode passes of 2 + 0.1 = 2.1 ms;
    #   E2E 3.0 + 3·2.1 = 9.3 ms; 5 requests back to back: duration 46.5 ms.
    #   output 5·4 = 20 tokens / 0.0465 s = 430.1075 tok/s on 1 GPU;
    #   per user 1000 / 2.1 = 476.1905 tok/s.
    base_spec["traffic"]["load"] = {"mode": "concurrency", "concurrency": 1}
    df = aisimulate.sweep(base_spec, [{"traffic.load.concurrency": 1}] * 3, jobs=1,
                          slo={"ttft_ms": 3.0, "tpot_ms": 2.11})
    row = df.iloc[0]
    assert row["duration_ms"] == pytest.approx(46.5)
    assert row["gpus"] == 1
    assert row["output_tps_per_gpu"] == pytest.approx(20 / 0.0465)
    assert row["output_tps_per_user"] == pytest.approx(1000 / 2.1)
    assert row["goodput_rps"] == pytest.approx(5 / 0.0465)  # all 5 meet TTFT ≤ 3, TPOT ≤ 2.11
    assert row["slo_attainment"] == 1.0
    assert list(df.columns[-32:]) == metric_columns({"ttft_ms": 1})[-32:]  # latency stats last
    # a TPOT threshold just under 2.1 ms: no request meets it
    df = aisimulate.sweep(base_spec, [{}], slo={"tpot_ms": 2.09}, columns=["goodput_rps", "slo_attainment"])
    assert list(df.columns) == ["status", "reason", "goodput_rps", "slo_attainment"]
    assert df.iloc[0]["goodput_rps"] == 0 and df.iloc[0]["slo_attainment"] == 0
    # one column by name, not its characters
    df = aisimulate.sweep(base_spec, [{}], slo={"tpot_ms": 2.09}, columns="slo_attainment")
    assert list(df.columns) == ["status", "reason", "slo_attainment"]
    # an SLO that is not a mapping is refused before anything runs, naming the form
    with pytest.raises(TypeError, match=r"^slo must be a mapping such as \{'ttft_ms': 200, 'tpot_ms': 20\}"):
        aisimulate.sweep(base_spec, [{}], slo=[1, 2])


def test_errors_are_recorded_and_the_sweep_goes_on(base_spec):
    df = aisimulate.sweep(base_spec, {"engine.scheduler.max_num_seqs": [4, 0, 8]}, jobs=2)
    assert list(df["status"]) == ["ok", "error", "ok"]
    assert df["reason"][1].startswith("ConfigError: engine.scheduler.max_num_seqs:")
    assert math.isnan(df["completed"][1]) and list(df["completed"][[0, 2]]) == [5, 5]


def test_errors_raise_names_the_point_before_running(base_spec):
    with pytest.raises(ConfigError) as e:
        aisimulate.sweep(base_spec, {"engine.scheduler.max_num_seqs": [4, 0]}, errors="raise")
    assert e.value.field == "engine.scheduler.max_num_seqs"
    assert e.value.__notes__ == ["in sweep point 1 (engine.scheduler.max_num_seqs=0)"]


def test_infeasible_deployments_are_their_own_status(base_spec):
    # Llama-3.1-70B bf16 needs 131 GiB of weights: TP 1 on an 80 GiB H100 cannot start,
    # TP 2 can (65.7 GiB per GPU).
    # (max_model_len 8192: at TP 2 the KV cache holds fewer tokens than its 131,072)
    base_spec["engine"].update(model="meta-llama/Llama-3.1-70B-Instruct", scheduler={"max_model_len": 8192})
    base_spec["traffic"]["source"].update(num_requests=2)
    df = aisimulate.sweep(base_spec, {"engine.workers.aggregated.tp": [1, 2]}, jobs=2)
    assert list(df["status"]) == ["infeasible", "ok"]
    assert "does not fit on h100_sxm at TP 1" in df["reason"][0]
    assert df["gpus"][1] == 2
    with pytest.raises(InfeasibleError) as e:
        aisimulate.sweep(base_spec, {"engine.workers.aggregated.tp": [1, 2]}, errors="raise", jobs=1)
    assert "in sweep point 0 (engine.workers.aggregated.tp=1)" in e.value.__notes__


def test_coupled_fields_and_scenarios(base_spec):
    coupled = aisimulate.sweep(base_spec, {("engine.workers.aggregated.count", "engine.workers.aggregated.tp"):
                                           [(2, 1), (1, 2)], "traffic.load.rate_rps": [5.0]}, jobs=1)
    assert list(coupled.columns[:3]) == ["engine.workers.aggregated.count", "engine.workers.aggregated.tp",
                                         "traffic.load.rate_rps"]
    assert list(coupled["gpus"]) == [2, 2]
    scen = aisimulate.sweep(base_spec, [{"engine.workers.aggregated.count": 2},
                                        {"traffic.source.osl": 8}], jobs=1)
    assert list(scen.columns[:2]) == ["engine.workers.aggregated.count", "traffic.source.osl"]
    assert scen["engine.workers.aggregated.count"][0] == 2 and math.isnan(scen["traffic.source.osl"][0])
    assert list(scen["total_output_tokens"]) == [5 * 4, 5 * 8]


@pytest.mark.parametrize("points, message", [
    ({}, "the sweep grid is empty"),
    ([], "no scenarios"),
    ({"engine.workers.aggregated.count": 2}, "must be a non-empty list"),
    ({("engine.workers.aggregated.count", "engine.workers.aggregated.tp"): [(1, 2, 3)]}, "need 2 values"),
    ({"engine..tp": [1]}, "dotted spec path"),
    ([{"a.b": 1}, 3], "scenario 2 of 2 must be a mapping"),
    ({"engine.model.x": [1]}, "not a mapping: cannot set engine.model.x"),
])
def test_malformed_points_are_config_errors(base_spec, points, message):
    with pytest.raises(ConfigError, match=message):
        aisimulate.sweep(base_spec, points, errors="raise")


@pytest.mark.parametrize("options, message", [
    ({"backend": "dask"}, "backend 'dask' is not supported"),
    ({"errors": "ignore"}, "use 'record' or 'raise'"),
    ({"columns": ["ttft_ms.p42"]}, "unknown sweep column"),
    ({"slo": {"ttft": 1}}, "slo.ttft: is not an SLO bound"),
    ({"slo": {"ttft_ms": 0}}, "slo.ttft_ms: must be a finite number of ms > 0, got 0"),
    # as replay() checks it (check_slo): a bound is finite, and an SLO has one
    ({"slo": {"ttft_ms": float("inf")}}, "slo.ttft_ms: must be a finite number of ms > 0, got inf"),
    ({"slo": {}}, "slo: has no bound"),
    ({"jobs": 0}, "jobs must be ≥ 1"),
])
def test_bad_options(base_spec, options, message):
    with pytest.raises(ConfigError, match=message):
        aisimulate.sweep(base_spec, {"traffic.load.rate_rps": [5.0]}, **options)


def test_return_reports(base_spec):
    df, reports = aisimulate.sweep(base_spec, {"engine.scheduler.max_num_seqs": [0, 4]},
                                   return_reports=True, jobs=1)
    assert reports[0] is None and len(reports[1].requests) == 5
    assert reports[1].summary["gpu_hours"] == df["gpu_hours"][1]


def test_sweep_over_dataset_entries_shows_cached_tokens(base_spec):
    # One client, 12 requests of one fixed prompt length: with E dataset entries the
    # first E requests compute their prompts and the other 12 − E find them cached.
    src = base_spec["traffic"]["source"]
    src.update(num_requests=12, isl=1000, osl=4)
    base_spec["traffic"]["load"] = {"mode": "concurrency", "concurrency": 1}
    df = aisimulate.sweep(base_spec, {"traffic.source.dataset.entries": [1, 3, 12]}, jobs=1)
    per_hit = 62 * 16  # 1000 tokens: 62 full blocks of 16
    assert list(df["total_cached_tokens"]) == [11 * per_hit, 9 * per_hit, 0]


@pytest.mark.parametrize("source, field, message", [
    ({"dataset": {"entries": 0}}, "traffic.source.dataset.entries", "must be ≥ 1"),
    ({"dataset": {"entries": 4, "sampling": "zipf"}}, "traffic.source.dataset.sampling", "not supported"),
    ({"dataset": [4]}, "traffic.source.dataset", "expected a mapping"),
])
def test_dataset_errors_name_the_field(base_spec, source, field, message):
    base_spec["traffic"]["source"].update(source)
    with pytest.raises(ConfigError) as e:
        aisimulate.replay(base_spec)
    assert e.value.field == field and message in str(e.value)


def _run_script(tmp_path, body: str, timeout: float = 180) -> subprocess.CompletedProcess:
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=timeout)


def test_sweep_hangs_a_script_without_a_main_guard_and_a_config_error_in_a_worker(tmp_path):
    # Before, each of these hung: (1) spawn re-ran a script without a __main__ guard in
    # every worker (hundreds of freeze_support() tracebacks); loky workers never re-run
    # __main__. (2) ConfigError did not unpickle, so multiprocessing's result thread died
    # and the parent waited forever; the TP-1 points now come back as rows. The pool is
    # forced (SERIAL_BELOW_S = 0) so the points really run in worker processes.
    proc = _run_script(tmp_path, f"""
        import aisimulate, aisimulate._sweep.local as local
        local.SERIAL_BELOW_S = 0
        print("script body ran")
        base = aisimulate.load_config({str(REPO / "examples" / "quickstart.yaml")!r}).data
        base["engine"]["model"] = "meta-llama/Llama-3.1-70B-Instruct"
        base["engine"]["scheduler"] = {{"max_model_len": 8192}}  # TP 2's KV cannot hold 131,072
        base["traffic"]["source"]["num_requests"] = 20
        df = aisimulate.sweep(base, {{"engine.workers.aggregated.tp": [1, 2, 1, 2]}}, jobs=2)
        print(list(df["status"]))
        """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["script body ran", "['infeasible', 'ok', 'infeasible', 'ok']"]
    assert "freeze_support" not in proc.stderr


def test_ray_shared_paths_are_rewritten_by_the_longest_prefix():
    # ray_files="shared": the driver's paths become the cluster's, longest prefix first;
    # names (a built-in model, a system name) are left alone.
    from aisimulate._sweep.ray_backend import _remap, _shared

    pm = {"/home/me": "/mnt/home", "/home/me/data": "/mnt/data"}
    assert _remap("/home/me/data/t.jsonl", pm) == "/mnt/data/t.jsonl"
    assert _remap("/home/me/x.yaml", pm) == "/mnt/home/x.yaml"
    assert _remap("/home/meet/x", pm) == "/home/meet/x"  # a prefix is a whole folder
    spec = {"engine": {"model": "Qwen/Qwen3-32B", "system": "/home/me/sys.yaml",
                       "model_config_dir": "/home/me/data/models", "perf": {"database": "/home/me/data/aic"}},
            "traffic": {"source": {"path": "/home/me/data/t.jsonl"}}}
    out = _shared(spec, pm)
    assert out["engine"] == {"model": "Qwen/Qwen3-32B", "system": "/mnt/home/sys.yaml",
                             "model_config_dir": "/mnt/data/models", "perf": {"database": "/mnt/data/aic"}}
    assert out["traffic"]["source"]["path"] == "/mnt/data/t.jsonl"


def test_latencies_are_floats_and_counts_integers_whatever_their_values(tmp_path):
    # whole-valued latencies came out as int (summary) / int64 (sweep
    # columns), so two runs' Parquet files had different schemas. Hand values: linear
    # perf, one request at a time: prefill pass 10 + 100 × 0.01 = 11 ms = TTFT, each decode
    # pass 10 + 1 × 1 = 11 ms, E2E 11 + 4 × 11 = 55 ms; two requests: duration 110 ms.
    pq = pytest.importorskip("pyarrow.parquet")
    ds = pytest.importorskip("pyarrow.dataset")
    spec = {"engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
                       "perf": {"source": "linear", "base_ms": 10, "per_prefill_token_ms": 0.01,
                                "per_decode_seq_ms": 1}},
            "traffic": {"source": {"type": "synthetic", "num_requests": 2, "isl": 100, "osl": 5},
                        "load": {"mode": "concurrency", "concurrency": 1}}}
    s = aisimulate.replay(spec, progress=False, slo={"ttft_ms": 100}).summary
    assert (s["ttft_ms"]["mean"], s["e2e_ms"]["p99"], s["duration_ms"]) == (11.0, 55.0, 110.0)
    assert type(s["ttft_ms"]["mean"]) is float and type(s["ttft_ms"]["std"]) is float
    assert type(s["duration_ms"]) is float and type(s["goodput"]["slo"]["ttft_ms"]) is float
    assert type(s["goodput"]["slo_attainment"]) is float and s["goodput"]["slo_attainment"] == 1.0
    assert type(s["completed"]) is int and s["completed"] == 2 and type(s["goodput"]["good_requests"]) is int
    assert type(s["input_sequence_length"]["min"]) is float and s["input_sequence_length"]["min"] == 100.0
    whole = aisimulate.sweep(spec, {"engine.perf.base_ms": [10]}, jobs=1)
    half = aisimulate.sweep(spec, {"engine.perf.base_ms": [10.5]}, jobs=1)
    assert whole["ttft_ms.mean"].tolist() == [11.0] and half["ttft_ms.mean"].tolist() == [11.5]
    for col in ("duration_ms", "ttft_ms.mean", "tpot_ms.p99", "itl_ms.min", "e2e_ms.std"):
        assert str(whole[col].dtype) == "float64", col
    for col in ("completed", "total_input_tokens", "preemptions", "gpus"):
        assert str(whole[col].dtype) == "int64", col
    whole.drop(columns="engine.perf.base_ms").to_parquet(tmp_path / "a.parquet")
    half.drop(columns="engine.perf.base_ms").to_parquet(tmp_path / "b.parquet")
    assert pq.read_schema(tmp_path / "a.parquet") == pq.read_schema(tmp_path / "b.parquet")
    both = ds.dataset([str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]).to_table()
    assert both.column("ttft_ms.mean").to_pylist() == [11.0, 11.5]


def test_a_point_is_the_base_as_given_with_its_fields_set(tmp_path):
    # a sweep over engine.backend: each point compiles as `replay BASE --set` does, so
    # an sglang point gets SGLang's defaults, not the vLLM scheduler block the base's
    # compilation filled in
    base = tmp_path / "base.yaml"
    base.write_text("engine: {model: Qwen/Qwen3-8B, system: h100_sxm}\n"
                    "traffic: {source: {type: synthetic, num_requests: 6, isl: 128, osl: 8}, "
                    "load: {mode: concurrency, concurrency: 2}}\n")
    df = aisimulate.sweep(str(base), {"engine.backend": ["vllm", "sglang", "trtllm"]}, jobs=1, progress=False)
    assert list(df["status"]) == ["ok", "ok", "ok"]
    for backend, ttft in zip(df["engine.backend"], df["ttft_ms.mean"]):
        alone = aisimulate.replay(aisimulate.load_config(str(base), overrides={"engine.backend": backend}),
                                  progress=False)
        assert ttft == pytest.approx(alone.summary["ttft_ms"]["mean"]), backend
    # a compiled base keeps the config as given: the same points run
    df2 = aisimulate.sweep(aisimulate.load_config(str(base)), {"engine.backend": ["sglang"]}, progress=False)
    assert list(df2["status"]) == ["ok"]
