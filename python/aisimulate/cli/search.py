"""``aisimulate search``: capacity planning in one command (:func:`aisimulate.search`).

The question is a replay config whose engine names the model, system and engine; the
command prints the recommended deployment with its launch commands, the Pareto front and
why each family of candidates was pruned or stopped (``--format json``: all of it and
every candidate's result). ``--out DIR`` keeps the search's journal: the same command
again continues an interrupted search.
"""

from __future__ import annotations

import argparse
import os

from ..errors import ConfigError
from ..io.files import input_files
from .common import (UsageError, add_config_arguments, check_gpu_hour_price, config_from_args, error,
                     parse_slos, progress_of, write)
from .outputs import check_output_file, figure_suffixes, write_figure

#: The exit code of a search that ran and recommends nothing: no candidate met the SLO,
#: or the space held none (docs/search.md, "Exit codes").
EXIT_NONE_MET = 3

_EXAMPLES = """\
exit codes: 0 a deployment is recommended; 3 the search ran and none met the SLO (or the
  space held no candidate): the answer is still printed (and written to --out), and a line
  on stderr names the bounds no candidate met; 2 a bad question or argument; 1 a
  simulation error; 130 interrupted (Ctrl-C), 143 terminated.

examples:
  aisimulate search question.yaml --gpus 8 --slo ttft_ms=500,tpot_ms=30
  aisimulate search question.yaml --gpus 8,16 --slo ttft_ms=1000,tpot_ms=50 --percentile 99 \\
      --out runs/qwen-search --plot runs/qwen-search/pareto.png
  aisimulate search question.yaml --gpus 4 --slo e2e_ms=8000 --modes aggregated --tp 1,2,4 \\
      --max-num-seqs 64,256 --format json > answer.json
"""


def _ints(flag: str, text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected comma-separated integers, e.g. 1,2,4") from None
    if not out:
        raise UsageError(f"{flag} {text!r}: expected at least one value")
    return out


def _names(flag: str, text: str | None, none_word: str | None = None) -> list[str | None] | None:
    if text is None:
        return None
    out: list[str | None] = [x.strip() for x in text.split(",") if x.strip()]
    if not out:
        raise UsageError(f"{flag} {text!r}: expected at least one value")
    if none_word is not None:
        out = [None if x == none_word else x for x in out]
    return out


def _gpus(text: str) -> int | list[int]:
    vals = _ints("--gpus", text)
    assert vals is not None
    if "," not in text and "-" not in text:
        return vals[0]  # a budget
    return vals


def add_search(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "search", help="search the deployments of a model by simulation and recommend one",
        description="Enumerate the deployments the engine can run on the GPUs allowed (worker count "
                    "× TP × DP × EP, aggregated and P/D, batch limits, weight and KV formats), prune "
                    "those that cannot work, replay the rest (stopping each once its miss of the SLO is "
                    "certain) and print the recommended deployment with its launch commands, the Pareto "
                    "front and why each family was pruned.",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(s)
    s.add_argument("--gpus", required=True, metavar="N|N1,N2",
                   help="the GPU budget (every count from 1 to N) or the GPU counts allowed (8,16)")
    s.add_argument("--slo", action="append", required=True, metavar="METRIC=MS",
                   help="bounds in ms on the percentile of ttft_ms, tpot_ms, e2e_ms (comma-separated or repeated)")
    s.add_argument("--percentile", type=float, default=90.0, help="the percentile the SLO bounds (default 90)")
    s.add_argument("--modes", metavar="M1,M2", help="aggregated, disaggregated (default both)")
    s.add_argument("--tp", metavar="T1,T2", help="tensor-parallel sizes (default 1, 2, 4, 8 within a node)")
    s.add_argument("--dp", metavar="D1,D2", help="data-parallel sizes of a MoE model's vLLM worker (default 1, 2, 4, 8)")
    s.add_argument("--ep", metavar="off,on", help="expert parallelism of a MoE model (default off,on)")
    s.add_argument("--max-num-seqs", metavar="S1,S2",
                   help="batch limits in sequences (vLLM's name; TensorRT-LLM's max_batch_size, "
                        "SGLang's max_running_requests): the aggregated candidates', and by default a "
                        "P/D decode pool's")
    s.add_argument("--max-num-batched-tokens", metavar="M1,M2",
                   help="batch limits in tokens (TensorRT-LLM's max_num_tokens, SGLang's chunked_prefill_size): "
                        "the aggregated candidates', and by default a P/D prefill pool's")
    for side in ("prefill", "decode"):
        s.add_argument(f"--{side}-max-num-seqs", metavar="S1,S2",
                       help=f"a P/D candidate's {side} pool's own batch limits in sequences (vLLM)")
        s.add_argument(f"--{side}-max-num-batched-tokens", metavar="M1,M2",
                       help=f"a P/D candidate's {side} pool's own batch limits in tokens (vLLM)")
    s.add_argument("--weights", metavar="W1,W2", help="weight formats: checkpoint (its own), fp8, …")
    s.add_argument("--kv-cache", metavar="K1,K2", help="KV cache formats: default (the config's), fp8, …")
    s.add_argument("--out", metavar="DIR",
                   help="keep the search's journal in DIR/search.jsonl (the same command again resumes it) "
                        "and write DIR/search.json (the answer)")
    s.add_argument("--restart", action="store_true", help="with --out, start over instead of resuming")
    s.add_argument("--plot", metavar="FILE", help="write the Pareto plot (.png, .svg, .pdf; needs matplotlib)")
    s.add_argument("--force", action="store_true",
                   help="with --plot, replace an existing file (without it that is exit 2: a single "
                        "file records nothing of who wrote it)")
    s.add_argument("--gpu-hour-price", type=float, metavar="PRICE",
                   help="the price of one GPU for an hour (any currency, as replay's): adds each "
                        "candidate's cost per million output tokens")
    s.add_argument("--price-per-gpu-hour", type=float, dest="gpu_hour_price", help=argparse.SUPPRESS)  # the old name
    s.add_argument("--no-early-stop", action="store_true", help="replay every candidate to its end")
    s.add_argument("--no-prune", action="store_true",
                   help="replay candidates the analytic bounds settle (those that cannot start stay out)")
    s.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="stdout: the answer as text (default), JSON, or one CSV row per candidate")
    s.add_argument("--jobs", type=int, metavar="N", help="candidates replayed at once (default: every core)")
    s.add_argument("--backend", choices=("local", "ray"), default="local")
    s.add_argument("--ray-address", metavar="ADDR", help="with --backend ray: the Ray cluster")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    s.set_defaults(run=_cmd_search)


def _cmd_search(args: argparse.Namespace) -> int:
    from ..analysis.search._run import RESTART_HINT

    spec = config_from_args(args)
    slo = parse_slos(args.slo)
    if args.jobs is not None and args.backend == "ray":
        raise UsageError("--jobs applies to the local backend only: Ray places the tasks; leave --jobs out")
    if args.ray_address is not None and args.backend != "ray":
        raise UsageError("--ray-address applies to --backend ray only")
    if args.restart and not args.out:
        raise UsageError("--restart applies to --out: give --out DIR too")
    price = check_gpu_hour_price(args.gpu_hour_price)
    if args.plot is not None:  # before the search: matplotlib, the suffix and the folder, not after minutes
        inputs = input_files(spec.data, spec.source)
        check_output_file("--plot", args.plot, inputs, figure_suffixes(), force=args.force)
    elif args.force:
        raise UsageError("--force applies to --plot only: add --plot FILE or leave --force out")
    ep = _names("--ep", args.ep)
    if ep is not None:
        bad = [x for x in ep if x not in ("on", "off")]
        if bad:
            raise UsageError(f"--ep {args.ep!r}: use off, on")
    try:
        res = _search(args, spec, slo, ep, price)
    except ConfigError as exc:
        if exc.field not in ("out", "gpus"):
            raise
        # in the command's words: its option, and --restart for search()'s resume=False
        raise ConfigError(f"--{exc.field}", exc.reason.replace(RESTART_HINT, "--restart")) from None
    if args.out:
        from ..io.files import write_replacing

        text = res.to_json() + "\n"

        def write_json(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)

        write_replacing(os.path.join(args.out, "search.json"), ".aisimulate-search-", write_json)
    if args.plot is not None:
        write_figure(res.plot(), args.plot)
    if args.format == "json":
        write(res.to_json() + "\n")
    elif args.format == "csv":
        import csv
        import io

        rows = res.rows()
        buf = io.StringIO()
        w = csv.DictWriter(buf, list(rows[0]) if rows else ["index"], lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
        write(buf.getvalue())
    else:
        write(res.table() + "\n")
    if res.best is None:  # the answer is written, and a script must not take it for a recommendation
        error(f"no deployment to recommend: {res.unmet()}")
        return EXIT_NONE_MET
    return 0


def _search(args: argparse.Namespace, spec, slo, ep, price):
    from ..analysis.search import search

    return search(spec, gpus=_gpus(args.gpus), slo=slo or {}, percentile=args.percentile,
                  modes=_names("--modes", args.modes), tp=_ints("--tp", args.tp), dp=_ints("--dp", args.dp),
                  ep=None if ep is None else [x == "on" for x in ep],
                  max_num_seqs=_ints("--max-num-seqs", args.max_num_seqs),
                  max_num_batched_tokens=_ints("--max-num-batched-tokens", args.max_num_batched_tokens),
                  prefill_max_num_seqs=_ints("--prefill-max-num-seqs", args.prefill_max_num_seqs),
                  prefill_max_num_batched_tokens=_ints("--prefill-max-num-batched-tokens",
                                                       args.prefill_max_num_batched_tokens),
                  decode_max_num_seqs=_ints("--decode-max-num-seqs", args.decode_max_num_seqs),
                  decode_max_num_batched_tokens=_ints("--decode-max-num-batched-tokens",
                                                      args.decode_max_num_batched_tokens),
                  weights=_names("--weights", args.weights, "checkpoint"),
                  kv_cache=_names("--kv-cache", args.kv_cache, "default"),
                  out=args.out, resume=not args.restart, jobs=args.jobs, backend=args.backend,
                  ray_address=args.ray_address, early_stop=not args.no_early_stop, prune=not args.no_prune,
                  progress=progress_of(args), price_per_gpu_hour=price)
