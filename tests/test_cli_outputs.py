"""The paths the CLI writes are checked before the replay: a path
that would overwrite a file the run reads (the config, the trace, the AIPerf export),
a folder given as a file, a folder under a file — each exit 2 with one line naming the
option and the path(s), the input left byte for byte as it was; a missing parent folder
is created, as --output-dir creates its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import aisimulate
from aisimulate.cli import main as cli_main
from aisimulate.errors import ConfigError
from conftest import BASE_SPEC, REPO, assert_usage_error, run_cli, write_mooncake



@pytest.fixture
def config(tmp_path) -> Path:
    cfg = tmp_path / "prediction.json"  # a JSON config whose name a result also uses
    cfg.write_text(json.dumps(BASE_SPEC))
    return cfg


def test_output_dir_would_overwrite_the_config(config, tmp_path):
    before = config.read_bytes()
    refused(run_cli("replay", str(config), "--output-dir", str(tmp_path), cwd=tmp_path),
            "--output-dir", str(config), "input file")
    # and without Parquet (the records are saved after the replay, not streamed)
    refused(run_cli("replay", str(config), "--output-dir", str(tmp_path), "--records", "csv", cwd=tmp_path),
            "--output-dir", str(config))
    assert config.read_bytes() == before


def test_trace_out_would_overwrite_the_config_or_the_trace(tmp_path):
    trace = write_mooncake(tmp_path / "trace.jsonl", [
        {"timestamp": 0, "input_length": 100, "output_length": 2, "hash_ids": [1]},
        {"timestamp": 10, "input_length": 100, "output_length": 2, "hash_ids": [2]}])
    spec = json.loads(json.dumps(BASE_SPEC))
    spec["traffic"] = {"source": {"type": "mooncake", "path": "trace.jsonl"},
                       "load": {"mode": "trace"}}
    cfg = tmp_path / "replay.json"
    cfg.write_text(json.dumps(spec))
    before = (cfg.read_bytes(), trace.read_bytes())
    refused(run_cli("replay", "replay.json", "--trace-out", "replay.json", cwd=tmp_path),
            "--trace-out replay.json", str(cfg))
    refused(run_cli("replay", "replay.json", "--trace-out", "./trace.jsonl", cwd=tmp_path),
            "--trace-out ./trace.jsonl", str(trace))
    # a symbolic link to the config is the config
    (tmp_path / "link.json").symlink_to(cfg)
    refused(run_cli("replay", "replay.json", "--trace-out", "link.json", cwd=tmp_path),
            "--trace-out link.json", str(cfg))
    assert (cfg.read_bytes(), trace.read_bytes()) == before


def test_trace_out_bad_paths_are_refused_before_the_replay(config, tmp_path):
    (tmp_path / "folder").mkdir()
    refused(run_cli("replay", str(config), "--trace-out", "folder", cwd=tmp_path),
            "--trace-out folder", "is a folder")
    refused(run_cli("replay", str(config), "--trace-out", "prediction.json/t.json", cwd=tmp_path),
            "--trace-out prediction.json/t.json", f"{config} is a file")
    refused(run_cli("replay", str(config), "--trace-out", " ", cwd=tmp_path), "--trace-out", "empty")
    # a folder no file can be made in, even by root (procfs)
    refused(run_cli("replay", str(config), "--trace-out", "/proc/self/t.json", cwd=tmp_path),
            "--trace-out /proc/self/t.json", "cannot write in /proc/self")
    refused(run_cli("replay", str(config), "--output-dir", "/proc/self/out", cwd=tmp_path),
            "--output-dir /proc/self/out", "cannot write in /proc/self")
    refused(run_cli("replay", str(config), "--output-dir", "out", "--trace-out", "out/prediction.json",
                    cwd=tmp_path), "--trace-out out/prediction.json", "--output-dir out")
    assert not (tmp_path / "out").exists()


def test_trace_out_creates_its_folder(config, tmp_path):
    proc = run_cli("replay", str(config), "--trace-out", "new/sub/run.trace.json", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "new/sub/run.trace.json").read_text())
    # BASE_SPEC's 5 requests: each an async span opened and closed on the client track
    assert sum(1 for e in doc["traceEvents"] if e.get("ph") == "b" and e.get("name") == "request") == 5


def test_api_save_and_trace_refuse_the_config_file(config, tmp_path):
    report = aisimulate.replay(str(config), timeline=True, progress=False)
    before = config.read_bytes()
    with pytest.raises(ConfigError, match="would overwrite the input file"):
        report.save(tmp_path)  # prediction.json there is the config
    with pytest.raises(ConfigError, match="would overwrite the input file"):
        report.to_chrome_trace(config)
    with pytest.raises(ConfigError, match="would overwrite the input file"):
        aisimulate.replay(str(config), output_dir=tmp_path, progress=False)
    assert config.read_bytes() == before


def refused(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert_usage_error(proc, 'aisimulate: error: ', *needles)


@pytest.mark.parametrize("flag, value, name", [("--records", "parquet,PARQUET", "parquet"),
                                               ("--export", "aiperf, aiperf", "aiperf")])
def test_a_format_given_twice_is_exit_2(tmp_path, capsys, flag, value, name):
    # as --slo and --grid refuse a key given twice: the duplicate is not dropped quietly
    out = tmp_path / "out"
    args = ["replay", str(REPO / "examples" / "quickstart.yaml"), "-q", "--output-dir", str(out), flag, value]
    assert cli_main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"aisimulate: error: {flag} {name}: given twice in {value!r}: give each format once"]
    assert not out.exists()


def test_trace_out_that_is_a_result_file_is_exit_2(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["replay", str(REPO / "examples" / "quickstart.yaml"), "-q", "--output-dir", str(out),
            "--records", "csv", "--trace-out", str(out / "requests.csv")]
    assert cli_main(args) == 2
    assert capsys.readouterr().err == (f"aisimulate: error: --trace-out {out / 'requests.csv'} is also the result "
                                       f"file requests.csv of --output-dir {out}: choose another file\n")
    assert not out.exists()


def test_a_name_too_long_is_exit_2_before_the_replay(tmp_path, capsys):
    # --output-dir with a 300-byte name was a traceback; --trace-out and
    # sweep --out ran the whole replay, then failed with exit 1 naming a temporary file
    cfg = tmp_path / "r.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    long = str(tmp_path / ("x" * 300))
    why = "File name too long (a name of {} bytes, more than 255)"
    for args, flag, path, n in (
            (["replay", str(cfg), "--output-dir", long], "--output-dir", long, 300),
            (["replay", str(cfg), "--output-dir", long + "/x"], "--output-dir", long + "/x", 300),
            (["replay", str(cfg), "--trace-out", long + ".json"], "--trace-out", long + ".json", 305),
            (["sweep", str(cfg), "--grid", "traffic.source.osl=4", "--out", long + ".csv"], "--out", long + ".csv", 304)):
        assert cli_main([*args, "-q"]) == 2
        captured = capsys.readouterr()
        assert (captured.err, captured.out) == (f"aisimulate: error: {flag} {path}: {why.format(n)}\n", "")
    with pytest.raises(ConfigError, match=f"the output folder {long}: File name too long"):
        aisimulate.replay(BASE_SPEC).save(long)
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
    # a name of 250 bytes is written (its temporary name is not longer than the limit)
    ok = tmp_path / ("y" * 245 + ".json")
    assert cli_main(["replay", str(cfg), "--trace-out", str(ok), "-q"]) == 0
    assert json.loads(ok.read_text())["traceEvents"]


def _fifo_reader(path: Path):
    """A thread that reads the FIFO ``path`` to its end into ``got["bytes"]``: (thread, got)."""
    import threading

    got: dict = {}

    def read():
        with open(path, "rb") as f:
            got["bytes"] = f.read()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


def test_outputs_write_through_a_fifo_a_device_and_a_link(tmp_path, capsys):
    # a FIFO, a device node or a symbolic link given as --trace-out or
    # --out was replaced by a regular file (as root, --trace-out /dev/null would replace
    # the system's /dev/null); now a node is written through and a link's file replaced
    import os
    import stat

    cfg = tmp_path / "r.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    reader, got = _fifo_reader(fifo)
    assert cli_main(["replay", str(cfg), "--trace-out", str(fifo), "-q"]) == 0
    reader.join(600)  # the writer has closed the FIFO: the reader is at its end (a hang guard)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(got["bytes"])["traceEvents"]  # the reader got the whole trace
    target = tmp_path / "shared" / "results.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "results.csv"
    link.symlink_to(target)
    assert cli_main(["sweep", str(cfg), "--grid", "traffic.source.osl=4,6", "--out", str(link), "-q",
                     "--force"]) == 0  # the link's file exists: replaced only with --force
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(target.read_text().splitlines()) == 1 + 2  # header + the 2 points, in the link's file
    if os.geteuid() == 0:  # a character device like /dev/null (mknod needs root)
        null = tmp_path / "null.csv"
        os.mknod(null, 0o644 | stat.S_IFCHR, os.makedev(1, 3))
        assert cli_main(["sweep", str(cfg), "--grid", "traffic.source.osl=4", "--out", str(null), "-q"]) == 0
        assert stat.S_ISCHR(os.lstat(null).st_mode)
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["r.json", "trace.json", "shared", "results.csv"] + (["null.csv"] if os.geteuid() == 0 else []))


def test_a_dangling_link_is_refused_before_the_replay(config, tmp_path, capsys, monkeypatch):
    # an output that is a symbolic link into a missing folder was written
    # after the whole run (exit 1, the option not named); now exit 2 before it, naming both
    for name in ("t.json", "s.csv", "p.png"):
        (tmp_path / name).symlink_to(tmp_path / "nodir" / name)
    (tmp_path / "outd").symlink_to(tmp_path / "nodir" / "outd")

    def replayed(*a, **k):
        raise AssertionError("replayed before the output paths were checked")

    monkeypatch.setattr(aisimulate, "replay", replayed)
    missing = f"its link points into {tmp_path / 'nodir'}, which does not exist: make the folder or give another file"
    for args, flag, out in ((["replay", str(config), "--trace-out"], "--trace-out", "t.json"),
                            (["sweep", str(config), "--grid", "execution.seed=1", "--out"], "--out", "s.csv")):
        assert cli_main([*args, str(tmp_path / out)]) == 2
        assert capsys.readouterr().err == f"aisimulate: error: {flag} {tmp_path / out}: {missing}\n"
    assert cli_main(["replay", str(config), "--output-dir", str(tmp_path / "outd")]) == 2
    assert capsys.readouterr().err == (
        f"aisimulate: error: --output-dir {tmp_path / 'outd'}: {tmp_path / 'outd'} is a symbolic link to "
        f"{tmp_path / 'nodir' / 'outd'}, which does not exist: make its target or give another path\n")
    assert not (tmp_path / "nodir").exists()


def test_a_piped_config_resolves_against_the_working_directory(tmp_path):
    # a config read through /dev/stdin (or <(…)) resolved its relative
    # trace path against /dev (file not found); a config that is no regular file has no
    # folder of its own: the working directory. Hand values: two requests of 100 prompt
    # and 5 output tokens, linear perf: TTFT 10 + 100 × 0.01 = 11 ms.
    write_mooncake(tmp_path / "t.jsonl", [
        {"timestamp": 0, "input_length": 100, "output_length": 5, "hash_ids": [1]},
        {"timestamp": 500, "input_length": 100, "output_length": 5, "hash_ids": [2]}])
    text = json.dumps({
        "engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
                   "perf": {"source": "linear", "base_ms": 10, "per_prefill_token_ms": 0.01,
                            "per_decode_seq_ms": 1}},
        "traffic": {"source": {"type": "mooncake", "path": "t.jsonl"}, "load": {"mode": "trace"}}})
    proc = run_cli("replay", "/dev/stdin", "-q", "--format", "json", cwd=tmp_path, stdin=text)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)["summary"]
    assert (summary["completed"], summary["ttft_ms"]["mean"]) == (2, 11.0)


@pytest.mark.parametrize("aiperf, needle", [
    ("-", "--aiperf -: the export is not read from stdin: give AIPerf's profile_export.jsonl"),
    ("/dev/zero", "--aiperf /dev/zero: not a regular file: give AIPerf's profile_export.jsonl")])
def test_compare_names_an_aiperf_export_that_is_not_a_file(config, tmp_path, aiperf, needle):
    # they were "file not found"
    refused(run_cli("compare", "--aiperf", aiperf, str(config), cwd=tmp_path), needle)


def test_an_existing_output_file_is_replaced_only_with_force(tmp_path, capsys):
    """One rule for every output: sweep --out and replay --trace-out (compare's
    --requests-out and --plot too: tests/test_compare.py) replaced any existing file
    without --force, while --output-dir refused a file no earlier aisimulate result
    wrote. A single file records nothing of who wrote it, so an existing one is
    replaced only with --force; a run that refuses it writes nothing."""
    cfg = tmp_path / "r.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    out, trace = tmp_path / "mine.csv", tmp_path / "run.trace.json"
    out.write_text("my own numbers\n")
    trace.write_text("{}")
    capsys.readouterr()
    assert cli_main(["sweep", str(cfg), "--grid", "traffic.source.osl=4,6", "--out", str(out), "-q"]) == 2
    assert capsys.readouterr().err == (f"aisimulate: error: --out {out}: {out} exists: it is not overwritten; "
                                       "choose another file, move it away, or add --force\n")
    assert out.read_text() == "my own numbers\n"
    assert cli_main(["replay", str(cfg), "--trace-out", str(trace), "-q"]) == 2
    assert f"--trace-out {trace}: {trace} exists" in capsys.readouterr().err
    assert trace.read_text() == "{}"
    assert cli_main(["sweep", str(cfg), "--grid", "traffic.source.osl=4,6", "--out", str(out), "-q", "--force"]) == 0
    assert len(out.read_text().splitlines()) == 3  # header + 2 points
    assert cli_main(["replay", str(cfg), "--trace-out", str(trace), "-q", "--force"]) == 0
    assert json.loads(trace.read_text())["traceEvents"]


def test_output_dir_that_cannot_be_written_names_the_option(config, tmp_path, capsys, monkeypatch):
    # a write under --output-dir that fails after the checks (a full disk): the message
    # names the option and the file, as --trace-out's names its option
    import errno

    from aisimulate.cli import replay as replay_cli

    out = tmp_path / "out"
    failed = str(out / "requests.csv")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", failed)

    monkeypatch.setattr(replay_cli, "replay", full)
    assert cli_main(["replay", str(config), "--output-dir", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"error: --output-dir {out}: cannot write {failed}: No space left on device (nothing was replaced)" in err
