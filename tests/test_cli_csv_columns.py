"""The CLI's lists and tables: ``replay --format csv`` has the
same columns for every run (a run with nothing completed, a run with ``--slo``), empty
cells where there is no value; ``--no-header`` appends rows under them; a key given
twice in ``--slo`` or a field given twice in ``sweep --grid`` is exit 2 naming it; a
misspelt grid field is exit 2 before any point runs; every command takes ``-q``."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import aisimulate
from aisimulate.cli import main
from aisimulate.cli.replay import _summary_columns, flatten_summary
from aisimulate.report import STAT_FIELDS
from conftest import BASE_SPEC, assert_usage_error, run_cli



@pytest.fixture
def config(tmp_path) -> Path:
    cfg = tmp_path / "replay.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    return cfg


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_the_columns_are_one_set_for_every_run(config, tmp_path):
    ok = run_cli("replay", str(config), "-q", "--format", "csv", cwd=tmp_path)
    # every request longer than the model's context: all rejected, no statistic at all
    rejected = run_cli("replay", str(config), "-q", "--format", "csv", "--set", "traffic.source.isl=10000000",
                       cwd=tmp_path)
    slo = run_cli("replay", str(config), "-q", "--format", "csv", "--slo", "ttft_ms=1e9", cwd=tmp_path)
    for proc in (ok, rejected, slo):
        assert proc.returncode == 0, proc.stderr
    # sent far faster than the deployment serves: the saturation line fills its column
    saturated = run_cli("replay", str(config), "-q", "--format", "csv", "--set", "traffic.source.num_requests=400",
                        "--set", "traffic.load.rate_rps=2000", cwd=tmp_path)
    assert saturated.returncode == 0, saturated.stderr
    header = rows(ok.stdout)[0]
    # 12 numbers, 8 statistics × 8 stats, the goodput's 6 columns, in_flight's 2,
    # worker_utilization's 3 and saturation
    assert len(header) == 12 + 8 * len(STAT_FIELDS) + 6 + 2 + 3 + 1 == 88
    assert header == sorted(header) and "ttft_ms.p99" in header and "goodput.slo.ttft_ms" in header
    for proc in (ok, rejected, slo, saturated):
        head, row = rows(proc.stdout)
        assert head == header and len(row) == len(header)
        assert "nan" not in proc.stdout.lower()
    cell = lambda proc, col: rows(proc.stdout)[1][header.index(col)]  # noqa: E731
    assert cell(rejected, "completed") == "0" and cell(rejected, "rejected") == "5"
    for col in ("ttft_ms.p50", "input_sequence_length.mean", "output_token_throughput_per_user.max",
                "goodput.good_requests"):
        assert cell(rejected, col) == "", col
    # the SLO's own columns: the bound given, the two not given empty; 5 of 5 good
    assert float(cell(slo, "goodput.slo.ttft_ms")) == 1e9
    assert cell(slo, "goodput.slo.tpot_ms") == cell(slo, "goodput.slo.e2e_ms") == ""
    assert cell(slo, "goodput.good_requests") == "5" and float(cell(slo, "goodput.slo_attainment")) == 1.0
    assert cell(ok, "goodput.good_requests") == "" and cell(ok, "completed") == "5"
    assert cell(ok, "saturation") == "" and cell(saturated, "saturation").startswith("saturated: offered ")
    assert int(cell(saturated, "in_flight.peak")) > int(cell(ok, "in_flight.peak")) >= 1


def test_no_header_appends_a_row_under_the_same_columns(config, tmp_path):
    first = run_cli("replay", str(config), "-q", "--format", "csv", cwd=tmp_path)
    more = run_cli("replay", str(config), "-q", "--format", "csv", "--no-header",
                   "--set", "traffic.source.isl=10000000", cwd=tmp_path)
    table = rows(first.stdout + more.stdout)
    assert len(table) == 3 and len(table[2]) == len(table[0])
    assert table[2][table[0].index("rejected")] == "5"
    usage_error(run_cli("replay", str(config), "--no-header", cwd=tmp_path), "--no-header", "--format csv")


def test_the_column_list_covers_the_whole_summary(tmp_path):
    """Every field of a summary with every part present (statistics, an SLO with every
    bound) is a column, so a field the core adds cannot go missing from the list."""
    report = aisimulate.replay(BASE_SPEC, slo={"ttft_ms": 1e9, "tpot_ms": 1e9, "e2e_ms": 1e9})
    assert sorted(flatten_summary(report.summary)) == list(_summary_columns())


def test_a_key_given_twice_is_refused(config, tmp_path):
    usage_error(run_cli("replay", str(config), "--slo", "ttft_ms=200,ttft_ms=100", cwd=tmp_path),
                "--slo ttft_ms", "twice")
    usage_error(run_cli("sweep", str(config), "-q", "--grid", "traffic.source.osl=4,6", "--slo", "ttft_ms=200",
                        "--slo", "ttft_ms=100", cwd=tmp_path), "--slo ttft_ms", "twice")
    usage_error(run_cli("sweep", str(config), "-q", "--grid", "traffic.load.concurrency=1,2",
                        "--grid", "traffic.load.concurrency=3", cwd=tmp_path),
                "--grid traffic.load.concurrency", "twice")
    usage_error(run_cli("sweep", str(config), "-q", "--grid", "traffic.source.osl=4,6",
                        "--grid", "traffic.source.isl,traffic.source.osl=8:2,16:4", cwd=tmp_path),
                "--grid traffic.source.osl", "twice")


def test_a_misspelt_grid_field_is_refused_before_any_point_runs(config, tmp_path, monkeypatch):
    sweep_mod = sys.modules[aisimulate.sweep.__module__]
    ran = []
    monkeypatch.setattr(sweep_mod, "run_local", lambda tasks, *a, **k: ran.append(tasks))
    with pytest.raises(aisimulate.ConfigError) as err:
        aisimulate.sweep(str(config), {"traffic.load.bogus": [1, 2]}, jobs=1, progress=False)
    assert err.value.field == "traffic.load.bogus" and err.value.reason.startswith("unknown field (known: ")
    assert ran == []
    monkeypatch.undo()
    proc = run_cli("sweep", str(config), "-q", "--grid", "traffic.load.bogus=1,2", cwd=tmp_path)
    usage_error(proc, "--grid: traffic.load.bogus: unknown field (known: ")
    points = tmp_path / "points.yaml"
    points.write_text("- {traffic.load.bogus: 1}\n")
    usage_error(run_cli("sweep", str(config), "-q", "--points", str(points), cwd=tmp_path),
                f"--points {points}: traffic.load.bogus: unknown field")
    # a known field the point cannot have (a trace path on a synthetic source) stays that
    # point's failure: the others run
    df = aisimulate.sweep(str(config), [{"traffic.source.osl": 4}, {"traffic.source.path": "x.jsonl"}],
                          jobs=1, progress=False)
    assert df["status"].tolist() == ["ok", "error"]
    assert "belongs to type mooncake" in df["reason"][1]


@pytest.mark.parametrize("command", ["replay", "validate", "sweep", "compare"])
def test_every_command_takes_quiet(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert "--quiet, -q" in capsys.readouterr().out


def usage_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert_usage_error(proc, 'aisimulate: error: ', *needles)
