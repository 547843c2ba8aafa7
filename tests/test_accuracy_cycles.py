"""tools.accuracy.cycles: a closed loop's cycle and the engine work per prompt it implies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aisimulate.tools.accuracy.cycles import cycle_ms, fit_cycles, group_cycles

ROOT = Path(__file__).resolve().parent.parent


def test_cycle_of_a_measured_row():
    # Qwen3-32B, h100_sxm TP 2, 4096/128, c 8 (vllm_dense_dev.csv): TTFT 741.6997 ms,
    # TPOT 26.3360 ms: 741.6997 + 127 × 26.3360 = 741.6997 + 3344.672 = 4086.3717 ms
    assert cycle_ms(741.6997, 26.3360, 128) == pytest.approx(4086.3717, abs=1e-9)
    assert cycle_ms(5.0, 99.0, 1) == 5.0
    with pytest.raises(ValueError):
        cycle_ms(1.0, 1.0, 0)


def test_fit_recovers_a_hand_built_loop():
    # c 8 prompts per cycle, W = 200 ms each, d = 16 ms, k = 6 prefill passes inside a
    # request's decode steps: C = 8·200 + (OSL − 1 − 6)·16
    # OSL 128: 1600 + 121·16 = 3536; 512: 1600 + 505·16 = 9680; 1024: 1600 + 1017·16 = 17872.
    fit = fit_cycles([(128, 3536.0), (512, 9680.0), (1024, 17872.0)], 8)
    assert fit.decode_pass_ms == pytest.approx(16.0, abs=1e-9)
    # I = 1600 − 6·16 = 1504; W ∈ [1504/8, (1504 + 7·16)/8] = [188, 202] holds the true 200
    assert fit.intercept_ms == pytest.approx(1504.0, abs=1e-9)
    assert (fit.work_low_ms, fit.work_high_ms) == (pytest.approx(188.0), pytest.approx(202.0))
    with pytest.raises(ValueError):
        fit_cycles([(128, 1.0), (128, 2.0)], 8)
    with pytest.raises(ValueError):
        fit_cycles([(128, 1.0), (512, 2.0)], 0)


def _row(osl, meas, pred, c="8", tp="2", status="ok"):
    # TTFT 500 ms on both sides, TPOT chosen so that the cycle is the one wanted
    return {
        "status": status, "model": "m", "system": "s", "tp": tp, "isl": "4096",
        "concurrency": c, "osl": str(osl),
        "silicon_ttft_ms": "500", "silicon_tpot_ms": repr((meas - 500) / (osl - 1)),
        "predicted_ttft_ms": "500", "predicted_tpot_ms": repr((pred - 500) / (osl - 1)),
    }


def test_groups_by_everything_but_osl(tmp_path):
    rows = [_row(128, 3536.0, 3536.0), _row(512, 9680.0, 9680.0), _row(1024, 17872.0, 17872.0),
            _row(128, 1.0e4, 1.0e4, status="error"),  # not ok: left out
            _row(128, 900.0, 900.0, tp="4")]  # one OSL only: no fit
    (g,) = group_cycles(rows)
    assert g.osls == (128, 512, 1024)
    assert g.measured_ms == pytest.approx((3536.0, 9680.0, 17872.0))
    assert g.measured == g.predicted
    assert g.measured.work_low_ms == pytest.approx(188.0)
    # the script prints it
    import csv
    p = tmp_path / "rows.csv"
    with open(p, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "row_cycles.py"), "--rows", str(p)],
                         capture_output=True, text=True, check=True).stdout
    assert "tp=2 isl=4096 concurrency=8" in out and "W 188–202 / 188–202 ms (midpoints +0 %)" in out
    bad = subprocess.run([sys.executable, str(ROOT / "scripts" / "row_cycles.py"), "--rows", str(tmp_path / "no.csv")],
                         capture_output=True, text=True)
    assert bad.returncode == 2
