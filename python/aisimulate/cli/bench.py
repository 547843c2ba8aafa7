"""``aisimulate bench ENGINE_CONFIG -- <tool command line>``: a benchmark command as written.

The tool's own command line (``vllm bench serve …``, ``python benchmark_serving.py …``,
InferenceX's ``utils/bench_serving/benchmark_serving.py …``, ``aiperf profile …``,
``genai-perf profile …``, ``inference-perf --config_file …``, SGLang's
``python -m sglang.bench_serving …``: :mod:`.bench_sglang`) is
parsed with that tool's option names into ``traffic.benchmark`` (docs: README,
"Benchmarks"), replayed against the deployment of ENGINE_CONFIG (its ``engine`` and
``execution``; the command line is its traffic), and the result is printed under the
tool's own metric names (vLLM's ``mean_ttft_ms`` …, AIPerf's metric table) beside
aisimulate's. An option that changes what the tool measures and that the simulation
cannot honour is an error naming it; options that only say where the server is or where
results go (``--model``, ``--base-url``, ``--result-dir`` …) are taken and change nothing.
AIPerf's trace replay (``--input-file T --custom-dataset-type mooncake_trace
--fixed-schedule``) is the traffic ``source: {type: mooncake}``, ``load: {mode: trace}``
(:func:`_aiperf_trace`; a session's rows as the ``--tool-version`` release sends them,
:func:`_session_rules`), an untimed trace the rows under ``--concurrency`` or
``--request-rate`` (:func:`_untimed_load`), and genai-perf's ``--input-file payload:T
--fixed-schedule`` the same fixed schedule (:func:`_genai_perf_payload`). Without ``--streaming`` the run is
the same and the tool's streaming-only metrics are left out of its result
(:data:`_STREAMING_ONLY`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Sequence

from ..errors import ConfigError
from ..io.names import vllm_percentile_word as _word

#: Options of vLLM's benchmark that say where the server is, what it is called or where
#: the result goes: they change nothing the simulation measures (a value each, or none).
_VLLM_INERT = {"--model": 1, "--tokenizer": 1, "--backend": 1, "--base-url": 1, "--host": 1, "--port": 1,
               "--endpoint": 1, "--served-model-name": 1, "--result-dir": 1, "--result-filename": 1,
               "--label": 1, "--metadata": -1, "--save-result": 0, "--save-detailed": 0, "--append-result": 0,
               "--trust-remote-code": 0, "--disable-tqdm": 0, "--tokenizer-mode": 1,
               "--endpoint-type": 1, "--request-id-prefix": 1, "--header": -1, "--insecure": 0}
#: AIPerf's options of the same kind: where the server is, where results go, what else
#: is collected beside the client's metrics (server metrics, GPU telemetry), how the
#: client's own processes and tokenizer are set up (aiperf/common/config/*_config.py).
_AIPERF_INERT = {"-m": 1, "--model": 1, "--model-names": 1, "-u": 1, "--url": 1, "--endpoint": 1,
                 "--custom-endpoint": 1, "--tokenizer": 1, "--tokenizer-revision": 1, "--artifact-dir": 1,
                 "--output-artifact-dir": 1, "--ui-type": 1, "--ui": 1, "--export-level": 1,
                 "--profile-export-level": 1, "--profile-export-file": 1, "--profile-export-prefix": 1, "-v": 0, "--verbose": 0, "-vv": 0, "--extra-verbose": 0,
                 "--log-level": 1, "--workers-max": 1, "--max-workers": 1, "--record-processor-service-count": 1,
                 "--record-processors": 1, "--tokenizer-trust-remote-code": 0, "--api-key": 1, "--header": 1,
                 "-H": 1, "--server-metrics": -1, "--no-server-metrics": 0, "--gpu-telemetry": -1,
                 "--no-gpu-telemetry": 0, "--use-legacy-max-tokens": 0, "--use-server-token-count": 0,
                 # TCP-handshake probes of the server's port (NetworkLatencyProbeCollector,
                 # aiperf/network_latency/probe.py, 0.11.0 and later): they add
                 # network_adjusted_* metrics and leave the raw ones as they are
                 "--network-latency-automatic": 0, "--network-latency-mean": 1,
                 "--network-latency-ping-interval": 1}
#: AIPerf's other names of one option (its CLIParameter names): name → the name parsed
#: here. --conversation-num and --num-sessions are --num-conversations; before AIPerf 0.3.0
#: (and without --tool-version) all three are --num-dataset-entries too, as its one field
#: ConversationConfig.num took them with --num-prompts (_aiperf_aliases).
_AIPERF_ALIASES = {"--isl": "--synthetic-input-tokens-mean", "--prompt-input-tokens-mean": "--synthetic-input-tokens-mean",
                   "--isl-stddev": "--synthetic-input-tokens-stddev",
                   "--prompt-input-tokens-stddev": "--synthetic-input-tokens-stddev",
                   "--osl": "--output-tokens-mean", "--prompt-output-tokens-mean": "--output-tokens-mean",
                   "--osl-stddev": "--output-tokens-stddev", "--prompt-output-tokens-stddev": "--output-tokens-stddev",
                   "--conversation-num": "--num-conversations", "--num-sessions": "--num-conversations",
                   "--num-prompts": "--num-dataset-entries",
                   "--num-requests": "--request-count", "--num-warmup-requests": "--warmup-request-count",
                   "--arrival-pattern": "--request-rate-mode", "--vllm-burstiness": "--arrival-smoothness"}
#: --endpoint-type values whose responses are generated tokens (EndpointType's
#: produces_tokens, aiperf/common/enums/endpoints_enums.py); embeddings and rankings
#: produce none.
_TOKEN_ENDPOINTS = ("chat", "completions")
#: --goodput's metric tags (GoodRequestCountMetric; values in the metric's display unit)
#: → the SLO bound: the per-user output rate (larger is better) is a TPOT bound of 1000 / X.
_AIPERF_SLO = {"time_to_first_token": "ttft_ms", "inter_token_latency": "tpot_ms", "request_latency": "e2e_ms",
               "output_token_throughput_per_user": "tpot_ms"}


#: The metrics AIPerf measures only with --streaming (MetricFlags.STREAMING_ONLY, left
#: out by BaseMetricsProcessor.get_filters when endpoint.streaming is off); genai-perf's
#: console and CSV exporters skip the same four of its own (ConsoleExporter._should_skip).
#: Without --streaming a response arrives whole, so the run is the same and only the
#: request latency, lengths, counts and throughputs are reported.
_STREAMING_ONLY = ("time_to_first_token", "time_to_second_token", "inter_token_latency",
                   "output_token_throughput_per_user", "prefill_throughput_per_user", "inter_chunk_latency")


class _BenchUsageError(ValueError):
    """A tool command line the simulation cannot run (the message names the option)."""


def _split(command: Sequence[str]) -> list[str]:
    """The words of the command (one string is split as a shell would)."""
    if len(command) == 1:
        return shlex.split(command[0])
    return list(command)


def tool_of(words: Sequence[str]) -> tuple[str, str, list[str]]:
    """The tool a command line runs — ``("vllm_bench_serve", variant, options)`` or
    ``("aiperf", "", options)`` — from its first words.

    Raises:
        _BenchUsageError: not a command of a simulated tool."""
    w = list(words)
    if w[:3] == ["vllm", "bench", "serve"]:
        return "vllm_bench_serve", "vllm", w[3:]
    if w[:2] == ["aiperf", "profile"]:
        return "aiperf", "", w[2:]
    i = 1 if w and os.path.basename(w[0]).startswith("python") else 0
    if len(w) > i and os.path.basename(w[i]) == "benchmark_serving.py":
        variant = "inferencex" if w[i].replace("\\", "/").endswith("utils/bench_serving/benchmark_serving.py") else "vllm"
        return "vllm_bench_serve", variant, w[i + 1:]
    if w[:2] == ["genai-perf", "profile"]:
        return "genai_perf", "", w[2:]
    if w[:1] == ["inference-perf"]:
        return "inference_perf", "", w[1:]
    if len(w) > i + 1 and w[i:i + 2] == ["-m", "inference_perf"]:
        return "inference_perf", "", w[i + 2:]
    if len(w) > i + 1 and w[i:i + 2] == ["-m", "sglang.bench_serving"]:
        return "sglang_bench_serving", "", w[i + 2:]
    if len(w) > i and os.path.basename(w[i]) == "bench_serving.py":  # python/sglang/bench_serving.py
        return "sglang_bench_serving", "", w[i + 1:]
    raise _BenchUsageError(f"{' '.join(w[:3]) or '(empty)'}: not a benchmark command aisimulate simulates "
                          "(vllm bench serve …, python benchmark_serving.py …, aiperf profile …, genai-perf profile …, "
                          "inference-perf --config_file …, python -m sglang.bench_serving …)")


class _Options(dict):
    """Option name → values, with ``written``: each name as the command line wrote it
    (``--isl`` for ``--synthetic-input-tokens-mean``), for the messages."""

    def __init__(self) -> None:
        super().__init__()
        self.written: dict[str, str] = {}


def _written(opts: dict[str, list[str]], name: str) -> str:
    """``name`` as the command line wrote it (an alias the user gave, not its own name)."""
    return getattr(opts, "written", {}).get(name, name)


def _options(words: Sequence[str], inert: dict[str, int], aliases: dict[str, str] | None = None,
             lists: Sequence[str] = ()) -> tuple[dict[str, list[str]], list[str]]:
    """``--name value`` / ``--name=value`` / flags into name → values; the names of
    inert options are returned apart. An option given twice takes its last value, as
    the tools' parsers do (argparse's store action, cyclopts), except ``lists``, whose
    values add up (AIPerf's ``--extra-inputs``, given once per key). ``aliases`` maps
    another name of an option to its own (the last of either wins). Positional words
    are an error."""
    out = _Options()
    seen_inert: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            raise _BenchUsageError(f"{word!r}: a word that is no option (the tool's options only)")
        given, eq, value = word.partition("=")
        given = given.replace("_", "-") if given.startswith("--") else given
        name = (aliases or {}).get(given, given)
        out.written[name] = given
        vals: list[str] = []
        if eq:
            vals = [value]
        else:
            j = i + 1
            while j < len(words) and not (words[j].startswith("-") and not _is_number(words[j])):
                vals.append(words[j])
                j += 1
            i = j - 1
        if name in inert:
            seen_inert.append(name)
        elif name in lists:
            out.setdefault(name, []).extend(vals)
        else:
            out.pop(name, None)  # the last one given, in the order given
            out[name] = vals
        i += 1
    return out, seen_inert


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _one(opts: dict[str, list[str]], name: str, kind: type, default: Any = None) -> Any:
    vals = opts.pop(name, None)
    if vals is None:
        return default
    name = _written(opts, name)
    if kind is bool:
        if vals:
            raise _BenchUsageError(f"{name} takes no value, got {' '.join(vals)!r}")
        return True
    if len(vals) != 1:
        raise _BenchUsageError(f"{name} takes one value, got {len(vals)}")
    text = vals[0]
    try:
        if kind is float and text.lower() in ("inf", "infinity"):
            return math.inf
        return kind(text)
    except ValueError:
        raise _BenchUsageError(f"{name} {text!r}: want {'an integer' if kind is int else 'a number'}") from None


#: vLLM's benchmark options taken as ``traffic.benchmark`` fields: (option, field, type).
_VLLM_OPTIONS = (("--dataset-name", "dataset_name", str), ("--random-input-len", "random_input_len", int),
                 ("--random-output-len", "random_output_len", int),
                 ("--random-range-ratio", "random_range_ratio", float),
                 ("--random-prefix-len", "random_prefix_len", int), ("--num-prompts", "num_prompts", int),
                 ("--max-concurrency", "max_concurrency", int), ("--burstiness", "burstiness", float),
                 ("--num-warmups", "num_warmups", int),
                 ("--ready-check-timeout-sec", "ready_check_timeout_sec", float),
                 ("--probe-request-rate", "probe_request_rate", float),
                 # the general lengths map onto the dataset's, whatever the order (main_async)
                 ("--input-len", "random_input_len", int), ("--output-len", "random_output_len", int))


def benchmark_option(command: Sequence[str], field: str, version: str | None = None) -> str | None:
    """The option of the command line that set ``traffic.benchmark.<field>``, as the command
    wrote it (``--isl`` for synthetic_input_tokens_mean; of two that set it, the one the
    parser keeps: vLLM's --input-len over --random-input-len whatever the order, else the
    last given), or None when the command did not set it (a default) or the tool reads a
    config file. ``version`` is the tool's release, as :func:`parse_command` takes it."""
    tool, _, options = tool_of(_split(command))
    if tool == "vllm_bench_serve":
        # in _VLLM_OPTIONS order: parse_vllm sets the field from each in turn, the last wins
        names = [n for n, k, _ in _VLLM_OPTIONS if k == field]
        names += {"request_rate": ["--request-rate"], "ignore_eos": ["--ignore-eos"]}.get(field, [])
        aliases: dict[str, str] = {}
    elif tool == "sglang_bench_serving":
        from . import bench_sglang
        names, aliases = bench_sglang.option_of(field), {}
    elif tool in ("aiperf", "genai_perf"):
        aliases = _aiperf_aliases(version) if tool == "aiperf" else _aiperf_aliases(None)
        names = [n for n, (k, _) in _AIPERF_OPTIONS.items() if k == field]
        # as parse_aiperf: --num-conversations is its own field only under AIPerf 0.3.0's names
        names += ["--num-conversations"] if field == "num_conversations" and aliases is _AIPERF_ALIASES else []
    else:
        return None
    try:
        opts, _ = _options(options, {}, aliases, lists=("--extra-inputs",))
    except _BenchUsageError:
        return None
    if tool == "vllm_bench_serve":
        given = [n for n in names if n in opts]
    else:
        given = [n for n in opts if n in names]  # in the order given: the last one set the field
    return _written(opts, given[-1]) if given else None


def parse_vllm(options: Sequence[str], variant: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``traffic.benchmark`` (tool vllm_bench_serve) and the run's other settings
    (``seed``, ``slo``, ``percentiles``, ``percentile_metrics``) from vLLM's benchmark
    options (vllm/benchmarks/serve.py, add_cli_args and main_async)."""
    opts, _ = _options(options, _VLLM_INERT)
    b: dict[str, Any] = {"tool": "vllm_bench_serve", "variant": variant}
    for name, key, kind in _VLLM_OPTIONS:
        v = _one(opts, name, kind)
        if v is not None:
            b[key] = v
    rate = _one(opts, "--request-rate", float)
    if rate is not None and not math.isinf(rate):
        b["request_rate"] = rate
    run: dict[str, Any] = {}
    if b.get("max_concurrency", 1) <= 0:
        # vLLM before 0.30.0 runs 0 as no limit (a null semaphore; a negative one fails as
        # asyncio.Semaphore does); from 0.30.0 main_async refuses either: checked against the
        # client's release once the config names it (_check_vllm_release)
        if b["max_concurrency"] < 0:
            raise _BenchUsageError(f"{_written(opts, '--max-concurrency')} {b['max_concurrency']}: must be > 0 "
                                  "(vLLM: \"--max-concurrency must be greater than 0\"; before 0.30.0 the semaphore "
                                  "refuses a negative value)")
        del b["max_concurrency"]
        run["max_concurrency_zero"] = _written(opts, "--max-concurrency")
    if _one(opts, "--ignore-eos", bool, False):
        b["ignore_eos"] = True
    # InferenceX's benchmark_serving.py has no sampling options (its requests send temperature 0)
    taken = _VLLM_SAMPLING if variant == "vllm" else {}
    sampling = []
    for name, kind in taken.items():
        if name in opts:
            shown = " ".join([_written(opts, name), *opts[name]])
            _one(opts, name, kind)  # checked as a number (one value), then taken (_SAMPLING_NOTE)
            sampling.append(shown)
    if sampling:
        run["notes"] = [_SAMPLING_NOTE.format(", ".join(sampling))]
    seed = _one(opts, "--seed", int)
    if seed is not None:
        run["seed"] = seed
    goodput = opts.pop("--goodput", None)
    if goodput is not None:  # vLLM's "ttft:200 tpot:50 e2el:1000" (ms; check_goodput_args)
        names = {"ttft": "ttft_ms", "tpot": "tpot_ms", "e2el": "e2e_ms"}
        slo = {}
        for item in goodput:
            k, _, v = item.partition(":")
            if k not in names or not _is_number(v):
                raise _BenchUsageError(f"--goodput {item!r}: want ttft:MS, tpot:MS or e2el:MS")
            if float(v) < 0:
                raise _BenchUsageError(f"--goodput {item!r}: the service level objective value should be "
                                      "non-negative (vLLM's check_goodput_args)")
            slo[names[k]] = float(v)
        run["slo"] = slo
    pcts = opts.pop("--metric-percentiles", None)
    if pcts is not None:
        try:  # vLLM's [float(p) for p in args.metric_percentiles.split(",")]: an empty item fails too
            run["percentiles"] = [float(p) for p in ",".join(pcts).split(",")]
        except ValueError:
            raise _BenchUsageError(f"--metric-percentiles {','.join(pcts)!r}: want percentiles separated by "
                                  "commas, e.g. 25,50,75 (an empty item is not a number)") from None
        bad = [p for p in run["percentiles"] if not 0 <= p <= 100]
        if bad:
            raise _BenchUsageError(f"--metric-percentiles {_word(bad[0])}: percentiles must be in [0, 100] "
                                  "(numpy.percentile)")
    metrics = opts.pop("--percentile-metrics", None)
    if metrics is not None:
        run["percentile_metrics"] = ",".join(metrics).split(",")
    if opts:
        name = _written(opts, sorted(opts)[0])
        if name in _OTHER_TOOLS["vllm_bench_serve"]:
            raise _BenchUsageError(f"{name}: not an option of vllm bench serve (its name there is "
                                  f"{_OTHER_TOOLS['vllm_bench_serve'][name]})")
        from .bench_unknown import unknown_option

        raise _BenchUsageError(unknown_option(
            name, "vllm bench serve", [*_VLLM_KNOWN, *_VLLM_INERT],
            ", ".join(sorted(k for k in _VLLM_KNOWN if k in taken or k not in _VLLM_SAMPLING))))
    return b, run


#: Another tool's option written for this one (a command copied between tools): option →
#: this tool's own spelling, for the message.
_OTHER_TOOLS = {"vllm_bench_serve": {"--concurrency": "--max-concurrency", "--request-count": "--num-prompts",
                                     "--isl": "--random-input-len", "--osl": "--random-output-len"},
                "aiperf": {"--ignore-eos": "--extra-inputs ignore_eos:true", "--max-concurrency": "--concurrency",
                           "--random-input-len": "--isl", "--random-output-len": "--osl",
                           "--num-warmups": "--warmup-request-count"}}


#: vLLM's benchmark options of the requests' sampling (vllm/benchmarks/serve.py, the
#: sampling parameters group: sent in each request body) and AIPerf's --extra-inputs keys
#: of the same: taken, with :data:`_SAMPLING_NOTE`.
_VLLM_SAMPLING = {"--temperature": float, "--top-p": float, "--top-k": int, "--min-p": float}
_AIPERF_SAMPLING = ("temperature", "top_p", "top_k", "min_p")
#: Why the sampling parameters change no prediction: the lengths are the command's (every
#: output its full length: --ignore-eos, ignore_eos:true), and a simulated pass is the
#: forward pass with its logits (core/perf: Batch.Samplers counts the sequences whose
#: logits are computed), with no term for the sampler that turns logits into a token
#: (vLLM's vllm/v1/sample/sampler.py: greedy argmax, or temperature and top-k/top-p), the
#: same for every request whatever it asks.
_SAMPLING_NOTE = ("{}: taken, and not changing the prediction (the outputs have the lengths the command gives; a "
                  "simulated pass is the forward pass and its logits, with no term for the sampler)")


_VLLM_KNOWN = ("--dataset-name", "--random-input-len", "--random-output-len", "--random-range-ratio",
               "--random-prefix-len", "--num-prompts", "--max-concurrency", "--request-rate", "--burstiness",
               "--num-warmups", "--ready-check-timeout-sec", "--probe-request-rate", "--ignore-eos", "--seed", "--goodput",
               "--metric-percentiles", "--percentile-metrics", "--input-len", "--output-len", *_VLLM_SAMPLING)


#: The other options of ``aiperf profile`` and ``genai-perf profile`` read here (beside
#: :data:`_AIPERF_OPTIONS`, their aliases and the inert ones), for a typo's message.
_AIPERF_KNOWN = ("--streaming", "--extra-inputs", "--goodput", "--random-seed", "--endpoint-type",
                 "--input-file", "--custom-dataset-type", "--fixed-schedule", "--fixed-schedule-auto-offset",
                 "--isl-block-size")

#: The options of ``aiperf profile`` and ``genai-perf profile`` the simulation takes:
#: option → (benchmark key, type); genai-perf has neither a rate without perf_analyzer's
#: range search nor AIPerf's duration and sampling strategy.
_AIPERF_OPTIONS = {"--concurrency": ("concurrency", int), "--request-rate": ("request_rate", float),
                   "--request-count": ("request_count", int),
                   "--warmup-request-count": ("warmup_request_count", int),
                   "--benchmark-duration": ("benchmark_duration", float),
                   "--benchmark-grace-period": ("benchmark_grace_period", float),
                   "--synthetic-input-tokens-mean": ("synthetic_input_tokens_mean", int),
                   "--synthetic-input-tokens-stddev": ("synthetic_input_tokens_stddev", float),
                   "--output-tokens-mean": ("output_tokens_mean", int),
                   "--output-tokens-stddev": ("output_tokens_stddev", float),
                   "--num-dataset-entries": ("num_dataset_entries", int),
                   "--dataset-sampling-strategy": ("dataset_sampling_strategy", str),
                   "--request-rate-mode": ("request_rate_mode", str),
                   "--arrival-smoothness": ("arrival_smoothness", float),
                   "--cache-bust": ("cache_bust", str),
                   "--random-range-ratio": ("random_range_ratio", float),
                   "--random-corpus-style": ("random_corpus_style", str)}
_GENAI_PERF_OPTIONS = {k: v for k, v in _AIPERF_OPTIONS.items()
                       if k not in ("--request-rate", "--benchmark-duration", "--benchmark-grace-period",
                                    "--dataset-sampling-strategy",
                                    "--request-rate-mode", "--arrival-smoothness", "--cache-bust",
                                    "--random-range-ratio", "--random-corpus-style")}


def _extra_inputs(items: Sequence[str]) -> list[tuple[str, str]]:
    """``--extra-inputs`` values as AIPerf reads them (parse_str_or_dict_as_tuple_list,
    aiperf/common/config/config_validators.py): each a JSON object, or ``key:value``
    pairs separated by commas."""
    out: list[tuple[str, str]] = []
    for item in items:
        if item.startswith("{"):
            try:
                doc = json.loads(item)
            except ValueError:
                raise _BenchUsageError(f"--extra-inputs {item!r}: must be a valid JSON string") from None
            if not isinstance(doc, dict):
                raise _BenchUsageError(f"--extra-inputs {item!r}: want a JSON object")
            out += [(str(k), json.dumps(v) if not isinstance(v, str) else v) for k, v in doc.items()]
            continue
        for pair in item.split(","):
            k, sep, v = pair.partition(":")
            if not sep:
                raise _BenchUsageError(f"--extra-inputs {pair!r}: want key:value")
            out.append((k.strip(), v.strip()))
    return out


def _aiperf_aliases(version: str | None) -> dict[str, str]:
    """AIPerf's option names for its release: before 0.3.0 (or no version) the
    conversations' names are --num-dataset-entries (the last of them given wins)."""
    parts = (version or "0.2").lstrip("v").split(".")
    try:
        old = tuple(int(p) for p in parts[:2]) < (0, 3)
    except ValueError:
        old = False  # not a release: the core names the field
    if not old:
        return _AIPERF_ALIASES
    return {**_AIPERF_ALIASES, "--num-conversations": "--num-dataset-entries",
            "--conversation-num": "--num-dataset-entries", "--num-sessions": "--num-dataset-entries"}


def parse_aiperf(options: Sequence[str], tool: str = "aiperf",
                 version: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``traffic.benchmark`` (tool aiperf, or genai_perf) and the run's seed and SLO from
    ``aiperf profile``'s (``genai-perf profile``'s) options, their aliases too
    (``--isl``, ``--osl``, ``--num-sessions`` …) as AIPerf ``version`` names them; an
    option given twice takes its last value, ``--extra-inputs`` adds up."""
    known = dict(_AIPERF_OPTIONS) if tool == "aiperf" else _GENAI_PERF_OPTIONS
    aliases = _aiperf_aliases(version) if tool == "aiperf" else _aiperf_aliases(None)
    if tool == "aiperf" and aliases is _AIPERF_ALIASES:
        known["--num-conversations"] = ("num_conversations", int)
    opts, _ = _options(options, _AIPERF_INERT, aliases, lists=("--extra-inputs",))
    b: dict[str, Any] = {"tool": tool}
    traffic = _aiperf_trace(opts, version) if tool == "aiperf" else _genai_perf_payload(opts)
    if traffic is not None:
        for name in ("--concurrency", "--request-rate", "--request-count"):
            opts.pop(name, None)  # the fixed schedule's timing and count are the trace's (module note)
        synthetic = [n for n in sorted(opts) if n in known or n == "--request-rate-mode"]
        if synthetic:
            kind = "mooncake_trace" if tool == "aiperf" else "payload:"
            raise _BenchUsageError(f"{_written(opts, synthetic[0])}: not simulated with a {kind} "
                                  "--input-file (the trace gives every request's lengths, and its time or order)")
    endpoint = _one(opts, "--endpoint-type", str)
    if endpoint is not None and endpoint not in _TOKEN_ENDPOINTS:
        why = ("its responses are no generated tokens, so there is no TTFT, ITL or output to simulate"
               if endpoint in ("embeddings", "rankings") else "not an endpoint the simulation serves")
        raise _BenchUsageError(f"--endpoint-type {endpoint}: not simulated ({why}; chat and completions are)")
    ratio = opts.get("--random-range-ratio")
    if ratio and ratio[0].lstrip().startswith("{"):  # AIPerf's {"input": r, "output": r} form
        raise _BenchUsageError(f"--random-range-ratio {ratio[0]}: not simulated (one ratio for both lengths is)")
    if ratio is not None and "--synthetic-input-tokens-mean" not in opts:
        # AIPerf 0.13.0: "Requires both --isl and --osl to be set explicitly"
        raise _BenchUsageError("--random-range-ratio: give --isl too (AIPerf takes no default mean for its window)")
    for name, (key, kind) in known.items():
        v = _one(opts, name, kind)
        if v is not None:
            b[key] = v
    if b.get("output_tokens_mean") == 0:  # the core reads 0 as absent ("is required")
        raise _BenchUsageError(f"{_written(opts, '--output-tokens-mean')} 0: must be ≥ 1 (the responses' length)")
    if b.get("request_rate_mode") == "concurrency_burst" and "request_rate" not in b:
        del b["request_rate_mode"]  # AIPerf's mode without a rate: the closed loop of --concurrency
    streaming = _one(opts, "--streaming", bool, False)
    extra: dict[str, str] = {}
    sampling: dict[str, str] = {}
    for k, v in _extra_inputs(opts.pop("--extra-inputs", []) or []):
        if k in _AIPERF_SAMPLING:
            if not _is_number(v):
                raise _BenchUsageError(f"--extra-inputs {k}:{v}: want a number")
            sampling[k] = v  # the request body's key: the last one given (_SAMPLING_NOTE)
            continue
        if not (k in ("ignore_eos", "stream", "min_tokens", "max_tokens")):
            raise _BenchUsageError(f"--extra-inputs {k}:{v}: not simulated (ignore_eos, stream, min_tokens and "
                                  "max_tokens are, for a fixed output length; " + ", ".join(_AIPERF_SAMPLING)
                                  + " are taken)")
        extra[k] = v  # the request body's key: the last one given
    for k in ("ignore_eos", "stream"):
        if k in extra and extra[k].lower() != "true":
            raise _BenchUsageError(f"--extra-inputs {k}:{extra[k]}: not simulated ({k}:true is)")
    for k in ("min_tokens", "max_tokens"):
        if k in extra and not extra[k].isdigit():
            raise _BenchUsageError(f"--extra-inputs {k}:{extra[k]}: want a number of tokens")
    if traffic is not None and ("max_tokens" in extra or "min_tokens" in extra):
        k = "max_tokens" if "max_tokens" in extra else "min_tokens"
        raise _BenchUsageError(f"--extra-inputs {k}:{extra[k]}: not simulated with a mooncake_trace --input-file "
                              "(each row's output_length is its request's max_tokens)")
    if "max_tokens" in extra:  # the request's length, as --output-tokens-mean is
        if b.get("output_tokens_stddev", 0) or b.get("output_tokens_mean", int(extra["max_tokens"])) != int(extra["max_tokens"]):
            raise _BenchUsageError(f"--extra-inputs max_tokens:{extra['max_tokens']}: not simulated beside a "
                                  "different or varying --output-tokens-mean (give one length)")
        b["output_tokens_mean"] = int(extra["max_tokens"])
    if "min_tokens" in extra and (b.get("output_tokens_stddev", 0) or
                                  str(b.get("output_tokens_mean")) != extra["min_tokens"]):
        raise _BenchUsageError(f"--extra-inputs min_tokens:{extra['min_tokens']}: not simulated unless it equals a "
                              "fixed --output-tokens-mean (every output its full length)")
    if extra.get("ignore_eos") or "min_tokens" in extra:  # min_tokens = max_tokens: every output its full length
        b["ignore_eos"] = True
    run: dict[str, Any] = {}
    seed = _one(opts, "--random-seed", int)
    if seed is not None:
        run["seed"] = seed
    goodput = opts.pop("--goodput", None)
    if goodput is not None:  # "time_to_first_token:100 inter_token_latency:8" (parse_str_as_numeric_dict)
        slo: dict[str, float] = {}
        for item in " ".join(goodput).split():
            k, _, v = item.partition(":")
            if k not in _AIPERF_SLO or not _is_number(v):
                raise _BenchUsageError(f"--goodput {item!r}: want METRIC:VALUE with METRIC one of "
                                      + ", ".join(_AIPERF_SLO) + " (the bounds the simulation's SLO takes)")
            x = float(v)
            if not (math.isfinite(x) and x > 0) and k == "output_token_throughput_per_user":
                raise _BenchUsageError(f"--goodput {item!r}: want a rate > 0 tokens/s")
            if not streaming and k in _STREAMING_ONLY:
                # AIPerf's _configure_goodput: "Invalid --goodput: metric(s) … are not applicable"
                why = "AIPerf refuses such an SLO; " if tool == "aiperf" else ""
                raise _BenchUsageError(f"--goodput {item!r}: {k} is not measured without --streaming "
                                      f"({why}add --streaming)")
            bound = 1000.0 / x if k == "output_token_throughput_per_user" else x
            key = _AIPERF_SLO[k]
            slo[key] = min(bound, slo.get(key, math.inf))
        run["slo"] = slo
    if opts:
        name = _written(opts, sorted(opts)[0])
        if name in _OTHER_TOOLS["aiperf"]:
            raise _BenchUsageError(f"{name}: not an option of {tool.replace('_', '-')} profile (its name there is "
                                  f"{_OTHER_TOOLS['aiperf'][name]})")
        from .bench_unknown import unknown_option

        raise _BenchUsageError(unknown_option(
            name, f"{tool.replace('_', '-')} profile",
            [*_AIPERF_OPTIONS, *_AIPERF_ALIASES, *_AIPERF_INERT, *_AIPERF_KNOWN]))
    if traffic is not None:
        run["traffic"] = traffic
    if not streaming:
        run["streaming"] = False
    if sampling:
        run["notes"] = [_SAMPLING_NOTE.format(", ".join(f"--extra-inputs {k}:{v}" for k, v in sampling.items()))]
    return b, run


#: AIPerf's names of the trace replay's options (aiperf/common/config/input_config.py,
#: prompt_config.py): name → the name parsed here.
_AIPERF_TRACE_ALIASES = {"--prompt-input-tokens-block-size": "--isl-block-size",
                         "--synthetic-input-tokens-block-size": "--isl-block-size"}


def _aiperf_trace(opts: dict[str, list[str]], version: str | None = None) -> dict[str, Any] | None:
    """``traffic`` of AIPerf's trace replay (``--input-file T --custom-dataset-type
    mooncake_trace [--fixed-schedule]``): ``source: {type: mooncake, path: T}``,
    ``load: {mode: trace, speedup: 1}``; None without ``--input-file``.

    AIPerf's rules (ai-dynamo/aiperf, aiperf/common/config/user_config.py and
    aiperf/dataset/loader/mooncake_trace.py): --custom-dataset-type defaults to
    mooncake_trace; each row's input_length (with its hash_ids of --isl-block-size
    tokens) is the prompt and output_length its max_tokens; with --fixed-schedule, or
    without it when the file's first row has a timestamp (validate_timing_mode), each
    request is sent at its timestamp (FixedScheduleStrategy) and --concurrency,
    --request-rate and --request-count are not used (get_effective_request_count: the
    file's rows). The schedule's zero (0 ms, the first timestamp with
    --fixed-schedule-auto-offset, or --fixed-schedule-start-offset) shifts every send
    alike, and every AIPerf metric is a difference of times (benchmark_duration is the
    last response less the first request), so the replay's origin at the first row is
    the same measurement: --fixed-schedule-auto-offset is taken. The start and end
    offsets also drop the rows outside them (_timestamp_within_offsets), which the
    replay does not: they are refused, as are the other dataset types. A file whose first
    row has no timestamp, without --fixed-schedule, is sent under --concurrency or
    --request-rate (validate_timing_mode's other branches): :func:`_untimed_load`. Rows with
    a session_id under the fixed schedule are sent as AIPerf ``version`` sends them, or
    refused: :func:`_session_rules`."""
    for other, name in _AIPERF_TRACE_ALIASES.items():
        if other in opts:
            opts.written[name] = _written(opts, other)
            opts[name] = opts.pop(other)
    kind = _one(opts, "--custom-dataset-type", str)
    path = _one(opts, "--input-file", str)
    if path is None:
        if kind is not None:
            raise _BenchUsageError(f"--custom-dataset-type {kind}: needs --input-file (the dataset's file)")
        for name in ("--fixed-schedule", "--fixed-schedule-auto-offset", "--fixed-schedule-start-offset",
                     "--fixed-schedule-end-offset", "--isl-block-size"):
            if name in opts:
                raise _BenchUsageError(f"{_written(opts, name)}: needs --input-file (a mooncake_trace file)")
        return None
    if (kind or "mooncake_trace") != "mooncake_trace":
        raise _BenchUsageError(f"--custom-dataset-type {kind}: not simulated (mooncake_trace is, as "
                              "traffic.source type mooncake)")
    for name in ("--fixed-schedule-start-offset", "--fixed-schedule-end-offset"):
        if name in opts:
            raise _BenchUsageError(f"{name}: not simulated (AIPerf drops the rows outside the offsets; the "
                                  "replay sends every row of the file: cut the file instead)")
    _check_input_file(f"--input-file {path}", path)
    fixed = _one(opts, "--fixed-schedule", bool, False)
    _one(opts, "--fixed-schedule-auto-offset", bool, False)
    source: dict[str, Any] = {"type": "mooncake", "path": os.path.abspath(path)}
    block = _one(opts, "--isl-block-size", int)
    if block is not None:
        source["isl_block_size"] = block
    if not fixed and not _first_row_timed(path):
        return {"source": source, "load": _untimed_load(opts, path, version)}
    if _rows_have_sessions(path):
        _session_rules(source, path, version)
    return {"source": source, "load": {"mode": "trace", "speedup": 1.0}}


#: AIPerf's releases where a fixed schedule's sessions (mooncake_trace rows with a
#: session_id) changed, read in each release's source (PyPI wheels; ai-dynamo/aiperf):
#: from 0.4.0 one credit per session, each turn's prompt the conversation so far;
#: from 0.5.0 a later turn is sent at its own timestamp (:func:`_session_rules`).
_AIPERF_ONE_CREDIT_PER_SESSION = (0, 4, 0)
_AIPERF_TURN_TIMESTAMPS = (0, 5, 0)


def _session_rules(source: dict[str, Any], path: str, version: str | None) -> None:
    """Fill ``source`` for a fixed-schedule trace whose rows have a session_id, as AIPerf
    ``version`` (the default: its rules before 0.3.0) runs it, or refuse it by name.

    - 0.1.x: MooncakeTrace has no session_id or delay field (pydantic drops them); each row
      is a conversation of its own under a uuid (aiperf/dataset/loader/mooncake_trace.py),
      sent at its timestamp whether or not the session's turn before it is done: refused,
      as the replay keeps a session's turns in order.
    - 0.2.x, 0.3.x: the loader groups a session's rows, but the dataset manager's timing
      data has one entry per turn (_handle_dataset_timing_request: every turn's timestamp
      with its conversation id) and the worker runs the whole conversation for each credit
      (_execute_single_credit_internal loops over every turn): a session of n turns is sent
      n times, n² requests: refused.
    - 0.4.x: one credit per session, at its first turn's timestamp; the worker sends its
      turns one after another, each after the previous response and the turn's delay (if
      > 0), with the conversation so far (turns=turn_list: the earlier rows and the replies
      received, _process_response): ``context_mode: deltas_without_responses``. A later
      turn's timestamp is not used there, where the replay would send it at that time:
      refused, naming the line.
    - 0.5.0 and later: timing/strategies/fixed_schedule.py sends first turns at their
      timestamps and, on each credit's return (handle_credit_return), the next turn at its
      timestamp, else after its delay, else at once; the worker's UserSession keeps the
      turns and the replies (workers/session_manager.py; from the release that names
      conversation context modes, deltas_without_responses is the default for a Mooncake
      trace with hash_ids and the global fallback): the core's trace mode
      (core/replay/traffic.go nextTurn) with ``context_mode: deltas_without_responses``."""
    rel = _release(version or "0.2")
    if rel is None:
        raise _BenchUsageError(f"--tool-version {version}: not an AIPerf release (rows with a session_id are sent "
                              "as the release sends them)")
    if rel < _AIPERF_ONE_CREDIT_PER_SESSION:
        shown = version or "before 0.3.0 (bench's default)"
        why = ("ignores session_id and delay: every row is a conversation of its own, sent at its timestamp without "
               "waiting for the session's turn before it" if rel < (0, 2) else
               "sends a session once for each of its turns, every turn's timestamp starting the whole conversation")
        raise _BenchUsageError(f"--input-file {path}: rows with a session_id are not simulated for AIPerf {shown} "
                              f"(it {why}): give --tool-version 0.4.0 or later, or remove session_id from the rows")
    if rel < _AIPERF_TURN_TIMESTAMPS:
        line = _later_turn_timed(path)
        if line is not None:
            raise _BenchUsageError(f"--input-file {path}:{line}: a later turn's timestamp is not simulated for AIPerf "
                                  f"{version} (it sends a later turn after the previous response and the turn's "
                                  "delay, not at its timestamp): give the turn a delay instead, or --tool-version "
                                  "0.5.0 or later")
    source["context_mode"] = "deltas_without_responses"


def _later_turn_timed(path: str) -> int | None:
    """The line of the first row that is a later turn of its session and has a timestamp
    (undecodable lines are left to the trace reader), None if none."""
    seen: set[Any] = set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if not isinstance(row, dict) or row.get("session_id") is None:
                continue
            sid = json.dumps(row["session_id"])
            if sid in seen and row.get("timestamp") is not None:
                return n
            seen.add(sid)
    return None


def _check_input_file(shown: str, path: str) -> None:
    """Refuse a trace ``path`` that is missing or no regular file, as ``shown`` (the option
    and the path as written)."""
    if os.path.isdir(path):
        raise _BenchUsageError(f"{shown}: is a folder, not a trace file")
    if os.path.exists(path) and not os.path.isfile(path):
        raise _BenchUsageError(f"{shown}: not a regular file (a trace file is read twice: once by bench, once "
                              "by the replay)")
    if not os.path.isfile(path):
        raise _BenchUsageError(f"{shown}: no such file")


#: vLLM's --percentile-metrics names of its client-side queueing (0.30.0 and later:
#: limited_request_func records client_queue_time = start_time − request_arrival_time,
#: benchmark() in vllm/benchmarks/serve.py; 0.29.0's has neither).
_VLLM_QUEUE_METRICS = ("client_queue_time", "e2el_including_client_queue")
#: The vLLM release of those metrics and of main_async's "--max-concurrency must be
#: greater than 0".
_VLLM_QUEUE_RELEASE = (0, 30, 0)


def _check_vllm_release(version: str | None, bench: dict[str, Any], run: dict[str, Any]) -> None:
    """Check the options of ``vllm bench serve`` whose meaning is the client release's
    (``version``, as the config resolved it; not a release: the newest rules): from
    0.30.0 ``--max-concurrency 0`` is refused and the client-queue sections exist;
    before, 0 is no limit and those names print nothing (recorded in ``run`` as
    ``metrics_of_later_releases``). With ``--request-rate`` and ``--max-concurrency``
    vLLM times a request's client queue from its scheduled arrival, which the replay
    does not record: refused.

    Raises:
        _BenchUsageError: an option the release refuses, or a queue metric not simulated."""
    rel = _release(version)
    later = rel is None or rel >= _VLLM_QUEUE_RELEASE
    if run.get("max_concurrency_zero") and later:
        raise _BenchUsageError(f"{run['max_concurrency_zero']} 0: vLLM {version} refuses it (\"--max-concurrency must "
                              "be greater than 0\", from 0.30.0; before, 0 was no limit): leave it out for no limit")
    queue = [m for m in run.get("percentile_metrics") or () if m in _VLLM_QUEUE_METRICS]
    if queue and not later:
        run["metrics_of_later_releases"] = queue  # vLLM before 0.30.0 prints no such section
        run["client_version"] = version
    elif queue and "request_rate" in bench and bench.get("max_concurrency"):
        raise _BenchUsageError(f"--percentile-metrics {queue[0]}: not simulated with --request-rate and "
                              "--max-concurrency (vLLM times the client queue from each request's scheduled "
                              "arrival, which the replay does not record)")


def _release(version: str | None) -> tuple[int, int, int] | None:
    """AIPerf's release as three numbers ((0, 5, 0) of "0.5.0", "v0.5.0", "0.5" or
    "0.5.0rc1": a missing part is 0, a suffix is the release it precedes or follows, as
    the engines' versions resolve), None when absent or not a release."""
    m = re.fullmatch(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[.+-]?[A-Za-z0-9.+-]*)?", (version or "").strip())
    if not m:
        return None
    return tuple(int(g or 0) for g in m.groups())  # type: ignore[return-value]


def _untimed_load(opts: dict[str, list[str]], path: str, version: str | None) -> dict[str, Any]:
    """``traffic.load`` of AIPerf sending an untimed mooncake_trace (its first row without a
    timestamp, no --fixed-schedule): validate_timing_mode (aiperf/common/config/
    user_config.py) takes --request-rate's strategy when a rate is given (its arrivals
    --request-rate-mode, poisson by default; constant; gamma from 0.5.0 of shape
    --arrival-smoothness, as for the synthetic dataset: core/config/benchmark.go), else the
    concurrency burst of --concurrency (1 when absent): a closed loop. The dataset manager
    hands the rows out in file order (_use_sequential_iteration for mooncake_trace), and
    the count is the file's rows whatever --request-count says (get_effective_request_count):
    the replay sends every row once, in order (ai-dynamo/aiperf pull request 273, 2025-09:
    "the Mooncake trace file runs exactly those payloads that are in the file"; before it an
    untimed file was sampled at random, 10 requests; --dataset-sampling-strategy, which later
    releases let override the order, is refused beside a trace). Refused: rows with a session_id (how a
    conversation's turns share a slot changed across AIPerf's releases), and a rate capped
    by --concurrency (the replay caps only a synthetic source's arrivals)."""
    if _rows_have_sessions(path):
        raise _BenchUsageError(f"--input-file {path}: rows with a session_id under --concurrency or --request-rate "
                              "are not simulated (give the rows timestamps, and --fixed-schedule)")
    rate = _one(opts, "--request-rate", float)
    concurrency = _one(opts, "--concurrency", int)
    mode = _one(opts, "--request-rate-mode", str)
    smoothness = _one(opts, "--arrival-smoothness", float)
    _one(opts, "--request-count", int)  # the file's rows are the count (docstring)
    if rate is None:
        if mode not in (None, "concurrency_burst") or smoothness is not None:
            name = "--request-rate-mode" if smoothness is None else "--arrival-smoothness"
            raise _BenchUsageError(f"{_written(opts, name)}: needs --request-rate (without one AIPerf sends the "
                                  "trace's rows as a closed loop of --concurrency)")
        c = 1 if concurrency is None else concurrency
        if c < 1:
            raise _BenchUsageError(f"--concurrency {c}: must be ≥ 1")
        return {"mode": "concurrency", "concurrency": c}
    if not (math.isfinite(rate) and rate > 0):
        raise _BenchUsageError(f"--request-rate {_word(rate)}: must be a finite number > 0")
    if concurrency is not None:
        raise _BenchUsageError("--concurrency: a --request-rate capped by a concurrency is not simulated for a trace "
                              "file (the replay caps only a synthetic dataset's arrivals): give one of them")
    load: dict[str, Any] = {"mode": "rate", "rate_rps": rate, "arrival": "poisson"}
    rel = _release(version)
    if mode == "constant":
        load["arrival"] = "constant"
    elif mode == "gamma":
        if rel is None or rel < (0, 5, 0):
            raise _BenchUsageError(f"{_written(opts, '--request-rate-mode')} gamma: an arrival pattern of AIPerf 0.5.0 "
                                  "and later (give --tool-version)")
        shape = 1.0 if smoothness is None else smoothness
        if not (math.isfinite(shape) and shape > 0):
            raise _BenchUsageError(f"{_written(opts, '--arrival-smoothness')} {_word(shape)}: must be a number > 0")
        load.update(arrival="gamma", cv=1.0 / math.sqrt(shape))
    elif mode not in (None, "poisson"):
        raise _BenchUsageError(f"{_written(opts, '--request-rate-mode')} {mode}: not simulated with --request-rate "
                              "(poisson, constant and, from AIPerf 0.5.0, gamma are)")
    if smoothness is not None and mode != "gamma":
        raise _BenchUsageError(f"{_written(opts, '--arrival-smoothness')}: belongs to --request-rate-mode gamma")
    return load


def _rows_have_sessions(path: str) -> bool:
    """Whether a JSON row of the file has a session_id (undecodable lines are left to the
    trace reader, which names them by line)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if "session_id" not in line:
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and row.get("session_id") is not None:
                return True
    return False


def _genai_perf_payload(opts: dict[str, list[str]]) -> dict[str, Any] | None:
    """``traffic`` of genai-perf's trace replay, ``--input-file payload:T --fixed-schedule``
    (triton-inference-server/perf_analyzer, genai-perf/README.md "Use moon_cake file as
    input payload"; inputs/retrievers/payload_input_retriever.py): each row's timestamp
    (ms) is its send, input_length with its hash_ids of 512 tokens (SyntheticPromptGenerator's
    block_size) the prompt and output_length its max_tokens: ``source: {type: mooncake,
    path: T}``, ``load: {mode: trace}``; None without ``--input-file``. perf_analyzer's fixed
    schedule runs the file once (its request count is the file's rows: --request-count is
    refused, as perf_analyzer refuses it), and genai-perf's --concurrency or --request-rate
    would take the place of the schedule (CreateConfig._convert_args_to_stimulus): refused.
    ``payload:`` without ``--fixed-schedule`` is refused: genai-perf 0.0.14 and before
    implied the schedule (config/generate/perf_analyzer_config.py passed --fixed-schedule for
    a payload source, and had no such option), but 0.0.15 and later pass perf_analyzer no
    load option then (_add_inference_load_args: the stimulus not set by the user), so
    perf_analyzer runs its default --concurrency-range 1 over the rows, their timestamps
    unused, for as long as its stability windows take. A file without ``payload:`` is text
    prompts, whose lengths need the tokenizer, and ``synthetic:`` files feed other
    converters: both refused."""
    path = _one(opts, "--input-file", str)
    fixed = _one(opts, "--fixed-schedule", bool, False)
    if path is None:
        if fixed:
            raise _BenchUsageError("--fixed-schedule: needs --input-file payload:FILE (a trace of timestamped rows)")
        return None
    if not path.startswith("payload:"):
        what = ("synthetic files for a converter" if path.startswith("synthetic:")
                else "a file of text prompts, whose token counts need the tokenizer")
        row = _first_row(path) if os.path.isfile(path) else None
        hint = (f"this file's rows are a trace: write --input-file payload:{path} --fixed-schedule"
                if isinstance(row, dict) and "input_length" in row else
                "a trace of timestamp, input_length and output_length rows is --input-file payload:FILE")
        raise _BenchUsageError(f"--input-file {path}: not simulated without payload: (genai-perf reads it as {what}); "
                              + hint)
    path = path.split(":", 1)[1]
    _check_input_file(f"--input-file payload:{path}", path)
    for name in ("--concurrency", "--request-rate", "--request-count", "--warmup-request-count"):
        if name in opts:
            why = ("genai-perf then runs that load instead of the schedule" if name in ("--concurrency", "--request-rate") else
                   "perf_analyzer's fixed schedule sends the file's rows once" if name == "--request-count" else
                   "the replay sends every row of the file as measured")
            raise _BenchUsageError(f"{_written(opts, name)}: not simulated with --input-file payload: ({why})")
    if not fixed:
        raise _BenchUsageError(f"--input-file payload:{path}: give --fixed-schedule (genai-perf 0.0.15 and later "
                              "send the rows at perf_analyzer's default concurrency 1 without it, their timestamps "
                              "unused, which is not simulated; 0.0.14 and before implied it)")
    return {"source": {"type": "mooncake", "path": os.path.abspath(path)}, "load": {"mode": "trace", "speedup": 1.0}}


def _first_row_timed(path: str) -> bool:
    """Whether the file's first JSON row has a timestamp, as AIPerf decides on a fixed
    schedule (_should_use_fixed_schedule_for_mooncake_trace: blank and undecodable lines
    are passed over)."""
    row = _first_row(path)
    return isinstance(row, dict) and row.get("timestamp") is not None


def _first_row(path: str) -> Any:
    """The file's first JSON row (blank and undecodable lines passed over), None if none."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not (line := line.strip()):
                    continue
                try:
                    return json.loads(line)
                except ValueError:
                    continue
    except OSError as exc:
        raise _BenchUsageError(f"--input-file {path}: {exc.strerror or exc}") from None
    return None


#: The options that name the model whose tokenizer the client counts tokens with, in the
#: order each tool takes them (vLLM's --tokenizer defaults to --model; AIPerf's to -m).
_MODEL_OPTIONS = {"vllm_bench_serve": ("--tokenizer", "--model"),
                  "sglang_bench_serving": ("--tokenizer", "--model"),
                  "aiperf": ("--tokenizer", "-m", "--model", "--model-names"),
                  "genai_perf": ("--tokenizer", "-m", "--model", "--model-names")}


def command_model(command: Sequence[str]) -> tuple[str, str] | None:
    """``(option, model)``: the model the command's client tokenizes for (the tokenizer
    option where given, else the model option, as written), or None when it names none
    or is a tool without such an option (inference-perf's lives in its config file)."""
    tool, _, options = tool_of(_split(command))
    if tool not in _MODEL_OPTIONS:
        return None
    opts, _ = _options(options, {}, lists=("--extra-inputs",))  # every option with its values
    for name in _MODEL_OPTIONS[tool]:
        if opts.get(name):
            return name, opts[name][0].split(",")[0]
    return None


def model_mismatch(command: Sequence[str], model: str) -> str | None:
    """A warning when the command's client tokenizes for another model than ``model``
    (the deployment's ``engine.model``): its token counts would be another tokenizer's,
    and a server of ``model`` answers another name only as a served alias. None when
    they agree or the command names no model."""
    found = command_model(command)
    if found is None or found[1].rstrip("/").lower() == model.lower():
        return None
    option, name = found
    return (f"bench: {option} {name} is not the deployment's engine.model {model}: the requests are "
            f"simulated with {model}'s lengths as the command gives them (set engine.model to the model "
            "the command benchmarks)")


def parse_command(command: Sequence[str], version: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(traffic.benchmark, run settings)`` of a tool command line (module docstring);
    ``version`` is the tool's release where it names options differently (AIPerf's).

    Raises:
        _BenchUsageError: the tool or one of its options is not simulated."""
    tool, variant, options = tool_of(_split(command))
    if tool in ("aiperf", "genai_perf"):
        return parse_aiperf(options, tool, version)
    if tool == "inference_perf":
        from . import bench_inference_perf as ip
        try:
            return ip.parse_config(ip.read_command(options))
        except ip.CommandLineError as exc:
            raise _BenchUsageError(str(exc)) from None
    if tool == "sglang_bench_serving":
        from . import bench_sglang
        try:
            return bench_sglang.parse(options, (_options, _one))
        except bench_sglang.UsageError as exc:
            raise _BenchUsageError(str(exc)) from None
    return parse_vllm(options, variant)


# --- output ---------------------------------------------------------------------------

#: vLLM's printed result lines: (label, its --save-result key, aisimulate's summary key).
_VLLM_LINES = [
    ("Successful requests:", "completed", "completed"),
    ("Failed requests:", "failed", "rejected + failed + canceled"),
    ("Benchmark duration (s):", "duration", "duration_ms / 1000"),
    ("Total input tokens:", "total_input_tokens", "total_input_tokens"),
    ("Total generated tokens:", "total_output_tokens", "total_output_tokens"),
    ("Request throughput (req/s):", "request_throughput", "request_throughput_rps"),
    ("Output token throughput (tok/s):", "output_throughput", "output_token_throughput_tps"),
    ("Total Token throughput (tok/s):", "total_token_throughput", "(input + output) / duration"),
]
#: vLLM's metric sections in its order (benchmark() in vllm/benchmarks/serve.py):
#: (name, short, header, aisimulate's summary key or per-request value).
_VLLM_METRICS = [("ttft", "TTFT", "Time to First Token", "ttft_ms"),
                 ("tpot", "TPOT", "Time per Output Token (excl. 1st token)", "tpot_ms"),
                 ("itl", "ITL", "Inter-token Latency", "itl_ms"),
                 ("e2el", "E2EL", "End-to-end Latency", "e2e_ms"),
                 ("client_queue_time", "Client Queue Time", "Client-side Queueing", "(send − first send)")]
#: vLLM's --percentile-metrics without the option (a generative model's).
_VLLM_DEFAULT_METRICS = ("ttft", "tpot", "itl")
#: the percentiles every summary holds.
_SUMMARY_PERCENTILES = (50.0, 90.0, 95.0, 99.0)


def vllm_result(report: Any, percentiles: Sequence[float], metrics: Sequence[str],
                max_concurrency: int | None) -> dict[str, Any]:
    """The keys ``vllm bench serve --save-result`` writes (vllm_bench_json) for the
    selected ``--percentile-metrics``, at any ``--metric-percentiles``: the summary's
    (the replay was asked for them: :func:`replay_percentiles`; numpy's linear rule, as
    vLLM's np.percentile; the inter-token latency's over the pooled gaps);
    ``client_queue_time`` (with ``--max-concurrency`` only, as vLLM reports it) is each
    request's send less the benchmark's start, the first measured send (every task is
    created at once at rate inf and waits on the semaphore). Keys of metrics not
    selected are left out, as vLLM leaves them out."""
    import numpy as np

    from ..io.exports import vllm_bench_json

    out = vllm_bench_json(report, list(percentiles))
    for name in {n for n, *_ in _VLLM_METRICS} - set(metrics):
        for k in [k for k in out if k.endswith(f"_{name}_ms")]:
            del out[k]
    if max_concurrency and "client_queue_time" in metrics:
        start = min((r["send_ms"] for r in report.requests), default=0.0)
        queue = [r["send_ms"] - start for r in report.requests if r["status"] == "completed"]
        q = np.asarray(queue or [0.0])
        out.update(mean_client_queue_time_ms=float(q.mean()), median_client_queue_time_ms=float(np.median(q)),
                   std_client_queue_time_ms=float(q.std()))
        for p in percentiles:
            out[f"p{_word(p)}_client_queue_time_ms"] = float(np.percentile(q, p))
    return out


def replay_percentiles(percentiles: Sequence[float]) -> list[float] | None:
    """The percentiles to ask the replay for so that its summary holds every one of
    ``--metric-percentiles`` (0 is the summary's minimum), or None when the fixed
    p50/p90/p95/p99 hold them all."""
    more = sorted({p for p in percentiles if p > 0 and p not in _SUMMARY_PERCENTILES})
    return more or None


def vllm_text(result: dict[str, Any], percentiles: Sequence[float],
              metrics: Sequence[str] = _VLLM_DEFAULT_METRICS) -> str:
    """vLLM's "Serving Benchmark Result" block, each line with its ``--save-result`` key
    and aisimulate's name beside it: the sections of the selected ``metrics`` that the
    result holds, in vLLM's order."""
    from ..io.names import percentile_key

    def fmt(v: Any) -> str:
        return "" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))

    lines = ["{s:{c}^{n}}".format(s=" Serving Benchmark Result (aisimulate) ", n=78, c="="),
             f"{'':41s}{'value':>10s}  {'vllm key':24s} aisimulate"]
    for label, key, ours in _VLLM_LINES:
        lines.append(f"{label:41s}{fmt(result.get(key)):>10s}  {key:24s} {ours}")
    if result.get("request_goodput") is not None:
        lines.append(f"{'Request goodput (req/s):':41s}{fmt(result['request_goodput']):>10s}  "
                     f"{'request_goodput':24s} goodput.goodput_rps")
    for name, short, header, ours in _VLLM_METRICS:
        if name not in metrics or f"mean_{name}_ms" not in result:
            continue
        lines.append("{s:{c}^{n}}".format(s=header, n=78, c="-"))
        rows = [("Mean", "mean", "mean"), ("Median", "median", "p50")]
        rows += [(f"P{_word(p)}", f"p{_word(p)}", "min" if p == 0 else percentile_key(p)) for p in percentiles]
        for word, kp, stat in rows:
            key = f"{kp}_{name}_ms"
            lines.append(f"{f'{word} {short} (ms):':41s}{fmt(result.get(key)):>10s}  {key:24s} {ours}.{stat}")
    lines.append("=" * 78)
    return "\n".join(lines)




def aiperf_text(doc: dict[str, Any]) -> str:
    """AIPerf's metric table (its headers, avg / min / max / p99 / p90 / p50 / std),
    each metric with its tag and aisimulate's name beside it; "Error Request Count" only
    when a request did not complete, as AIPerf's console shows its error-only metric
    (aiperf/metrics/types/error_request_count.py)."""
    from ..io.exports import AIPERF_HEADERS

    ours = {"time_to_first_token": "ttft_ms", "time_to_second_token": "ttst_ms", "request_latency": "e2e_ms",
            "inter_token_latency": "tpot_ms", "output_token_throughput_per_user": "1000 / tpot_ms",
            "output_sequence_length": "output_tokens", "input_sequence_length": "input_tokens",
            "request_throughput": "request_throughput_rps", "output_token_throughput": "output_token_throughput_tps",
            "benchmark_duration": "duration_ms / 1000", "request_count": "completed",
            "error_request_count": "rejected + failed + canceled",
            "good_request_count": "goodput.good_requests", "goodput": "goodput.goodput_rps"}
    stats = ("avg", "min", "max", "p99", "p90", "p50", "std")
    width = 52

    def num(v: Any) -> str:
        return "" if v is None else f"{float(v):.2f}"

    rows = []
    for tag, b in doc.items():
        if not isinstance(b, dict) or "avg" not in b or tag not in ours:
            continue
        if tag == "error_request_count" and not b["avg"]:
            continue  # AIPerf's is an error-only metric (MetricFlags.ERROR_ONLY): no row without errors
        unit = b.get("unit") or ""
        head = AIPERF_HEADERS.get(tag, tag) + (f" ({unit})" if unit and unit not in ("requests", "count") else "")
        rows.append((head, [num(b.get(s)) if s in b else "" for s in stats], ours[tag]))
    # each column 10 wide, or one more than its widest cell (a latency of hours, 1e7 ms and
    # more, would run into its neighbour)
    widths = [max([10] + [len(cells[i]) + 1 for _, cells, _ in rows]) for i in range(len(stats))]
    lines = [f"{'Metric':{width}s}" + "".join(f"{s:>{w}s}" for s, w in zip(stats, widths)) + "  aisimulate"]
    for head, cells, name in rows:
        lines.append(f"{head:{width}s}" + "".join(f"{c:>{w}s}" for c, w in zip(cells, widths)) + f"  {name}")
    return "\n".join(lines)


# --- the command ------------------------------------------------------------------------

def add_bench(sub: argparse._SubParsersAction) -> None:
    """Register ``aisimulate bench``."""
    from .common import add_config_arguments, add_progress_argument
    p = sub.add_parser(
        "bench", help="simulate a benchmark command (vllm bench serve …, aiperf profile …) against a deployment",
        description="Simulate a load generator's command line as written against the deployment of "
                    "ENGINE_CONFIG (its engine and execution blocks) and print the tool's own result "
                    "names beside aisimulate's. The command follows `--`.",
        epilog="examples:\n"
               "  aisimulate bench engine.yaml -- vllm bench serve --model Qwen/Qwen3-8B --dataset-name random \\\n"
               "      --random-input-len 1024 --random-output-len 256 --num-prompts 200 --max-concurrency 16 --ignore-eos\n"
               "  aisimulate bench engine.yaml -- python3 -m sglang.bench_serving --backend sglang --dataset-name random \\\n"
               "      --random-input-len 1024 --random-output-len 256 --random-range-ratio 1 --num-prompts 200 --max-concurrency 16\n"
               "  aisimulate bench engine.yaml -- aiperf profile -m Qwen/Qwen3-8B --streaming --concurrency 8 \\\n"
               "      --request-count 100 --isl 1000 --osl 200 --extra-inputs ignore_eos:true\n"
               "  aisimulate bench engine.yaml -- aiperf profile -m Qwen/Qwen3-8B --streaming \\\n"
               "      --input-file trace.jsonl --custom-dataset-type mooncake_trace --fixed-schedule\n"
               "  aisimulate bench engine.yaml -- genai-perf profile -m Qwen/Qwen3-8B --streaming \\\n"
               "      --input-file payload:trace.jsonl --fixed-schedule\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(p)
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="stdout: the tool's result table beside aisimulate's names (default), or JSON "
                        "{tool, benchmark, result, summary} (and traffic for a trace file)")
    p.add_argument("--tool-version", metavar="VERSION",
                   help="the benchmark tool's release where its semantics changed (inference-perf's, e.g. 0.4.0; "
                        "vLLM's for vllm bench serve; AIPerf's); default: the engine's release for vLLM's, the newest "
                        "known for inference-perf, AIPerf's rules before 0.3.0 for AIPerf")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                   help="the benchmark's command line, after --")
    add_progress_argument(p)
    p.set_defaults(run=run_bench)


def _own_options(args: argparse.Namespace, words: Sequence[str]) -> None:
    """Set on ``args`` this command's own options that came after ENGINE_CONFIG (argparse
    leaves everything after the first positional to the command line)."""
    from .common import UsageError

    p = argparse.ArgumentParser(prog="aisimulate bench", add_help=False)
    p.add_argument("--set", dest="sets", action="append", default=[])
    p.add_argument("--format", choices=("table", "json"))
    p.add_argument("--tool-version")
    p.add_argument("--quiet", "-q", action="store_true")
    try:
        own, rest = p.parse_known_args(list(words))
    except SystemExit:
        raise UsageError(f"bench: bad options before --: {' '.join(words)}") from None
    if rest:
        raise UsageError(f"bench: {rest[0]}: not an option of aisimulate bench (the benchmark's own options "
                          "go after --)")
    args.sets = list(args.sets) + own.sets
    args.format = own.format or args.format
    args.tool_version = own.tool_version or getattr(args, "tool_version", None)
    args.quiet = args.quiet or own.quiet


#: aisimulate bench's own options (_own_options), which go before -- ; none is an option
#: of a simulated tool, so after -- each is refused by the tool's parser.
_OWN_OPTIONS = ("--set", "--format", "--tool-version", "--quiet", "-q")


def _misplaced_own_option(message: str, command: Sequence[str]) -> str | None:
    """For the refusal ``message`` of an option after --, where the benchmark's command
    line is, that is one of aisimulate bench's own (``--tool-version 0.5.0`` appended to
    an ``aiperf profile`` command): the message that says so and where it goes; else
    None."""
    name = message.split(":", 1)[0]
    if name not in _OWN_OPTIONS or ": not simulated" not in message:
        return None
    words = _split(command)
    tool = " ".join(words[:len(words) - len(tool_of(words)[2])])  # vllm bench serve, python3 -m sglang.bench_serving
    value = "" if name in ("--quiet", "-q") else " …"
    return (f"{name}: aisimulate bench's own option, written after -- among the benchmark's options: give it "
            f"before -- (aisimulate bench ENGINE_CONFIG {name}{value} -- {tool} …)")


def _config_is_command_word(config: str | None, command: Sequence[str]) -> bool:
    """Whether CONFIG is no file but the first word of a benchmark command whose rest is
    ``command`` (``vllm`` of ``vllm bench serve …``)."""
    if not config or config == "-" or os.path.exists(config):
        return False
    try:
        tool_of([config, *command])
    except _BenchUsageError:
        return False
    return True


def run_bench(args: argparse.Namespace) -> int:
    from .. import replay
    from .common import UsageError, config_source_from_args, progress_of, write
    from ..config import load_config, read_config
    from ..io.exports import aiperf_summary
    from ..report_text import none_completed, some_not_completed

    command = list(args.command)
    if _config_is_command_word(args.config, command):
        # argparse gave the command's first word to CONFIG: ENGINE_CONFIG was left out or
        # given as --config (`aisimulate bench --config e.yaml -- vllm bench serve …`)
        command, args.config = [args.config, *command], None
        if not args.config_opt:
            words = command[:len(command) - len(tool_of(command)[2])]  # the tool's own words
            raise UsageError(f"bench: ENGINE_CONFIG is missing: aisimulate bench ENGINE_CONFIG -- {' '.join(words)} …")
    if "--" in command:  # this command's options written between ENGINE_CONFIG and --
        cut = command.index("--")
        _own_options(args, command[:cut])
        command = command[cut + 1:]
    # (argparse drops a -- that follows ENGINE_CONFIG directly)
    if not command:
        raise UsageError("bench: the benchmark's command line is missing (give it after --)")
    try:
        bench, run = parse_command(command, getattr(args, "tool_version", None))
    except _BenchUsageError as exc:
        raise UsageError(f"bench: {_misplaced_own_option(str(exc), command) or exc}") from None
    src, overrides = config_source_from_args(args)
    given = src if isinstance(src, dict) else read_config(src).data
    if isinstance(given, dict) and given.get("traffic") is not None:
        raise ConfigError("traffic", "the config of aisimulate bench holds the deployment only: the command "
                          "line is the traffic (remove traffic from the config)")
    if getattr(args, "tool_version", None):
        if bench["tool"] not in ("inference_perf", "vllm_bench_serve", "aiperf") or bench.get("variant", "vllm") != "vllm":
            raise UsageError(f"bench: --tool-version: {bench['tool']} {bench.get('variant', '')} has no version "
                              "that changes what it measures".replace("  ", " "))
        bench["version"] = args.tool_version
    overrides["traffic"] = run.get("traffic") or {"benchmark": bench}
    if "seed" in run:
        overrides["execution.seed"] = run["seed"]
    try:
        spec = load_config(src, overrides=overrides)
        if tool_of(_split(command))[:2] == ("vllm_bench_serve", "vllm"):
            version = ((spec.data.get("traffic") or {}).get("benchmark") or {}).get("version")
            try:
                _check_vllm_release(version, bench, run)
            except _BenchUsageError as exc:
                raise UsageError(f"bench: {exc}") from None
        model = (spec.data.get("engine") or {}).get("model")
        if isinstance(model, str) and (why := model_mismatch(command, model)):
            print(f"aisimulate: warning: {why}", file=sys.stderr)
        report = replay(spec, progress=progress_of(args), slo=run.get("slo"),
                        percentiles=replay_percentiles(run.get("percentiles") or ()))
    except ConfigError as exc:  # a benchmark field the command set: name the option as written
        prefix = "traffic.benchmark."
        option = (benchmark_option(command, exc.field[len(prefix):], getattr(args, "tool_version", None))
                  if exc.field.startswith(prefix) else None)
        if option is None:
            raise
        raise UsageError(f"bench: {option}: {exc.reason} ({exc.field})") from None
    why = none_completed(report)
    if why:  # a result of zeros: say why, as `aisimulate replay` does (vLLM too warns "All requests failed")
        print(f"aisimulate: warning: {why}", file=sys.stderr)
    elif not args.quiet and (why := some_not_completed(report)):  # the result counts them only
        print(f"aisimulate: note: {why}", file=sys.stderr)
    if not args.quiet:  # the engine release's stand-ins, as `aisimulate replay` says them
        from .notes import stand_in_notes

        for note in stand_in_notes(report.metadata, spec):
            print(f"aisimulate: note: {note}", file=sys.stderr)
    tool = bench["tool"]
    if tool in ("aiperf", "genai_perf"):  # genai-perf prints AIPerf's table (AIPerf is its successor)
        result = aiperf_summary(report)
        result.pop("aisimulate_spec", None)
        if run.get("streaming") is False:
            for tag in _STREAMING_ONLY:
                result.pop(tag, None)
        text = aiperf_text(result)
    elif tool == "sglang_bench_serving":
        from . import bench_sglang
        result = bench_sglang.result(report)
        text = bench_sglang.text(result)
    elif tool == "inference_perf":
        from . import bench_inference_perf as ip
        version = report.metadata.get("spec", {}).get("traffic", {}).get("benchmark", {}).get("version") \
            or bench.get("version") or ""
        result = ip.stage_reports(report.requests, bench, token_times=not version or ip.token_times(version))
        text = ip.text(result)
    else:
        pcts = run.get("percentiles") or [99.0]
        metrics = run.get("percentile_metrics") or list(_VLLM_DEFAULT_METRICS)
        metrics = [m for m in metrics if m not in run.get("metrics_of_later_releases", ())]
        result = vllm_result(report, pcts, metrics, bench.get("max_concurrency"))
        text = vllm_text(result, pcts, metrics)
        unknown = [m for m in metrics if m not in {n for n, *_ in _VLLM_METRICS} | {"e2el_including_client_queue"}]
        if unknown:  # vLLM prints no section for a name it does not know
            text = f"  --percentile-metrics {','.join(unknown)}: no metric of vllm bench serve (none printed)\n" + text
        if later := run.get("metrics_of_later_releases"):
            text = (f"  --percentile-metrics {','.join(later)}: a metric of vllm bench serve 0.30.0 and later, not "
                    f"of {run['client_version']} (none printed)\n") + text
    if args.format == "json":
        traffic = report.metadata.get("spec", {}).get("traffic", {})
        write(json.dumps({"tool": tool, "benchmark": traffic.get("benchmark"),
                          **({"traffic": traffic} if "traffic" in run else {}),
                          **({"notes": run["notes"]} if run.get("notes") else {}),
                          "result": result, "summary": report.summary}, indent=2, sort_keys=True) + "\n")
    else:
        head = (f"{tool} ({bench.get('variant', '')}) against {report.metadata.get('model')} on "
                f"{report.metadata.get('system')}; {report.metadata.get('perf_model')}").replace(" ()", "")
        notes = list((report.metadata.get("benchmark") or {}).get("notes") or [])
        notes += run.get("notes") or []
        if run.get("streaming") is False:
            notes.append("without --streaming each response arrives whole: the tool measures no time to first or "
                         "second token, inter-token latency or per-user throughput (add --streaming for them)")
        write("\n".join([head, *(f"  {n}" for n in notes), text]) + "\n")
    return 0
