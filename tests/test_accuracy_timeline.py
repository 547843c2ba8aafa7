"""tools.accuracy.timeline: a request's path to its first token through the passes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import aisimulate
from aisimulate.tools import accuracy
from aisimulate.tools.accuracy import spec as row_specs
from aisimulate.tools.accuracy.timeline import first_token_path, first_token_paths, mean_path
from conftest import EXAMPLE1_ROWS, example1_spec, write_mooncake


def test_paths_of_worked_example_1(tmp_path):
    # worked example 1's passes (tests/test_timeline.py): P1 0 → 7.12 (r1 512 tokens),
    # P2 7.12 → 14.00 (r1 488), P3 14.00 → 17.10 (r1 decode, r2 prefill 100), P4.
    # r1 arrives at 0 on an idle engine: its two prefill passes, first token at 14.00.
    # r2 arrives at 10, in P2: 4.00 ms of P2 left, then P3, first token at 17.10.
    trace = write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS)
    rep = aisimulate.replay(example1_spec(trace), timeline=True)
    r1, r2 = first_token_paths(sorted(rep.requests, key=lambda r: r["arrival_ms"]), rep.timeline)
    assert (r1.intake_ms, r1.inflight_ms, r1.passes, r1.first_pass) == (0.0, 0.0, 2, 0)
    assert r1.passes_ms == pytest.approx(14.00, abs=1e-9)
    assert r1.ttft_ms == pytest.approx(14.00, abs=1e-9)
    assert r2.inflight_ms == pytest.approx(4.00, abs=1e-9)
    assert (r2.passes, r2.first_pass) == (1, 2)
    assert r2.passes_ms == pytest.approx(3.10, abs=1e-9)
    assert r2.ttft_ms == pytest.approx(7.10, abs=1e-9)
    for p in (r1, r2):
        assert p.idle_ms == pytest.approx(0.0, abs=1e-9) and p.delivery_ms == pytest.approx(0.0, abs=1e-9)
    m = mean_path([r1, r2])
    assert m["ttft_ms"] == pytest.approx((14.00 + 7.10) / 2, abs=1e-9)
    assert m["passes"] == 1.5


def test_idle_and_delivery_and_the_sum():
    # passes 0 → 5 and 10 → 12; sent at 4, arrives at 6 on an idle worker, first token at
    # the client 12.5: intake 2, nothing in flight, one pass of 2 ms, 4 ms idle (6 → 10),
    # delivery 0.5; the parts add up to the TTFT, 8.5
    starts, ends = np.array([0.0, 10.0]), np.array([5.0, 12.0])
    p = first_token_path({"request_id": 7, "send_ms": 4.0, "arrival_ms": 6.0, "first_token_ms": 12.5},
                         starts, ends)
    assert (p.intake_ms, p.inflight_ms, p.passes, p.passes_ms, p.idle_ms, p.delivery_ms) == (2.0, 0.0, 1, 2.0, 4.0, 0.5)
    assert p.intake_ms + p.inflight_ms + p.passes_ms + p.idle_ms + p.delivery_ms == p.ttft_ms == 8.5


def test_a_pass_starting_at_the_arrival_is_not_in_flight():
    # the pass that starts at the arrival instant may hold the request: it counts as one
    # of its passes, not as the pass in flight
    p = first_token_path({"request_id": 0, "send_ms": 3.0, "arrival_ms": 3.0, "first_token_ms": 9.0},
                         np.array([0.0, 3.0]), np.array([3.0, 9.0]))
    assert (p.inflight_ms, p.passes, p.passes_ms, p.first_pass) == (0.0, 1, 6.0, 1)


def test_refusals():
    with pytest.raises(ValueError, match="no first token"):
        first_token_path({"request_id": 1, "send_ms": 0, "arrival_ms": 0, "first_token_ms": None},
                         np.array([0.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="no pass ends"):
        first_token_path({"request_id": 1, "send_ms": 0, "arrival_ms": 2.0, "first_token_ms": 2.5},
                         np.array([0.0]), np.array([3.0]))
    with pytest.raises(ValueError, match="no paths"):
        mean_path([])


SILICON = accuracy.SHARED_DATA / "silicon" / "vllm_dense_dev.csv"


@pytest.mark.skipif(not SILICON.is_file(), reason="shared silicon data not found")
def test_script_on_a_dev_row_agrees_with_the_harness(capsys):
    # scripts/row_timeline.py replays the row's spec as scripts/accuracy.py builds it: its
    # predicted means are the harness's for that row (accuracy.simulate_row), and the
    # mean path's parts add up to the mean TTFT
    rows, aliases = accuracy.read_inputs(SILICON)
    row = next(r for r in rows if r["id"].endswith("1024x128_c8_tp8_epnone_3"))
    spec, warm, measured = row_specs.row_spec(row, perf="aic", aliases=aliases,
                                              model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                              database=accuracy.DEFAULT_DATABASE)
    rep = aisimulate.replay(spec)
    window = sorted(rep.requests, key=lambda r: (r["send_ms"], r["request_id"]))[warm:warm + measured]
    want = sum(r["ttft_ms"] for r in window) / len(window)

    script = Path(__file__).resolve().parent.parent / "scripts" / "row_timeline.py"
    mod_spec = importlib.util.spec_from_file_location("row_timeline", script)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    assert mod.main(["--silicon", str(SILICON), "--id", "1024x128_c8_tp8_epnone_3", "--requests", "2",
                     "--passes", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith(f"predicted TTFT {want:.1f} ms")
    parts = [float(x) for x in out[2].replace("+", " ").split() if x.replace(".", "", 1).isdigit()]
    # intake, in flight, passes (count), passes ms, idle, delivery
    assert parts[0] + parts[1] + parts[3] + parts[4] + parts[5] == pytest.approx(want, abs=0.3)
    assert len(out) == 3 + 1 + 2 + 1 + 3
    assert mod.main(["--silicon", str(SILICON), "--id", "no_such_row"]) == 2
    # --rounds: the 160 measured requests in 20 rounds of c = 8, whose means average to
    # the mean TTFT (equal rounds); the first is the wave sent to the idle engine, the
    # slowest (its 8 prompts queue behind each other)
    assert mod.main(["--silicon", str(SILICON), "--id", "1024x128_c8_tp8_epnone_3", "--requests", "1",
                     "--rounds"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rounds of 8: "))
    rounds = [float(x) for x in line.split(": ")[1].split()]
    assert len(rounds) == 20
    assert sum(rounds) / 20 == pytest.approx(want, abs=0.5)  # each printed to 0.5 ms
    assert rounds[0] == max(rounds)
