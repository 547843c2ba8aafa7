#!/usr/bin/env python3
"""Accuracy harness: predicted vs measured mean TTFT and TPOT on a silicon CSV.

Usage:
    python scripts/accuracy.py --silicon ../shared/data/silicon/vllm_dense_dev.csv \
        [--perf aic|roofline] [--out DIR] [--jobs N]
        [--deployment aic-generator|aic-generator-0.7|vllm-defaults] [--client aiperf|none]
        [--load-generator campaign|aiperf|aiperf-baremetal|genai-perf|inferencex] [--steady-state]
        [--length-ratio R] [--dataset-entries N [--sampling S]]

Writes DIR/rows.csv (one line per input row: ok or skipped with a reason),
DIR/mape.csv and DIR/predicted_vs_measured.png (with TensorRT-LLM rows also DIR/groups.csv,
the MAPE and bias by model, mode, campaign, layout and MTP), and prints the MAPE table per
(model, system, TP) and overall. How rows are simulated and how warm-up is treated:
the docstring of python/aisimulate/tools/accuracy/__init__.py. Exit 0 on success, 2 on bad input (a
missing file or folder, a bad option, a malformed CSV, or no row that can be simulated).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from aisimulate.tools import accuracy  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--silicon", required=True, help="silicon CSV (schema of vllm_dense_dev.csv)")
    ap.add_argument("--perf", choices=("aic", "roofline"), default="aic", help="perf source (default aic)")
    ap.add_argument("--out", default="out/accuracy", help="output folder (default out/accuracy)")
    ap.add_argument("--aliases", default=None,
                    help="model_aliases.csv (default: beside the silicon CSV, else the shared one)")
    ap.add_argument("--model-configs", default=str(accuracy.DEFAULT_MODEL_CONFIGS),
                    help="folder of Org--Name_config.json files")
    ap.add_argument("--database", default=str(accuracy.DEFAULT_DATABASE), help="aic perf tables root")
    ap.add_argument("--jobs", type=accuracy.args.positive_int, default=os.cpu_count() or 1, help="parallel processes (≥ 1)")
    ap.add_argument("--length-ratio", type=accuracy.args.length_ratio, default=1.0,
                    help="draw ISL and OSL uniformly in [R·L, L] per request, 0 < R ≤ 1 (default 1: fixed lengths)")
    ap.add_argument("--deployment", choices=accuracy.DEPLOYMENTS, default="aic-generator",
                    help="engine limits: AIConfigurator 0.5.0's generated vLLM launch (default), "
                         "its 0.7.0 rule, or vLLM's defaults")
    ap.add_argument("--client", choices=accuracy.CLIENTS, default="aiperf",
                    help="load generator path: the reference AIPerf client (docs/design.md; send leg, "
                         "detokenization, response overhead; default) or none (instant)")
    ap.add_argument("--load-generator", choices=accuracy.PROCEDURES, default=accuracy.DEFAULT_LOAD_GENERATOR,
                    help="how the benchmark ran: campaign (default) takes each row's campaign from its "
                         "silicon_data_source (AIConfigurator's and unrecorded rows: AIPerf as AIConfigurator's "
                         "cluster workflow runs it; InferenceX's rows: its client and the recipe at the row's date); "
                         "an explicit value runs every row that way (an override for experiments): aiperf (c warm-up "
                         "requests, then 20·c from an idle engine over 20·c dataset entries), aiperf-baremetal (2·c "
                         "warm-up, 100 entries), genai-perf (10·c, every prompt new) or inferencex")
    ap.add_argument("--steady-state", action="store_true",
                    help="measure whole waves after the first instead of the benchmark window")
    ap.add_argument("--dataset-entries", type=accuracy.args.dataset_entries, default=0,
                    help="the load generator's distinct prompts, sent again and again to an engine "
                         "with prefix caching (AIPerf's --num-dataset-entries; default 0: every "
                         "prompt new, caching off)")
    ap.add_argument("--sampling", choices=accuracy.SAMPLINGS, default=None,
                    help="how the next dataset entry is picked (AIPerf's --dataset-sampling-strategy; "
                         "default shuffle); needs --dataset-entries")
    args = ap.parse_args(argv)
    if args.sampling is not None and args.dataset_entries == 0:
        ap.error("--sampling needs --dataset-entries N > 0 (without a dataset every prompt is new)")
    args.sampling = args.sampling or "shuffle"

    def fail(msg: str) -> int:
        print(f"accuracy: {msg}", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    silicon = Path(args.silicon)
    if not Path(args.model_configs).is_dir():
        return fail(f"--model-configs {args.model_configs}: no such folder")
    if args.perf == "aic" and not Path(args.database).is_dir():
        return fail(f"--database {args.database}: no such folder")
    try:
        rows, aliases = accuracy.read_inputs(silicon, args.aliases)
    except (OSError, ValueError) as exc:
        return fail(str(exc))
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "rows.csv").touch()
    except OSError as exc:
        return fail(f"--out {out}: {exc.strerror or exc}")
    results = accuracy.evaluate(rows, perf=args.perf, aliases=aliases, model_configs=args.model_configs,
                                database=args.database, jobs=args.jobs,
                                length_ratio=args.length_ratio, steady_state=args.steady_state,
                                deployment=args.deployment, client=args.client,
                                dataset_entries=args.dataset_entries, sampling=args.sampling,
                                load_generator=args.load_generator)
    accuracy.write_rows(results, out / "rows.csv")
    settings = accuracy.settings_text(deployment=args.deployment, client=args.client,
                                      steady_state=args.steady_state, length_ratio=args.length_ratio,
                                      dataset_entries=args.dataset_entries, sampling=args.sampling,
                                      load_generator=args.load_generator)
    skipped = [r for r in results if r.status != "ok"]
    for r in skipped:
        print(f"  skipped {r.skip_line()}")
    for r in results:
        if r.status == "ok" and r.fallbacks:
            print(f"  table fallbacks {r.id}: {r.fallbacks}")
    table = accuracy.mape_table(results)
    if not table:
        return fail(f"no row of {silicon} could be simulated ({len(skipped)} skipped, listed above; "
                    f"reasons in {out / 'rows.csv'})")
    accuracy.write_mape(table, out / "mape.csv")
    try:
        accuracy.write_plot(results, out / "predicted_vs_measured.png",
                            f"{silicon.name}: perf {args.perf}\n{settings}")
    except ModuleNotFoundError as e:  # matplotlib: the plot is optional, the tables are written
        if e.name != "matplotlib" and not (e.name or "").startswith("matplotlib."):
            raise
        print(f"no predicted_vs_measured.png: {e} (make testdeps installs it)", file=sys.stderr)
    print(accuracy.format_mape(table, len(skipped), args.perf, settings))
    groups = accuracy.group_table(results)
    if groups:  # TensorRT-LLM rows: by model, mode, campaign, layout and MTP
        accuracy.write_groups(groups, out / "groups.csv")
        print(accuracy.format_groups(groups))
    print(f"wall time {time.perf_counter() - t0:.1f} s; outputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
