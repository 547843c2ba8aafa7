#!/usr/bin/env python3
"""Fit each built-in system's measured TP all-reduce: latency and bus bandwidth.

Usage:
    python scripts/fit_allreduce.py [--database ../shared/data/aic/systems]

For every system folder under the database with a ``comm/vllm/<version>/
custom_allreduce_perf.parquet`` table (the newest version), and every GPU count t in
it, fits T(bytes) = L + 2(t−1)/t · bytes / B to the CUDA-graph rows (``backend ==
vllm_graph``; vLLM captures its decode and mixed passes in CUDA graphs) of 1,024 to
16,777,216 bf16 elements — the messages a pass all-reduces, x·hidden elements for x
tokens — minimising the relative error Σ((L + a·s_i)/T_i − 1)², a = 1/B, which is a
linear least-squares problem in (L, a). Prints one line per (system, t) with the fit,
its RMS and worst relative error, and the Go literal of ``hardware.AllReduceLink``
(``core/hardware/builtin.go`` holds the printed values). Exit 0, or 2 on a missing
folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

SMALLEST, LARGEST = 1024, 16 * 1024 * 1024  # bf16 elements


def fit(elements: np.ndarray, seconds: np.ndarray, gpus: int) -> tuple[float, float, float, float]:
    """(latency s, bus bandwidth B/s, RMS and worst relative error) of one GPU count's rows."""
    moved = elements * 2.0 * 2 * (gpus - 1) / gpus  # bytes over the bus, bf16
    a = np.column_stack([1 / seconds, moved / seconds])
    (lat, inv_bw), *_ = np.linalg.lstsq(a, np.ones_like(seconds), rcond=None)
    if lat < 0:  # a latency below zero is unphysical: refit the bandwidth alone
        lat, inv_bw = 0.0, float(np.sum(moved / seconds) / np.sum((moved / seconds) ** 2))
    rel = (lat + inv_bw * moved) / seconds - 1
    return float(lat), float(1 / inv_bw), float(np.sqrt(np.mean(rel ** 2))), float(np.max(np.abs(rel)))


def newest(folder: Path) -> Path | None:
    tables = list(folder.glob("comm/vllm/*/custom_allreduce_perf.parquet"))
    key = lambda p: tuple(int(x) for x in p.parent.name.split(".") if x.isdigit())  # noqa: E731
    return max(tables, key=key) if tables else None


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database", default=str(here.parent / "shared" / "data" / "aic" / "systems"),
                    help="the aic systems folder (default ../shared/data/aic/systems)")
    args = ap.parse_args(argv)
    data = Path(args.database) / "data"
    if not data.is_dir():
        print(f"fit_allreduce: --database {args.database}: no data folder", file=sys.stderr)
        return 2
    for folder in sorted(p for p in data.iterdir() if p.is_dir()):
        table = newest(folder)
        if table is None:
            continue
        df = pd.read_parquet(table)
        df = df[(df["backend"] == "vllm_graph") & df["message_size"].between(SMALLEST, LARGEST)]
        for gpus, g in sorted(df.groupby("num_gpus")):
            lat, bw, rms, worst = fit(g["message_size"].to_numpy(float), g["latency"].to_numpy(float) * 1e-3, int(gpus))
            print(f"{folder.name:22} vLLM {table.parent.name:7} {gpus} GPUs: L {lat * 1e6:5.1f} µs, "
                  f"B {bw / 1e9:6.1f} GB/s (relative error RMS {rms:.2f}, worst {worst:.2f})   "
                  f"{gpus}: {{LatencyS: {lat * 1e6:.1f}e-6, BusBW: {bw / 1e9:.1f}e9}},")
    return 0


if __name__ == "__main__":
    sys.exit(main())
