#!/usr/bin/env python3
"""Fit the roofline's efficiencies and pass overhead to a silicon CSV and store them.

Usage:
    python scripts/calibrate_roofline.py --silicon ../shared/data/silicon/vllm_dense_dev.csv \
        [--target silicon|aic] [--free NAME,...] [--out python/aisimulate/calibration/roofline_fit.json]
        [--jobs N]

--target silicon (default) fits the measured TTFT/TPOT of the rows; --target aic fits the
aic perf source's predictions for the same rows (the measured kernel tables). --free names
the parameters to fit (default: all but layer_latency_us, which stays at its default).

See python/aisimulate/calibration/roofline.py for the loss and the search.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from aisimulate import accuracy  # noqa: E402
from aisimulate.calibration import roofline  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--silicon", required=True)
    ap.add_argument("--out", default=str(roofline.FIT_FILE))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--max-evals", type=int, default=200)
    ap.add_argument("--target", choices=("silicon", "aic"), default="silicon")
    ap.add_argument("--free", default=",".join(roofline.DEFAULT_FREE),
                    help="comma-separated parameters to fit (default: %(default)s)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    silicon = Path(args.silicon)
    aliases_path = silicon.parent / "model_aliases.csv"
    rows = accuracy.read_silicon(silicon)
    aliases = accuracy.load_aliases(aliases_path)
    if args.target == "aic":
        rows = roofline.aic_priced_rows(rows, aliases=aliases, jobs=args.jobs)
    free = tuple(n.strip() for n in args.free.split(",") if n.strip())
    try:
        fit = roofline.fit_roofline(rows, aliases=aliases, jobs=args.jobs, max_evals=args.max_evals, free=free)
    except ValueError as exc:
        print(f"calibrate_roofline: {exc}", file=sys.stderr)
        return 2
    prov = {
        "data": f"{silicon.name} ({len(rows)} rows; ../shared/data/silicon/, source ai-dynamo/aiconfigurator systems/silicon_sample.csv)",
        "command": (f"python scripts/calibrate_roofline.py --silicon {args.silicon} --target {args.target}"
                    f" --free {','.join(free)}"),
        "free": list(free),
        "target": ("measured silicon_ttft_ms / silicon_tpot_ms" if args.target == "silicon"
                   else "the aic perf source's predicted TTFT / TPOT for the same rows"),
        "date": dt.date.today().isoformat(),
        "loss": "mean over rows of ln(pred/target TTFT)^2 + ln(pred/target TPOT)^2, closed-loop replays as scripts/accuracy.py (default harness)",
    }
    roofline.write_fit(fit, args.out, prov)
    print(fit)
    print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
