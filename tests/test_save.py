"""report.save / --output-dir: each format read back by its own reader, and a result that
is whole or absent whatever happens while it is written."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import aisimulate
from aisimulate import ConfigError
from aisimulate.io import files as _files
from aisimulate.io import tables as _tables
from aisimulate.report import REQUEST_FIELDS
from conftest import EXAMPLE1_ROWS, REPO, example1_spec, write_mooncake

ALL = ("parquet", "csv", "jsonl")


@pytest.fixture(scope="module")
def pd_report(tmp_path_factory):
    """A P/D replay with a rejected request and a session: every null rule appears
    (no worker, no session, no reason, no first token)."""
    tmp = tmp_path_factory.mktemp("pd")
    rows = [dict(EXAMPLE1_ROWS[0]), dict(EXAMPLE1_ROWS[1]),
            {"timestamp": 20, "input_length": 50_000, "output_length": 3},  # > max_model_len
            {"timestamp": 30, "input_length": 64, "output_length": 2, "session_id": 7, "delay": 0}]
    trace = write_mooncake(tmp / "t.jsonl", rows)
    spec = example1_spec(trace)
    spec["engine"]["workers"] = {"disaggregated": {
        "prefill": {"count": 1}, "decode": {"count": 2},
        "kv_transfer": {"bandwidth_gb_per_s": 50, "latency_ms": 0.2}}}
    return aisimulate.replay(spec)


def _same(a, b) -> bool:
    """Equal, with None, NaN and pandas' NA all meaning null."""
    null = lambda v: v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))  # noqa: E731
    return (null(a) and null(b)) or a == b


def test_each_format_reads_back_as_the_records(tmp_path, pd_report):
    written = pd_report.save(tmp_path, formats=ALL)
    records = pd_report.requests
    assert {r["status"] for r in records} == {"completed", "rejected"}
    assert any(r["session_id"] is not None for r in records)

    # JSON lines: byte-identical to json.dumps of each record (the writer before 0.2).
    expected = "".join(json.dumps(r, allow_nan=False) + "\n" for r in records)
    assert written["requests.jsonl"].read_text() == expected

    # Parquet, by pyarrow; CSV, by pandas.
    table = pq.read_table(written["requests.parquet"])
    assert table.column_names == list(REQUEST_FIELDS)
    assert str(table.schema.field("status").type) == "string"
    from_parquet = table.to_pylist()
    # the float columns BYTE_STREAM_SPLIT, the others dictionary-encoded (_tables.parquet_writer)
    group = pq.ParquetFile(written["requests.parquet"]).metadata.row_group(0)
    for j, name in enumerate(table.column_names):
        encodings = group.column(j).encodings
        if table.schema.field(name).type == "double":
            assert "BYTE_STREAM_SPLIT" in encodings and "RLE_DICTIONARY" not in encodings, (name, encodings)
        else:
            assert "RLE_DICTIONARY" in encodings and "BYTE_STREAM_SPLIT" not in encodings, (name, encodings)
    from_csv = pd.read_csv(written["requests.csv"], keep_default_na=False, na_values=[""])
    assert list(from_csv.columns) == list(REQUEST_FIELDS)
    for i, r in enumerate(records):
        for k in REQUEST_FIELDS:
            assert _same(from_parquet[i][k], r[k]), (k, from_parquet[i][k], r[k])
            assert _same(from_csv.iloc[i][k], r[k]), (k, from_csv.iloc[i][k], r[k])

    pred = json.loads(written["prediction.json"].read_text())
    assert pred["records"] == {"count": len(records), "files": {
        name: {"format": fmt, "bytes": (tmp_path / name).stat().st_size}
        for fmt, name in _tables.FILES.items()}}
    assert list(written)[-1] == "prediction.json"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_failed_save_leaves_the_previous_result(tmp_path, pd_report, base_spec, monkeypatch):
    pd_report.save(tmp_path, formats=("parquet", "jsonl"))
    before = _snapshot(tmp_path)
    other = aisimulate.replay(base_spec)

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")  # ENOSPC, after the parquet file

    monkeypatch.setattr(_tables, "write_text", full_disk)
    with pytest.raises(OSError, match="No space left"):
        other.save(tmp_path, formats=("parquet", "csv"))
    assert _snapshot(tmp_path) == before  # no temporary file left, nothing replaced

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_tables, "write_parquet", interrupted)
    with pytest.raises(KeyboardInterrupt):
        other.save(tmp_path)
    assert _snapshot(tmp_path) == before


def test_the_flush_to_disk_is_waited_for_interruptibly(tmp_path, pd_report, base_spec, monkeypatch):
    """The files are flushed (fsync) on a helper thread while the caller waits in short
    joins: an error there reaches the caller, and a Ctrl-C during a long flush is taken
    at once, not when the flush ends; either way the previous result stays."""
    pd_report.save(tmp_path, formats=("jsonl",))
    before = _snapshot(tmp_path)
    other = aisimulate.replay(base_spec)

    def failing(path):
        raise OSError(5, "Input/output error", str(path))  # EIO from fsync

    monkeypatch.setattr(_files, "_fsync", failing)
    with pytest.raises(OSError, match="Input/output error"):
        other.save(tmp_path, formats=("jsonl",))
    assert _snapshot(tmp_path) == before

    import threading

    release = threading.Event()
    flushing = []
    main = threading.main_thread().ident

    def endless_flush(path):  # Ctrl-C once the flush has started; it ends only when released
        flushing.append(path)
        signal.pthread_kill(main, signal.SIGINT)
        release.wait(600)

    monkeypatch.setattr(_files, "_fsync", endless_flush)
    try:
        with pytest.raises(KeyboardInterrupt):
            other.save(tmp_path, formats=("jsonl",))
        ended_by_the_flush = release.is_set()
    finally:
        release.set()
    assert flushing and not ended_by_the_flush  # the interrupt, not the flush's end, ended the wait
    assert _snapshot(tmp_path) == before


def test_a_new_result_replaces_the_old_one_whole(tmp_path, pd_report, base_spec):
    # the first result's tables and exports that the second does not write are removed
    # (README: --output-dir); a file of another name is left alone
    pd_report.save(tmp_path, formats=("jsonl", "csv"), exports=("aiperf", "vllm"))
    (tmp_path / "notes.txt").write_text("mine")
    other = aisimulate.replay(base_spec)
    other.save(tmp_path, formats=("parquet",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "prediction.json", "requests.parquet"]
    assert (tmp_path / "notes.txt").read_text() == "mine"
    pred = json.loads((tmp_path / "prediction.json").read_text())
    assert pred["records"]["count"] == 5  # base_spec's num_requests


def test_a_real_write_error_leaves_nothing_behind(tmp_path, base_spec):
    """A file-size limit (RLIMIT_FSIZE) makes the OS refuse writes part-way, as a full disk
    does: in the core's CSV writer and in pyarrow's Parquet writer alike."""
    out = tmp_path / "out"
    script = textwrap.dedent(f"""
        import json, resource, signal, sys
        sys.path.insert(0, {str(REPO / 'python')!r})
        import aisimulate
        spec = json.loads({json.dumps(json.dumps(base_spec))})
        spec["traffic"]["source"]["num_requests"] = 20000
        rep = aisimulate.replay(spec)
        rep.save({str(out)!r}, formats=("jsonl",))          # the previous result
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # writes past the limit fail (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))  # Parquet: 95 kB
        for fmt in ("csv", "parquet"):
            try:
                rep.save({str(out)!r}, formats=(fmt,))
            except OSError as exc:
                print(fmt, "OSError", exc.errno)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["csv OSError 27", "parquet OSError 27"]  # EFBIG
    assert sorted(p.name for p in out.iterdir()) == ["prediction.json", "requests.jsonl"]
    pred = json.loads((out / "prediction.json").read_text())
    assert pred["records"]["files"]["requests.jsonl"]["bytes"] == (out / "requests.jsonl").stat().st_size


@pytest.mark.parametrize("stage", ["writing", "committing"])
def test_sigkill_leaves_the_previous_result_and_the_next_save_cleans_up(tmp_path, base_spec, stage):
    out = tmp_path / "out"
    ready = tmp_path / "ready"
    # A child saves once, then saves again and stops (a) in the middle of writing the
    # table, (b) with every temporary file complete, just before moving them into place.
    hook = ("_tables.CHUNK_ROWS = 1000\n"
            "real = _tables.write_text\n"
            "def slow(cols, fields, n, path, fmt, advance):\n"
            "    def step(k):\n"
            "        advance(k); open(READY, 'w').close(); time.sleep(600)\n"
            "    real(cols, fields, n, path, fmt, step)\n"
            "_tables.write_text = slow\n") if stage == "writing" else (
            "def stop(self, **kw):\n"
            "    open(READY, 'w').close(); time.sleep(600)\n"
            "_files.ResultDir.commit = stop\n")
    script = textwrap.dedent(f"""
        import json, sys, time
        sys.path.insert(0, {str(REPO / 'python')!r})
        import aisimulate
        from aisimulate.io import files as _files
        from aisimulate.io import tables as _tables
        READY = {str(ready)!r}
        spec = json.loads({json.dumps(json.dumps(base_spec))})
        spec["traffic"]["source"]["num_requests"] = 5000
        rep = aisimulate.replay(spec)
        rep.save({str(out)!r}, formats=("parquet",))
    """) + hook + f"rep.save({str(out)!r}, formats=('parquet', 'csv'))\n"
    child = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600  # a hang guard: the child gets there
    while not ready.exists():
        assert child.poll() is None, child.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    names = sorted(p.name for p in out.iterdir())
    temps = [n for n in names if n.startswith(".")]
    assert temps and all(_files._TEMP.match(n) for n in temps)  # hidden, marked temporary
    assert [n for n in names if not n.startswith(".")] == ["prediction.json", "requests.parquet"]
    pred = json.loads((out / "prediction.json").read_text())
    assert pred["records"]["count"] == 5000
    assert pred["records"]["files"]["requests.parquet"]["bytes"] == (out / "requests.parquet").stat().st_size

    aisimulate.replay(base_spec).save(out, formats=("jsonl",))  # the next save removes them
    assert sorted(p.name for p in out.iterdir()) == ["prediction.json", "requests.jsonl"]


def test_refuses_to_overwrite_an_input(tmp_path):
    trace = write_mooncake(tmp_path / "requests.jsonl", EXAMPLE1_ROWS)
    before = trace.read_bytes()
    rep = aisimulate.replay(example1_spec(trace))
    with pytest.raises(ConfigError, match="would overwrite the input file"):
        rep.save(tmp_path, formats=("jsonl",))
    assert trace.read_bytes() == before
    rep.save(tmp_path, formats=("parquet",))  # a name that is not the input is fine
    assert trace.read_bytes() == before
    with pytest.raises(ValueError, match="empty"):
        rep.save("")
    with pytest.raises(ValueError, match="unknown record format"):
        rep.save(tmp_path / "x", formats=("xlsx",))


def test_formats_and_exports_take_one_name_or_a_list(tmp_path, pd_report):
    # a str is one name, not its characters
    files = pd_report.save(tmp_path / "one", formats="csv", exports="vllm")
    assert list(files) == ["requests.csv", "vllm_bench_result.json", "prediction.json"]
    files = pd_report.save(tmp_path / "two", formats=["jsonl", "csv"], exports=("vllm",))
    assert list(files) == ["requests.jsonl", "requests.csv", "vllm_bench_result.json", "prediction.json"]
    with pytest.raises(ValueError, match=r"^unknown record format\(s\) \['csv,jsonl'\] in formats: "
                                         r"choose from parquet, csv, jsonl$"):
        pd_report.save(tmp_path / "x", formats="csv,jsonl")
    with pytest.raises(ValueError, match=r"^formats is empty"):
        pd_report.save(tmp_path / "x", formats=[])
    for arg, bad in (("formats", 3), ("formats", ["csv", None]), ("exports", {"vllm": 1}), ("exports", b"vllm")):
        with pytest.raises(TypeError, match=rf"^{arg} must be one of '.*' or a list of them, got "):
            pd_report.save(tmp_path / "x", **{arg: bad})
    # a name given twice is refused, not silently dropped (as --slo and --grid)
    with pytest.raises(ValueError, match=r"^formats: 'jsonl' is given twice in \['jsonl', 'csv', 'jsonl'\]: "
                                         r"give each record format once$"):
        pd_report.save(tmp_path / "x", formats=["jsonl", "csv", "jsonl"])
    with pytest.raises(ValueError, match=r"^exports: 'aiperf' is given twice in \('aiperf', 'aiperf'\): "
                                         r"give each export once$"):
        pd_report.save(tmp_path / "x", exports=("aiperf", "aiperf"))
    assert not (tmp_path / "x").exists()
    # the same forms when the replay streams into output_dir
    rep = aisimulate.replay(pd_report.metadata["spec"], output_dir=tmp_path / "s", formats="parquet",
                            exports="vllm", progress=False)
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == \
        ["prediction.json", "requests.parquet", "vllm_bench_result.json"]
    assert rep.summary == pd_report.summary
    with pytest.raises(TypeError, match=r"^exports must be"):
        aisimulate.replay(pd_report.metadata["spec"], output_dir=tmp_path / "t", exports=1)
    for arg, twice in (("formats", ["parquet", "parquet"]), ("exports", ["vllm", "vllm"])):
        with pytest.raises(ValueError, match=rf"^{arg}: '{twice[0]}' is given twice in "):
            aisimulate.replay(pd_report.metadata["spec"], output_dir=tmp_path / "t", progress=False,
                              **{arg: twice})
    assert not (tmp_path / "t").exists()


def test_replay_refuses_formats_exports_force_without_output_dir(tmp_path, pd_report, monkeypatch):
    # without output_dir they were ignored (the CLI refuses --records,
    # --export, --force without --output-dir); now a ValueError naming the argument,
    # before the replay
    monkeypatch.chdir(tmp_path)
    spec = pd_report.metadata["spec"]
    for arg, value in (("formats", "csv"), ("exports", "aiperf"), ("force", True), ("formats", ["parquet"])):
        with pytest.raises(ValueError, match=rf"^{arg} applies to the result folder: give output_dir too "):
            aisimulate.replay(spec, progress=False, **{arg: value})
    assert list(tmp_path.iterdir()) == []
    assert aisimulate.replay(spec, progress=False, force=False).summary == pd_report.summary


def test_formats_and_exports_are_taken_in_any_case(tmp_path, pd_report):
    # as the CLI's --records CSV --export AIPERF: the names are matched in any case, and
    # written as the lower-case names (the files, prediction.json's records.files)
    files = pd_report.save(tmp_path / "a", formats=["CSV", "Jsonl"], exports="VLLM")
    assert list(files) == ["requests.csv", "requests.jsonl", "vllm_bench_result.json", "prediction.json"]
    doc = json.loads((tmp_path / "a" / "prediction.json").read_text())
    assert {k: v["format"] for k, v in doc["records"]["files"].items()} == {
        "requests.csv": "csv", "requests.jsonl": "jsonl", "vllm_bench_result.json": "vllm"}
    with pytest.raises(ValueError, match=r"^formats: 'csv' is given twice in \['csv', 'CSV'\]: "):
        pd_report.save(tmp_path / "x", formats=["csv", "CSV"])
    assert not (tmp_path / "x").exists()
    rep = aisimulate.replay(pd_report.metadata["spec"], output_dir=tmp_path / "s", formats="PARQUET",
                            exports=["Vllm"], progress=False)
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == \
        ["prediction.json", "requests.parquet", "vllm_bench_result.json"]
    assert rep.summary == pd_report.summary


def test_cli_refuses_an_input_in_the_output_folder(tmp_path):
    trace = write_mooncake(tmp_path / "requests.csv", EXAMPLE1_ROWS)  # any name the table uses
    cfg = tmp_path / "r.json"
    cfg.write_text(json.dumps(example1_spec(trace)))
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run([sys.executable, "-m", "aisimulate", "replay", str(cfg), "--output-dir",
                           str(tmp_path), "--records", "csv"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "would overwrite the input file" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "prediction.json").exists()


def test_sigterm_during_a_cli_save_removes_its_temporary_files(tmp_path, base_spec):
    out = tmp_path / "out"
    ready = tmp_path / "ready"
    base_spec["traffic"]["source"]["num_requests"] = 5000
    cfg = tmp_path / "r.json"
    cfg.write_text(json.dumps(base_spec))
    aisimulate.replay(cfg).save(out, formats=("jsonl",))  # the previous result
    before = _snapshot(out)
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO / 'python')!r})
        from aisimulate import cli
        from aisimulate.run import stream as _stream
        from aisimulate.io import tables as _tables
        _tables.CHUNK_ROWS = 1000
        real = _tables.write_text
        def slow(cols, fields, n, path, fmt, advance):
            def step(k):
                advance(k); open({str(ready)!r}, "w").close(); time.sleep(600)
            real(cols, fields, n, path, fmt, step)
        _tables.write_text = slow
        # with Parquet, the CLI streams the tables while it replays: stop there
        real_append = _stream.RecordStream._append
        def slow_append(self, head, data):
            real_append(self, head, data); open({str(ready)!r}, "w").close(); time.sleep(600)
        _stream.RecordStream._append = slow_append
        sys.exit(cli.main(["replay", {str(cfg)!r}, "--output-dir", {str(out)!r}, "--records", "parquet,csv"]))
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    deadline = time.monotonic() + 600  # a hang guard: the child gets there
    while not ready.exists():
        assert child.poll() is None, child.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=600)
    assert child.returncode == 143, err
    assert err.strip().endswith("aisimulate: error: terminated")
    assert _snapshot(out) == before  # temporary parquet and csv files gone, nothing replaced


def _save_in_child(out: str, queue) -> None:
    try:
        rep = aisimulate.replay({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm"},
                                 "traffic": {"source": {"type": "synthetic", "num_requests": 30,
                                                        "isl": 100, "osl": 10},
                                             "load": {"mode": "concurrency", "concurrency": 4}}})
        rep.save(out, formats=("csv", "jsonl"))
        queue.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        queue.put(f"{type(exc).__name__}: {exc}")


def test_a_forked_child_saves_through_the_fresh_interpreter(tmp_path):
    """A child forked after the core started runs native calls in a fresh interpreter,
    which cannot see the child's unnamed temporary files: the replay's columns and the
    CSV/JSON-lines writer go through named files there (and leave none behind)."""
    import multiprocessing as mp
    import warnings

    aisimulate.replay({"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm"},
                       "traffic": {"source": {"type": "synthetic", "num_requests": 10, "isl": 100,
                                              "osl": 10}, "load": {"mode": "concurrency",
                                                                   "concurrency": 2}}})
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
        proc = ctx.Process(target=_save_in_child, args=(str(tmp_path / "out"), queue))
        proc.start()
    proc.join(600)  # a hang guard: a busy machine is slow, not stuck
    assert not proc.is_alive()
    assert queue.get(timeout=10) == "ok"
    lines = (tmp_path / "out" / "requests.jsonl").read_text().splitlines()
    assert len(lines) == 30 and json.loads(lines[0])["request_id"] == 0
    assert len((tmp_path / "out" / "requests.csv").read_text().splitlines()) == 31


def test_a_parquet_save_and_a_streamed_replay_leave_pandas_unloaded(tmp_path, base_spec):
    """The Parquet writer's arrays are made from the columns' buffers: pyarrow.array would
    import pandas (0.25 s of a small command's 0.6 s of CPU) in a process that never
    uses it."""
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(REPO / 'python')!r})
        import aisimulate
        spec = json.loads({json.dumps(json.dumps(base_spec))})
        aisimulate.replay(spec, progress=False).save({str(tmp_path / 'saved')!r})
        aisimulate.replay(spec, progress=False, output_dir={str(tmp_path / 'streamed')!r})
        print("pyarrow" in sys.modules, "pandas" in sys.modules)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]
    assert (tmp_path / "saved" / "requests.parquet").read_bytes() == \
        (tmp_path / "streamed" / "requests.parquet").read_bytes()
