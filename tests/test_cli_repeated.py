"""Repeated options of ``replay`` are combined, never quietly reduced to the last one:
``--slo`` bounds from every flag make one SLO, ``--records`` and ``--export`` formats
from every flag are all written; a key or format named twice across them is exit 2
naming it, as within one value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, assert_usage_error, run_cli

QUICKSTART = str(REPO / "examples" / "quickstart.yaml")


def test_repeated_slo_flags_make_one_set_of_bounds(tmp_path):
    out = tmp_path / "o"
    proc = run_cli("replay", QUICKSTART, "-q", "--format", "json", "--output-dir", str(out),
                   "--records", "jsonl", "--slo", "ttft_ms=150", "--slo", "e2e_ms=2100", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    goodput = json.loads(proc.stdout)["summary"]["goodput"]
    assert goodput["slo"] == {"ttft_ms": 150, "e2e_ms": 2100}
    # counted here from the per-request records: good = completed and within both bounds
    records = [json.loads(line) for line in (out / "requests.jsonl").read_text().splitlines()]
    good = sum(r["status"] == "completed" and r["ttft_ms"] <= 150 and r["e2e_ms"] <= 2100 for r in records)
    only_ttft = sum(r["status"] == "completed" and r["ttft_ms"] <= 150 for r in records)
    only_e2e = sum(r["status"] == "completed" and r["e2e_ms"] <= 2100 for r in records)
    assert good < min(only_ttft, only_e2e)  # each bound excludes requests the other keeps
    assert goodput["good_requests"] == good
    assert goodput["slo_attainment"] == pytest.approx(good / len(records))


@pytest.mark.parametrize("slos", [("ttft_ms=200", "ttft_ms=300"), ("ttft_ms=200,e2e_ms=1", "e2e_ms=2")])
def test_a_bound_given_in_two_slo_flags_is_exit_2(tmp_path, slos):
    args = [a for s in slos for a in ("--slo", s)]
    proc = run_cli("replay", QUICKSTART, "-q", *args, cwd=tmp_path)
    name = slos[1].split("=")[0]
    assert_usage_error(proc, f"aisimulate: error: --slo {name}: given twice")


@pytest.mark.parametrize("flag, values, files", [
    ("--records", ("csv", "jsonl"), {"requests.csv", "requests.jsonl"}),
    ("--export", ("aiperf", "vllm"), {"profile_export.jsonl", "profile_export_aiperf.json",
                                      "profile_export_aiperf.csv", "vllm_bench_result.json"}),
])
def test_repeated_format_flags_write_every_format(tmp_path, flag, values, files):
    out = tmp_path / "o"
    args = [a for v in values for a in (flag, v)]
    proc = run_cli("replay", QUICKSTART, "-q", "--output-dir", str(out), *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = {p.name for p in out.iterdir()}
    assert files <= written, written
    for name in files:
        assert f"wrote {out / name}" in proc.stderr


@pytest.mark.parametrize("flag, values, name", [("--records", ("csv,jsonl", "CSV"), "csv"),
                                                ("--export", ("aiperf", "vllm,aiperf"), "aiperf")])
def test_a_format_in_two_flags_is_exit_2(tmp_path, flag, values, name):
    out = tmp_path / "o"
    args = [a for v in values for a in (flag, v)]
    proc = run_cli("replay", QUICKSTART, "-q", "--output-dir", str(out), *args, cwd=tmp_path)
    assert_usage_error(proc, f"aisimulate: error: {flag} {name}: given twice")
    assert not out.exists()


def test_records_without_output_dir_is_exit_2(tmp_path):
    proc = run_cli("replay", QUICKSTART, "-q", "--records", "csv", cwd=tmp_path)
    assert_usage_error(proc, "aisimulate: error: --records", "--output-dir")
    assert list(tmp_path.iterdir()) == []


def test_a_set_field_given_twice_is_exit_2_naming_it(tmp_path):
    # the second value silently won
    proc = run_cli("replay", QUICKSTART, "-q", "--set", "engine.workers.aggregated.count=4",
                   "--set", "engine.workers.aggregated.count=2", cwd=tmp_path)
    assert_usage_error(proc, "aisimulate: error: --set engine.workers.aggregated.count: given twice",
                       "count=4 and 2")


def test_a_set_that_would_replace_an_earlier_one_inside_it_is_refused():
    from aisimulate.cli.common import UsageError, parse_sets

    with pytest.raises(UsageError, match=r"^--set engine.scheduler: would replace the earlier --set "
                                         r"engine.scheduler.block_size; give engine.scheduler first"):
        parse_sets(["engine.scheduler.block_size=32", "engine.scheduler={block_size: 16}"])
    # the other order changes one field of the mapping, in the order given
    assert list(parse_sets(["engine.scheduler={block_size: 16}", "engine.scheduler.block_size=32"]).items()) == [
        ("engine.scheduler", {"block_size": 16}), ("engine.scheduler.block_size", 32)]
    # a field that only starts like another is a field of its own
    assert parse_sets(["engine.model=a", "engine.modelx=b"]) == {"engine.model": "a", "engine.modelx": "b"}


def test_a_set_mapping_then_a_field_inside_it_replays_with_both(tmp_path):
    proc = run_cli("replay", QUICKSTART, "-q", "--format", "json", "--set", "engine.scheduler={block_size: 16}",
                   "--set", "engine.scheduler.block_size=32", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["metadata"]["block_size"] == 32


@pytest.mark.parametrize("grid", ["engine.workers.aggregated.count=1,2", "engine.workers.aggregated={count: 1, tp: 1}"])
def test_a_sweep_point_that_would_replace_a_set_is_exit_2(tmp_path, grid):
    # the grid's values silently replaced the --set's
    proc = run_cli("sweep", QUICKSTART, "-q", "--set", "engine.workers.aggregated.count=4", "--grid", grid,
                   cwd=tmp_path)
    field = grid.split("=")[0]
    assert_usage_error(proc, f"aisimulate: error: --grid {field}: also given by --set engine.workers.aggregated.count")


@pytest.mark.parametrize("slo, message", [("ttft=200", "--slo ttft: is not an SLO bound: use ttft_ms, tpot_ms, e2e_ms"),
                                          ("e2e_ms=0", "--slo e2e_ms: must be a finite number of ms > 0, got 0.0")])
def test_a_bad_slo_bound_names_the_option(tmp_path, slo, message):
    # it named the API's dotted field, slo.ttft, which no command line has
    proc = run_cli("replay", QUICKSTART, "-q", "--slo", slo, cwd=tmp_path)
    assert_usage_error(proc, f"aisimulate: error: {message}")
