"""``make demo`` in a clone that is not next to the shared data says so before it builds
anything, naming the trace it looked for and the two ways on (``AISIMULATE_DATA=``, or
``make quickstart``); it took a 2.5-minute build of the native core to learn that the
trace was missing. ``make demo AISIMULATE_DATA=FOLDER`` replays the trace of that folder."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
TRACE = "traces/mooncake/conversation_trace.jsonl"


def _make(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE") and k not in ("MFLAGS", "AISIMULATE_DATA")}
    return subprocess.run(["make", "-s", "-C", str(REPO), *args], capture_output=True, text=True, env=env, timeout=60)


def test_demo_without_the_trace_says_where_it_looked(tmp_path):
    proc = _make("demo-data", f"AISIMULATE_DATA={tmp_path}")
    assert proc.returncode == 2
    assert (f"make demo: the Mooncake trace is not at {tmp_path}/{TRACE}: give the folder of the shared data "
            "(make demo AISIMULATE_DATA=/path/to/shared/data), or run make quickstart, which needs no data files"
            ) in proc.stderr


def test_demo_replays_the_trace_of_the_folder_given(tmp_path):
    (tmp_path / TRACE).parent.mkdir(parents=True)
    (tmp_path / TRACE).write_text('{"timestamp": 0, "input_length": 10, "output_length": 2}\n')
    assert _make("demo-data", f"AISIMULATE_DATA={tmp_path}").returncode == 0
    dry = _make("-n", "demo", f"AISIMULATE_DATA={tmp_path}")  # the commands, none run
    assert dry.returncode == 0, dry.stderr
    assert (f"aisimulate replay examples/mooncake-qwen3-32b-h100.yaml "
            f"--set traffic.source.path={tmp_path}/{TRACE}") in dry.stdout
