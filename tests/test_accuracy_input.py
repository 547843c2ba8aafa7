"""Bad input to the accuracy harness and the roofline calibration: clear errors that name
the file, line and column, skipped rows with their reason, exit 2, never a traceback,
never a NaN in an output."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from aisimulate.tools import accuracy
from aisimulate.tools.roofline_calibration import fit_roofline

REPO = Path(__file__).resolve().parent.parent
SILICON = accuracy.SHARED_DATA / "silicon" / "vllm_dense_dev.csv"
ALIASES = accuracy.SHARED_DATA / "silicon" / "model_aliases.csv"

pytestmark = pytest.mark.skipif(not SILICON.is_file(), reason="shared silicon data not found")


def _write(path: Path, rows: list[dict[str, str]], fields: list[str] | None = None, bom: bool = False) -> Path:
    fields = fields or [k for k in rows[0] if k != accuracy.LINE_KEY]
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.fixture
def dev_rows() -> list[dict[str, str]]:
    return accuracy.read_silicon(SILICON)[:3]


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=REPO)


def test_read_silicon_lines_bom_and_file_errors(tmp_path, dev_rows):
    rows = accuracy.read_silicon(_write(tmp_path / "bom.csv", dev_rows, bom=True))
    assert [r[accuracy.LINE_KEY] for r in rows] == ["2", "3", "4"] and rows[0]["id"] == dev_rows[0]["id"]
    with pytest.raises(ValueError, match="no data rows"):
        accuracy.read_silicon(_write(tmp_path / "empty.csv", [], fields=list(accuracy.REQUIRED_COLUMNS)))
    with pytest.raises(ValueError, match="missing column.*silicon_tpot_ms"):
        accuracy.read_silicon(_write(tmp_path / "nocol.csv", [],
                                     fields=[c for c in accuracy.REQUIRED_COLUMNS if c != "silicon_tpot_ms"]))
    (tmp_path / "zero.csv").write_text("")
    with pytest.raises(ValueError, match="empty file"):
        accuracy.read_silicon(tmp_path / "zero.csv")
    extra = tmp_path / "extra.csv"
    _write(extra, dev_rows)
    extra.write_text(extra.read_text().rstrip("\n") + ",surplus\n")
    with pytest.raises(ValueError, match="line 4 has 1 field.s. more than the header"):
        accuracy.read_silicon(extra)
    dup = [dev_rows[0], dict(dev_rows[1], id=dev_rows[0]["id"])]
    with pytest.raises(ValueError, match="on lines 2 and 3"):
        accuracy.read_silicon(_write(tmp_path / "dup.csv", dup))


@pytest.mark.parametrize("column, value, reason", [
    ("isl", "abc", "line 2: isl = 'abc' is not a number"),
    ("isl", "inf", "line 2: isl = 'inf' is not a whole number"),
    ("batch_size", "8.5", "line 2: batch_size = '8.5' is not a whole number"),
    ("silicon_ttft_ms", "inf", "line 2: silicon_ttft_ms = 'inf': want a finite number > 0"),
    ("silicon_tpot_ms", "", "line 2: silicon_tpot_ms = '': want a finite number > 0"),
    ("osl", "1", "line 2: osl = 1: a TPOT needs at least 2 output tokens"),
])
def test_bad_value_skips_the_row_with_line_and_column(tmp_path, dev_rows, column, value, reason):
    rows = accuracy.read_silicon(_write(tmp_path / "bad.csv", [dict(dev_rows[0], **{column: value})]))
    [res] = accuracy.evaluate(rows, aliases=accuracy.load_aliases(ALIASES))
    assert (res.status, res.reason) == ("skipped", reason)
    # the other columns still reach rows.csv; nothing is made up for the bad one
    accuracy.write_rows([res], tmp_path / "rows.csv")
    with open(tmp_path / "rows.csv", newline="") as f:
        out = next(csv.DictReader(f))
    assert out["tp"] == dev_rows[0]["tp_size"] and out["predicted_ttft_ms"] == ""
    assert "nan" not in ",".join(out.values()).lower()


def test_model_without_alias_found_by_config_file_name(tmp_path, dev_rows):
    # Qwen/Qwen3-8B is not in model_aliases.csv; Qwen--Qwen3-8B_config.json is in the folder
    row = dict(dev_rows[0], model_path="Qwen/Qwen3-8B", tp_size="1")
    rows = accuracy.read_silicon(_write(tmp_path / "q8.csv", [row]))
    [res] = accuracy.evaluate(rows, perf="roofline", aliases=accuracy.load_aliases(ALIASES))
    assert res.status == "ok", res.reason
    spec, _, _ = accuracy.row_spec(rows[0], perf="roofline", aliases=accuracy.load_aliases(ALIASES),
                                   model_configs=accuracy.DEFAULT_MODEL_CONFIGS, database=accuracy.DEFAULT_DATABASE)
    assert spec["engine"]["model"].endswith("Qwen--Qwen3-8B_config.json")


def test_mape_table_empty_and_per_precision_lines():
    assert accuracy.mape_table([accuracy.RowResult(id="x", status="skipped", reason="r")]) == []

    def ok(precision: str, ttft: float) -> accuracy.RowResult:
        return accuracy.RowResult(id=precision + str(ttft), status="ok", model="m", system="s", tp=1,
                                  precision=precision, silicon_ttft_ms=100, silicon_tpot_ms=10,
                                  predicted_ttft_ms=ttft, predicted_tpot_ms=10)
    table = accuracy.mape_table([ok("", 110), ok("", 130), ok("fp8", 50)])
    by = {t["model"]: t for t in table}
    # overall (10 + 30 + 50) / 3 = 30 %; checkpoint-format rows 20 %; fp8 rows 50 %
    assert by["overall"]["ttft_mape_pct"] == pytest.approx(30)
    assert by["overall [checkpoint]"]["ttft_mape_pct"] == pytest.approx(20)
    assert (by["overall [fp8]"]["ttft_mape_pct"], by["overall [fp8]"]["rows"]) == (pytest.approx(50), 1)


def test_accuracy_script_bad_input_exits_2_without_traceback(tmp_path, dev_rows):
    good = _write(tmp_path / "good.csv", dev_rows)
    empty = _write(tmp_path / "empty.csv", [], fields=list(accuracy.REQUIRED_COLUMNS))
    unknown = _write(tmp_path / "unknown.csv", [dict(r, model_path="acme/None") for r in dev_rows])
    (tmp_path / "afile").write_text("x")
    script = str(REPO / "scripts" / "accuracy.py")
    cases = [
        ([script, "--silicon", str(tmp_path / "nope.csv")], "No such file"),
        ([script, "--silicon", str(empty)], "no data rows"),
        ([script, "--silicon", str(good), "--length-ratio", "0"], "length_ratio must be in (0, 1]"),
        ([script, "--silicon", str(good), "--length-ratio", "nan"], "length_ratio must be in (0, 1]"),
        ([script, "--silicon", str(good), "--jobs", "0"], "want ≥ 1"),
        ([script, "--silicon", str(good), "--dataset-entries", "-1"], "-1: want 0 to 1000000"),
        ([script, "--silicon", str(good), "--dataset-entries", "1.5"], "'1.5' is not an integer"),
        ([script, "--silicon", str(good), "--sampling", "zipf"], "invalid choice: 'zipf'"),
        ([script, "--silicon", str(good), "--dataset-entries", "1000001"], "want 0 to 1000000"),
        ([script, "--silicon", str(good), "--sampling", "random"], "--sampling needs --dataset-entries"),
        ([script, "--silicon", str(good), "--aliases", str(tmp_path / "none.csv")], "--aliases"),
        ([script, "--silicon", str(good), "--model-configs", str(tmp_path / "none")], "--model-configs"),
        ([script, "--silicon", str(good), "--out", str(tmp_path / "afile")], "--out"),
        ([script, "--silicon", str(unknown), "--out", str(tmp_path / "o")], "no row of"),
    ]
    for argv, message in cases:
        proc = _script(*argv)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert message in proc.stderr, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
    # every row skipped: rows.csv still lists them with the reason
    with open(tmp_path / "o" / "rows.csv", newline="") as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["skipped"] * 3


def test_calibration_bad_input_and_budget(tmp_path, dev_rows):
    # a slice in its own folder: the shared aliases stand in; one row the roofline
    # cannot serve is left out and said so
    rows = dev_rows + [dict(dev_rows[0], id="bad_model", model_path="acme/None")]
    csv_path = _write(tmp_path / "slice.csv", rows)
    out = tmp_path / "fit.json"
    script = str(REPO / "scripts" / "calibrate_roofline.py")
    proc = _script(script, "--silicon", str(csv_path), "--out", str(out), "--max-evals", "4", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert "skipped bad_model: line 5: unknown model 'acme/None'" in proc.stdout
    fit = json.loads(out.read_text())
    assert fit["fit"]["rows"] == 3 and fit["fit"]["evaluations"] == 4
    assert "3 rows used, 1 skipped" in fit["provenance"]["data"]
    for argv, message in [(["--free", "bogus"], "free must name"),
                          (["--free", "compute_efficiency,compute_efficiency"], "each once"),
                          (["--max-evals", "0"], "want ≥ 1"),
                          (["--aliases", str(tmp_path / "none.csv")], "--aliases")]:
        proc = _script(script, "--silicon", str(csv_path), "--out", str(out), *argv)
        assert proc.returncode == 2 and message in proc.stderr, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr
    with pytest.raises(ValueError, match="no silicon row could be simulated"):
        fit_roofline(accuracy.read_silicon(_write(tmp_path / "u.csv", rows[3:])),
                     aliases=accuracy.load_aliases(ALIASES))
