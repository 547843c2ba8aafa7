"""The harness's outputs: rows.csv, the MAPE table (printed and mape.csv), the plot."""

from __future__ import annotations

import csv
import math
import os
from typing import Any, Iterable, Sequence

from .run import ROW_COLUMNS, RowResult
from .spec import CAMPAIGN, DEFAULT_LOAD_GENERATOR, INFERENCEX, LOAD_GENERATORS


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.4f}"
    return str(v)


def write_rows(results: Iterable[RowResult], path: str | os.PathLike[str]) -> None:
    """Write ``rows.csv``: :data:`ROW_COLUMNS`, one line per input row."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(ROW_COLUMNS)
        for r in results:
            ok = r.status == "ok"
            w.writerow([_fmt(getattr(r, c)) if (ok or not c.endswith("error_pct")) else ""
                        for c in ROW_COLUMNS])


def mape_table(results: Sequence[RowResult]) -> list[dict[str, Any]]:
    """MAPE of TTFT and TPOT (%) per (model, system, TP, layout), then one ``overall`` line and,
    when the ok rows mix precisions, one ``overall [precision]`` line per precision
    (``[checkpoint]`` for an empty one).

    Each dict has ``model``, ``system``, ``tp``, ``layout`` (TP/DP/EP as simulated,
    ``"TP2"`` for a TP-only row), ``rows`` (ok rows), ``ttft_mape_pct``,
    ``tpot_mape_pct``. Groups are sorted by (model, system, TP). With no ok row the
    list is empty (a MAPE of nothing is not a number).
    """
    ok = [r for r in results if r.status == "ok"]
    if not ok:
        return []
    groups: dict[tuple[str, str, int, str], list[RowResult]] = {}
    for r in ok:
        groups.setdefault((r.model, r.system, r.tp, r.layout.split(" (")[0]), []).append(r)

    def line(model: str, system: str, tp: Any, layout: str, rs: list[RowResult]) -> dict[str, Any]:
        n = len(rs)
        return {"model": model, "system": system, "tp": tp, "layout": layout, "rows": n,
                "ttft_mape_pct": sum(abs(r.ttft_error_pct) for r in rs) / n,
                "tpot_mape_pct": sum(abs(r.tpot_error_pct) for r in rs) / n}

    out = [line(*k, groups[k]) for k in sorted(groups)]
    out.append(line("overall", "", "", "", ok))
    by_precision: dict[str, list[RowResult]] = {}
    for r in ok:
        by_precision.setdefault(r.precision.strip() or "checkpoint", []).append(r)
    if len(by_precision) > 1:
        out += [line(f"overall [{p}]", "", "", "", by_precision[p]) for p in sorted(by_precision)]
    by_campaign: dict[str, list[RowResult]] = {}
    for r in ok:
        by_campaign.setdefault(f"{r.campaign or '?'}: {r.procedure or '?'}", []).append(r)
    if len(by_campaign) > 1:  # each campaign's rows on their own line, so that none hides another's error
        out += [line(f"overall ({k})", "", "", "", by_campaign[k]) for k in sorted(by_campaign)]
    return out


def group_table(results: Sequence[RowResult]) -> list[dict[str, Any]]:
    """TensorRT-LLM's closing table: per (model, mode, campaign, layout, MTP) the ok
    rows, the MAPE of TTFT and TPOT (%) and their bias (the median signed error, %,
    negative when the simulation is faster), then one line per mode with the rows
    served of all (``served`` of ``rows``). A P/D layout is named by its generation
    workers (``P/D, gen TP8 ADP8 EP8``). Only TensorRT-LLM rows (a ``mode``) count;
    none served: an empty list.
    """
    import statistics

    rows = [r for r in results if r.mode]
    ok = [r for r in rows if r.status == "ok" and r.mtp is not None]
    if not ok:
        return []

    def layout(r: RowResult) -> str:
        text = r.layout.split(" (")[0]
        if text.startswith("P/D") and " + " in text:
            return "P/D, gen " + text.split(" + ", 1)[1].split("×", 1)[-1]
        return text

    def line(key: tuple[str, ...], rs: list[RowResult], served: int, total: int) -> dict[str, Any]:
        te, pe = [r.ttft_error_pct for r in rs], [r.tpot_error_pct for r in rs]
        return {"model": key[0], "mode": key[1], "campaign": key[2], "layout": key[3], "mtp": key[4],
                "rows": served, "of": total, "ttft_mape_pct": sum(map(abs, te)) / len(te),
                "ttft_bias_pct": statistics.median(te), "tpot_mape_pct": sum(map(abs, pe)) / len(pe),
                "tpot_bias_pct": statistics.median(pe)}

    groups: dict[tuple[str, ...], list[RowResult]] = {}
    for r in ok:
        groups.setdefault((r.model, r.mode, r.campaign, layout(r), str(r.mtp)), []).append(r)
    out = [line(k, groups[k], len(groups[k]), len(groups[k])) for k in sorted(groups)]
    for mode in sorted({r.mode for r in rows}):
        served = [r for r in ok if r.mode == mode]
        if served:
            total = sum(1 for r in rows if r.mode == mode)
            out.append(line((f"all {mode}", mode, "", "", ""), served, len(served), total))
    return out


def format_groups(table: Sequence[dict[str, Any]]) -> str:
    """:func:`group_table` as fixed-width text."""
    lines = [f"{'model':30s} {'mode':6s} {'campaign':14s} {'layout':24s} {'MTP':>3s} {'rows':>9s} "
             f"{'TTFT MAPE %':>11s} {'bias %':>7s} {'TPOT MAPE %':>11s} {'bias %':>7s}"]
    for t in table:
        rows = f"{t['rows']}" if t["rows"] == t["of"] else f"{t['rows']} of {t['of']}"
        lines.append(f"{t['model'].split('/')[-1]:30s} {t['mode']:6s} {t['campaign']:14s} {t['layout']:24s} "
                     f"{t['mtp']:>3s} {rows:>9s} {t['ttft_mape_pct']:11.1f} {t['ttft_bias_pct']:+7.1f} "
                     f"{t['tpot_mape_pct']:11.1f} {t['tpot_bias_pct']:+7.1f}")
    return "\n".join(lines)


def write_groups(table: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write :func:`group_table` as ``groups.csv``."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["model", "mode", "campaign", "layout", "mtp", "rows", "of", "ttft_mape_pct",
                                          "ttft_bias_pct", "tpot_mape_pct", "tpot_bias_pct"])
        w.writeheader()
        for t in table:
            w.writerow({k: _fmt(v) if isinstance(v, float) else v for k, v in t.items()})


def format_mape(table: Sequence[dict[str, Any]], skipped: int, perf: str, settings: str = "") -> str:
    """The MAPE table as fixed-width text; ``settings`` (how the rows were simulated)
    goes on the first line after the perf source."""
    # the first column takes its longest entry ("overall (inferencex (repeat): inferencex)")
    w = max([36, *(len(t["model"]) for t in table)])
    lines = [f"perf source: {perf}" + (f"; {settings}" if settings else ""),
             f"{'model':{w}s} {'system':9s} {'layout':10s} {'rows':>4s} {'TTFT MAPE %':>11s} {'TPOT MAPE %':>11s}"]
    for t in table:
        lines.append(f"{t['model']:{w}s} {t['system']:9s} {t.get('layout') or str(t['tp']):10s} {t['rows']:4d} "
                     f"{t['ttft_mape_pct']:11.1f} {t['tpot_mape_pct']:11.1f}")
    lines.append(f"skipped rows: {skipped}")
    return "\n".join(lines)


def settings_text(*, deployment: str, client: str, steady_state: bool, length_ratio: float,
                  dataset_entries: int = 0, sampling: str = "shuffle",
                  load_generator: str = DEFAULT_LOAD_GENERATOR) -> str:
    """How the rows were simulated, in one line (for the printed table and the plot)."""
    if load_generator == CAMPAIGN:
        return (f"procedure by campaign (silicon_data_source: AIConfigurator and unrecorded rows AIPerf, deployment "
                f"{deployment}; InferenceX rows, and the rows that repeat theirs, its client and recipe); client {client}; rows.csv: procedure")
    if load_generator == INFERENCEX:
        return f"every row as InferenceX ran it (its client, the recipe at the row's date); client {client}"
    gen = LOAD_GENERATORS[load_generator]
    lengths = "fixed lengths" if length_ratio >= 1 else f"lengths uniform in [{length_ratio:g}·L, L]"
    if steady_state:
        window = "steady-state waves"
    else:
        warm = f"{gen.warmup}·c warm-up, then " if gen.warmup else ""
        window = f"{load_generator}: {warm}{gen.requests}·c from idle"
    if dataset_entries > 0:
        prompts = f"{dataset_entries} prompts reused ({sampling}), prefix caching on"
    elif steady_state or gen.entries(1) == 0:
        prompts = "every prompt new"
    else:
        n1, n2 = gen.entries(1), gen.entries(2)
        size = str(n1) if n1 == n2 else f"{n1}·c"
        prompts = f"dataset of {size} entries ({sampling}), prefix caching on"
    return f"deployment {deployment}; client {client}; {window}; {lengths}; {prompts}"


def write_mape(table: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["model", "system", "tp", "layout", "rows", "ttft_mape_pct", "tpot_mape_pct"])
        w.writeheader()
        for t in table:
            w.writerow({k: _fmt(v) if isinstance(v, float) else v for k, v in t.items()})


def write_plot(results: Sequence[RowResult], path: str | os.PathLike[str], title: str) -> None:
    """Predicted vs measured TTFT and TPOT, log axes, the y = x line and ±20 % / ±10 %.

    Raises:
        ModuleNotFoundError: matplotlib is not installed (the message names the extra).
    """
    from aisimulate.binding import lazy

    matplotlib = lazy.module("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in results if r.status == "ok"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    for ax, metric, band in ((axes[0], "ttft", 0.20), (axes[1], "tpot", 0.10)):
        xs = [getattr(r, f"silicon_{metric}_ms") for r in ok]
        ys = [getattr(r, f"predicted_{metric}_ms") for r in ok]
        systems = sorted({r.system for r in ok})
        for s in systems:
            pts = [(x, y) for x, y, r in zip(xs, ys, ok) if r.system == s]
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, label=s)
        if xs:
            lo, hi = min(xs + ys) / 1.5, max(xs + ys) * 1.5
            ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
            ax.plot([lo, hi], [lo * (1 + band), hi * (1 + band)], "k:", lw=0.6)
            ax.plot([lo, hi], [lo * (1 - band), hi * (1 - band)], "k:", lw=0.6)
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"measured mean {metric.upper()} (ms)")
        ax.set_ylabel(f"predicted mean {metric.upper()} (ms)")
        ax.set_title(f"{metric.upper()} (dotted: ±{int(band * 100)} %)")
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
