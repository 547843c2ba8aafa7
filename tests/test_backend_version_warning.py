"""A kernel-table version that is not in the database is said, not silently replaced:
``engine.perf.backend_version=9.9.9`` runs on the 0.24.0 tables (the
nearest measured) with one warning naming the field, the version asked and the version
used — ``aisimulate: warning: …`` on the CLI's stderr, a BackendVersionWarning in
Python — and none when the version's tables are there."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import aisimulate
from conftest import REPO

EXAMPLE = REPO / "examples" / "aic-qwen3-32b-h100.yaml"  # vLLM 0.24.0 tables of h100_sxm
DB = REPO.parent / "shared" / "data" / "aic" / "systems" / "data" / "h100_sxm"
pytestmark = pytest.mark.skipif(not DB.is_dir(), reason="needs the kernel tables in ../shared/data")

SMALL = {"traffic.source.num_requests": 4}
TABLES = "gemm_perf, context_attention_perf, generation_attention_perf, custom_allreduce_perf"
MESSAGE = ("engine.perf.backend_version: the database has no kernel tables of version 9.9.9 "
           f"({TABLES}); those of version 0.24.0 are used")


def spec(version: str):
    return aisimulate.load_config(EXAMPLE, overrides={**SMALL, "engine.perf.backend_version": version})


def test_python_warns_once_per_replay_and_check():
    for run in (lambda s: aisimulate.replay(s, progress=False), aisimulate.check):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run(spec("9.9.9"))
        ours = [w for w in caught if issubclass(w.category, aisimulate.BackendVersionWarning)]
        assert [str(w.message) for w in ours] == [MESSAGE]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the version's own tables: nothing said
            run(spec("0.24.0"))


def test_the_cli_says_it_on_stderr_in_one_line(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "aisimulate", *args, str(EXAMPLE), "-q",
                               "--set", "traffic.source.num_requests=4"], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120,
                              env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})

    for command in ("replay", "validate"):
        proc = run(command, "--set", "engine.perf.backend_version=9.9.9")
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.splitlines() == [f"aisimulate: warning: {MESSAGE}"]
        quiet = run(command)
        assert quiet.returncode == 0 and quiet.stderr == ""


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_sweep_warns_once_also_from_worker_processes(jobs):
    """With worker processes the points' warnings were lost: they come back with each
    point's result and the sweep warns once per message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = aisimulate.sweep(spec("0.24.0"), {"engine.perf.backend_version": ["9.9.9", "0.24.0", "9.9.9"]},
                              jobs=jobs, progress=False)
    assert df["status"].tolist() == ["ok"] * 3
    ours = [str(w.message) for w in caught if issubclass(w.category, aisimulate.BackendVersionWarning)]
    assert ours == [MESSAGE]
