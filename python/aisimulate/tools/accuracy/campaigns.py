"""Which campaign measured a silicon row, and how that campaign ran its benchmark.

A measured TTFT or TPOT is the product of the engine, its launch flags and the load
generator. The harness simulates each row with the procedure of the campaign that
measured it, chosen from the row's ``silicon_data_source`` by one rule
(:func:`campaign_of`; docs/accuracy.md, "Which procedure a row gets"):

- ``source_file=…aic-auto-gap-analysis/…``: AIConfigurator's own benchmark generator,
  AIPerf (:data:`AICONFIGURATOR`; the procedure of ``spec.LOAD_GENERATORS["aiperf"]``).
- ``source_file=YYYY-MM-DD.csv; …; measured=<time>`` and ``db-dump/YYYY-MM-DD; …;
  measured=<time>``: SemiAnalysisAI/InferenceX (:data:`INFERENCEX`): its fork of vLLM's
  ``benchmark_serving.py`` as ``benchmarks/benchmark_lib.sh`` runs it at the row's
  time, against the server its recipe launched then (:func:`recipe_at`).
- anything else (``kimi-k2.5-gap-analysis.csv``, an empty ``source_file=``): not
  recorded (:data:`UNKNOWN`): the default procedure (AIPerf as AIConfigurator runs it),
  reported as its own group so that its error does not hide. Unless the row repeats a
  recorded row's measurement (:func:`annotate_repeats`): then it is that run, and takes
  that row's campaign.

The InferenceX client (``utils/bench_serving/benchmark_serving.py``, run by
``run_benchmark_serving``): ``--dataset-name random --random-input-len ISL
--random-output-len OSL --random-range-ratio 0.8`` (the workflow templates'
``RANDOM_RANGE_RATIO``), ``--num-prompts 10·c --max-concurrency c --request-rate inf
--ignore-eos``, and since 2026-01-21 (commit d053ae24e) ``--num-warmups 2·c``: every
length uniform in [⌊0.8·L⌋, L], 2·c copies of the first prompt waited for, then 10·c
measured requests. Before that date the fork was cloned from kimbochen/bench_serving at
run time, which sent one test request of the first prompt and no warm-ups.

The recipes (:data:`RECIPES`) are the ``vllm serve`` flags of each model × GPU script
as its git history has them, each change with the commit that made it; a row takes the
flags in force at its ``measured`` time (a time of 00:00:00 is a date: the end of that
day, UTC). A row whose recipe is not tabulated runs the client against the engine
version's defaults, and ``rows.csv`` says so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

#: The campaigns (``rows.csv``'s ``campaign`` column).
AICONFIGURATOR = "aiconfigurator"
INFERENCEX = "inferencex"
UNKNOWN = "unknown"
CAMPAIGNS = (AICONFIGURATOR, INFERENCEX, UNKNOWN)

#: InferenceX's client: the range ratio of its workflow templates, the requests and
#: warm-ups per unit of concurrency (benchmarks/benchmark_lib.sh).
INFERENCEX_RANGE_RATIO = 0.8
INFERENCEX_PROMPTS_PER_CLIENT = 10
INFERENCEX_WARMUPS_PER_CLIENT = 2
#: The sweep generator's max_model_len above ISL + OSL (generate_sweep_configs.py).
INFERENCEX_MAX_MODEL_LEN_SLACK = 200
#: When ``--num-warmups 2·c`` joined the command (commit d053ae24e, 2026-01-21).
INFERENCEX_WARMUPS_SINCE = datetime(2026, 1, 21, 17, 53, 38, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Campaign:
    """The campaign of a row: its name, when it was measured (InferenceX: UTC, ``None``
    otherwise) and the ``silicon_data_source`` field that decided it."""
    name: str
    measured: datetime | None = None
    evidence: str = ""


_EXPORT = re.compile(r"source_file=\d{4}-\d{2}-\d{2}\.csv$")


#: Key under which :func:`annotate_repeats` stores, for a row of no recorded campaign,
#: the id and ``silicon_data_source`` of the recorded row whose measurement it repeats.
REPEAT_KEY = "_repeats"

#: The columns that say what was run: a repeat must agree on every one of them.
_RUN_COLUMNS = ("backend", "backend_version", "model_path", "system", "precision", "mode", "isl", "osl",
                "batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size",
                "prefill_num_workers", "prefill_tp_size", "decode_num_workers", "decode_tp_size")
#: The measured means: a repeat reports the same values (at its own precision).
_MEASURED_COLUMNS = ("silicon_ttft_ms", "silicon_tpot_ms")


def campaign_of(row: dict[str, str]) -> Campaign:
    """The campaign of a silicon row, by the rule of the module docstring."""
    camp = _campaign_of_source(row)
    if camp.name == UNKNOWN and row.get(REPEAT_KEY):
        rid, src = row[REPEAT_KEY].split("\t", 1)
        found = _campaign_of_source({"silicon_data_source": src})
        return Campaign(found.name, found.measured, f"{camp.evidence}, the measurement of row {rid}")
    return camp


def _rounds_to(value: str, other: str) -> bool:
    """Whether ``other`` rounds to ``value`` at the decimals ``value`` is written with."""
    value, other = value.strip(), other.strip()
    try:
        v, o = float(value), float(other)
    except ValueError:
        return False
    if "e" in value.lower() or not (math.isfinite(v) and math.isfinite(o)):
        return v == o
    decimals = len(value.split(".", 1)[1]) if "." in value else 0
    return abs(o - v) <= 0.5 * 10.0 ** -decimals * (1 + 1e-9)


def annotate_repeats(rows: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """``rows`` with each row of no recorded campaign that repeats a recorded row's
    measurement (a copy) given that row under :data:`REPEAT_KEY`.

    A repeat agrees with the recorded row on every column that says what ran
    (:data:`_RUN_COLUMNS`), and its measured TTFT and TPOT are the recorded row's rounded
    to the decimals the repeat is written with. The bundled sets' unrecorded rows are
    re-exports of this kind (``kimi-k2.5-gap-analysis.csv``: 15 of 15 Kimi-K2.5 rows repeat
    the 2026-04-06 InferenceX export's to two decimals; ``qwen3.5-397b-gap-analysis.csv``:
    14 of 15 Qwen3.5 rows repeat the 2026-03-25 export's). A row that repeats none, or
    repeats rows of different campaigns or times, stays unrecorded."""
    recorded: dict[tuple[str, ...], list[tuple[dict[str, str], Campaign]]] = {}
    own = [_campaign_of_source(r) for r in rows]
    for r, camp in zip(rows, own):
        if camp.name != UNKNOWN:
            recorded.setdefault(_run_key(r), []).append((r, camp))
    out = []
    for r, camp in zip(rows, own):
        if camp.name == UNKNOWN and REPEAT_KEY not in r:
            same = [(p, c) for p, c in recorded.get(_run_key(r), [])
                    if all(_rounds_to(r.get(k) or "", p.get(k) or "") for k in _MEASURED_COLUMNS)]
            if len({(c.name, c.measured) for _, c in same}) == 1:
                p = same[0][0]
                r = {**r, REPEAT_KEY: f"{(p.get('id') or '').strip()}\t{p.get('silicon_data_source') or ''}"}
        out.append(r)
    return out


def _run_key(row: dict[str, str]) -> tuple[str, ...]:
    return tuple((row.get(k) or "").strip() for k in _RUN_COLUMNS)


def _campaign_of_source(row: dict[str, str]) -> Campaign:
    """The campaign that a row's own ``silicon_data_source`` names."""
    src = (row.get("silicon_data_source") or "").strip()
    parts = [p.strip() for p in src.split(";")]
    first = parts[0] if parts else ""
    if "aic-auto-gap-analysis/" in first:
        return Campaign(AICONFIGURATOR, None, first)
    if _EXPORT.match(first) or first.startswith("db-dump/"):
        kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        measured = _parse_time(kv.get("measured", ""))
        if measured is None:  # no time: the export's date bounds it
            measured = _parse_time(re.sub(r"^(source_file=|db-dump/)", "", first).removesuffix(".csv"))
        if measured is not None:
            return Campaign(INFERENCEX, measured, first)
    return Campaign(UNKNOWN, None, first or "(empty)")


def _parse_time(text: str) -> datetime | None:
    """An ISO time (UTC); a date, or a time of exactly midnight, is the end of that day."""
    text = text.strip()
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    t = t.astimezone(timezone.utc)
    if (t.hour, t.minute, t.second, t.microsecond) == (0, 0, 0, 0):
        t += timedelta(days=1) - timedelta(microseconds=1)
    return t


@dataclass(frozen=True)
class Change:
    """One change of a recipe: the commit, when it landed (UTC) and the flags it set
    (spec terms: ``gpu_memory_utilization``, ``enable_prefix_caching``,
    ``enable_expert_parallel``, ``max_num_seqs`` (``"c"``: the row's concurrency, or a count),
    ``max_num_batched_tokens``, ``max_model_len`` (``"isl+osl+N"``), ``kv_cache``)."""
    commit: str
    since: datetime
    flags: dict[str, Any]
    what: str


@dataclass(frozen=True)
class Recipe:
    """A model × GPU × vLLM recipe of InferenceX and its history; ``precision``: the
    silicon rows' ``precision`` it serves when a GPU has one script per checkpoint
    (``minimaxm2.5_fp8_b200.sh`` and ``minimaxm2.5_fp4_b200.sh``), "" for any."""
    model: str
    system: str
    file: str
    changes: tuple[Change, ...] = field(default_factory=tuple)
    precision: str = ""


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def scenario_max_model_len(isl: int, osl: int) -> int:
    """``--max-model-len`` of InferenceX's vLLM scripts from eb282d8f6 (2025-09-27, "Adjust
    vLLM max-model-len to each scenario"): ISL + OSL + 20 at 1k/1k, ISL + OSL + 200 when
    ISL or OSL is 8192, else 10240."""
    if (isl, osl) == (1024, 1024):
        return isl + osl + 20
    if 8192 in (isl, osl):
        return isl + osl + 200
    return 10240


#: eb282d8f6, the change to each vLLM script that set --max-model-len by scenario
#: (:func:`scenario_max_model_len`): one change shared by the recipes it touched.
MML_BY_SCENARIO = Change("eb282d8f6", _t("2025-09-27T17:17:21-07:00"), {"max_model_len": scenario_max_model_len},
                         "max-model-len by scenario: ISL + OSL + 20 at 1k/1k, + 200 when ISL or OSL is 8192, "
                         "else 10240")


#: The names of Llama-3.1-70B that InferenceX's recipes serve: its FP8 checkpoint, the
#: instruct model, and ``meta-llama/Llama-3.1-70B``, what the silicon rows of those runs
#: call it (``model_path``; the precision column says how it was served).
LLAMA_70B = ("nvidia/Llama-3.1-70B-Instruct-FP8", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B")

#: The vLLM recipes of InferenceX that rows of the shared data (and the held-back sets)
#: ran, from SemiAnalysisAI/InferenceX's history. ``max_model_len`` is the sweep
#: generator's ISL + OSL + 200 (utils/matrix_logic/generate_sweep_configs.py) unless
#: the script wrote its own.
RECIPES = (
    Recipe("MiniMaxAI/MiniMax-M2.5", "h200_sxm", "benchmarks/single_node/minimaxm2.5_fp8_h200.sh", (
        Change("a36346339", _t("2026-03-01T15:34:03-05:00"),
               {"gpu_memory_utilization": 0.95, "max_model_len": "isl+osl+200"},
               "vllm serve --gpu-memory-utilization 0.95 --max-model-len $MAX_MODEL_LEN (vLLM 0.16.0)"),
        Change("5e2c705d3", _t("2026-03-13T12:12:49-07:00"), {"enable_expert_parallel": True},
               "--enable-expert-parallel when EP_SIZE ≥ 1 (every run: EP_SIZE is 1 without ep)"),
        Change("0f78cf4eb", _t("2026-03-27T19:17:39-07:00"), {"enable_prefix_caching": False},
               "--no-enable-prefix-caching"),
    )),
    Recipe("deepseek-ai/DeepSeek-V4-Pro", "h200_sxm", "benchmarks/single_node/dsv4_fp8_h200.sh", (
        Change("6f3c1c07e", _t("2026-04-24T11:10:59-04:00"),
               {"kv_cache": "fp8", "enable_prefix_caching": False, "gpu_memory_utilization": 0.95,
                "max_num_seqs": 512, "max_num_batched_tokens": 512, "max_model_len": "isl+osl+200"},
               "--kv-cache-dtype fp8 --block-size 256 --no-enable-prefix-caching --gpu-memory-utilization 0.95 "
               "--max-num-seqs 512 --max-num-batched-tokens 512 (the block size is the spec's)"),
    )),
    Recipe("deepseek-ai/DeepSeek-V4-Pro", "b200_sxm", "benchmarks/single_node/dsv4_fp4_b200_vllm.sh", (
        Change("e6554f8e0", _t("2026-04-27T13:58:39-04:00"),
               {"kv_cache": "fp8", "enable_prefix_caching": False, "max_num_batched_tokens": 2048,
                "max_model_len": "isl+osl+200"},
               "--kv-cache-dtype fp8 --block-size 256 --no-enable-prefix-caching --max-num-batched-tokens 2048 "
               "(the script's conditionals are not tabulated: ISL 8192 at ≤ 128 clients batched ISL tokens, "
               "data-parallel attention ran --gpu-memory-utilization 0.85 until 53f61f840, 1k/1k ran "
               "--max-model-len 4096)"),
    )),
    Recipe("deepseek-ai/DeepSeek-V4-Pro", "b300_sxm", "benchmarks/single_node/dsv4_fp4_b300_vllm.sh", (
        Change("9da017ef2", _t("2026-04-24T19:43:00-07:00"),
               {"kv_cache": "fp8", "enable_prefix_caching": False, "max_num_batched_tokens": 2048,
                "max_model_len": "isl+osl+200"},
               "--kv-cache-dtype fp8 --block-size 256 --no-enable-prefix-caching --max-num-batched-tokens 2048 "
               "(from 0e211bcb3 some rows batched 2·ISL tokens: not tabulated)"),
    )),
    Recipe("moonshotai/Kimi-K2.5", "h200_sxm", "benchmarks/single_node/kimik2.5_int4_h200.sh", (
        Change("749096c4c", _t("2026-03-02T18:25:01-05:00"),
               {"gpu_memory_utilization": 0.95, "max_num_seqs": "c", "max_model_len": "isl+osl+200"},
               "--gpu-memory-utilization 0.95 --max-num-seqs $CONC (vLLM 0.16.0)"),
        Change("79a42e20a", _t("2026-03-27T15:21:53-07:00"), {"enable_prefix_caching": False},
               "--no-enable-prefix-caching"),
    )),
) + tuple(
    Recipe(model, system, f"benchmarks/70b_fp8_{gpu}_slurm.sh", (
        Change(commit, _t(when),
               {"kv_cache": "fp8", "async_scheduling": True, "enable_prefix_caching": False,
                "max_num_batched_tokens": 8192, "gpu_memory_utilization": 0.9, "max_num_seqs": "c",
                "max_model_len": 10240},
               "config.yaml: kv-cache-dtype fp8, async-scheduling, no-enable-prefix-caching, "
               "max-num-batched-tokens 8192, max-model-len 10240; --gpu-memory-utilization 0.9 --max-num-seqs $CONC"),
    ) + later)
    for model in LLAMA_70B
    for system, gpu, commit, when, later in (
        ("h100_sxm", "h100", "425f74d51", "2025-09-12T21:32:37+00:00", ()),
        ("h200_sxm", "h200", "425f74d51", "2025-09-12T21:32:37+00:00", (MML_BY_SCENARIO,)))
)


def recipe_at(model: str, system: str, when: datetime,
              recipes: tuple[Recipe, ...] = RECIPES, precision: str = "") -> tuple[dict[str, Any], str]:
    """The flags of the recipe for ``model`` on ``system`` (serving ``precision``, a
    silicon row's column) in force at ``when``, and where they come from (``file@commit,
    …``); ``({}, "")`` when no recipe is tabulated (or none had landed yet). ``recipes``
    is the table searched (the vLLM recipes, :data:`RECIPES`, unless another engine's
    are given)."""
    precision = precision.strip().lower()
    for r in recipes:
        if r.model == model and r.system == system and r.precision in ("", precision):
            flags: dict[str, Any] = {}
            commits = []
            for c in r.changes:
                if c.since <= when:
                    flags.update(c.flags)
                    commits.append(c.commit)
            if commits:
                return flags, f"{r.file}@{'+'.join(commits)}"
    return {}, ""


def inferencex_benchmark(isl: int, osl: int, c: int, measured: datetime) -> dict[str, Any]:
    """The ``traffic.benchmark`` of InferenceX's client at concurrency ``c``, measured
    then (module docstring)."""
    bench: dict[str, Any] = {
        "tool": "vllm_bench_serve", "variant": "inferencex", "date": measured.date().isoformat(),
        "dataset_name": "random", "random_input_len": isl, "random_output_len": osl,
        "random_range_ratio": INFERENCEX_RANGE_RATIO, "num_prompts": INFERENCEX_PROMPTS_PER_CLIENT * c,
        "max_concurrency": c, "ignore_eos": True,
    }
    if measured >= INFERENCEX_WARMUPS_SINCE:
        bench["num_warmups"] = INFERENCEX_WARMUPS_PER_CLIENT * c
    return bench


def apply_recipe(engine: dict[str, Any], flags: dict[str, Any], isl: int, osl: int, c: int) -> None:
    """Set a recipe's flags on a spec's ``engine`` block (in place). A flag of ``None``
    is one a later change stopped setting: the release's default. Forms by the row's
    numbers: ``max_num_batched_tokens`` ``"isl*N"`` (``--max-num-batched-tokens
    "$((ISL * N))"``), ``max_model_len`` ``"isl+osl+N"`` or a function of (ISL, OSL)
    (a script's ``if`` on $ISL and $OSL)."""
    sched = engine.setdefault("scheduler", {})
    for key in ("gpu_memory_utilization", "enable_prefix_caching", "async_scheduling", "max_num_batched_tokens",
                "block_size"):
        if flags.get(key) is not None:
            sched[key] = flags[key]
    if isinstance(sched.get("max_num_batched_tokens"), str):  # "isl*N"
        sched["max_num_batched_tokens"] = isl * int(sched["max_num_batched_tokens"].split("*", 1)[1])
    if flags.get("max_num_seqs") == "c":
        sched["max_num_seqs"] = c
    elif flags.get("max_num_seqs"):
        sched["max_num_seqs"] = flags["max_num_seqs"]
    mml = flags.get("max_model_len")
    if isinstance(mml, str):  # "isl+osl+N"
        sched["max_model_len"] = isl + osl + int(mml.rsplit("+", 1)[1])
    elif callable(mml):
        sched["max_model_len"] = mml(isl, osl)
    elif mml:
        sched["max_model_len"] = mml
    if flags.get("kv_cache"):
        engine.setdefault("quantization", {})["kv_cache"] = flags["kv_cache"]
    if flags.get("moe_backend"):  # --moe-backend, or the environment variable that picks the same kernel
        engine["moe_backend"] = flags["moe_backend"]
