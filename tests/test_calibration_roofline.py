"""Roofline calibration: a re-fit on a small slice recovers known parameters."""

from __future__ import annotations

import pytest

from aisimulate.tools import accuracy
from aisimulate.tools.roofline_calibration import fit_roofline
from aisimulate.tools.roofline_calibration import fitted as fitted_roofline

SILICON = accuracy.SHARED_DATA / "silicon" / "vllm_dense_dev.csv"
ALIASES = accuracy.SHARED_DATA / "silicon" / "model_aliases.csv"

pytestmark = pytest.mark.skipif(not SILICON.is_file(), reason="shared silicon data not found")


def test_stored_fit_has_provenance():
    fit = fitted_roofline()
    assert set(fit["params"]) == {"compute_efficiency", "memory_efficiency", "pass_overhead_us",
                                  "per_sequence_overhead_us", "layer_latency_us"}
    for key in ("data", "command", "date"):
        assert fit["provenance"][key]
    assert 0 < fit["params"]["compute_efficiency"] <= 1


def test_refit_recovers_the_stored_parameters():
    # GIVEN "measurements" made by the roofline with the stored parameters on three rows
    # of different shapes (prefill-heavy, decode-heavy, TP 2/4). Not a row whose
    # replacement's turnaround (10.3 ms at ISL 4096) is within a decode pass of the
    # threshold where its loop bunches (TP 8, 4096/128, c 8: pass 8.6 ms): there the
    # predicted TTFT jumps as the parameters move, and no local fit can recover them.
    truth = fitted_roofline()["params"]
    aliases = accuracy.load_aliases(ALIASES)
    rows = accuracy.read_silicon(SILICON)
    pick = [rows[i] for i in (0, 34, 45)]  # 1024/128 c8 TP2, 1024/1024 c16 TP4, 4096/128 c8 TP2
    made = accuracy.evaluate(pick, perf="roofline", aliases=aliases, perf_overrides=truth)
    assert all(r.status == "ok" for r in made)
    synthetic = [dict(row, silicon_ttft_ms=str(r.predicted_ttft_ms), silicon_tpot_ms=str(r.predicted_tpot_ms))
                 for row, r in zip(pick, made)]
    # WHEN the fit starts from the roofline defaults (the layer latency held at the
    # stored value: with one model it is a per-pass constant like the pass overhead)
    fit = fit_roofline(synthetic, aliases=aliases, start={"layer_latency_us": truth["layer_latency_us"]},
                       max_evals=250, tol=1e-10)
    # THEN it lands on the stored values
    assert fit.loss < 1e-4
    assert fit.compute_efficiency == pytest.approx(truth["compute_efficiency"], rel=0.05)
    assert fit.memory_efficiency == pytest.approx(truth["memory_efficiency"], rel=0.05)
    # overheads within what a pass of these rows (≥ 8 ms) can resolve: 1 % of it
    assert fit.pass_overhead_us == pytest.approx(truth["pass_overhead_us"], abs=80)
    assert fit.per_sequence_overhead_us == pytest.approx(truth["per_sequence_overhead_us"], abs=5)
    assert fit.layer_latency_us == truth["layer_latency_us"]


def test_fit_rejects_unknown_free_parameter():
    rows = accuracy.read_silicon(SILICON)[:1]
    with pytest.raises(ValueError, match="free must name"):
        fit_roofline(rows, aliases=accuracy.load_aliases(ALIASES), free=("kernel_magic",))


def test_fit_starts_from_the_core_roofline_defaults():
    # default_start reads the canonical spec (core/config/defaults.go); the report of a
    # replay with no perf overrides names the values the roofline model ran with
    import aisimulate
    from aisimulate.tools.roofline_calibration import default_start
    rep = aisimulate.replay({"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "perf": {"source": "roofline"},
                                        "scheduler": {"num_gpu_blocks": 100, "max_model_len": 1600}},
                             "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 16, "osl": 2},
                                         "load": {"mode": "concurrency", "concurrency": 1}}})
    params = rep.metadata["perf_metadata"]["params"]
    start = default_start()
    assert {k: params[k] for k in start} == start
    # the values of core/config/defaults.go (docs/accuracy.md gives their evidence)
    assert start == {"compute_efficiency": 0.7, "memory_efficiency": 0.8, "pass_overhead_us": 1000.0,
                     "per_sequence_overhead_us": 40.0, "layer_latency_us": 40.0}
