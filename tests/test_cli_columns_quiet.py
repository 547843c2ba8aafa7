"""``sweep --columns`` takes the always-present SLO columns without ``--slo`` and
refuses a column named twice (exit 2, not a traceback); every command takes ``-q``."""

from __future__ import annotations

import json

import pytest
import yaml

from aisimulate.cli import main, parser
from conftest import BASE_SPEC, REPO, assert_usage_error, run_cli


@pytest.fixture
def cfg(tmp_path):
    path = tmp_path / "base.yaml"
    path.write_text(yaml.safe_dump(BASE_SPEC))
    return path


GRID = ["--grid", "traffic.source.osl=4,6", "-q", "--jobs", "1", "--format", "csv"]


def test_columns_take_goodput_without_slo_as_empty(cfg, capsys):
    assert main(["sweep", str(cfg), *GRID, "--columns", "goodput_rps,completed"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "traffic.source.osl,status,reason,goodput_rps,completed"
    # BASE_SPEC: 5 requests, each completed; no SLO, so no goodput
    assert lines[1:] == ["4,ok,,,5", "6,ok,,,5"]
    # with an SLO every request meets (1e9 ms), goodput is the completed over the duration
    assert main(["sweep", str(cfg), *GRID, "--columns", "slo_attainment,completed", "--slo", "e2e_ms=1e9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "traffic.source.osl,status,reason,slo_attainment,completed"
    assert lines[1:] == ["4,ok,,1.0,5", "6,ok,,1.0,5"]


def test_the_table_format_shows_the_columns_asked_for(cfg, capsys):
    # --format table printed its fixed metric columns whatever --columns said
    table = [a for a in GRID if a not in ("--format", "csv")]
    assert main(["sweep", str(cfg), *table, "--columns", "total_output_tokens,goodput_rps"]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    # BASE_SPEC: 5 requests × osl output tokens; no SLO: goodput empty
    assert lines == [["traffic.source.osl", "status", "total_output_tokens", "goodput_rps"],
                     ["4", "ok", "20", "—"], ["6", "ok", "30", "—"]]


def test_a_column_given_twice_is_exit_2(cfg, tmp_path):
    proc = run_cli("sweep", str(cfg), *GRID, "--columns", "completed,ttft_ms.p50,completed", cwd=tmp_path)
    assert_usage_error(proc, "aisimulate: error: --columns completed: given twice")


def test_the_api_refuses_a_column_given_twice(cfg):
    import aisimulate

    with pytest.raises(aisimulate.ConfigError, match="'completed' is given twice"):
        aisimulate.sweep(str(cfg), {"traffic.source.osl": [4]}, columns=["completed", "completed"], progress=False)


def _commands():
    sub = next(a for a in parser()._actions if a.dest == "command")
    return sub.choices


def test_every_command_takes_quiet():
    for name, p in _commands().items():
        assert {"-q", "--quiet"} <= set(p._option_string_actions), name


@pytest.mark.parametrize("command", ["models", "systems", "schema"])
def test_quiet_listings_print_the_same(command, tmp_path):
    loud = run_cli(command, cwd=tmp_path)
    quiet = run_cli(command, "-q", cwd=tmp_path)
    assert loud.returncode == quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == loud.stdout and quiet.stdout


@pytest.mark.parametrize("command", ["models", "systems"])
def test_quiet_listings_leave_out_the_search_path_line(command, tmp_path):
    # the table's note on stderr of where the data folders were searched; -q silences it
    loud = run_cli(command, cwd=tmp_path)
    assert loud.stderr.startswith(f"searched for {command} in: ") and len(loud.stderr.splitlines()) == 1
    quiet = run_cli(command, "-q", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_metrics_doc_says_session_id_is_the_traces_own_id():
    # the records carry the trace's id as it is, an integer or a string (test_session_names)
    row = next(line for line in (REPO / "docs" / "metrics.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `session_id` |"))
    kind = row.split("|")[2].strip()
    assert kind == "integer or string", row
