"""``aisimulate validate``: check a config without running it."""

from __future__ import annotations

import argparse
import json

from .. import check
from .common import add_config_arguments, add_progress_argument, config_from_args, write


def add_validate(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser(
        "validate", help="check a config without running it",
        description="Check a config without replaying it: every field, the model and GPU "
                    "system it names, the KV capacity of each pool, and the workload file (a "
                    "trace is read to its end by the replay's reader; its first bad row is "
                    "named, file:line), and the memory budget as the replay holds it (its "
                    "estimate, and the later session turns read ahead to start the first "
                    "sessions). "
                    "Prints what would run (or, with --format json, the canonical spec with "
                    "every default filled).",
        epilog="examples:\n  aisimulate validate replay.yaml\n"
               "  aisimulate validate replay.yaml --set engine.workers.aggregated.tp=8 --format json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(v)
    v.add_argument("--format", choices=("table", "json"), default="table",
                   help="stdout: a one-paragraph description (default) or the canonical spec as JSON")
    add_progress_argument(v)  # nothing of validate shows one yet: taken as by every command
    v.set_defaults(run=_cmd_validate)


def _cmd_validate(args: argparse.Namespace) -> int:
    spec = config_from_args(args)
    meta = check(spec)
    if args.format == "json":
        write(json.dumps(spec.data, indent=2, sort_keys=True) + "\n")
        return 0
    name = args.config or args.config_opt
    lines = [f"{'<stdin>' if name == '-' else name}: valid"]
    pools = meta.get("pools") or []
    for p in pools:
        dp = f" × DP{p['data_parallel_size']}" if p.get("data_parallel_size", 1) > 1 else ""
        ep = " (EP)" if p.get("enable_expert_parallel") else ""
        per = "data-parallel rank" if dp else "worker"
        lines.append(f"  {p['name']} pool: {p['workers']} worker(s) × TP{p['tp']}{dp}{ep} "
                     f"({p['gpus']} GPU(s)), {p['num_gpu_blocks']} KV blocks per {per}, "
                     f"perf model {p['perf_model']}")
    experts = f"{meta['expert_dtype']} experts, " if meta.get("expert_dtype") else ""
    others = " other" if experts else ""
    lines.append(f"  model {meta.get('model')} ({experts}{meta.get('weight_dtype')}{others} weights, "
                 f"{meta.get('kv_cache_dtype')} KV cache) on {meta.get('system')}; "
                 f"max_model_len {meta.get('max_model_len')}, block_size {meta.get('block_size')}")
    from .notes import stand_in_notes

    lines += [f"  note: {n}" for n in stand_in_notes(meta, spec)]
    write("\n".join(lines) + "\n")
    return 0
