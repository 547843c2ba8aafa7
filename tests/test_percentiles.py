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
