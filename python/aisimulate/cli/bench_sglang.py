"""SGLang's load generator, ``python -m sglang.bench_serving``, for ``aisimulate bench``.

Its options (sgl-project/sglang, python/sglang/bench_serving.py, read at the 0.5.6.post2
and 0.5.9 releases: the rules below are the same in both) become ``traffic.benchmark``
tool ``sglang_bench_serving`` (core/config/benchmark_sglang.go for how the replay sends
it), and its result is printed under its own names (``mean_ttft_ms``,
``median_e2e_latency_ms``, ``output_throughput`` …: the ``result`` dict its benchmark()
writes to ``--output-file``).

Its rules, from the source:

- ``--dataset-name`` defaults to ``sharegpt``, whose prompts and lengths are a file's
  conversations: refused, as are its other datasets; ``random`` and ``random-ids`` are
  simulated. Both draw each input and output length with compute_random_lens,
  ``np.random.randint(max(int(L * r), 1), L + 1)``: uniform in [max(⌊L·r⌋, 1), L]
  (``--random-range-ratio`` r defaults to 0.0, so [1, L]). ``random`` cuts the prompt
  text out of ShareGPT conversations (``--dataset-path`` or the downloaded file: only
  the text's words, so the option changes nothing here), ``random-ids`` is consecutive
  token ids.
- ``--warmup-requests`` (default 1) copies of the first prompt, each asking
  min(its output length, 32) tokens, all sent at once and waited for; then 1 s of
  sleep and the measured phase. No metric counts a warm-up.
- ``--request-rate`` (default inf: every request at once) draws exponential gaps
  (Poisson; it has no burstiness option); ``--max-concurrency`` is a semaphore the
  measured requests wait on.
- ignore_eos is sent true unless ``--disable-ignore-eos``.
- calculate_metrics: over the successful requests; TPOT per request
  (latency − ttft) / (output_len − 1) for output_len > 1 only; ITL pools per-request
  gaps; the duration runs from the benchmark's start to its last request's end.

Its ITL is printed from aisimulate's ``itl_ms`` (a gap per token, 0 between the tokens of
one streamed chunk). The tool's is the same while every chunk after the first holds one
token; with several (``stream_interval`` > 1, or an EAGLE/NEXTN verify pass's accepted
tokens) its default ``--backend sglang`` (async_request_sglang_generate) counts a chunk of
k new tokens as k gaps of chunk_gap / k, and the OpenAI backends (async_request_openai_*)
one gap per chunk: same mean as here for the first, not the percentiles; not modelled.
"""

from __future__ import annotations

import math

from .common import CommandError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (as bench.py: typing costs CPU at import)
    from typing import Any, Sequence

#: Options that say where the server is, which model and tokenizer, where the result
#: goes or how the client prints: a value each (-1: any number), or none (0).
INERT = {"--base-url": 1, "--host": 1, "--port": 1, "--model": 1, "--served-model-name": 1, "--tokenizer": 1,
         "--output-file": 1, "--output-details": 0, "--disable-tqdm": 0, "--tag": 1, "--header": -1,
         "--print-requests": 0, "--plot-throughput": 0, "--tokenize-prompt": 0, "--dataset-path": 1}

#: --backend values (ASYNC_REQUEST_FUNCS) whose requests stream tokens with ignore_eos
#: (trt's min_length and end_id do the same: async_request_trt_llm).
BACKENDS = ("sglang", "sglang-native", "sglang-oai", "sglang-oai-chat", "vllm", "vllm-chat", "lmdeploy",
            "lmdeploy-chat", "trt", "truss")

#: Options taken as traffic.benchmark fields: (option, field, type).
OPTIONS = (("--dataset-name", "dataset_name", str), ("--random-input-len", "random_input_len", int),
           ("--random-output-len", "random_output_len", int), ("--random-range-ratio", "random_range_ratio", float),
           ("--num-prompts", "num_prompts", int), ("--max-concurrency", "max_concurrency", int),
           ("--warmup-requests", "warmup_requests", int), ("--request-rate", "request_rate", float))

#: Options of the tool that change what it sends or measures and that the simulation
#: cannot honour: option → why.
REFUSED = {
    "--disable-ignore-eos": "a response may then end at the model's end-of-sequence token, a length the "
                            "simulation cannot know",
    "--disable-stream": "without streaming the client sees each response whole (its TTFT is the whole latency)",
    "--extra-request-body": "extra sampling parameters change what the server generates",
    "--return-logprob": "log-probabilities add work to every response",
    "--return-routed-experts": "returning the routed experts adds work to every response",
    "--apply-chat-template": "a chat template adds tokens to each prompt",
    "--profile": "the torch profiler slows the server it profiles",
    "--profile-activities": "the torch profiler slows the server it profiles",
    "--profile-num-steps": "the torch profiler slows the server it profiles",
    "--profile-by-stage": "the torch profiler slows the server it profiles",
    "--profile-stages": "the torch profiler slows the server it profiles",
    "--profile-output-dir": "the torch profiler slows the server it profiles",
    "--profile-prefix": "the torch profiler slows the server it profiles",
    "--profile-prefill-url": "the torch profiler slows the server it profiles",
    "--profile-decode-url": "the torch profiler slows the server it profiles",
    "--pd-separated": "it profiles prefill and decode workers",
    "--lora-name": "LoRA adapters are not simulated",
    "--lora-request-distribution": "LoRA adapters are not simulated",
    "--lora-zipf-alpha": "LoRA adapters are not simulated",
    "--flush-cache": "flushing the server's prefix cache after the warm-up is not simulated (the warm-up's "
                     "copy of the first prompt stays cached)",
    "--use-trace-timestamps": "a trace's timestamps belong to the mooncake dataset (replay a trace with "
                              "traffic.source type mooncake)",
    "--prompt-suffix": "it belongs to the sharegpt and custom datasets",
    "--sharegpt-output-len": "it belongs to the sharegpt dataset",
    "--sharegpt-context-len": "it belongs to the sharegpt dataset",
}
for _name in ("--image-count", "--image-resolution", "--random-image-count", "--image-format", "--image-content"):
    REFUSED[_name] = "it belongs to the image dataset"
for _name in ("--gsp-num-groups", "--gsp-prompts-per-group", "--gsp-system-prompt-len", "--gsp-question-len",
              "--gsp-output-len", "--gsp-range-ratio", "--gsp-fast-prepare", "--gsp-send-routing-key",
              "--gsp-num-turns", "--gsp-ordered"):
    REFUSED[_name] = "it belongs to the generated-shared-prefix dataset"
for _name in ("--mooncake-slowdown-factor", "--mooncake-num-rounds", "--mooncake-workload"):
    REFUSED[_name] = "it belongs to the mooncake dataset (replay a trace with traffic.source type mooncake)"

#: Another tool's option written for this one: option → this tool's own spelling.
OTHER_TOOLS = {"--num-warmups": "--warmup-requests", "--ignore-eos": "(nothing: it sends ignore_eos unless "
               "--disable-ignore-eos)", "--concurrency": "--max-concurrency", "--request-count": "--num-prompts",
               "--burstiness": "(none: its arrivals are Poisson)", "--input-len": "--random-input-len",
               "--output-len": "--random-output-len", "--isl": "--random-input-len", "--osl": "--random-output-len",
               "--random-prefix-len": "(none)", "--metric-percentiles": "(none: it reports p99, p90 E2E, p95 ITL)",
               "--percentile-metrics": "(none)", "--goodput": "(none)", "--save-result": "--output-file"}

#: Datasets the tool has that the simulation does not: name → why.
DATASETS = {"sharegpt": "the default dataset: its prompts and output lengths are a ShareGPT file's conversations "
                        "(give --dataset-name random)",
            "custom": "its prompts are a file's", "openai": "its prompts are a file's",
            "image": "images are not simulated", "mmmu": "images are not simulated",
            "generated-shared-prefix": "its shared system prompts are not simulated by this tool's model "
                                       "(inference-perf's shared_prefix data is)",
            "mooncake": "replay a mooncake trace with traffic.source type mooncake"}


class UsageError(CommandError, ValueError):
    """A command line the simulation cannot run (the message names the option):
    ``aisimulate bench`` reports it (as its own usage error), nothing raises it out of the
    package."""


def parse(options: Sequence[str], split) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(traffic.benchmark, run settings)`` from ``python -m sglang.bench_serving``'s
    options; ``split`` is bench's option splitter (``_options``) and ``one`` reader."""
    opts_of, one = split
    opts, _ = opts_of(options, INERT)
    b: dict[str, Any] = {"tool": "sglang_bench_serving"}
    backend = one(opts, "--backend", str)
    if backend is not None and backend not in BACKENDS:
        raise UsageError(f"--backend {backend}: not simulated ({', '.join(BACKENDS)} are)")
    dataset = one(opts, "--dataset-name", str, "sharegpt")
    if dataset not in ("random", "random-ids"):
        why = DATASETS.get(dataset, "not a dataset of sglang.bench_serving")
        raise UsageError(f"--dataset-name {dataset}: not simulated ({why}; random and random-ids are)")
    b["dataset_name"] = dataset
    for name, key, kind in OPTIONS[1:]:
        v = one(opts, name, kind)
        if v is None or (key == "request_rate" and math.isinf(v)):
            continue
        b[key] = v
    run: dict[str, Any] = {}
    seed = one(opts, "--seed", int)
    if seed is not None:
        run["seed"] = seed
    if opts:
        name = sorted(opts)[0]
        if name in REFUSED:
            raise UsageError(f"{name}: not simulated ({REFUSED[name]})")
        if name in OTHER_TOOLS:
            raise UsageError(f"{name}: not an option of sglang.bench_serving (its name there is "
                             f"{OTHER_TOOLS[name]})")
        from .bench_unknown import unknown_option

        raise UsageError(unknown_option(name, "sglang.bench_serving", [*(n for n, *_ in OPTIONS), *INERT, *REFUSED],
                                        ", ".join(n for n, *_ in OPTIONS) + ", --backend, --seed"))
    return b, run


def option_of(field: str) -> list[str]:
    """The options that set ``traffic.benchmark.<field>``."""
    return [n for n, k, _ in OPTIONS if k == field]


#: The result's keys beside aisimulate's (the key of benchmark()'s ``result`` dict, the
#: printed label, aisimulate's summary key): the lines it prints, in its order.
LINES = [("completed", "Successful requests:", "completed"),
         ("duration", "Benchmark duration (s):", "duration_ms / 1000"),
         ("total_input_tokens", "Total input tokens:", "total_input_tokens"),
         ("total_output_tokens", "Total generated tokens:", "total_output_tokens"),
         ("request_throughput", "Request throughput (req/s):", "request_throughput_rps"),
         ("input_throughput", "Input token throughput (tok/s):", "total_input_tokens / duration"),
         ("output_throughput", "Output token throughput (tok/s):", "output_token_throughput_tps"),
         ("max_concurrent_requests", "Peak concurrent requests:", "(per 1 s bucket, from the requests)"),
         ("total_throughput", "Total token throughput (tok/s):", "(input + output) / duration"),
         ("concurrency", "Concurrency:", "Σ e2e_ms / duration")]
#: Its latency sections: (header, short label, result name, aisimulate's summary key,
#: the statistics it prints as (label, result key prefix, summary stat)).
SECTIONS = [("End-to-End Latency", "E2E Latency", "e2e_latency", "e2e_ms",
             [("Mean", "mean", "mean"), ("Median", "median", "p50"), ("P90", "p90", "p90"), ("P99", "p99", "p99")]),
            ("Time to First Token", "TTFT", "ttft", "ttft_ms",
             [("Mean", "mean", "mean"), ("Median", "median", "p50"), ("P99", "p99", "p99")]),
            ("Time per Output Token (excl. 1st token)", "TPOT", "tpot", "tpot_ms",
             [("Mean", "mean", "mean"), ("Median", "median", "p50"), ("P99", "p99", "p99")]),
            ("Inter-Token Latency", "ITL", "itl", "itl_ms",
             [("Mean", "mean", "mean"), ("Median", "median", "p50"), ("P95", "p95", "p95"), ("P99", "p99", "p99"),
              ("Max", "max", "max")])]


def peak_concurrency(requests: Sequence[dict[str, Any]]) -> int:
    """calculate_metrics' max_concurrent_requests: over the successful requests, each
    counted in every whole second from int(start − first start) to
    int(end − first start) (``request_start_second``, ``request_end_second``), the
    largest count of a second (0 without one). ``requests`` are rows with ``status``,
    ``send_ms`` and ``e2e_ms``."""
    ok = [(r["send_ms"] / 1000.0, (r["send_ms"] + r["e2e_ms"]) / 1000.0) for r in requests
          if r.get("status") == "completed" and r.get("e2e_ms") is not None]
    if not ok:
        return 0
    t0 = min(s for s, _ in ok)
    buckets = int(math.ceil(max(e for _, e in ok) - t0)) + 1
    counts = [0] * buckets
    for s, e in ok:
        for sec in range(int(s - t0), min(int(e - t0) + 1, buckets)):
            counts[sec] += 1
    return max(counts)


def result(report: Any) -> dict[str, Any]:
    """The keys of sglang.bench_serving's result (benchmark(), ``--output-file``) from
    the replay: the summary's statistics (np.mean, np.median, population np.std and
    np.percentile's linear rule, as the summary computes them; 0.0 without a sample, as
    its ``np.mean(x or 0)``), ``concurrency`` = Σ e2e / duration and
    ``max_concurrent_requests`` (:func:`peak_concurrency`); ``max_itl_ms`` is printed,
    not saved, and kept here. Its ``total_input_tokens`` is the prompts' drawn lengths
    (0.5.9 takes the tokenizer's special tokens off each, which the server adds back):
    here the server's."""
    s = report.summary
    dur = s["duration_ms"] / 1000.0 if s.get("duration_ms") else 0.0
    tin, tout = int(s.get("total_input_tokens") or 0), int(s.get("total_output_tokens") or 0)
    ok = [r for r in report.requests if r.get("status") == "completed"]

    def per_s(x: float) -> float:
        return x / dur if dur else 0.0

    out: dict[str, Any] = {
        "duration": dur, "completed": int(s.get("completed") or 0), "total_input_tokens": tin,
        "total_output_tokens": tout, "request_throughput": per_s(int(s.get("completed") or 0)),
        "input_throughput": per_s(tin), "output_throughput": per_s(tout), "total_throughput": per_s(tin + tout),
    }
    for _, _, name, key, stats in SECTIONS:
        st = s.get(key) if isinstance(s.get(key), dict) else {}
        for _, prefix, stat in stats:
            out[f"{prefix}_{name}_ms"] = 0.0 if st.get(stat) is None else float(st[stat])
        out[f"std_{name}_ms"] = 0.0 if st.get("std") is None else float(st["std"])
    out["concurrency"] = per_s(sum(float(r["e2e_ms"]) for r in ok) / 1000.0)
    out["max_concurrent_requests"] = peak_concurrency(report.requests)
    return out


def text(res: dict[str, Any]) -> str:
    """sglang.bench_serving's "Serving Benchmark Result" block, each line with its
    result key and aisimulate's name beside it."""
    def fmt(v: Any) -> str:
        return "" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))

    lines = ["{s:{c}^{n}}".format(s=" Serving Benchmark Result (aisimulate) ", n=78, c="="),
             f"{'':40s}{'value':>10s}  {'sglang key':26s} aisimulate"]
    for key, label, ours in LINES:
        lines.append(f"{label:40s}{fmt(res.get(key)):>10s}  {key:26s} {ours}")
    for header, short, name, ours, stats in SECTIONS:
        lines.append("{s:{c}^{n}}".format(s=header, n=78, c="-"))
        for word, prefix, stat in stats:
            key = f"{prefix}_{name}_ms"
            lines.append(f"{f'{word} {short} (ms):':40s}{fmt(res.get(key)):>10s}  {key:26s} {ours}.{stat}")
    lines.append("=" * 78)
    return "\n".join(lines)

