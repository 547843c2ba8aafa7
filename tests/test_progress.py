"""Progress bars and Ctrl-C: a replay shows how far it is and stops when asked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

import aisimulate
from aisimulate.binding import calls as _run
from conftest import REPO

# 10 million requests at 500 req/s on 8 workers: hours of host time, so any replay of it
# that ends early was stopped.
ENDLESS = {
    "engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
               "workers": {"aggregated": {"count": 8, "tp": 1}}},
    "traffic": {"source": {"type": "synthetic", "num_requests": 10_000_000, "isl": 512, "osl": 128},
                "load": {"mode": "rate", "rate_rps": 500, "arrival": "poisson"}},
}


def test_progress_bar_counts_requests(monkeypatch, capsys, base_spec):
    monkeypatch.setattr(_run, "PROGRESS_DELAY_S", 0)  # show at once (normally after 2 s)
    base_spec["traffic"]["source"]["num_requests"] = 500
    aisimulate.replay(base_spec, progress=True)
    err = capsys.readouterr().err
    assert "replay:" in err and "/500" in err and "req" in err  # finished / expected

    aisimulate.replay(base_spec, progress=False)
    assert capsys.readouterr().err == ""
    aisimulate.replay(base_spec)  # automatic: stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""


def test_a_replay_done_before_the_first_wait_still_shows_its_bar(monkeypatch, base_spec):
    """A replay that ends before the waiting thread first looks (a small one, a busy
    machine that runs the replay's thread first) showed no bar at all: the wait loop
    ran zero times. Here the replay has ended when the waiting starts."""
    monkeypatch.setattr(_run, "PROGRESS_DELAY_S", 0)
    wanted = _run.progress_wanted

    def after_the_replay(progress):
        for t in threading.enumerate():
            if t.name == "aisimulate-replay":
                t.join()
        return wanted(progress)

    bars = []
    make_bar = _run.make_bar

    def recording(**kw):
        bars.append(make_bar(**kw))
        return bars[-1]

    monkeypatch.setattr(_run, "progress_wanted", after_the_replay)
    monkeypatch.setattr(_run, "make_bar", recording)
    base_spec["traffic"]["source"]["num_requests"] = 500
    aisimulate.replay(base_spec, progress=True)
    assert [(b.desc, b.total, b.n) for b in bars] == [("replay", 500, 500)]


def _pause_at(monkeypatch, tmp_path, point: str) -> Path:
    """Make this process wait at the named point (:mod:`aisimulate.binding.testpoint`); a
    thread sends SIGINT to the main thread once it is there. Returns the pause file."""
    pause = tmp_path / "pause.txt"
    monkeypatch.setenv("AISIMULATE_TEST_PAUSE", point)
    monkeypatch.setenv("AISIMULATE_TEST_PAUSE_FILE", str(pause))
    main = threading.main_thread().ident

    def interrupt():
        while not pause.exists() or not pause.read_text().endswith("\n"):
            time.sleep(0.01)
        signal.pthread_kill(main, signal.SIGINT)
    threading.Thread(target=interrupt, daemon=True).start()
    return pause


def test_ctrl_c_stops_a_replay_and_leaves_no_file(monkeypatch, tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    pause = _pause_at(monkeypatch, tmp_path, "replay")
    with pytest.raises(KeyboardInterrupt):
        aisimulate.replay(ENDLESS, progress=False)
    assert pause.read_text() == f"replay {os.getpid()}\n"  # interrupted while the core replayed
    # the core was stopped: its thread ends (10^7 requests would take hours; a hang
    # guard, not a time limit)
    for t in threading.enumerate():
        if t.name == "aisimulate-replay":
            t.join(600)
            assert not t.is_alive()
    assert list(temp.iterdir()) == []  # no columns file, named or not


def _cli(*args: str, tmp_path: Path, pause: str | None = None) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), TMPDIR=str(tmp_path / "tmp"))
    if pause:  # wait at this point (aisimulate.binding.testpoint) after saying so in pause.txt
        env.update(AISIMULATE_TEST_PAUSE=pause, AISIMULATE_TEST_PAUSE_FILE=str(tmp_path / "pause.txt"))
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "aisimulate", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _wait_for_pause(proc: subprocess.Popen, tmp_path: Path, point: str) -> None:
    """Wait until ``proc`` is at ``point`` (its line is in pause.txt). A hang guard
    only: the point is reached however loaded the machine is."""
    pause = tmp_path / "pause.txt"
    deadline = time.monotonic() + 600
    while not (pause.exists() and pause.read_text() == f"{point} {proc.pid}\n"):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"),
                                           (signal.SIGTERM, 143, "terminated")])
def test_cli_stops_on_signal_with_its_exit_code(tmp_path, sig, code, word):
    cfg = tmp_path / "endless.yaml"
    cfg.write_text(yaml.safe_dump(ENDLESS))
    out = tmp_path / "out"
    proc = _cli("replay", str(cfg), "--output-dir", str(out), tmp_path=tmp_path, pause="replay")
    _wait_for_pause(proc, tmp_path, "replay")  # the core is replaying, streaming records
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == code, stderr
    assert stderr.strip() == f"aisimulate: error: {word}"
    assert stdout == ""
    assert not out.exists()  # nothing written, not even the folder
    assert list((tmp_path / "tmp").iterdir()) == []


def test_progress_follows_a_kernel_not_an_imported_ipykernel(monkeypatch):
    """The automatic bar is on in a Jupyter kernel (an IPython shell with a kernel),
    not in a process that merely imported ipykernel (nbclient driving a notebook)."""
    import sys
    import types

    shell = types.SimpleNamespace(kernel=object())
    fake = types.SimpleNamespace(get_ipython=lambda: shell)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert _run.in_kernel() and _run.progress_wanted(None)
    fake.get_ipython = lambda: None  # IPython imported, no shell running
    assert not _run.in_kernel()
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    assert not _run.in_kernel()
    assert _run.progress_wanted(True) and not _run.progress_wanted(False)


def test_a_streamed_save_shows_its_own_bar_after_the_replay(monkeypatch, capsys, tmp_path, base_spec):
    """After a replay streamed into --output-dir, the AIPerf records (and a
    sorted rewrite) took seconds at 10^6 requests with no bar. A "save" bar counts them:
    500 records, one pass for the aiperf export (the streamed tables are in order)."""
    bars = []
    make_bar = _run.make_bar

    def recording(**kw):
        bar = make_bar(**kw)
        bars.append(bar)
        return bar

    monkeypatch.setattr(_run, "make_bar", recording)
    base_spec["traffic"]["source"]["num_requests"] = 500
    aisimulate.replay(base_spec, progress=True, output_dir=tmp_path / "a", exports=("aiperf", "vllm"))
    saves = [b for b in bars if b.desc == "save"]
    assert [(b.total, b.n) for b in saves] == [(500, 500)]  # every record of the export counted
    bars.clear()
    aisimulate.replay(base_spec, progress=False, output_dir=tmp_path / "b", exports="aiperf")
    assert bars == []
    aisimulate.replay(base_spec, progress=True, output_dir=tmp_path / "c")  # nothing after the replay
    assert [b for b in bars if b.desc == "save"] == []
    assert "save" not in capsys.readouterr().out  # never on stdout


@pytest.fixture(scope="module")
def long_trace(tmp_path_factory) -> dict:
    """A spec over a 3,000,000-row Azure trace (105 MB): its check reads for ~0.75 s of
    CPU (~0.25 µs a row; the process starts in ~0.1 s)."""
    path = tmp_path_factory.mktemp("trace") / "azure.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "2023-11-16 18:15:46.6805900,374,44\n" * 3_000_000)
    return {"engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm"},
            "traffic": {"source": {"type": "azure", "path": str(path)},
                        "load": {"mode": "concurrency", "concurrency": 4}}}


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def test_ctrl_c_stops_a_check_reading_a_trace(monkeypatch, tmp_path, long_trace):
    """check() reads the trace on a worker thread that looks for a stop every 16,384
    rows (core/replay/check_test.go checks that count): Ctrl-C while it reads raises
    KeyboardInterrupt within a few ms of CPU, not once the 3M rows are read (~0.75 s of
    CPU). The interrupt lands while the main thread waits for the read (the point
    ``check``); the CPU bound holds wherever the read then is."""
    _pause_at(monkeypatch, tmp_path, "check")
    signals = []
    previous = signal.signal(signal.SIGINT, lambda *a: (signals.append(time.process_time()),
                                                         signal.default_int_handler(*a)))
    try:
        with pytest.raises(KeyboardInterrupt):
            aisimulate.check(long_trace)
        assert time.process_time() - signals[0] < 0.2
    finally:
        signal.signal(signal.SIGINT, previous)


def test_cli_validate_stops_on_ctrl_c_at_once(tmp_path, long_trace):
    """``aisimulate validate`` interrupted while it reads the trace: exit 130, one line,
    within a few ms of CPU of the signal (the whole read is ~0.75 s)."""
    cfg = tmp_path / "long.yaml"
    cfg.write_text(yaml.safe_dump(long_trace))
    proc = _cli("validate", str(cfg), tmp_path=tmp_path, pause="check")
    _wait_for_pause(proc, tmp_path, "check")  # started, reading
    at_signal = _cpu_s(proc.pid)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 130, stderr
    assert stderr == "aisimulate: error: interrupted\n"
    assert stdout == ""
    assert usage.ru_utime + usage.ru_stime - at_signal < 0.2


@pytest.mark.parametrize("value", ["yes", "no", 1, 0])
def test_progress_is_true_false_or_none(base_spec, tmp_path, value):
    # progress="no" was a bar (bool("no") is True) and "yes" passed unchecked
    message = f"progress must be True, False or None (automatic), got {value!r} ({type(value).__name__})"
    rep = aisimulate.replay(base_spec, progress=False)
    for call in (lambda: aisimulate.replay(base_spec, progress=value),
                 lambda: aisimulate.sweep(base_spec, {"traffic.source.osl": [4]}, progress=value),
                 lambda: rep.save(tmp_path / "out", progress=value),
                 lambda: rep.to_aiperf(tmp_path / "aiperf", progress=value)):
        with pytest.raises(TypeError) as e:
            call()
        assert str(e.value) == message
    assert not (tmp_path / "out").exists() and not (tmp_path / "aiperf").exists()
    with pytest.raises(TypeError, match="^timeline must be True or False, got 'yes'"):
        aisimulate.replay(base_spec, timeline="yes")


def test_a_terminal_of_0_columns_gets_an_80_column_bar(monkeypatch, tmp_path):
    # tqdm sized the bar from os.get_terminal_size: 0 columns drew −1, no bar at all
    import importlib

    sweep_module = importlib.import_module("aisimulate.sweep")
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=None: os.terminal_size((0, 0)))
    with open(tmp_path / "tty", "w") as fh:
        monkeypatch.setattr(sys, "stderr", fh)
        for bar in (_run.make_bar(total=10, desc="replay", unit="req"), sweep_module._progress_bar(10, True)):
            bar.update(3)
            line = str(bar)
            bar.close()
            assert len(line) == 80 and "30%|" in line and "3/10" in line, line
    assert _run.bar_width(open(os.devnull)) == {"ncols": 80}
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=None: os.terminal_size((120, 40)))
    assert _run.bar_width(sys.stderr) == {"dynamic_ncols": True}  # follows a terminal's width
