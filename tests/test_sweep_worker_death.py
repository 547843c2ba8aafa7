"""A sweep whose worker process dies reports that point as failed and never waits forever:
a watcher thread SIGKILLs whichever worker process has the victim
point's trace open (the Mooncake reader streams it for the whole replay), every time that
point runs. The victim trace is long (200,000 rows, a few seconds of replay on any machine
this runs on) because the watcher must find its reader before the replay ends; the kill
comes within milliseconds of the open, so the length costs only the file's writing."""

from __future__ import annotations

import os
import signal
import threading

import aisimulate
import aisimulate._sweep.local as local


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == pid:
                out.append(int(entry))
    return out


def _kill_readers_of(path: str, stop: threading.Event, kills: set[int]) -> None:
    me = os.getpid()
    while not stop.is_set():
        for child in _children(me):
            try:
                fds = os.listdir(f"/proc/{child}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{child}/fd/{fd}") == path:
                        os.kill(child, signal.SIGKILL)
                        kills.add(child)  # a dying process may be seen twice
                        break
                except OSError:
                    continue
        stop.wait(0.005)


def _trace(path, rows: int):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f'{{"timestamp": {i * 5}, "input_length": 64, "output_length": 4}}\n'
                     for i in range(rows))
    return str(path)


def test_a_killed_worker_fails_its_point_only(tmp_path, base_spec, monkeypatch):
    monkeypatch.setattr(local, "SERIAL_BELOW_S", 0)  # the pool, whatever the point sizes
    small = _trace(tmp_path / "small.jsonl", 20)
    victim = _trace(tmp_path / "victim.jsonl", 200_000)
    base_spec["traffic"] = {"source": {"type": "mooncake", "path": small}, "load": {"mode": "trace"}}
    stop, kills = threading.Event(), set()
    watcher = threading.Thread(target=_kill_readers_of, args=(victim, stop, kills), daemon=True)
    watcher.start()
    try:
        df = aisimulate.sweep(base_spec, [{"traffic.source.path": p} for p in (small, victim, small, small)],
                              jobs=2)
    finally:
        stop.set()
        watcher.join()
    assert list(df["status"]) == ["ok", "error", "ok", "ok"]
    assert df["reason"][1].startswith("WorkerDied: the worker process running this point died")
    assert "SIGKILL" in df["reason"][1]
    assert list(df["completed"][[0, 2, 3]]) == [20, 20, 20]
    # its worker killed in the pool with other work in flight, then once more when rerun alone
    assert len(kills) == 2
