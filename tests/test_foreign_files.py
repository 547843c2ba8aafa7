"""A result folder never loses a file aisimulate did not write: a real
AIPerf ``profile_export.jsonl``, or a user's own ``prediction.json`` (a config piped from
stdin), in the folder is refused — exit 2 naming the file, the file byte for byte as it
was — unless ``--force`` (``force=True``); an earlier aisimulate result there is
replaced as before."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import aisimulate
from aisimulate.io import files as _files
from conftest import BASE_SPEC, assert_usage_error, run_cli

#: The first line of a profile_export.jsonl as AIPerf writes it (not ours: no
#: aisimulate_version anywhere in the folder).
REAL_AIPERF = '{"metadata": {"x_request_id": "r1"}, "metrics": {"request_latency": {"value": 812.5, "unit": "ms"}}}\n'



@pytest.fixture
def config(tmp_path) -> Path:
    cfg = tmp_path / "replay.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    return cfg


def test_a_real_aiperf_export_is_not_overwritten(tmp_path, config):
    out = tmp_path / "run"
    out.mkdir()
    (out / "profile_export.jsonl").write_text(REAL_AIPERF)
    proc = run_cli("replay", str(config), "--output-dir", str(out), "--export", "aiperf", "-q", cwd=tmp_path)
    refused(proc, str(out / "profile_export.jsonl"), "--force")
    assert (out / "profile_export.jsonl").read_text() == REAL_AIPERF
    assert sorted(p.name for p in out.iterdir()) == ["profile_export.jsonl"]  # nothing else written
    # with --force it is replaced by the simulated run (5 requests: 5 lines)
    proc = run_cli("replay", str(config), "--output-dir", str(out), "--export", "aiperf", "-q", "--force",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len((out / "profile_export.jsonl").read_text().splitlines()) == 5


def test_a_config_from_stdin_named_like_the_marker_is_not_overwritten(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    own = out / "prediction.json"
    own.write_text(json.dumps(BASE_SPEC))  # the user's config, not a result
    before = own.read_bytes()
    proc = run_cli("replay", "-", "--output-dir", str(out), "-q", cwd=tmp_path, stdin=own.read_text())
    refused(proc, str(own))
    assert own.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["prediction.json"]


def test_an_earlier_result_is_replaced_and_other_files_kept(tmp_path, config):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")  # a name the result does not use: left alone
    for extra in ((), ("--records", "csv", "--export", "aiperf,vllm")):
        proc = run_cli("replay", str(config), "--output-dir", str(out), "-q", *extra, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "notes.txt", "prediction.json", "profile_export.jsonl", "profile_export_aiperf.csv",
        "profile_export_aiperf.json", "requests.csv", "vllm_bench_result.json"]
    # the table the first result wrote and the second did not list is gone; a third run
    # over the second (every file listed by its prediction.json) is accepted
    proc = run_cli("replay", str(config), "--output-dir", str(out), "-q", "--export", "aiperf", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (out / "notes.txt").read_text() == "mine"


def test_force_needs_an_output_dir(tmp_path, config):
    proc = run_cli("replay", str(config), "--force", cwd=tmp_path)
    assert proc.returncode == 2 and "--force" in proc.stderr and "--output-dir" in proc.stderr


def test_python_save_and_to_aiperf_refuse_unless_forced(tmp_path):
    report = aisimulate.replay(BASE_SPEC)
    (tmp_path / "profile_export.jsonl").write_text(REAL_AIPERF)
    for write in (lambda **k: report.save(tmp_path, exports="aiperf", **k),
                  lambda **k: report.to_aiperf(tmp_path, **k),
                  lambda **k: aisimulate.replay(BASE_SPEC, output_dir=tmp_path, exports="aiperf", **k)):
        with pytest.raises(_files.ForeignFileError) as err:
            write()
        assert err.value.path == tmp_path / "profile_export.jsonl"
        assert str(tmp_path / "profile_export.jsonl") in str(err.value)
        assert (tmp_path / "profile_export.jsonl").read_text() == REAL_AIPERF
    report.to_aiperf(tmp_path, force=True)
    # an AIPerf export aisimulate wrote is its own: written again without force
    report.to_aiperf(tmp_path)
    report.save(tmp_path, exports="aiperf")
    assert json.loads((tmp_path / "prediction.json").read_text())["records"]["count"] == 5


def test_a_foreign_marker_lists_nothing_to_remove(tmp_path):
    """With force, a prediction.json aisimulate did not write is replaced, and the files
    it happens to list under records.files are not removed as a stale result's would be."""
    keep = tmp_path / "data.csv"
    keep.write_text("a,b\n")
    (tmp_path / "prediction.json").write_text(json.dumps({"records": {"files": {"data.csv": {}}}}))
    assert _files.previous_result(tmp_path) == set()
    aisimulate.replay(BASE_SPEC).save(tmp_path, force=True)
    assert keep.read_text() == "a,b\n"
    assert _files.previous_result(tmp_path) == {"prediction.json", "requests.parquet"}


def marked_result(directory: Path, files: dict) -> bytes:
    """A folder holding what an earlier aisimulate save left: its marker listing
    ``files`` (name → text, each written); the marker's bytes."""
    directory.mkdir(exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    doc = {"metadata": {"aisimulate_version": "0.0.0"},
           "records": {"count": 0, "files": {name: {} for name in files}}}
    (directory / "prediction.json").write_text(json.dumps(doc))
    return (directory / "prediction.json").read_bytes()


def test_a_save_removes_only_names_aisimulate_writes(tmp_path, config):
    """A marker listing a user's file (or a name that is no plain file
    name) does not make a save delete it, with or without --force; the stale table it
    lists is still removed."""
    out = tmp_path / "o1"
    marked_result(out, {"requests.csv": "x\n", "thesis.txt": "my thesis"})
    (out / "sub").mkdir()
    (out / "sub" / "keep.txt").write_text("k")
    doc = json.loads((out / "prediction.json").read_text())
    doc["records"]["files"].update({"../o1/thesis.txt": {}, "sub/keep.txt": {}, "sub": {}, "a\u0000b": {}})
    (out / "prediction.json").write_text(json.dumps(doc))
    assert _files.previous_result(out) == {"prediction.json", "requests.csv"}
    for extra in ((), ("--force",)):
        proc = run_cli("replay", str(config), "--output-dir", str(out), "-q", *extra, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert (out / "thesis.txt").read_text() == "my thesis"
        assert (out / "sub" / "keep.txt").read_text() == "k"
        assert sorted(p.name for p in out.iterdir()) == ["prediction.json", "requests.parquet", "sub", "thesis.txt"]
        doc = json.loads((out / "prediction.json").read_text())
        doc["records"]["files"]["thesis.txt"] = {}  # listed again for the --force round
        (out / "prediction.json").write_text(json.dumps(doc))


@pytest.mark.parametrize("force", [(), ("--force",)])
def test_a_folder_of_a_result_name_is_refused_before_anything_is_removed(tmp_path, config, force):
    """A folder where a result file goes is refused up front (exit 2, naming
    the folder, not a hidden temporary file), with or without --force; the earlier result
    is left byte for byte."""
    out = tmp_path / "d5"
    before = marked_result(out, {"requests.parquet": "p", "requests.csv": "c"})
    (out / "requests.csv").unlink()
    (out / "requests.csv").mkdir()
    proc = run_cli("replay", str(config), "--output-dir", str(out), "-q", "--records", "parquet,csv", *force,
                   cwd=tmp_path)
    refused(proc, f"{out / 'requests.csv'} is a folder")
    assert ".tmp" not in proc.stderr
    assert (out / "prediction.json").read_bytes() == before
    assert (out / "requests.parquet").read_text() == "p"
    # a save that does not write that name goes ahead and leaves the folder alone
    proc = run_cli("replay", str(config), "--output-dir", str(out), "-q", *force, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (out / "requests.csv").is_dir()
    assert json.loads((out / "prediction.json").read_text())["records"]["files"].keys() == {"requests.parquet"}


def test_a_folder_made_during_the_save_fails_it_before_the_old_result_goes(tmp_path):
    """Checked again at commit, before the old marker is removed: the
    error names the folder and says nothing was replaced only when that is true."""
    before = marked_result(tmp_path, {"requests.csv": "c"})
    with _files.ResultDir(tmp_path) as out:
        out.check_names(["requests.csv", "prediction.json"])
        out.temp("requests.csv").write_text("new")
        out.temp("prediction.json").write_text("{}")
        (tmp_path / "requests.csv").unlink()
        (tmp_path / "requests.csv").mkdir()
        with pytest.raises(IsADirectoryError) as err:
            out.commit()
    assert not isinstance(err.value, _files.IncompleteSaveError)
    assert err.value.filename == str(tmp_path / "requests.csv")
    assert (tmp_path / "prediction.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prediction.json", "requests.csv"]  # no temp left


def test_a_failure_after_the_old_marker_went_says_so(tmp_path, monkeypatch):
    """A rename that fails once the old marker is removed raises IncompleteSaveError,
    whose message says the previous result was removed; the temporaries are cleaned."""
    marked_result(tmp_path, {"requests.csv": "c"})
    real = os.replace

    def failing(src, dst):
        if str(dst).endswith("prediction.json"):
            raise OSError(5, "Input/output error", str(dst))
        return real(src, dst)

    monkeypatch.setattr(_files.os, "replace", failing)
    with _files.ResultDir(tmp_path) as out:
        out.temp("requests.csv").write_text("new")
        out.temp("prediction.json").write_text("{}")
        with pytest.raises(_files.IncompleteSaveError) as err:
            out.commit()
    assert err.value.filename == str(tmp_path / "prediction.json")
    assert "previous result" in str(err.value) and "removed" in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requests.csv"]


def test_result_names_are_the_tables_exports_and_marker():
    assert _files.result_names() == {
        "prediction.json", "requests.parquet", "requests.csv", "requests.jsonl", "profile_export.jsonl",
        "profile_export_aiperf.json", "profile_export_aiperf.csv", "vllm_bench_result.json"}


def refused(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert_usage_error(proc, 'aisimulate: error: --output-dir ', *needles)


def test_a_listed_file_replaced_since_is_foreign(tmp_path, config):
    # the earlier result's marker listed profile_export.jsonl and
    # requests.csv, so files the user put there since (the real measurement, notes) were
    # overwritten without --force; now a listed file whose size is not the one the
    # marker recorded is not the result's any more
    out = tmp_path / "run"
    args = ("replay", str(config), "--output-dir", str(out), "--records", "csv", "--export", "aiperf", "-q")
    assert run_cli(*args, cwd=tmp_path).returncode == 0
    (out / "profile_export.jsonl").write_text(REAL_AIPERF)
    refused(run_cli(*args, cwd=tmp_path), str(out / "profile_export.jsonl"), "--force")
    assert (out / "profile_export.jsonl").read_text() == REAL_AIPERF
    (out / "profile_export.jsonl").unlink()
    (out / "requests.csv").write_text("my notes\n")
    refused(run_cli(*args, cwd=tmp_path), str(out / "requests.csv"), "--force")
    assert (out / "requests.csv").read_text() == "my notes\n"
    assert run_cli(*args, "--force", cwd=tmp_path).returncode == 0  # replaced when asked
    assert (out / "requests.csv").read_text().startswith("request_id,")
    assert run_cli(*args, cwd=tmp_path).returncode == 0  # its own result: replaced as before


def test_an_aiperf_export_replaced_since_is_foreign(tmp_path):
    # the same for report.to_aiperf, whose marker is profile_export_aiperf.json: it
    # records the other files' sizes
    report = aisimulate.replay(BASE_SPEC)
    out = tmp_path / "tb"
    report.to_aiperf(out)
    sizes = json.loads((out / "profile_export_aiperf.json").read_text())["aisimulate_files"]
    assert sizes == {n: (out / n).stat().st_size for n in ("profile_export.jsonl", "profile_export_aiperf.csv")}
    report.to_aiperf(out)  # its own: replaced
    (out / "profile_export.jsonl").write_text(REAL_AIPERF)
    with pytest.raises(_files.ForeignFileError):
        report.to_aiperf(out)
    assert (out / "profile_export.jsonl").read_text() == REAL_AIPERF
    report.to_aiperf(out, force=True)
    assert (out / "profile_export.jsonl").stat().st_size == sizes["profile_export.jsonl"]
