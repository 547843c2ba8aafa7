"""Figures serving engineers draw, as matplotlib Figures (``pip install 'aisimulate[plot]'``).

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot's global
state: it shows in a notebook as the value of a cell (it has ``_repr_png_``) or with
``display(fig)``, and saves headless (``fig.savefig("ttft.png")``) on any backend.

- :func:`latency_cdf`: CDFs of TTFT, TPOT and E2E (ms) of one or several reports;
- :func:`timeline`: per worker, batch size, KV blocks in use and queue length over
  simulated time (needs ``aisimulate.replay(spec, timeline=True)``);
- :func:`throughput`: output tokens/s and TTFT / E2E percentiles over time, from the
  per-request records (traces, long runs);
- :func:`pareto`: a sweep's points, tokens/s per GPU against tokens/s per user (or a
  latency percentile), with the Pareto front and the SLO drawn.

``report.plot.cdf()``, ``report.plot.timeline()`` and ``report.plot.throughput()`` are
the same functions bound to a report.
"""

from __future__ import annotations

import io
import math
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

__all__ = ["latency_cdf", "timeline", "throughput", "pareto", "pareto_front", "ReportPlots"]

#: Per-request latency metrics :func:`latency_cdf` draws by default, with their labels.
CDF_METRICS: dict[str, str] = {"ttft_ms": "TTFT (ms)", "tpot_ms": "TPOT (ms)", "e2e_ms": "E2E latency (ms)"}


class NotebookFigure(Figure):
    """A Figure that Jupyter shows as PNG when it is a cell's value (``_repr_png_``), with
    no pyplot or backend state involved."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=100)
        return buf.getvalue()


def figure(rows: int, cols: int, width: float, height: float):
    """``(fig, axes)``: a figure of ``width`` × ``height`` inches (constrained layout,
    shown inline in a notebook) and its ``rows`` × ``cols`` axes, always a 2-D array.
    Every figure of this module, and the plot of :func:`aisimulate.compare`'s result, is
    made here."""
    fig = NotebookFigure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, axes


def _title(report: Any) -> str:
    m = report.metadata or {}
    model, system, gpus = m.get("model"), m.get("system"), m.get("gpus")
    parts = [str(model) if model else "", f"on {system}" if system else "",
             f"({gpus} GPU{'s' if gpus != 1 else ''})" if isinstance(gpus, int) else ""]
    return " ".join(p for p in parts if p)


def _labelled(reports: Any) -> list[tuple[str, Any]]:
    """(label, report) pairs from a report, a mapping label → report, or a sequence."""
    if hasattr(reports, "summary") and hasattr(reports, "metadata"):
        return [(_title(reports) or "replay", reports)]
    if isinstance(reports, Mapping):
        return [(str(k), v) for k, v in reports.items()]
    return [(_title(r) or f"replay {i}", r) for i, r in enumerate(reports)]


def _completed(report: Any, names: Sequence[str]) -> dict[str, np.ndarray]:
    return report.completed_values(list(names))


def latency_cdf(reports: Any, metrics: str | Sequence[str] = tuple(CDF_METRICS), *, log_x: bool = False):
    """Empirical CDFs of per-request latencies over completed requests.

    Args:
        reports: a :class:`~aisimulate.ReplayReport`, a ``{label: report}`` mapping, or a
            sequence of reports (one line each).
        metrics: per-request fields (ms): any of ``ttft_ms``, ``tpot_ms``, ``e2e_ms``
            (one name or a list of them).
        log_x: a logarithmic latency axis.

    Returns:
        A Figure with one panel per metric; y is the fraction of completed requests at or
        below x, with p50, p90 and p99 marked on each line.

    Raises:
        ValueError: an unknown metric.
    """
    if isinstance(metrics, str):  # one name, not its characters
        metrics = [metrics]
    unknown = [m for m in metrics if m not in CDF_METRICS]
    if unknown:
        raise ValueError(f"latency_cdf: unknown metric(s) {unknown}; use {list(CDF_METRICS)}")
    pairs = _labelled(reports)
    fig, axes = figure(1, len(metrics), 4.2 * len(metrics), 3.6)
    for ax, metric in zip(axes[0], metrics):
        for label, rep in pairs:
            v = np.sort(_completed(rep, [metric])[metric])
            v = v[~np.isnan(v)]
            if not len(v):
                continue
            y = np.arange(1, len(v) + 1) / len(v)
            (line,) = ax.step(v, y, where="post", label=label)
            for q in (50, 90, 99):
                x = float(np.percentile(v, q))
                ax.plot([x], [q / 100], "o", ms=3.5, color=line.get_color())
        ax.set_xlabel(CDF_METRICS[metric])
        ax.set_ylabel("fraction of completed requests")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        if log_x:
            ax.set_xscale("log")
    axes[0][0].legend(fontsize="small", loc="lower right")
    fig.suptitle("Latency CDFs (dots: p50, p90, p99)", fontsize="medium")
    return fig


def timeline(report: Any, *, pools: str | Sequence[str] | None = None, max_workers: int = 8):
    """Per worker, over simulated time: batch size (requests in the pass), KV blocks in
    use (and the capacity), and queue length (waiting requests), one step line per
    worker (``pool/worker``), from the pass timeline the core recorded.

    Args:
        report: a report replayed with ``timeline=True``.
        pools: the pools to draw, one name or a list (default all: ``aggregated``, or
            ``prefill`` and ``decode``).
        max_workers: draw at most this many workers per pool (the first ones).

    Raises:
        ValueError: the report has no timeline, or ``pools`` names a pool it lacks.
    """
    tl = getattr(report, "timeline", None)
    if tl is None:
        raise ValueError("this report has no timeline: replay with timeline=True "
                         "(aisimulate.replay(spec, timeline=True))")
    pool = np.asarray(tl["pool"], dtype=object)
    worker = np.asarray(tl["worker"])
    start_s = np.asarray(tl["start_ms"], dtype=float) / 1000.0
    batch = np.asarray(tl["prefill_requests"]) + np.asarray(tl["decode_requests"])
    used, total, waiting = (np.asarray(tl[k]) for k in ("kv_blocks_used", "kv_blocks_total", "waiting"))
    present = list(dict.fromkeys(pool.tolist()))
    if isinstance(pools, str):  # one name, not a substring test
        pools = [pools]
    unknown = [p for p in pools or () if p not in present]
    if unknown:
        raise ValueError(f"timeline: no pool(s) {unknown} in this report; its pools: {present}")
    names = [p for p in present if pools is None or p in pools]
    fig, axes = figure(3, 1, 9.0, 7.5)
    ax_b, ax_kv, ax_q = axes[:, 0]
    for p in names:
        for w in sorted(set(worker[pool == p].tolist()))[:max_workers]:
            sel = (pool == p) & (worker == w)
            label = f"{p}/{w}"
            ax_b.step(start_s[sel], batch[sel], where="post", lw=0.8, label=label)
            (line,) = ax_kv.step(start_s[sel], used[sel], where="post", lw=0.8, label=label)
            cap = total[sel]
            if len(cap):
                ax_kv.axhline(cap[0], color=line.get_color(), ls=":", lw=0.8)
            ax_q.step(start_s[sel], waiting[sel], where="post", lw=0.8, label=label)
    ax_b.set_ylabel("batch size\n(requests in the pass)")
    ax_kv.set_ylabel("KV blocks in use\n(dotted: capacity)")
    ax_q.set_ylabel("queue length\n(waiting requests)")
    ax_q.set_xlabel("simulated time (s)")
    for ax in (ax_b, ax_kv, ax_q):
        ax.grid(alpha=0.3)
    ax_b.legend(fontsize="x-small", ncol=4, loc="upper right")
    fig.suptitle(f"Engine timeline per worker — {_title(report)}", fontsize="medium")
    return fig


def _window_s(duration_s: float) -> float:
    """About 100 windows over the run, rounded to 1, 2 or 5 × a power of ten."""
    raw = max(duration_s / 100.0, 1e-3)
    exp = math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * 10 ** exp >= raw:
            return m * 10 ** exp
    return 10 ** (exp + 1)  # pragma: no cover


def throughput(report: Any, *, window_s: float | None = None):
    """Throughput and latency over simulated time, from the per-request records.

    Top: output tokens/s in windows of ``window_s`` (each completed request's first
    token at its ``first_token_ms``, the other output − 1 tokens spread evenly up to its
    ``end_ms``) and requests sent per second. Bottom: p50 and p90 of TTFT and E2E over
    the completed requests sent in each window.

    Args:
        report: any report.
        window_s: the window (s); default about 1/100 of the run, rounded.
    """
    v = _completed(report, ["send_ms", "first_token_ms", "end_ms", "output_tokens", "ttft_ms", "e2e_ms"])
    sent = _completed_or_all_sends(report)
    dur_s = max(float(report.summary.get("duration_ms") or 0.0) / 1000.0, 1e-3)
    w = window_s or _window_s(dur_s)
    edges = np.arange(0.0, dur_s + w, w)
    a, b = v["first_token_ms"] / 1000.0, v["end_ms"] / 1000.0
    rest = np.maximum(v["output_tokens"] - 1, 0)
    span = np.maximum(b - a, 1e-12)
    # tokens received by time t: 1 at a, then linear to out at b (integrated per edge)
    cum = np.array([float(np.sum((a <= t) * 1.0 + rest * np.clip((t - a) / span, 0.0, 1.0)))
                    for t in edges])
    tps = np.diff(cum) / w
    mids = (edges[:-1] + edges[1:]) / 2
    fig, axes = figure(2, 1, 9.0, 6.0)
    ax_t, ax_l = axes[:, 0]
    ax_t.step(edges[:-1], tps, where="post", label="output tokens/s")
    ax_t.set_ylabel("output tokens/s")
    ax_r = ax_t.twinx()
    ax_r.step(edges[:-1], np.histogram(sent / 1000.0, edges)[0] / w, where="post", color="tab:gray",
              lw=0.8, label="requests sent/s")
    ax_r.set_ylabel("requests sent/s", color="tab:gray")
    send_s = v["send_ms"] / 1000.0
    idx = np.digitize(send_s, edges) - 1
    for metric, color in (("ttft_ms", "tab:blue"), ("e2e_ms", "tab:orange")):
        for q, ls in ((50, "-"), (90, "--")):
            ys = [float(np.percentile(v[metric][idx == i], q)) if np.any(idx == i) else np.nan
                  for i in range(len(mids))]
            ax_l.plot(mids, ys, ls, color=color, lw=1, label=f"{metric.split('_')[0].upper()} p{q}")
    ax_l.set_yscale("log")
    ax_l.set_ylabel("latency (ms), by send time")
    ax_l.set_xlabel("simulated time (s)")
    ax_l.legend(fontsize="small", ncol=4)
    for ax in (ax_t, ax_l):
        ax.grid(alpha=0.3)
    fig.suptitle(f"Throughput and latency over time ({w:g} s windows) — {_title(report)}",
                 fontsize="medium")
    return fig


def _completed_or_all_sends(report: Any) -> np.ndarray:
    cols = getattr(report, "_columns", None)
    if cols is not None:
        return np.asarray(cols["send_ms"], dtype=float)
    return np.array([r["send_ms"] for r in report.requests if r.get("send_ms") is not None], dtype=float)


def _higher_is_better(column: str) -> bool:
    return column.endswith(("_tps", "_per_user", "_per_gpu", "_rps")) or "throughput" in column \
        or column in ("slo_attainment", "goodput_rps")


def pareto_front(xs: Sequence[float], ys: Sequence[float], *, x_higher: bool, y_higher: bool = True) -> list[int]:
    """Indices of the Pareto-optimal points (no other point is at least as good on both
    axes and better on one), ordered by x. NaN points are never on the front."""
    sx = np.asarray(xs, dtype=float) * (1 if x_higher else -1)
    sy = np.asarray(ys, dtype=float) * (1 if y_higher else -1)
    ok = ~(np.isnan(sx) | np.isnan(sy))
    order = [i for i in np.lexsort((-sy, -sx)) if ok[i]]  # best x first, then best y
    front, best_y = [], -np.inf
    for i in order:
        if sy[i] > best_y:
            front.append(int(i))
            best_y = sy[i]
    return sorted(front, key=lambda i: xs[i])


def pareto(df: Any, x: str = "output_tps_per_user", y: str = "output_tps_per_gpu", *,
           slo: float | Mapping[str, float] | None = None, label: Sequence[str] | str | None = None):
    """A sweep's points and their Pareto front: ``y`` (default tokens/s per GPU) against
    ``x`` (default tokens/s per user; or a latency column such as ``ttft_ms.p90``).

    Args:
        df: :func:`aisimulate.sweep`'s DataFrame; only ``status == "ok"`` rows are drawn.
        x, y: its columns. A column of throughput (``…_tps``, ``…per_user``, ``…per_gpu``,
            ``…_rps``) is better higher; any other (a latency) better lower.
        slo: the SLO on ``x``: a minimum tokens/s per user, or a maximum latency (ms),
            as a number or as ``{x: number}``. The line is drawn, the side that misses
            it shaded, and the best point meeting it ringed. (Per-request bounds such as
            ``{"ttft_ms": 200, "tpot_ms": 20}`` belong to :func:`aisimulate.sweep`'s
            ``slo``, which adds the ``goodput_rps`` and ``slo_attainment`` columns.)
        label: the sweep column(s) to annotate the front's points with (default: the
            point's fields, the columns before ``status``).

    Raises:
        KeyError: ``x`` or ``y`` is not a column.
        TypeError: ``slo`` is neither a number nor ``{x: number}`` (a bool or a string
            is refused).
        ValueError: ``slo`` is NaN or infinite.
    """
    for c in (x, y):
        if c not in df.columns:
            raise KeyError(f"pareto: no column {c!r} in the sweep (columns: {', '.join(map(str, df.columns))})")
    if slo is not None:
        import numbers

        if isinstance(slo, Mapping):
            if list(slo) != [x]:
                raise TypeError(f"pareto: slo must be a number or {{{x!r}: number}} (the bound on x = {x}), "
                                f"got a mapping of {', '.join(map(repr, slo)) or 'nothing'}; per-request "
                                "bounds such as {'ttft_ms': 200} go to aisimulate.sweep(slo=...), which adds "
                                "the goodput_rps and slo_attainment columns")
            slo = slo[x]
        if isinstance(slo, bool) or not isinstance(slo, numbers.Real):
            raise TypeError(f"pareto: slo must be a number (the bound on {x}), "
                            f"got {slo!r} ({type(slo).__name__})")
        if not math.isfinite(slo):
            raise ValueError(f"pareto: slo must be a finite number (the bound on {x}), got {slo!r}")
        slo = float(slo)
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    xs, ys = ok[x].to_numpy(dtype=float), ok[y].to_numpy(dtype=float)
    x_hi, y_hi = _higher_is_better(x), _higher_is_better(y)
    front = pareto_front(xs, ys, x_higher=x_hi, y_higher=y_hi)
    if label is None:
        cols = list(df.columns)
        label = cols[:cols.index("status")] if "status" in cols else []
    elif isinstance(label, str):
        label = [label]
    fig, axes = figure(1, 1, 7.5, 5.0)
    ax = axes[0][0]
    ax.scatter(xs, ys, s=14, color="tab:gray", alpha=0.6, label=f"{len(ok)} points")
    fx, fy = xs[front], ys[front]
    ax.plot(fx, fy, "-o", color="tab:blue", ms=5, label="Pareto front")
    for i in front:
        text = ", ".join(f"{str(c).rsplit('.', 1)[-1]}={ok[c].iloc[i]}" for c in label)
        if text:
            ax.annotate(text, (xs[i], ys[i]), fontsize=6.5, xytext=(3, 3), textcoords="offset points")
    if slo is not None:
        ax.axvline(slo, color="tab:red", lw=1.2, label=f"SLO {x} {'≥' if x_hi else '≤'} {slo:g}")
        lo, hi = ax.get_xlim()
        if x_hi:
            ax.axvspan(min(lo, slo), slo, color="tab:red", alpha=0.07)
        else:
            ax.axvspan(slo, max(hi, slo), color="tab:red", alpha=0.07)
        ax.set_xlim(lo, hi)
        meets = [i for i in range(len(xs)) if not math.isnan(xs[i]) and (xs[i] >= slo if x_hi else xs[i] <= slo)]
        if meets:
            best = max(meets, key=lambda i: ys[i] if y_hi else -ys[i])
            ax.plot([xs[best]], [ys[best]], "o", ms=12, mfc="none", mec="tab:red", mew=1.5,
                    label=f"best meeting the SLO: {y} = {ys[best]:.4g}")
    ax.set_xlabel(x + (" (higher is better)" if x_hi else " (lower is better)"))
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.suptitle(f"Sweep: {y} against {x}", fontsize="medium")
    return fig


class ReportPlots:
    """``report.plot``: the figures of one report (see the module functions)."""

    __slots__ = ("_report",)

    def __init__(self, report: Any) -> None:
        self._report = report

    def cdf(self, metrics: Sequence[str] = tuple(CDF_METRICS), **kw):
        """:func:`latency_cdf` of this report."""
        return latency_cdf(self._report, metrics, **kw)

    def timeline(self, **kw):
        """:func:`timeline` of this report (replayed with ``timeline=True``)."""
        return timeline(self._report, **kw)

    def throughput(self, **kw):
        """:func:`throughput` of this report."""
        return throughput(self._report, **kw)
