"""aisimulate.plot: each figure is a matplotlib Figure that saves headless, and what it
draws is the report's own numbers (checked against the records or by hand)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import aisimulate  # noqa: E402
from aisimulate import plot  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


@pytest.fixture(scope="module")
def report():
    # two workers, 40 requests at 20 req/s, linear perf: queues and batches form
    spec = {"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm",
                       "perf": {"source": "linear", "base_ms": 2.0, "per_prefill_token_ms": 0.01,
                                "per_decode_seq_ms": 0.1},
                       "workers": {"aggregated": {"count": 2}}, "scheduler": {"num_gpu_blocks": 1000, "max_model_len": 16000}},
            "traffic": {"source": {"type": "synthetic", "num_requests": 40, "isl": 300, "osl": 20},
                        "load": {"mode": "rate", "rate_rps": 200.0, "arrival": "constant"}}}
    return aisimulate.replay(spec, timeline=True)


def _png(fig: Figure, tmp_path, name: str) -> bytes:
    path = tmp_path / name
    fig.savefig(path, dpi=60)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
    return data


def test_latency_cdf_draws_each_completed_request(report, tmp_path):
    fig = report.plot.cdf()
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    ttft = np.sort([r["ttft_ms"] for r in report.requests if r["status"] == "completed"])
    line = fig.axes[0].lines[0]  # the step line: x = sorted TTFTs, y = i / n
    assert np.allclose(line.get_xdata(), ttft)
    assert line.get_ydata()[-1] == 1.0 and line.get_ydata()[0] == 1 / len(ttft)
    _png(fig, tmp_path, "cdf.png")
    two = plot.latency_cdf({"a": report, "b": report}, metrics=["e2e_ms"])
    assert [t.get_text() for t in two.axes[0].get_legend().get_texts()] == ["a", "b"]
    with pytest.raises(ValueError, match="unknown metric"):
        plot.latency_cdf(report, metrics=["ttft"])
    # one name is one panel, not one per character
    one = plot.latency_cdf(report, metrics="ttft_ms")
    assert len(one.axes) == 1 and np.allclose(one.axes[0].lines[0].get_xdata(), ttft)


def test_timeline_panels_follow_the_pass_timeline(report, tmp_path):
    fig = report.plot.timeline()
    ax_b, ax_kv, ax_q = fig.axes
    tl = report.timeline
    sel = (np.asarray(tl["worker"]) == 0)
    batch = (np.asarray(tl["prefill_requests"]) + np.asarray(tl["decode_requests"]))[sel]
    assert np.array_equal(ax_b.lines[0].get_ydata(), batch)
    assert np.array_equal(ax_kv.lines[0].get_ydata(), np.asarray(tl["kv_blocks_used"])[sel])
    assert [ln.get_label() for ln in ax_q.lines] == ["aggregated/0", "aggregated/1"]
    _png(fig, tmp_path, "timeline.png")
    no_timeline = aisimulate.replay(report.metadata["spec"])
    with pytest.raises(ValueError, match="timeline=True"):
        no_timeline.plot.timeline()
    # one pool by name (not a substring test); a pool the report lacks is named
    assert [ln.get_label() for ln in report.plot.timeline(pools="aggregated").axes[2].lines] == \
        ["aggregated/0", "aggregated/1"]
    for bad in ("agg", ["prefill"]):
        with pytest.raises(ValueError, match=r"^timeline: no pool\(s\) \[.*\] in this report; its pools: \['aggregated'\]$"):
            report.plot.timeline(pools=bad)


def test_throughput_integrates_to_the_output_tokens(report, tmp_path):
    fig = report.plot.throughput(window_s=0.01)
    line = fig.axes[0].lines[0]
    tokens = float(np.sum(line.get_ydata()) * 0.01)  # Σ tokens/s × window
    assert tokens == pytest.approx(report.summary["total_output_tokens"], rel=1e-9)
    _png(fig, tmp_path, "throughput.png")


def test_pareto_front_by_hand():
    # (x, y), both higher-better: (1,5) (2,4) (3,1) are on the front; (1,4) is beaten
    # by (1,5), (2,2) by (2,4); NaN never is.
    xs = [1, 2, 3, 1, 2, math.nan]
    ys = [5, 4, 1, 4, 2, 9]
    assert plot.pareto_front(xs, ys, x_higher=True) == [0, 1, 2]
    # x a latency (lower is better): (1,5) dominates everything with x ≥ 1 and y ≤ 5
    assert plot.pareto_front(xs, ys, x_higher=False) == [0]


def test_pareto_of_a_sweep(tmp_path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"engine.workers.aggregated.tp": [1, 2, 4, 8],
                       "status": ["ok", "ok", "ok", "infeasible"],
                       "output_tps_per_user": [50.0, 80.0, 60.0, math.nan],
                       "output_tps_per_gpu": [900.0, 700.0, 400.0, math.nan]})
    fig = plot.pareto(df, slo=70)
    ax = fig.axes[0]
    front = ax.lines[0]
    assert list(front.get_xdata()) == [50.0, 80.0]  # tp 4 is beaten by tp 2
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["tp=1", "tp=2"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "best meeting the SLO: output_tps_per_gpu = 700" in legend  # only tp 2 has ≥ 70
    _png(fig, tmp_path, "pareto.png")
    with pytest.raises(KeyError, match="no column"):
        plot.pareto(df, x="nope")
    for bad in ("70", True, [70]):
        with pytest.raises(TypeError, match=r"^pareto: slo must be a number \(the bound on output_tps_per_user\), got "):
            plot.pareto(df, slo=bad)
    with pytest.raises(ValueError, match=r"^pareto: slo must be a finite number .* got nan$"):
        plot.pareto(df, slo=math.nan)
    import numpy as np

    fig = plot.pareto(df, slo=np.float32(70))  # any real number
    # {x: bound} is the bound on x; per-request bounds belong to sweep(slo=...)
    fig = plot.pareto(df, slo={"output_tps_per_user": 70})
    assert "best meeting the SLO: output_tps_per_gpu = 700" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    for bad in ({"ttft_ms": 200}, {}, {"output_tps_per_user": 70, "tpot_ms": 20}):
        with pytest.raises(TypeError, match=r"^pareto: slo must be a number or \{'output_tps_per_user': number\} "
                                            r"\(the bound on x = output_tps_per_user\), got a mapping of .*"
                                            r"go to aisimulate.sweep\(slo=...\)"):
            plot.pareto(df, slo=bad)
    with pytest.raises(TypeError, match="slo must be a number"):
        plot.pareto(df, slo={"output_tps_per_user": "70"})
    assert "best meeting the SLO: output_tps_per_gpu = 700" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
