#!/usr/bin/env python3
"""Which deployment each tool recommends, and which one the measured rows say is better.

Usage:
    .venv/bin/python scripts/compare_aic_picks.py --silicon ../shared/data/silicon/vllm_dense_dev.csv \\
        --aisimulate out/accuracy/rows.csv --aiconfigurator aic_estimates.csv [--gpus 8] \\
        [--ttft 300,1000] [--tpot 10,15,20,25,30,40,60]

The configurations are the measured ones: each (model, system, ISL, OSL) group of the
silicon CSV offers its rows' (TP, concurrency) points, each replicated over the GPU budget
(``gpus // tp`` replicas, AIConfigurator's ``tokens/s/gpu_cluster``). For every SLO of
the grid (a bound on mean TTFT and one on mean TPOT, ms: the rows are means), each tool
picks as AIConfigurator's ``cli default`` does (``picking.pick_default``: the highest
tokens/s per GPU among the configurations whose TTFT and TPOT are within the bounds) from
its own predictions of those configurations:

- aisimulate: ``--aisimulate``, the accuracy harness's ``rows.csv`` (scripts/accuracy.py:
  each row replayed as its campaign measured it), ``predicted_ttft_ms`` /
  ``predicted_tpot_ms``;
- AIConfigurator: ``--aiconfigurator``, a CSV ``isl,osl,tp,bs,ttft,tpot,tps_gpu`` of its
  ``aiconfigurator cli estimate --estimate-mode agg`` for each configuration (TTFT, TPOT,
  tokens/s/gpu as it prints them; run beside, never imported).

Tokens/s per GPU of a configuration is concurrency × OSL / (TTFT + (OSL − 1) × TPOT) / TP
for aisimulate's predictions and the measurements (a closed loop of fixed lengths: its mean
request latency), AIConfigurator's own for its estimates. The measured rows then judge each pick: does it meet the SLO as measured,
and at what measured tokens/s per GPU; the best measured configuration that meets it is the
reference. Prints one line per question and the tally.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict

TIE = 0.01  # measured throughputs within 1 % are a tie (python/aisimulate/analysis/search/_front.py)


def tps_gpu(bs: int, osl: int, tp: int, ttft: float, tpot: float) -> float:
    return bs * osl / ((ttft + (osl - 1) * tpot) / 1e3) / tp


def pick(points: dict, ttft_b: float, tpot_b: float):
    """The configuration of the most tokens/s per GPU (its own, when the tool reports it:
    a third value) within both bounds, ties to the lower TPOT (``pick_default``'s
    tokens/s/user), or ``None``."""
    ok = [((v[2] if len(v) > 2 else tps_gpu(bs, osl, tp, v[0], v[1])), -v[1], (tp, bs))
          for (tp, bs, osl), v in points.items() if v[0] <= ttft_b and v[1] <= tpot_b]
    return max(ok)[2] if ok else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--silicon", required=True)
    ap.add_argument("--aisimulate", required=True, help="scripts/accuracy.py's rows.csv of that silicon CSV")
    ap.add_argument("--aiconfigurator", required=True, help="CSV isl,osl,tp,bs,ttft,tpot,tps_gpu of its estimates")
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--ttft", default="300,1000", help="mean TTFT bounds, ms")
    ap.add_argument("--tpot", default="10,15,20,25,30,40,60", help="mean TPOT bounds, ms")
    args = ap.parse_args()
    measured, ours, theirs = defaultdict(dict), defaultdict(dict), defaultdict(dict)
    for r in csv.DictReader(open(args.silicon, encoding="utf-8")):
        if r.get("mode", "agg") not in ("agg", "") or args.gpus % int(r["tp_size"]):
            continue
        g = (r["model_path"], r["system"], r["precision"] or "bf16", int(r["isl"]), int(r["osl"]))
        measured[g][(int(r["tp_size"]), int(r["batch_size"]), int(r["osl"]))] = (
            float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"]))
    for r in csv.DictReader(open(args.aisimulate, encoding="utf-8")):
        if r["status"] != "ok":
            continue
        g = (r["model"], r["system"], r["precision"] or "bf16", int(r["isl"]), int(r["osl"]))
        ours[g][(int(r["tp"]), int(r["concurrency"]), int(r["osl"]))] = (
            float(r["predicted_ttft_ms"]), float(r["predicted_tpot_ms"]))
    aic_rows = list(csv.DictReader(open(args.aiconfigurator, encoding="utf-8")))
    for g in measured:
        for r in aic_rows:
            if (int(r["isl"]), int(r["osl"])) == g[3:] and r["ttft"] and r["tpot"]:
                theirs[g][(int(r["tp"]), int(r["bs"]), int(r["osl"]))] = (
                    float(r["ttft"]), float(r["tpot"]), float(r["tps_gpu"]))
    tally: dict[str, int] = defaultdict(int)
    print(f"{'model':<16}{'isl/osl':>10}{'ttft≤':>7}{'tpot≤':>7}  {'best measured':<22}{'aisimulate':<24}"
          f"{'AIConfigurator':<24}verdict")
    for g in sorted(measured):
        pts = {k: v for k, v in measured[g].items() if k in ours[g] and k in theirs[g]}
        if not pts:
            continue
        for tb in (float(x) for x in args.ttft.split(",")):
            for pb in (float(x) for x in args.tpot.split(",")):
                ref = pick(pts, tb, pb)
                if ref is None:
                    continue  # no measured configuration meets it: nothing to judge
                a = pick({k: ours[g][k] for k in pts}, tb, pb)
                b = pick({k: theirs[g][k] for k in pts}, tb, pb)

                def judged(c):
                    if c is None:
                        return "none", 0.0
                    t, p = pts[(c[0], c[1], g[4])]
                    meets = t <= tb and p <= pb
                    return ("TP%d c%d %s %.0f" % (c[0], c[1], "meets" if meets else "MISSES",
                                                   tps_gpu(c[1], g[4], c[0], t, p)),
                            tps_gpu(c[1], g[4], c[0], t, p) if meets else 0.0)
                ra, va = judged(a)
                rb, vb = judged(b)
                rr, vr = judged(ref)
                if a == b or abs(va - vb) <= TIE * max(va, vb, 1e-9):
                    verdict = "tie"
                else:
                    verdict = "aisimulate" if va > vb else "AIConfigurator"
                tally[verdict] += 1
                tally["aisimulate optimal"] += va >= vr * (1 - TIE)
                tally["AIConfigurator optimal"] += vb >= vr * (1 - TIE)
                tally["aisimulate misses"] += a is not None and va == 0
                tally["AIConfigurator misses"] += b is not None and vb == 0
                tally["questions"] += 1
                print(f"{g[0].split('/')[-1]:<16}{f'{g[3]}/{g[4]}':>10}{tb:>7g}{pb:>7g}  {rr:<22}{ra:<24}{rb:<24}{verdict}")
    print()
    print(", ".join(f"{k}: {v}" for k, v in tally.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
