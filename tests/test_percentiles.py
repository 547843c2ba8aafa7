"""Chosen percentiles (``replay(percentiles=…)``, ``--percentiles``): worked example 1
by hand, the checks, the table's columns, the CSV and vLLM exports; without them the
report is unchanged."""

import json
import math

import numpy as np
import pytest

import aisimulate
from aisimulate import ConfigError
from conftest import EXAMPLE1_ROWS, assert_usage_error, example1_spec, run_cli, write_mooncake


@pytest.fixture
def spec(tmp_path):
    return example1_spec(write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS))


def test_worked_example_1_by_hand(spec):
    # TTFTs 7.10 and 14.00 ms (TestWorkedExample1_TwoRequestsOneWorker); numpy's linear
    # rule puts the p-th percentile of n sorted values at v = (n − 1)·p/100:
    # p25 = 7.10 + 6.90·0.25 = 8.825, p99.9 = 7.10 + 6.90·0.999 = 13.9931. The gaps
    # the clients received, 2.2, 2.2 (r2's and r1's second) and 3.1 ms: p99.9 at
    # v = 1.998 is 2.2 + 0.9·0.998 = 3.0982.
    rep = aisimulate.replay(spec, percentiles=[99.9, 25, 25.0], progress=False)
    assert rep.metadata["percentiles"] == [25.0, 99.9]
    ttft, itl = rep.summary["ttft_ms"], rep.summary["itl_ms"]
    assert ttft["p25"] == pytest.approx(8.825) and ttft["p99.9"] == pytest.approx(13.9931)
    assert itl["p25"] == pytest.approx(2.2) and itl["p99.9"] == pytest.approx(3.0982)
    # numpy over the records agrees, and the fixed percentiles are all still there
    assert ttft["p99.9"] == pytest.approx(np.percentile([r["ttft_ms"] for r in rep.requests], 99.9))
    assert list(ttft) == ["mean", "std", "min", "max", "p50", "p90", "p95", "p99", "p25", "p99.9"]
    head = rep.table().splitlines()
    cols = next(line for line in head if line.startswith("metric (ms)")).split()[2:]
    assert cols == ["mean", "p25", "p99.9", "min", "max"]
    assert next(line for line in head if line.startswith("ttft_ms")).split()[2:4] == ["8.82", "13.99"]
    # the vLLM export writes the chosen ones under vLLM's keys
    vllm = rep.to_vllm_bench_json()
    assert vllm["p99.9_ttft_ms"] == ttft["p99.9"] and vllm["p25_itl_ms"] == itl["p25"]


def test_without_percentiles_nothing_changes(spec):
    plain = aisimulate.replay(spec, progress=False)
    assert "percentiles" not in plain.metadata and "p99.9" not in plain.summary["ttft_ms"]
    # the fixed ones only: the same summary, the metadata naming them
    fixed = aisimulate.replay(spec, percentiles=[99, 50], progress=False)
    assert fixed.summary == plain.summary and fixed.metadata["percentiles"] == [50.0, 99.0]
    assert "p95" not in fixed.table() and " p99 " in fixed.table()


@pytest.mark.parametrize("bad", [[], [0], [-5], [100.5], [50, math.nan], [math.inf]])
def test_bad_percentiles_name_the_field(spec, bad):
    with pytest.raises(ConfigError) as info:
        aisimulate.replay(spec, percentiles=bad, progress=False)
    assert info.value.field == "percentiles"


@pytest.mark.parametrize("bad", [[], [50, 0], [-5], [100.5]])
def test_core_refuses_as_the_api_does(spec, bad):
    # one rule, one message: the core's check (report.CheckPercentiles, for its Go
    # callers) refuses what check_percentiles refuses, in the same words
    from aisimulate.binding.calls import replay_native
    from aisimulate.config import load_config
    from aisimulate.run.replay import check_percentiles

    with pytest.raises(ConfigError) as api:
        check_percentiles(bad)
    with pytest.raises(ConfigError) as core:
        replay_native(load_config(spec).to_json(), {"percentiles": bad}, progress=False)
    assert (core.value.field, core.value.reason) == (api.value.field, api.value.reason)


@pytest.mark.parametrize("bad", [99, "50,90", {"p": 99}, [50, "90"], [True]])
def test_percentiles_of_another_form(spec, bad):
    with pytest.raises(TypeError, match="percentiles"):
        aisimulate.replay(spec, percentiles=bad, progress=False)


def test_cli_table_json_csv_and_vllm_export(spec, tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    p = run_cli("replay", str(path), "--percentiles", "50,90,99", "--percentiles", "99.9", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    header = next(line for line in p.stdout.splitlines() if line.startswith("metric (ms)"))
    assert header.split()[2:] == ["mean", "p50", "p90", "p99", "p99.9", "min", "max"]
    p = run_cli("replay", str(path), "--percentiles", "99.9", "--format", "json", cwd=tmp_path)
    assert json.loads(p.stdout)["summary"]["ttft_ms"]["p99.9"] == pytest.approx(13.9931)
    p = run_cli("replay", str(path), "--percentiles", "99.9", "--format", "csv", cwd=tmp_path)
    head, row = p.stdout.splitlines()
    cells = dict(zip(head.split(","), row.split(",")))
    assert float(cells["ttft_ms.p99.9"]) == pytest.approx(13.9931)
    assert "ttst_ms.p99.9" in cells and cells["ttst_ms.p99"] != ""
    out = tmp_path / "out"
    p = run_cli("replay", str(path), "--percentiles", "99.9", "--output-dir", str(out), "--export", "vllm",
                cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    vllm = json.loads((out / "vllm_bench_result.json").read_text())
    assert vllm["p99.9_ttft_ms"] == pytest.approx(13.9931) and "p99_ttft_ms" not in vllm
    assert json.loads((out / "prediction.json").read_text())["metadata"]["percentiles"] == [99.9]


@pytest.mark.parametrize("value, needle", [("0", "--percentiles: 0 is not a percentile: each must be"),
                                           ("50,nan", "--percentiles: nan is not a percentile"),
                                           ("50,x", "--percentiles 'x': want numbers")])
def test_cli_bad_percentiles(spec, tmp_path, value, needle):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert_usage_error(run_cli("replay", str(path), "--percentiles", value, cwd=tmp_path), "aisimulate: error:",
                       needle)


def test_sweep_reports_the_chosen_percentiles(spec, tmp_path):
    # one point of worked example 1: the TTFTs 7.10 and 14.00 ms give p25 = 8.825 and
    # p99.9 = 13.9931 (above); p50 is a fixed column already, so it adds none
    df = aisimulate.sweep(spec, {"engine.workers.aggregated.count": [1]}, percentiles=[99.9, 25, 50])
    assert df.loc[0, "ttft_ms.p25"] == pytest.approx(8.825)
    assert df.loc[0, "ttft_ms.p99.9"] == pytest.approx(13.9931)
    assert df.loc[0, "itl_ms.p99.9"] == pytest.approx(3.0982)
    assert df.loc[0, "ttft_ms.p50"] == pytest.approx(10.55)  # 7.10 + 6.90·0.5, as without them
    stats = [c[len("ttft_ms."):] for c in df.columns if c.startswith("ttft_ms.")]
    assert stats == ["mean", "std", "min", "max", "p50", "p90", "p95", "p99", "p25", "p99.9"]
    assert "ttft_ms.p25" not in aisimulate.sweep(spec, {"engine.workers.aggregated.count": [1]}).columns
    with pytest.raises(ConfigError) as info:
        aisimulate.sweep(spec, {"engine.workers.aggregated.count": [1]}, percentiles=[50, 0])
    assert info.value.field == "percentiles"


def test_cli_sweep_percentiles_table_and_csv(spec, tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    grid = ("--grid", "engine.workers.aggregated.count=1")
    p = run_cli("sweep", str(path), *grid, "--percentiles", "25,99.9", "--jobs", "1", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    head, row = p.stdout.splitlines()[:2]
    cells = dict(zip(head.split(), row.split()))
    # the chosen ones in place of the table's TTFT and E2E percentiles
    assert head.split()[2:9] == ["gpus", "completed", "ttft_ms.p25", "ttft_ms.p99.9", "tpot_ms.mean",
                                 "e2e_ms.p25", "e2e_ms.p99.9"]
    assert (cells["ttft_ms.p25"], cells["ttft_ms.p99.9"]) == ("8.825", "13.99")
    p = run_cli("sweep", str(path), *grid, "--percentiles", "99.9", "--format", "csv", "--jobs", "1", "--quiet",
                cwd=tmp_path)
    head, row = p.stdout.splitlines()
    cells = dict(zip(head.split(","), row.split(",")))
    assert float(cells["ttft_ms.p99.9"]) == pytest.approx(13.9931) and cells["ttft_ms.p90"] != ""
    assert_usage_error(run_cli("sweep", str(path), *grid, "--percentiles", "0", cwd=tmp_path),
                       "aisimulate: error:", "--percentiles: 0 is not a percentile")


def _compare_export(tmp_path):
    """Four AIPerf records sent 1 s apart (each alone on the engine), prompts of 200, 400,
    600 and 800 tokens, 2 output tokens, measured TTFTs 10, 20, 30, 40 ms."""
    from test_compare import _timed_record

    path = tmp_path / "profile_export.jsonl"
    path.write_text("".join(
        _timed_record(1000 * i, 1000 * i + ttft + 2.1, isl, 2, time_to_first_token=ttft, inter_token_latency=2.1,
                      request_latency=ttft + 2.1) + "\n"
        for i, (isl, ttft) in enumerate([(200, 10), (400, 20), (600, 30), (800, 40)])))
    return path


def test_compare_the_chosen_percentiles_by_hand(tmp_path):
    # Linear perf: a lone prompt's TTFT is its prefill pass, 2 + 0.01·ISL = 4, 6, 8, 10 ms.
    # numpy's linear rule over 4 values puts p at v = 3·p/100: p25 at 0.75 (measured
    # 10 + 0.75·10 = 17.5, predicted 4 + 0.75·2 = 5.5), p99.9 at 2.997 (measured
    # 30 + 0.997·10 = 39.97, predicted 8 + 0.997·2 = 9.994); errors (p − m)/m.
    from test_compare import _deployment

    c = aisimulate.compare(_deployment(), _compare_export(tmp_path), percentiles=[99.9, 25])
    assert c.stats == ("mean", "p25", "p99.9")
    t = c.metrics.loc["ttft_ms"]
    assert (t["measured_p25"], t["predicted_p25"]) == (pytest.approx(17.5), pytest.approx(5.5))
    assert (t["measured_p99.9"], t["predicted_p99.9"]) == (pytest.approx(39.97), pytest.approx(9.994))
    assert t["error_p25_pct"] == pytest.approx((5.5 - 17.5) / 17.5 * 100)
    assert t["error_p99.9_pct"] == pytest.approx((9.994 - 39.97) / 39.97 * 100)
    assert t["measured_mean"] == pytest.approx(25.0) and t["predicted_mean"] == pytest.approx(7.0)
    assert "measured_p90" not in c.metrics.columns
    # the ITL without measured chunks is the core's, asked for the same percentiles:
    # one gap per request, each its decode pass of 2 + 0.1 = 2.1 ms
    assert c.metrics.loc["itl_ms"]["predicted_p99.9"] == pytest.approx(2.1)
    head = next(line for line in c.table().splitlines() if line.startswith("metric"))
    assert head.split()[1:4] == ["mean", "p25", "p99.9"]
    default = aisimulate.compare(_deployment(), _compare_export(tmp_path))
    assert default.stats == ("mean", "p50", "p90", "p99")
    assert default.metrics.loc["ttft_ms"]["measured_p50"] == pytest.approx(25.0)


def test_cli_compare_percentiles(tmp_path, capsys):
    from aisimulate.cli import main
    from test_compare import _deployment

    cfg = tmp_path / "deploy.json"
    cfg.write_text(json.dumps(_deployment()))
    path = _compare_export(tmp_path)
    assert main(["compare", "--aiperf", str(path), "--config", str(cfg), "--percentiles", "25",
                 "--percentiles", "99.9", "--format", "json", "--quiet"]) == 0
    ttft = json.loads(capsys.readouterr().out)["metrics"]["ttft_ms"]
    assert ttft["measured_p25"] == pytest.approx(17.5) and ttft["predicted_p99.9"] == pytest.approx(9.994)
    assert_usage_error(run_cli("compare", "--aiperf", str(path), "--config", str(cfg), "--percentiles", "101",
                               cwd=tmp_path), "aisimulate: error:", "--percentiles: 101 is not a percentile")
