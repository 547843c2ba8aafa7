"""kubernetes-sigs/inference-perf for ``aisimulate bench``: its command line and config
file as ``traffic.benchmark`` (tool ``inference_perf``), and its lifecycle metrics.

``inference-perf --config_file FILE [--section.key VALUE …]`` (its CLI since 0.5: a
dotted key overrides the file, a list or mapping given as JSON) is read section by
section (``inference_perf/config/``): ``api``, ``data``, ``load`` and ``server.ignore_eos``
become the benchmark; the sections that say where the server is, which tokenizer
counts tokens and where reports go (``server``'s address and model, ``tokenizer``,
``metrics``, ``report``, ``storage``) change nothing the simulation measures; an option
that changes what is measured and that the simulation cannot honour (a sweep, circuit
breakers, a trace, LoRA traffic, a request timeout, multi-turn chat) is an error naming
it. ``load.base_seed`` sets ``execution.seed``.

The metrics are inference-perf's ``summarize_requests`` (``inference_perf/reportgen/
base.py``) of each stage and of all of them, in seconds as its reports give them, over
the successful requests: ``request_latency`` (end − start), ``normalized_time_per_output_
token`` (latency / output tokens), and over the streamed requests whose response has more
than one timestamp ``time_to_first_token`` (first − start), ``time_per_output_token`` and
``inter_token_latency``. Which timestamps count changed with 0.5.0 (pull requests 410 and
452): before it every SSE message was one, the closing ``[DONE]`` (and for chat the
role-only first chunk) included, so TPOT = (last − first) / (messages − 1) and a 1-token
response counted; from it, the response's tokens: TPOT = (last − first) / (tokens − 1)
over responses of at least 2 tokens, ITL every gap between tokens. The simulation's
client receives a request's last token and its ``[DONE]`` together, and a chat's role
chunk with its first token.
"""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

from .common import CommandError

#: Config sections, and keys of the sections the simulation reads, that only say where
#: the server is, how tokens are counted or where results go.
_INERT_SECTIONS = ("tokenizer", "metrics", "report", "storage")
_INERT_SERVER = ("type", "model_name", "base_url", "api_key", "cert_path", "key_path")
_INERT_LOAD = ()
_INERT_API = ("headers", "slo_unit", "slo_ttft_header", "slo_tpot_header")
_INERT_DATA = ("path", "corpus_file_path")
#: data.shared_prefix's aliases (inference-perf's SharedPrefix validation_alias).
_PREFIX_ALIASES = {"num_unique_system_prompts": "num_groups", "num_users_per_system_prompt": "num_prompts_per_group"}


class CommandLineError(CommandError, ValueError):
    """An inference-perf command line or config the simulation cannot run (the message
    names the option): ``aisimulate bench`` reports it, nothing raises it out of the
    package."""


def _set(doc: dict[str, Any], dotted: str, value: Any) -> None:
    node = doc
    parts = dotted.split(".")
    for p in parts[:-1]:
        child = node.setdefault(p, {})
        if not isinstance(child, dict):
            raise CommandLineError(f"--{dotted}: {p} is not a section")
        node = child
    node[parts[-1]] = value


def _value(text: str) -> Any:
    """A flag's value as inference-perf's CLI parses it: JSON where it parses (numbers,
    lists, mappings, true/false), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return {"yes": True, "no": False}.get(text.lower(), text)


def read_command(options: Sequence[str]) -> dict[str, Any]:
    """The config an ``inference-perf`` command line runs: its ``--config_file`` /
    ``-c`` (YAML) with every ``--section.key VALUE`` applied on top.

    Raises:
        CommandLineError: an option without a value, a missing or unreadable file."""
    import yaml

    doc: dict[str, Any] = {}
    path = None
    overrides: list[tuple[str, Any]] = []
    words = list(options)
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        if not name.startswith("-"):
            raise CommandLineError(f"{word!r}: a word that is no option")
        if not eq:
            if i + 1 >= len(words):
                raise CommandLineError(f"{name}: needs a value")
            value = words[i + 1]
            i += 1
        i += 1
        if name in ("-c", "--config_file", "--config-file"):
            path = value
        elif name in ("-a", "--analyze", "-u", "--unified_analysis_dir"):
            raise CommandLineError(f"{name}: analyses reports of earlier runs, not a run to simulate")
        elif name.startswith("--") and len(name) > 2:
            overrides.append((name[2:], _value(value)))
        else:
            raise CommandLineError(f"{name}: not an option of inference-perf the simulation takes "
                                  "(--config_file FILE and --section.key VALUE are)")
    if path is not None:
        try:
            with open(path, encoding="utf-8") as f:
                doc = yaml.safe_load(f) or {}
        except OSError as exc:
            raise CommandLineError(f"--config_file {path}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            raise CommandLineError(f"--config_file {path}: not YAML ({exc})") from None
        if not isinstance(doc, dict):
            raise CommandLineError(f"--config_file {path}: not a mapping of sections")
    for dotted, value in overrides:
        _set(doc, dotted, value)
    return doc


def _section(doc: dict[str, Any], name: str) -> dict[str, Any]:
    s = doc.get(name) or {}
    if not isinstance(s, dict):
        raise CommandLineError(f"{name}: not a section (a mapping)")
    return s


def _take(section: dict[str, Any], where: str, known: Sequence[str], inert: Sequence[str] = ()) -> dict[str, Any]:
    out = {}
    for k, v in section.items():
        if k in known:
            out[k] = v
        elif k not in inert and v not in (None, [], {}, False):
            raise CommandLineError(f"{where}.{k}: not simulated (an option that changes what inference-perf measures)")
    return out


def parse_config(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(traffic.benchmark, run settings)`` of an inference-perf config (module
    docstring).

    Raises:
        CommandLineError: a section or option the simulation cannot honour."""
    for k in doc:
        if k not in ("api", "data", "load", "server", "circuit_breakers", *_INERT_SECTIONS):
            raise CommandLineError(f"{k}: not a section the simulation takes")
    if doc.get("circuit_breakers"):
        raise CommandLineError("circuit_breakers: not simulated (they stop a stage on the client's errors)")
    bench: dict[str, Any] = {"tool": "inference_perf"}
    api = _take(_section(doc, "api"), "api", ("type", "streaming"), _INERT_API)
    if api:
        bench["api"] = api
    data = _section(doc, "data")
    if data.get("shared_prefix"):
        sp = dict(data["shared_prefix"])
        for alias, key in _PREFIX_ALIASES.items():
            if alias in sp:
                sp[key] = sp.pop(alias)
        data = {**data, "shared_prefix": _take(sp, "data.shared_prefix", ("num_groups", "num_prompts_per_group",
                                                                          "system_prompt_len", "question_len", "output_len"))}
    bench["data"] = _take(data, "data", ("type", "input_distribution", "output_distribution", "shared_prefix"),
                          _INERT_DATA)
    load = _section(doc, "load")
    run: dict[str, Any] = {}
    if "base_seed" in load:
        run["seed"] = load["base_seed"]
    bench["load"] = _take(load, "load", ("type", "interval", "stages", "num_workers", "worker_max_concurrency",
                                         "worker_max_tcp_connections"), (*_INERT_LOAD, "base_seed"))
    server = _section(doc, "server")
    if "ignore_eos" in server:
        bench["ignore_eos"] = server["ignore_eos"]
    _take(server, "server", ("ignore_eos",), _INERT_SERVER)
    return bench, run


def stage_requests(bench: dict[str, Any]) -> list[int]:
    """Each stage's requests, as run_stage counts them: int(rate × duration), or a
    concurrent stage's num_requests."""
    load = bench.get("load") or {}
    concurrent = load.get("type") == "concurrent"
    return [int(s["num_requests"]) if concurrent else int(float(s["rate"]) * float(s["duration"]))
            for s in load.get("stages") or []]


def _summary(values: list[float], percentiles: Sequence[float]) -> dict[str, float] | None:
    """inference-perf's ``summarize``: mean, min, max, median and the percentiles (numpy's
    linear interpolation), or None without values."""
    import numpy as np

    if not values:
        return None
    a = np.asarray(values, dtype=float)
    out = {"mean": float(a.mean()), "min": float(a.min()), "max": float(a.max()), "median": float(np.median(a))}
    for p in percentiles:
        out[f"p{p:g}"] = float(np.percentile(a, p))
    return out


def lifecycle(records: Sequence[dict[str, Any]], *, token_times: bool, chat: bool,
              percentiles: Sequence[float] = (50, 90, 99)) -> dict[str, Any]:
    """inference-perf's lifecycle summary of ``records`` (one stage's or all), in
    seconds, by its release's timestamps (module docstring)."""
    ok = [r for r in records if r.get("status") == "completed"]
    latency, ntpot, ttft, tpot, itl_sum, itl_n = [], [], [], [], 0.0, 0
    for r in ok:
        start, end, n = r["send_ms"] / 1e3, r["end_ms"] / 1e3, r["output_tokens"]
        latency.append(end - start)
        ntpot.append((end - start) / n if n > 0 else 0.0)
        first = r.get("first_token_ms")
        if first is None:
            continue
        first /= 1e3
        gaps = n - 1 if token_times else n + (1 if chat else 0)  # messages − 1: [DONE] (and the role chunk)
        if gaps < 1:
            continue
        ttft.append(first - start)
        tpot.append((end - first) / (n - 1 if token_times else gaps))
        itl_sum, itl_n = itl_sum + (end - first), itl_n + gaps
    span = (max(r["end_ms"] for r in ok) - min(r["send_ms"] for r in ok)) / 1e3 if ok else 0.0
    inp = sum(r["input_tokens"] for r in ok)
    out = sum(r["output_tokens"] for r in ok)
    return {
        "successes": {
            "count": len(ok),
            "latency": {"request_latency": _summary(latency, percentiles),
                        "normalized_time_per_output_token": _summary(ntpot, percentiles),
                        "time_per_output_token": _summary(tpot, percentiles),
                        "time_to_first_token": _summary(ttft, percentiles),
                        "inter_token_latency": {"mean": itl_sum / itl_n} if itl_n else None},
            "throughput": {"input_tokens_per_sec": inp / span if span > 0 else 0.0,
                           "output_tokens_per_sec": out / span if span > 0 else 0.0,
                           "total_tokens_per_sec": (inp + out) / span if span > 0 else 0.0,
                           "requests_per_sec": len(ok) / span if span > 0 else 0.0}},
        "failures": {"count": len(records) - len(ok)},
    }


def stage_reports(records: Sequence[dict[str, Any]], bench: dict[str, Any], *, token_times: bool) -> dict[str, Any]:
    """``{"stage_0": …, …, "summary": …}``: each stage's lifecycle summary (its requests
    are the next ``stage_requests`` of the records, in request order) and all of them."""
    chat = (bench.get("api") or {}).get("type") == "chat"
    out: dict[str, Any] = {}
    at = 0
    for k, n in enumerate(stage_requests(bench)):
        out[f"stage_{k}"] = lifecycle(records[at:at + n], token_times=token_times, chat=chat)
        at += n
    out["summary"] = lifecycle(records, token_times=token_times, chat=chat)
    return out


def text(reports: dict[str, Any]) -> str:
    """The lifecycle summaries as a table: per stage and for all, mean and p90 in ms."""
    rows = [("time_to_first_token", "TTFT", "ttft_ms"), ("time_per_output_token", "TPOT", "tpot_ms"),
            ("inter_token_latency", "ITL", "itl_ms (mean)"), ("request_latency", "request latency", "e2e_ms"),
            ("normalized_time_per_output_token", "NTPOT", "e2e_ms / output_tokens")]
    head = f"{'inference-perf lifecycle metric (ms)':40s}" + "".join(f"{k:>18s}" for k in reports) + "  aisimulate"
    lines = [head]

    def cell(b: dict[str, Any] | None, stat: str) -> str:
        v = (b or {}).get(stat)
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * 1e3:.2f}"

    for key, label, ours in rows:
        for stat in ("mean", "p90"):
            vals = [cell(r["successes"]["latency"][key], stat) for r in reports.values()]
            if not any(vals):
                continue
            lines.append(f"{label + ' ' + stat:40s}" + "".join(f"{v:>18s}" for v in vals) + f"  {ours}")
    for key in ("requests_per_sec", "output_tokens_per_sec"):
        vals = [f"{r['successes']['throughput'][key]:.2f}" for r in reports.values()]
        lines.append(f"{key:40s}" + "".join(f"{v:>18s}" for v in vals))
    lines.append(f"{'successes':40s}" + "".join(f"{r['successes']['count']:>18d}" for r in reports.values()))
    return "\n".join(lines)


#: The first inference-perf release that times a response's tokens, not its SSE
#: messages (pull requests 410 and 452, in v0.5.0).
TOKEN_TIMES_SINCE = (0, 5, 0)


def token_times(version: str) -> bool:
    """Whether inference-perf ``version`` (``"0.4.0"``, ``"v0.5.0"``) times tokens."""
    parts = version.strip().lstrip("v").split(".")
    return tuple(int(p) for p in parts[:3]) >= TOKEN_TIMES_SINCE
