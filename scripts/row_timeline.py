#!/usr/bin/env python3
"""One silicon row's replay step by step: where each measured request's TTFT goes.

Usage:
    python scripts/row_timeline.py --silicon ../shared/data/silicon/vllm_dense_dev.csv \
        --id ID [--perf aic|roofline] [--load-generator P] [--requests N] [--passes K] [--rounds]

Builds the row's spec exactly as scripts/accuracy.py does (harness defaults), replays it
with the pass timeline, and prints: the measured and predicted means; the mean path to the
first token over the measured window (python/aisimulate/tools/accuracy/timeline.py:
intake, the pass in flight, the passes up to the first token, idle, delivery); one line
per measured request (the first N, default 24); and with --passes K the K passes from
the arrival of the first of them, with what each held; with --rounds the mean TTFT of
each round of c measured requests in send order (the first is the wave sent to the idle
engine). ID is a row's ``id`` or its unique ending. Exit 0, or 2 on bad input (a missing file, no or several matching rows, a row
that cannot be simulated).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

import numpy as np  # noqa: E402

from aisimulate.tools import accuracy  # noqa: E402
from aisimulate.tools.accuracy import spec as row_specs  # noqa: E402
from aisimulate.tools.accuracy.timeline import first_token_paths, mean_path  # noqa: E402


def _row(rows: list[dict[str, str]], wanted: str) -> dict[str, str]:
    exact = [r for r in rows if r.get("id") == wanted]
    found = exact or [r for r in rows if r.get("id", "").endswith(wanted)]
    if len(found) != 1:
        raise ValueError(f"--id {wanted}: {len(found)} rows match (want exactly one)")
    return found[0]


def _print_passes(tl: dict, worker: int, first: int, count: int) -> None:
    """``count`` passes of one aggregated worker from its pass index ``first`` (the
    indexing of timeline.first_token_path: that worker's passes by start)."""
    mine = [k for k in np.argsort(tl["start_ms"], kind="stable")
            if tl["pool"][k] == "aggregated" and tl["worker"][k] == worker]
    print(f"{'start':>10} {'ms':>7} {'prefill_tok':>11} {'prefills':>8} {'decodes':>7} {'running':>7} {'waiting':>7}")
    for k in mine[first:first + count]:
        print(f"{tl['start_ms'][k]:10.1f} {tl['end_ms'][k] - tl['start_ms'][k]:7.1f} {tl['prefill_tokens'][k]:11d} "
              f"{tl['prefill_requests'][k]:8d} {tl['decode_requests'][k]:7d} {tl['running'][k]:7d} "
              f"{tl['waiting'][k]:7d}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--silicon", required=True, help="silicon CSV (schema of vllm_dense_dev.csv)")
    ap.add_argument("--id", required=True, help="the row's id, or its unique ending")
    ap.add_argument("--perf", choices=("aic", "roofline"), default="aic", help="perf source (default aic)")
    ap.add_argument("--load-generator", choices=accuracy.PROCEDURES, default=accuracy.DEFAULT_LOAD_GENERATOR,
                    help="the row's procedure (default: its campaign's, as scripts/accuracy.py)")
    ap.add_argument("--requests", type=accuracy.args.positive_int, default=24,
                    help="measured requests to list (default 24)")
    ap.add_argument("--passes", type=int, default=0, help="passes to list from the first listed request's arrival")
    ap.add_argument("--from-request", type=int, default=0,
                    help="index in the measured window of the first request listed (default 0)")
    ap.add_argument("--rounds", action="store_true",
                    help="also print the mean TTFT of each round of c measured requests (by send)")
    args = ap.parse_args(argv)

    import aisimulate

    try:
        rows, aliases = accuracy.read_inputs(Path(args.silicon))
        row = _row(rows, args.id)
        spec, warm, measured = row_specs.row_spec(row, perf=args.perf, aliases=aliases,
                                                  model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                                  database=accuracy.DEFAULT_DATABASE,
                                                  load_generator=args.load_generator)
        report = aisimulate.replay(spec, timeline=True)
    except (OSError, ValueError, KeyError, aisimulate.ConfigError, aisimulate.SimulationError) as exc:
        print(f"row_timeline: {exc}", file=sys.stderr)
        return 2
    reqs = sorted(report.requests, key=lambda r: (r["send_ms"], r["request_id"]))
    window = reqs[warm:warm + measured]
    paths = first_token_paths(window, report.timeline)
    sched = report.metadata["spec"]["engine"].get("scheduler") or {}
    print(f"{row['id']}: measured TTFT {float(row['silicon_ttft_ms']):.1f} ms, TPOT {float(row['silicon_tpot_ms']):.2f} ms")
    tpots = [r["tpot_ms"] for r in window if r.get("tpot_ms") is not None]
    m = mean_path(paths)
    print(f"predicted TTFT {m['ttft_ms']:.1f} ms, TPOT {sum(tpots) / max(1, len(tpots)):.2f} ms over {len(paths)} "
          f"measured requests; max_num_batched_tokens {sched.get('max_num_batched_tokens')}, "
          f"max_num_seqs {sched.get('max_num_seqs')}")
    print(f"mean path: intake {m['intake_ms']:.1f} + pass in flight {m['inflight_ms']:.1f} + "
          f"{m['passes']:.2f} passes {m['passes_ms']:.1f} + idle {m['idle_ms']:.1f} + delivery {m['delivery_ms']:.1f} ms")
    if args.rounds:
        c = int(row["batch_size"])
        means = [sum(p.ttft_ms for p in paths[i:i + c]) / len(paths[i:i + c]) for i in range(0, len(paths), c)]
        print(f"rounds of {c}: " + " ".join(f"{x:.0f}" for x in means))
    print(f"{'req':>5} {'send':>10} {'arrival':>10} {'first':>10} {'ttft':>8} {'intake':>7} {'inflight':>8} "
          f"{'passes':>6} {'pass_ms':>8} {'idle':>6} {'deliv':>6}")
    listed = paths[args.from_request:args.from_request + args.requests]
    for p in listed:
        print(f"{p.request_id:5d} {p.send_ms:10.1f} {p.arrival_ms:10.1f} {p.first_token_ms:10.1f} {p.ttft_ms:8.1f} "
              f"{p.intake_ms:7.1f} {p.inflight_ms:8.1f} {p.passes:6d} {p.passes_ms:8.1f} {p.idle_ms:6.1f} "
              f"{p.delivery_ms:6.1f}")
    if args.passes > 0 and listed:
        worker = int(next(r for r in window if r["request_id"] == listed[0].request_id).get("worker") or 0)
        _print_passes(report.timeline, worker, max(0, listed[0].first_pass - 1), args.passes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
