"""``aisimulate sweep`` on the command line: grids (coupled too), scenario files, output
files written whole, and exit 2 for bad arguments."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest
import yaml

import aisimulate

from aisimulate.cli import main
from aisimulate.cli.sweep import parse_grid


@pytest.fixture
def cfg(tmp_path, base_spec):
    path = tmp_path / "base.yaml"
    path.write_text(yaml.safe_dump(base_spec))
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_parse_grid():
    assert parse_grid(["a.b=1,2", "c.d=x,{k: 1}"]) == {"a.b": [1, 2], "c.d": ["x", {"k": 1}]}
    assert parse_grid(["a.n,a.tp=8:1,4:2"]) == {("a.n", "a.tp"): [(8, 1), (4, 2)]}


def test_sweep_writes_parquet_and_prints_csv(cfg, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    out = tmp_path / "results.parquet"
    assert main(["sweep", str(cfg), "--grid", "engine.scheduler.max_num_seqs=4,0,8",
                 "--grid", "traffic.source.osl=4,6", "--out", str(out), "--format", "csv",
                 "--no-progress", "--jobs", "1"]) == 0
    captured = capsys.readouterr()
    df = pd.read_parquet(out)
    assert (out.stat().st_mode & 0o777) == 0o666 & ~_umask()  # as open() makes it, not mkstemp's 0600
    assert list(df["status"]) == ["ok", "ok", "error", "error", "ok", "ok"]
    assert list(df["total_output_tokens"].dropna()) == [20, 30, 20, 30]  # 5 requests × osl
    assert "2 of 6 points did not run" in captured.err
    printed = pd.read_csv(io.StringIO(captured.out))
    assert list(printed["status"]) == list(df["status"]) and len(printed.columns) == len(df.columns)


def test_sweep_scenarios_file_and_table(cfg, tmp_path, capsys):
    points = tmp_path / "points.yaml"
    points.write_text("- {engine.workers.aggregated.count: 2}\n- {traffic.source.osl: 8}\n")
    assert main(["sweep", str(cfg), "--points", str(points), "--no-progress", "--slo", "ttft_ms=100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["engine.workers.aggregated.count", "traffic.source.osl", "status"]
    assert len(out) == 3


def test_counts_print_as_integers_when_a_point_fails(cfg, tmp_path, capsys):
    # a failed point's counts are NaN in the DataFrame, which made the column float
    # (completed 5.0); the CLI prints them as integers, a failed point's empty (null in JSON)
    grid = ["sweep", str(cfg), "--grid", "engine.scheduler.max_num_seqs=4,0", "--grid", "traffic.source.osl=4",
            "--no-progress", "--jobs", "1", "--columns", "completed,total_output_tokens,gpus,duration_ms"]
    out = tmp_path / "r.csv"
    assert main([*grid, "--format", "csv", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert [row[4:7] for row in csv.reader(io.StringIO(printed))] == [["completed", "total_output_tokens", "gpus"],
                                                                     ["5", "20", "1"], ["", "", ""]]
    assert out.read_text() == printed  # --out .csv as stdout
    pd = pytest.importorskip("pandas")
    parquet = tmp_path / "r.parquet"  # a typed file: the API frame's float64 and NaN
    assert main([*grid, "--format", "csv", "--out", str(parquet)]) == 0
    capsys.readouterr()
    assert str(pd.read_parquet(parquet)["completed"].dtype) == "float64"
    assert main([*grid, "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["completed"], r["total_output_tokens"], r["gpus"]) for r in rows] == [(5, 20, 1), (None, None, None)]
    assert isinstance(rows[0]["completed"], int) and isinstance(rows[0]["duration_ms"], float)
    assert main([*grid]) == 0
    table = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert table[0][3:6] == ["completed", "total_output_tokens", "gpus"]
    assert table[1][3:6] == ["5", "20", "1"] and table[2][2:] == ["error", "—", "—", "—", "—"]
    assert "." not in " ".join(table[1][3:6] + table[2][3:6])


def test_the_api_keeps_nan_in_a_failed_points_counts(base_spec):
    # the DataFrame's count columns stay float64 with NaN (not pandas' Int64 with NA), so
    # that math.isnan and numpy work on a failed point's values
    import math

    df = aisimulate.sweep(base_spec, {"engine.scheduler.max_num_seqs": [4, 0]}, jobs=1, progress=False)
    assert str(df["completed"].dtype) == "float64"
    assert df["completed"][0] == 5 and math.isnan(df["completed"][1])


def test_the_table_names_each_failed_points_reason(cfg, capsys):
    # a value out of range fails every point: the table (which has no reason column) shows
    # "—" for the metrics, never "None", and stderr gives each point's reason; with no
    # point run, the exit is 1 and the last line says so (a misspelt field is exit 2
    # before any point runs: tests/test_cli_csv_columns.py)
    assert main(["sweep", str(cfg), "--grid", "engine.workers.aggregated.tp=0,-1", "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "None" not in captured.out
    assert captured.out.splitlines()[1].split() == ["0", "error"] + ["—"] * 9  # the 9 TABLE_COLUMNS
    reason = "ConfigError: engine.workers.aggregated.tp: must be ≥ 1, got"
    assert captured.err.splitlines() == ["2 of 2 points did not run:",
                                         f"  engine.workers.aggregated.tp=0: error: {reason} 0",
                                         f"  engine.workers.aggregated.tp=-1: error: {reason} -1",
                                         "aisimulate: error: every point failed (2 of 2): no point has a result"]


def test_a_failed_scenarios_note_names_only_its_own_fields_as_given(cfg, tmp_path, capsys):
    # the note printed "tp=nan" for a field another scenario sets, and
    # "tp=3.0" for an integer in a column with a NaN
    points = tmp_path / "points.yaml"
    points.write_text("- {engine.workers.aggregated.tp: 2}\n- {traffic.load.rate_rps: -1}\n"
                      "- {engine.workers.aggregated.tp: 3}\n")
    assert main(["sweep", str(cfg), "--points", str(points), "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "2 of 3 points did not run:"
    assert err[1].startswith("  traffic.load.rate_rps=-1: error: ConfigError: traffic.load.rate_rps: ")
    # Qwen3-32B has 64 attention heads: TP 3 does not divide them
    assert err[2].startswith("  engine.workers.aggregated.tp=3: error: ConfigError: engine.workers.aggregated.tp: ")
    assert "nan" not in "\n".join(err) and len(err) == 3


def test_out_never_overwrites_the_config_and_makes_its_folder(tmp_path, base_spec, capsys):
    # as for replay: a JSON config is a valid --out name
    cfg = tmp_path / "base.json"
    cfg.write_text(json.dumps(base_spec))
    before = cfg.read_bytes()
    assert main(["sweep", str(cfg), "--grid", "traffic.source.osl=4,6", "--out", str(cfg), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == (f"aisimulate: error: --out {cfg} would overwrite the input file {cfg} that this run "
                   "reads: choose another file\n")
    assert cfg.read_bytes() == before
    out = tmp_path / "new" / "sub" / "r.csv"
    assert main(["sweep", str(cfg), "--grid", "traffic.source.osl=4,6", "--out", str(out), "--no-progress"]) == 0
    assert len(out.read_text().splitlines()) == 1 + 2  # header + the 2 points


@pytest.mark.parametrize("args, message", [
    ([], "give the points as --grid"),
    (["--grid", "a=1", "--points", "p.yaml"], "one of the two"),
    (["--grid", "novalues"], "expected FIELD=V1,V2"),
    (["--grid", "a,b=1:2,3"], "needs 2 values"),
    (["--grid", "traffic.source.osl=4", "--out", "r.xlsx"], "use a .parquet, .csv or .jsonl"),
    (["--grid", "traffic.source.osl=4", "--slo", "ttft_ms"], "expected METRIC=MS"),
    (["--grid", "traffic.source.osl=4", "--slo", "ttft=5"], "error: --slo ttft: is not an SLO bound"),
    # as replay's --slo (check_slo): a bound is finite, and an SLO has one
    (["--grid", "traffic.source.osl=4", "--slo", "ttft_ms=inf"], "error: --slo ttft_ms: must be a finite number of ms > 0"),
    (["--grid", "traffic.source.osl=4", "--slo", ""], "error: --slo: has no bound"),
])
def test_bad_sweep_arguments_exit_2(cfg, capsys, args, message):
    assert main(["sweep", str(cfg), "--no-progress", *args]) == 2
    assert message in capsys.readouterr().err


def test_a_points_file_is_read_within_the_config_bounds(cfg, tmp_path, capsys):
    """A device never ends (it used to be read whole, forever) and a file that is
    not UTF-8 was a traceback; both are errors naming the file (exit 2)."""
    assert main(["sweep", str(cfg), "--no-progress", "--points", "/dev/zero"]) == 2
    assert capsys.readouterr().err == "aisimulate: error: /dev/zero: the scenario list is larger than 1 MiB\n"
    points = tmp_path / "points.yaml"
    points.write_bytes(b"- {traffic.source.osl: \"\xff\"}\n")
    assert main(["sweep", str(cfg), "--no-progress", "--points", str(points)]) == 2
    assert capsys.readouterr().err == f"aisimulate: error: {points}: scenario list file is not UTF-8 text (invalid start byte)\n"
    # an empty list (or an empty file, YAML's null) named nothing: "no points"
    for text in ("[]\n", "# nothing yet\n"):
        points.write_text(text)
        assert main(["sweep", str(cfg), "--no-progress", "--points", str(points)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"aisimulate: error: {points}: "), err
        assert "empty" in err


def test_csv_columns_do_not_depend_on_slo(cfg, capsys):
    # a sweep without --slo printed 2 columns fewer (goodput_rps, slo_attainment), so
    # two sweeps appended to one file did not line up; now both print the same header,
    # the SLO's columns empty without it
    grid = ["--grid", "traffic.source.osl=4,6", "--no-progress", "--jobs", "1", "--format", "csv"]
    assert main(["sweep", str(cfg), *grid]) == 0
    without = capsys.readouterr().out.splitlines()
    assert main(["sweep", str(cfg), *grid, "--slo", "e2e_ms=1e9"]) == 0
    with_slo = capsys.readouterr().out.splitlines()
    assert without[0] == with_slo[0]
    header = without[0].split(",")
    at = header.index("goodput_rps")
    assert header[at:at + 3] == ["goodput_rps", "slo_attainment", "ttft_ms.mean"]
    for row in without[1:]:
        assert row.split(",")[at:at + 2] == ["", ""]
    for row in with_slo[1:]:  # every request within 1e9 ms
        assert row.split(",")[at + 1] == "1.0"
    # --columns keeps the columns asked for, no more
    assert main(["sweep", str(cfg), *grid, "--columns", "completed"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "traffic.source.osl,status,reason,completed"


@pytest.mark.parametrize("how", ["grid", "points"])
def test_out_never_overwrites_a_trace_a_point_names(tmp_path, capsys, how):
    # the trace named by --grid / --points (not by the base config) was
    # replaced by the sweep's one-row table; now exit 2 naming it, before anything runs
    from conftest import EXAMPLE1_ROWS, example1_spec, write_mooncake

    base = write_mooncake(tmp_path / "base.jsonl", EXAMPLE1_ROWS)
    trace = write_mooncake(tmp_path / "other.jsonl", EXAMPLE1_ROWS[:1])
    cfg = tmp_path / "mc.yaml"
    cfg.write_text(yaml.safe_dump(example1_spec(base)))
    before = trace.read_bytes()
    if how == "grid":
        args = ["--grid", f"traffic.source.path={trace}"]
    else:
        points = tmp_path / "pts.yaml"
        points.write_text(f"- {{traffic.source.osl: 4}}\n- {{traffic.source.path: {trace}}}\n")
        args = ["--points", str(points)]
    assert main(["sweep", str(cfg), *args, "--out", str(trace), "--no-progress", "--jobs", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"aisimulate: error: --out {trace} would overwrite the input file {trace} "
                            "that this run reads: choose another file\n")
    assert captured.out == "" and trace.read_bytes() == before


def test_out_never_overwrites_a_model_config_a_point_reads(tmp_path, base_spec, capsys):
    # the named model's config.json in engine.model_config_dir is read too (a .json --out)
    folder = tmp_path / "models"
    folder.mkdir()
    src = next(p for p in __import__("aisimulate").catalogue.model_config_dirs()
               if (p / "Qwen--Qwen3-32B_config.json").is_file()) / "Qwen--Qwen3-32B_config.json"
    config = folder / "Qwen--Qwen3-32B_config.json"
    config.write_bytes(src.read_bytes())
    cfg = tmp_path / "base.yaml"
    cfg.write_text(yaml.safe_dump(base_spec))
    assert main(["sweep", str(cfg), "--grid", f"engine.model_config_dir={folder}", "--out", str(config),
                 "--no-progress", "--jobs", "1"]) == 2
    assert f"would overwrite the input file {config} " in capsys.readouterr().err
    assert config.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("args, message", [
    (["--ray-address", "auto"], "--ray-address applies to --backend ray only"),
    (["--backend", "ray", "--jobs", "2"], "--jobs applies to the local backend only"),
])
def test_an_option_of_the_other_backend_is_exit_2(cfg, capsys, args, message):
    # --ray-address without --backend ray ran locally, rc 0, without a word
    assert main(["sweep", str(cfg), "--grid", "traffic.source.osl=4", "--no-progress", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"aisimulate: error: {message}") and captured.out == ""


@pytest.mark.parametrize("option", [{"ray_address": "auto"}, {"path_map": {"/a": "/b"}},
                                    {"ray_files": "shared"}, {"max_retries": 0}])
def test_sweep_refuses_a_ray_option_without_the_ray_backend(base_spec, option):
    from aisimulate import sweep

    name = next(iter(option))
    with pytest.raises(ValueError, match=f"sweep {name}= applies to backend='ray' only"):
        sweep(base_spec, {"traffic.source.osl": [4]}, progress=False, **option)


def test_sweep_refuses_jobs_with_the_ray_backend(base_spec):
    from aisimulate import sweep

    with pytest.raises(ValueError, match="sweep jobs= applies to backend='local' only"):
        sweep(base_spec, {"traffic.source.osl": [4]}, progress=False, backend="ray", jobs=2)


def test_the_sweep_table_shows_the_slo_columns_with_slo(cfg, capsys):
    # --slo "fills goodput_rps, slo_attainment" but the default table had
    # neither. 5 requests: every one meets ttft_ms=1e6, so goodput = completed / duration
    # and attainment 1; none meets ttft_ms=0.001 (a TTFT of ≥ 10 ms: the linear perf's base)
    assert main(["sweep", str(cfg), "--grid", "traffic.source.osl=4", "--no-progress", "--format", "csv"]) == 0
    pd = pytest.importorskip("pandas")
    row = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[0]
    goodput = row["completed"] / (row["duration_ms"] / 1000)
    for bound, values in (("1e6", [f"{goodput:.4g}", "1"]), ("0.001", ["0", "0"])):
        assert main(["sweep", str(cfg), "--grid", "traffic.source.osl=4", "--no-progress",
                     "--slo", f"ttft_ms={bound}"]) == 0
        header, line = capsys.readouterr().out.splitlines()
        assert header.split()[-2:] == ["goodput_rps", "slo_attainment"]
        assert line.split()[-2:] == values
    assert main(["sweep", str(cfg), "--grid", "traffic.source.osl=4", "--no-progress"]) == 0
    assert "goodput_rps" not in capsys.readouterr().out  # without --slo they would be empty


def test_parse_grid_keeps_a_mapping_value_whole():
    # every comma split the values, so a length distribution could never
    # be given ("invalid YAML: expected ',' or '}'"), and "1,,2" made a point of null
    dist = {"kind": "uniform", "min": 1, "max": 8}
    assert parse_grid(["traffic.source.isl={kind: uniform, min: 1, max: 8},512"]) == {
        "traffic.source.isl": [dist, 512]}
    assert parse_grid(["traffic.source.isl={kind: fixed, value: 5}"]) == {
        "traffic.source.isl": [{"kind": "fixed", "value": 5}]}
    assert parse_grid(["a.isl,a.osl={kind: uniform, min: 1, max: 8}:4,16:[1, 2]"]) == {
        ("a.isl", "a.osl"): [(dist, 4), (16, [1, 2])]}
    assert parse_grid(["a.name='x,y',\"p:q\""]) == {"a.name": ["x,y", "p:q"]}


@pytest.mark.parametrize("grid", ["engine.workers.aggregated.count=1,,2", "engine.workers.aggregated.count=1,",
                                  "a,b=1:,2:3"])
def test_an_empty_grid_value_is_exit_2(cfg, capsys, grid):
    assert main(["sweep", str(cfg), "--grid", grid, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("aisimulate: error: --grid ") and err.endswith(
        ": a value is empty (two commas in a row, or one at an end)\n")


def test_a_sweep_over_length_distributions_runs(cfg, capsys):
    pd = pytest.importorskip("pandas")
    assert main(["sweep", str(cfg), "--grid", "traffic.source.osl={kind: fixed, value: 6},4", "--no-progress",
                 "--format", "csv", "--jobs", "1"]) == 0
    df = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(df["total_output_tokens"]) == [30, 20]  # 5 requests × 6, × 4


def test_sweep_json_keeps_every_digit(tmp_path, base_spec, capsys):
    # --out .jsonl and --format json rounded to 10 decimals (pandas'
    # default): a gpu_hours of 5.56e-10 came out as 6e-10. Hand value: one request of one
    # prompt and one output token, linear perf of 0.001 ms a pass (prefill, no decode
    # pass), closed loop of 1: two requests, duration 0.002 ms; 1 GPU × 0.002 ms / 3.6e6 ms/h
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    base_spec["engine"]["perf"] = {"source": "linear", "base_ms": 0.001, "per_prefill_token_ms": 0,
                                   "per_decode_seq_ms": 0}
    base_spec["traffic"] = {"source": {"type": "synthetic", "num_requests": 2, "isl": 1, "osl": 1},
                            "load": {"mode": "concurrency", "concurrency": 1}}
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(base_spec))
    got = {}
    for ext in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"s.{ext}"
        assert main(["sweep", str(cfg), "-q", "--grid", "traffic.load.concurrency=1", "--format", "json",
                     "--out", str(out)]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["gpu_hours"] == pytest.approx(0.002 / 3.6e6, rel=1e-15)
        got[ext] = (pd.read_json(out, lines=True, precise_float=True) if ext == "jsonl"
                    else pd.read_csv(out) if ext == "csv"
                    else pd.read_parquet(out))["gpu_hours"].tolist()
        assert got[ext] == [printed["gpu_hours"]], ext
    assert json.loads((tmp_path / "s.jsonl").read_text())["gpu_hours"] == printed["gpu_hours"]


def test_out_that_cannot_be_written_names_the_option(cfg, tmp_path, capsys, monkeypatch):
    # the write after the sweep fails (a full disk): the message names --out, as --trace-out's does
    import errno

    from aisimulate.cli import sweep as sweep_cli

    out = tmp_path / "r.csv"

    def full(frame, path):
        raise OSError(errno.ENOSPC, "No space left on device", path)

    monkeypatch.setattr(sweep_cli, "write_frame", full)
    assert main(["sweep", str(cfg), "--grid", "traffic.source.osl=4", "--out", str(out), "--no-progress"]) == 1
    assert f"error: --out {out}: cannot write: No space left on device" in capsys.readouterr().err
