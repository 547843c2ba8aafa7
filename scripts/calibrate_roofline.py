#!/usr/bin/env python3
"""Fit the roofline's efficiencies and pass overhead to a silicon CSV and store them.

Usage:
    python scripts/calibrate_roofline.py --silicon ../shared/data/silicon/vllm_dense_dev.csv \
        [--target silicon|aic] [--free NAME,...] [--out python/aisimulate/tools/roofline_fit.json]
        [--jobs N]

--target silicon (default) fits the measured TTFT/TPOT of the rows; --target aic fits the
aic perf source's predictions for the same rows (the measured kernel tables). --free names
the parameters to fit (default: all but layer_latency_us, which stays at its default).

See python/aisimulate/tools/roofline_calibration.py for the loss and the search.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from aisimulate.tools import accuracy  # noqa: E402
from aisimulate.tools import roofline_calibration as roofline  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--silicon", required=True, help="silicon CSV (schema of vllm_dense_dev.csv)")
    ap.add_argument("--aliases", default=None,
                    help="model_aliases.csv (default: beside the silicon CSV, else the shared one)")
    ap.add_argument("--out", default=str(roofline.FIT_FILE), help="fit JSON to write (default: the stored fit)")
    ap.add_argument("--jobs", type=accuracy.args.positive_int, default=os.cpu_count() or 1, help="parallel processes (≥ 1)")
    ap.add_argument("--max-evals", type=accuracy.args.positive_int, default=200, help="most loss evaluations (≥ 1)")
    ap.add_argument("--target", choices=("silicon", "aic"), default="silicon")
    ap.add_argument("--free", default=",".join(roofline.DEFAULT_FREE),
                    help="comma-separated parameters to fit (default: %(default)s)")
    args = ap.parse_args(argv)

    def fail(msg: str) -> int:
        print(f"calibrate_roofline: {msg}", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    silicon = Path(args.silicon)
    free = tuple(n.strip() for n in args.free.split(",") if n.strip())
    out = Path(args.out)
    try:
        rows, aliases = accuracy.read_inputs(silicon, args.aliases)
        if out.is_dir() or not out.parent.is_dir():
            return fail(f"--out {out}: not a file in an existing folder")
        skipped = []
        if args.target == "aic":
            rows, skipped = roofline.aic_priced_rows(rows, aliases=aliases, jobs=args.jobs)
        fit = roofline.fit_roofline(rows, aliases=aliases, jobs=args.jobs, max_evals=args.max_evals, free=free)
    except (OSError, ValueError) as exc:
        return fail(str(exc))
    left_out = [r.skip_line() for r in skipped] + list(fit.skipped)
    for line in left_out:
        print(f"  skipped {line}")
    prov = {
        "data": f"{silicon} ({fit.rows} rows used, {len(left_out)} skipped)",
        "command": (f"python scripts/calibrate_roofline.py --silicon {args.silicon} --target {args.target}"
                    f" --free {','.join(free)} --max-evals {args.max_evals}"),
        "free": list(free),
        "target": ("measured silicon_ttft_ms / silicon_tpot_ms" if args.target == "silicon"
                   else "the aic perf source's predicted TTFT / TPOT for the same rows"),
        "date": dt.date.today().isoformat(),
        "loss": "mean over rows of ln(pred/target TTFT)^2 + ln(pred/target TPOT)^2, closed-loop replays as scripts/accuracy.py (default harness)",
    }
    try:
        roofline.write_fit(fit, out, prov)
    except OSError as exc:
        return fail(f"--out {out}: {exc.strerror or exc}")
    print(fit)
    print(f"wrote {out} in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
