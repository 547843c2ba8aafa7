"""A closed loop's cycle: what the mean TTFT and TPOT of a row say about the engine's work.

In a closed loop of c clients where every request has the same prompt length and exactly
OSL output tokens (AIConfigurator's rows: ``--synthetic-input-tokens-stddev 0``,
``--output-tokens-stddev 0``, ``ignore_eos``), each client slot repeats one request per
cycle::

    C = TTFT + (OSL − 1) · TPOT        (+ the client's turnaround, a few ms)

and by Little's law the throughput is c / C. The split of C into TTFT and TPOT is the
queueing pattern (how the prompts line up); C itself is engine work. Per cycle the engine
runs c prompts' prefill-carrying passes, W each (a prompt's own pass, the decodes riding
in it included), and N decode-only passes of d each::

    C = c · W + N · d,    N = OSL − 1 − k

k the passes that carry another prompt's prefill among a request's OSL − 1 decode steps
(0 when the loop is fully bunched, up to c − 1 when every other prompt is prefilled while
it decodes, the conveyor). With the same pattern at every OSL of a group (same TP, ISL
and c), C is linear in OSL − 1 with slope d and intercept I = c · W − k · d, so

    W ∈ [I / c, (I + (c − 1) · d) / c]

whatever the pattern. Computed the same way on the measured and on the predicted means,
the two ranges compare the engine work per prompt directly: a slope that agrees says the
decode-only passes are priced right, an intercept that does not says the
prefill-carrying ones are not (docs/accuracy.md, "The ISL 4096 rows: the cycle and the
perf layer"). ``scripts/row_cycles.py`` prints it for an accuracy output's rows.csv.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence


def cycle_ms(ttft_ms: float, tpot_ms: float, osl: int) -> float:
    """One client slot's cycle without the turnaround: TTFT + (OSL − 1) · TPOT, ms."""
    if osl < 1:
        raise ValueError(f"osl {osl}: want ≥ 1")
    return ttft_ms + (osl - 1) * tpot_ms


@dataclass(frozen=True)
class CycleFit:
    """The least-squares line C = I + d · (OSL − 1) through a group's cycles, and the
    range of the per-prompt prefill work W it allows (module docstring)."""

    concurrency: int
    decode_pass_ms: float  # d, the slope
    intercept_ms: float  # I
    work_low_ms: float  # I / c (k = 0)
    work_high_ms: float  # (I + (c − 1) · d) / c (k = c − 1)


def fit_cycles(points: Sequence[tuple[int, float]], concurrency: int) -> CycleFit:
    """Fit (OSL, cycle ms) points of one group (at least two distinct OSLs > 1)."""
    if concurrency < 1:
        raise ValueError(f"concurrency {concurrency}: want ≥ 1")
    xs = [float(o - 1) for o, _ in points]
    ys = [float(c) for _, c in points]
    if len(set(xs)) < 2:
        raise ValueError("want at least two distinct output lengths")
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    d = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    intercept = my - d * mx
    c = concurrency
    return CycleFit(c, d, intercept, intercept / c, (intercept + (c - 1) * d) / c)


# the columns of an accuracy rows.csv that make one group (everything but the OSL)
GROUP_KEYS = ("model", "system", "tp", "isl", "concurrency", "precision", "deployment", "load_generator")


@dataclass(frozen=True)
class GroupCycles:
    """One group's measured and predicted cycles, by OSL, and their fits."""

    key: tuple[str, ...]
    osls: tuple[int, ...]
    measured_ms: tuple[float, ...]
    predicted_ms: tuple[float, ...]
    measured: CycleFit
    predicted: CycleFit


def group_cycles(rows: Iterable[Mapping[str, str]]) -> list[GroupCycles]:
    """The groups (GROUP_KEYS) of rows.csv rows with status ok and at least two OSLs,
    sorted by key; rows of one OSL within a group are all kept (the fit weighs each)."""
    groups: dict[tuple[str, ...], list[tuple[int, float, float]]] = {}
    for r in rows:
        if r.get("status", "ok") != "ok":
            continue
        osl = int(r["osl"])
        meas = cycle_ms(float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"]), osl)
        pred = cycle_ms(float(r["predicted_ttft_ms"]), float(r["predicted_tpot_ms"]), osl)
        key = tuple(r.get(k, "") for k in GROUP_KEYS)
        groups.setdefault(key, []).append((osl, meas, pred))
    out = []
    for key in sorted(groups, key=_sort_key):
        pts = sorted(groups[key])
        if len({o for o, _, _ in pts if o > 1}) < 2:
            continue
        c = int(key[GROUP_KEYS.index("concurrency")])
        out.append(
            GroupCycles(
                key,
                tuple(o for o, _, _ in pts),
                tuple(m for _, m, _ in pts),
                tuple(p for _, _, p in pts),
                fit_cycles([(o, m) for o, m, _ in pts], c),
                fit_cycles([(o, p) for o, _, p in pts], c),
            )
        )
    return out


def _sort_key(key: tuple[str, ...]) -> tuple:
    return tuple(int(v) if v.isdigit() else v for v in key)
