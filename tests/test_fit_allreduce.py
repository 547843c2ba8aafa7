"""The measured all-reduce of the built-in systems (scripts/fit_allreduce.py)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aisimulate.tools import accuracy

REPO = Path(__file__).resolve().parent.parent
SYSTEMS = accuracy.SHARED_DATA / "aic" / "systems"


def _script():
    spec = importlib.util.spec_from_file_location("fit_allreduce", REPO / "scripts" / "fit_allreduce.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fit_recovers_an_exact_line():
    # T = 3 µs + 2(t−1)/t · 2 B · n / 100 GB/s on t = 4 GPUs: n = 1,024 elements moves
    # 1.5 · 2,048 = 3,072 B → 3 µs + 30.72 ns; the fit returns (3 µs, 100 GB/s), error 0.
    n = np.array([1024.0, 65536.0, 1 << 20, 1 << 24])
    t = 3e-6 + 1.5 * 2 * n / 100e9
    lat, bw, rms, worst = _script().fit(n, t, 4)
    assert lat == pytest.approx(3e-6, rel=1e-9)
    assert bw == pytest.approx(100e9, rel=1e-9)
    assert rms < 1e-9 and worst < 1e-9


def test_fit_never_returns_a_negative_latency():
    # Times proportional to the bytes (no fixed cost) plus noise that would pull an
    # unconstrained latency below zero: the fit pins it at 0 and refits the bandwidth.
    n = np.array([1024.0, 4096.0, 1 << 20])
    t = np.array([0.5, 1.0, 1.0]) * 2 * n / 10e9  # t = 2: 2 B per element over the bus
    lat, bw, _, _ = _script().fit(n, t, 2)
    assert lat == 0.0
    assert bw > 0


@pytest.mark.skipif(not (SYSTEMS / "data").is_dir(), reason="shared aic systems not found")
def test_builtin_values_are_the_printed_fit():
    # Every (system, GPU count) the script prints is in core/hardware/builtin.go with
    # the same literal: the built-ins carry the fit of the tables, not hand values.
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "fit_allreduce.py"), "--database", str(SYSTEMS)],
                         capture_output=True, text=True, check=True).stdout
    src = (REPO / "core" / "hardware" / "builtin.go").read_text()
    blocks = dict(re.findall(r'Name: "([^"]+)".*?AllReduce: map\[int\]AllReduceLink\{(.*?)\},\n', src, re.S))
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) >= 21  # 6 systems × 3 GPU counts + gb200 at 2 and 4 + rtx_pro_6000_server at 2
    for line in lines:
        name = line.split()[0]
        literal = line.split("   ")[-1].strip().rstrip(",")
        assert name in blocks, f"{name}: no AllReduce in builtin.go"
        assert literal in blocks[name], f"{name}: {literal} not in builtin.go's {blocks[name]}"
    rtx = next(ln for ln in lines if ln.startswith("rtx_pro_6000_server"))
    assert "B   15.0 GB/s" in rtx  # a quarter of its PCIe 5.0 link's 64 GB/s
