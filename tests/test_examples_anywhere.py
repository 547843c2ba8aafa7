"""The examples that price passes from measured kernel tables find them as
``aisimulate systems`` does (AISIMULATE_DATA, else the checkout's ../shared/data): copied
out of the checkout, with AISIMULATE_DATA naming the data, one replays as in place. It
named ``database: ../../shared/data/aic/systems``, a folder next to the checkout only,
so a copy (or a checkout without ../shared) failed even with AISIMULATE_DATA set."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import REPO

SHARED = REPO.parent / "shared" / "data"


def _perf(path):
    return ((yaml.safe_load(path.read_text()) or {}).get("engine") or {}).get("perf") or {}


EXAMPLES = sorted(p for p in (REPO / "examples").rglob("*.yaml") if _perf(p).get("source") == "aic")


def test_no_example_names_a_kernel_table_folder():
    assert len(EXAMPLES) >= 5  # the scan found them
    assert [p.name for p in EXAMPLES if "database" in _perf(p)] == []


@pytest.mark.skipif(not (SHARED / "aic" / "systems").is_dir(), reason="needs ../shared/data")
def test_an_aic_example_copied_elsewhere_replays_as_in_place(tmp_path):
    example = REPO / "examples" / "aic-qwen3-32b-h100.yaml"
    shutil.copy(example, tmp_path / "copy.yaml")
    base = {k: v for k, v in os.environ.items() if not k.startswith("AISIMULATE_")}

    def replay(path, **env):
        proc = subprocess.run([sys.executable, "-m", "aisimulate", "replay", str(path), "-q", "--format", "json"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path,
                              env=dict(base, PYTHONPATH=str(REPO / "python"), **env))
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    here = replay(example)
    there = replay(tmp_path / "copy.yaml", AISIMULATE_DATA=str(SHARED))
    assert there["summary"] == here["summary"]
    assert there["metadata"]["perf_model"] == here["metadata"]["perf_model"] == "aic-v1"
