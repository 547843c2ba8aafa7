"""Simulated vs measured: replay an AIPerf run's requests on a modelled deployment and
report how far each latency metric is from what AIPerf measured.

>>> import aisimulate
>>> c = aisimulate.compare("deployment.yaml", "artifacts/run/profile_export.jsonl")
>>> print(c.table()); c.metrics; c.requests; c.plot().savefig("pred_vs_meas.png")

The measured requests (AIPerf's ``profile_export.jsonl``, one record per request) are
replayed with their own prompt and output lengths (``input_sequence_length``,
``output_sequence_length``), sent at their measured send times (``request_start_ns``,
relative to the first) — or, with ``concurrency=N``, by a closed loop of N clients in
their send order, as AIPerf's ``--concurrency`` sends them. The turns of one AIPerf
session (``x_correlation_id``, in ``turn_index`` order) are replayed as a session in
AIPerf's own ``deltas_without_responses`` form (``traffic.source.context_mode``): AIPerf
sends a turn as the conversation so far (every earlier turn's input and the reply
received) and its new input, so turn k's new input is ISL_k − ISL_{k−1} − OSL_{k−1}
(the records' ``input_sequence_length`` and ``output_sequence_length``), and the
replay's turn k holds turn k−1's prompt and reply, finding every block vLLM cached,
the reply's included; the replayed trace's hash ids are of ``block_size``-token blocks
(``traffic.source.isl_block_size``). An export whose later turns' ISLs do not hold the
previous prompt and reply is replayed turn by turn as whole prompts, a later turn
sharing its previous prompt's blocks only. Requests of one dataset conversation sent
again (``conversation_id`` and ``turn_index`` equal) share their whole prompt. The deployment,
engine settings and client
path come from the config; its ``traffic`` block is replaced (``traffic.load``'s
``response_overhead`` and ``request_timeout_ms`` are kept).

Metrics compared (AIPerf → aisimulate, both ms, per request; a latency's ``unit`` ns,
us, ms, s or sec is converted to ms, any other is a DataError naming the line and
field): ``time_to_first_token`` →
``ttft_ms``; ``inter_token_latency`` ((latency − TTFT) / (OSL − 1)) → ``tpot_ms``;
``request_latency`` → ``e2e_ms``; and ``itl_ms``, every gap between received chunks
pooled (AIPerf's ``inter_chunk_latency`` lists). When the scored records have them, the
replay records its chunk times (``replay(token_gaps=True)``: the tokens the client
received at one instant are one chunk, as a streamed message) and the predicted gaps are
those of the same scored requests, chunk by chunk, paired by request on their mean gap
(MAPE, bias, r); without any, the predicted ITL is the core's statistics of every
simulated gap between tokens (``summary.itl_ms``, warm-up requests included), unpaired. For each: mean, p50, p90, p99 (or the mean and the
percentiles chosen, ``percentiles=``) measured and predicted and their
relative error (predicted − measured) / measured; over requests paired by position:
MAPE = mean |p − m| / m, bias = mean (p − m) / m (both %), and Pearson's r. Only
successful records are scored, but a canceled one (``was_cancelled``, error code 499)
loaded the server until its cancel, so it is replayed too: its prompt
(``metrics.error_isl``) with an output that runs until the client's timeout cancels it
(the config's ``traffic.load.request_timeout_ms``, else the longest measured send-to-cancel
time if no successful record took longer; without either, its prompt and one token).
Rejected and other failed records are not replayed; a request the simulation did not
complete is left out of the per-request numbers (counted in ``c.counts``). Warm-up
records (AIPerf's ``metadata.benchmark_phase`` ``warmup``) loaded the server, so they
are replayed, but only ``profiling`` records are scored (an unknown phase is a
DataError naming the line and field); the predicted ITL statistics are the core's over
every replayed request, warm-up ones included. A successful
record with 0 input or output tokens cannot be replayed (vLLM takes neither): a
DataError names its line and ``metrics.output_sequence_length`` (or the input's).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from .binding import lazy as _lazy
from .config import Spec, load_config, read_config, set_overrides
from .errors import ConfigError, DataError
from .io.aiperf import PROFILE_EXPORT, profile_export_path, read_profile_export  # noqa: F401 (the API's names)

if TYPE_CHECKING:
    import numpy as np

# numpy and pandas are imported where used, so that `import aisimulate` (which exports
# compare) does not load them.

__all__ = ["compare", "Comparison", "read_profile_export", "METRICS"]

#: aisimulate metric → the AIPerf per-request metric it is compared with (ms).
METRICS: dict[str, str] = {"ttft_ms": "time_to_first_token", "tpot_ms": "inter_token_latency",
                           "itl_ms": "inter_chunk_latency", "e2e_ms": "request_latency"}

_STATS = ("mean", "p50", "p90", "p99")


def _chosen_stats(percentiles: list[float] | None) -> tuple[str, ...]:
    """The statistics compared: mean, p50, p90, p99, or mean and the chosen
    ``percentiles`` (checked, ascending) under their stats-dict keys (``p99.9``)."""
    if not percentiles:
        return _STATS
    from .io.names import percentile_key

    return ("mean", *(percentile_key(p) for p in percentiles))


def _quantile(stat: str) -> float:
    """The percentile of a statistic's key (``p99.9`` → 99.9)."""
    return float(stat[1:])


def _blocks(r: dict[str, Any], block: int) -> int:
    """The prompt blocks of record ``r`` that get hash ids: ⌈ISL / block⌉, or none for a
    prompt longer than the deployment's max_model_len (``r["too_long"]``), which the
    engine rejects before it looks a block up (its ids would only cost memory: one per
    block of a prompt of 2^63 − 1 tokens)."""
    return 0 if r.get("too_long") else -(-r["isl"] // block)


def _hash_ids(records: list[dict[str, Any]], block: int) -> Iterator[list[int]]:
    """The prompt block ids of each record (``block`` tokens each, ⌈ISL / block⌉ of
    them), in the order given (send order): a conversation's turn shares the blocks that
    lie wholly inside the previous turn's prompt + output of its session; the rest of its
    prompt is its own. Equal (conversation, turn) prompts (a dataset entry sent again)
    share every block.

    Block j of a prompt of (conversation, turn) k-th seen has the id
    k·stride + j + 1 (stride: the most blocks of any prompt), so ids need no table; a
    session keeps its last prompt's ids as runs (k, j0, j1) — one per turn — and the
    rows are made one at a time, not held."""
    stride = max(max(_blocks(r, block) for r in records), 1)
    keys: dict[tuple, int] = {}
    prev: dict[str, tuple[int, list[tuple[int, int, int]]]] = {}  # session → (tokens so far, its runs)
    for r in records:
        n = _blocks(r, block)
        tokens, chain = prev.get(r["session"], (0, []))
        shared = min(n, tokens // block) if r["turn"] > 0 else 0
        runs: list[tuple[int, int, int]] = []
        for k, j0, j1 in chain:  # the previous prompt's runs, cut at `shared` blocks
            if j0 >= shared:
                break
            runs.append((k, j0, min(j1, shared)))
        shared = runs[-1][2] if runs else 0  # no more than the previous prompt's blocks
        if shared < n:
            runs.append((keys.setdefault((r["conversation"], r["turn"]), len(keys)), shared, n))
        prev[r["session"]] = (r["isl"] + r["osl"], runs)
        yield [k * stride + j + 1 for k, j0, j1 in runs for j in range(j0, j1)]


def _trace_rows(records: list[dict[str, Any]], block: int) -> tuple[bool, list[tuple[Any, int, list[int]]]]:
    """The compare trace's rows of ``records`` (in send order): ``(session_id or None,
    input_length, hash_ids)`` each, and whether they are in AIPerf's
    ``deltas_without_responses`` form.

    AIPerf sends a conversation's turn as the conversation so far — every earlier turn's
    input and the reply the client received — then its new input, and its record's
    ``input_sequence_length`` is that whole prompt and ``output_sequence_length`` the
    reply received. So in a session of two or more records (one ``x_correlation_id``,
    turns by ``turn_index``) turn k's own input is ISL_k − ISL_{k−1} − OSL_{k−1} (a
    canceled turn's reply counts 0), and the trace gives each later turn just that, in
    a session of its own name: the replay's turn k then holds turn k−1's prompt and
    reply, and finds every block they wrote. A first turn or a request outside a
    session is its whole prompt. The ids of (conversation, turn) number k are
    k·stride + j + 1 (stride: the most blocks of any prompt), so a dataset entry sent
    again shares its ids. When a later turn's ISL does not hold the previous prompt and
    reply (an own input below 1 token), the export is not of that form and every row is
    its whole prompt, as :func:`_hash_ids` gives it (a later turn shares its previous
    prompt's blocks, not its reply's)."""
    turns: dict[str, int] = {}
    for r in records:
        turns[r["session"]] = turns.get(r["session"], 0) + 1
    prev: dict[str, dict[str, Any]] = {}
    rows: list[tuple[Any, int]] = []  # (session or None, own input) per record
    for r in records:
        s, p = r["session"], prev.get(r["session"])
        prev[s] = r
        if turns[s] < 2:
            rows.append((None, r["isl"]))
        elif p is None:
            rows.append((s, r["isl"]))
        else:
            rows.append((s, r["isl"] - p["isl"] - (p.get("osl") or 0)))
    if not any(s is not None for s, _ in rows) or any(n < 1 for _, n in rows):
        return False, [(None, r["isl"], ids) for r, ids in zip(records, _hash_ids(records, block))]
    stride = max(max(_blocks(r, block) for r in records), 1)
    keys: dict[tuple, int] = {}
    out = []
    for r, (s, n) in zip(records, rows):
        k = keys.setdefault((r["conversation"], r["turn"]), len(keys))
        out.append((s, n, [] if r.get("too_long") else [k * stride + j + 1 for j in range(-(-n // block))]))
    return True, out


@dataclass
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        metrics: ``pandas.DataFrame`` indexed by metric (``ttft_ms``, ``tpot_ms``,
            ``itl_ms``, ``e2e_ms``): ``n``; ``measured_<s>``, ``predicted_<s>`` and
            ``error_<s>_pct`` for s in :attr:`stats`; ``mape_pct``, ``bias_pct``,
            ``pearson_r`` over paired requests (null for ``itl_ms``).
        requests: ``pandas.DataFrame``, one row per replayed request in send order:
            ``line`` (in the export), ``isl``, ``osl``, ``send_ms``, ``status`` (the
            simulation's), ``measured_<m>`` and ``predicted_<m>`` for ttft_ms, tpot_ms,
            e2e_ms.
        report: the simulation's :class:`~aisimulate.ReplayReport`.
        counts: records read, failed (not replayed), replayed, completed in simulation;
            ``rejected_in_simulation`` when the simulated engine refused some (a prompt
            longer than the deployment's max_model_len, say: the table names the first).
        stats: the statistics compared: mean, p50, p90, p99, or mean and the
            percentiles ``compare(percentiles=…)`` chose (``p99.9``).
    """

    metrics: Any
    requests: Any
    report: Any
    counts: dict[str, int] = field(default_factory=dict)
    stats: tuple[str, ...] = _STATS

    def table(self) -> str:
        """A readable summary: per metric, measured vs predicted :attr:`stats` (ms; mean,
        p50, p90, p99 by default) with the relative error, then MAPE, bias and r."""
        lines = [" aisimulate compare: predicted vs measured ".center(96, "="),
                 ", ".join(f"{k} {v}" for k, v in self.counts.items())]
        first = getattr(self, "_first_rejected", None)
        if first is not None:  # why the simulated engine refused them, by the first
            more = self.counts.get("rejected_in_simulation", 1) - 1
            lines.append(f"rejected in simulation: line {first[0]}: {first[1]}" + (f" (and {more:,} more)" if more else ""))
        head = f"{'metric':<9}{'':<10}" + "".join(f"{s:>11}" for s in self.stats) + \
            f"{'MAPE %':>10}{'bias %':>9}{'r':>7}"
        lines += [head, "-" * len(head)]
        for m, row in self.metrics.iterrows():
            for kind in ("measured", "predicted", "error %"):
                key = (lambda s: f"error_{s}_pct") if kind == "error %" else (lambda s, k=kind: f"{k}_{s}")
                cells = "".join(f"{_f(row[key(s)]):>11}" for s in self.stats)
                tail = ""
                if kind == "measured":
                    tail = f"{_f(row['mape_pct']):>10}{_f(row['bias_pct']):>9}{_f(row['pearson_r'], 3):>7}"
                lines.append(f"{m if kind == 'measured' else '':<9}{kind:<10}{cells}{tail}")
        lines.append("=" * len(head))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """``{"counts", "metrics": {metric: {column: value}}}`` (JSON-ready, nulls None)."""
        metrics = {m: {k: (int(v) if k == "n" else _none(v)) for k, v in row.items()}
                   for m, row in self.metrics.iterrows()}  # a row is all floats: n is a count
        return {"counts": dict(self.counts), "metrics": metrics}

    def plot(self):
        """Predicted against measured per request (TTFT, TPOT, E2E; the y = x line and
        ±20 % dotted) and the pooled ITL distributions, as a matplotlib Figure."""
        np = _lazy.module("numpy")

        figure = _lazy.module("aisimulate.plot").figure

        fig, axes = figure(1, 4, 17.0, 4.2)
        done = self.requests[self.requests["status"] == "completed"]
        for ax, m in zip(axes[0][:3], ("ttft_ms", "tpot_ms", "e2e_ms")):
            x, y = done[f"measured_{m}"].to_numpy(float), done[f"predicted_{m}"].to_numpy(float)
            ok = ~(np.isnan(x) | np.isnan(y))
            ax.scatter(x[ok], y[ok], s=6, alpha=0.5)
            if ok.any():
                lo, hi = float(min(x[ok].min(), y[ok].min())), float(max(x[ok].max(), y[ok].max()))
                t = np.linspace(lo, hi, 2)
                ax.plot(t, t, "k-", lw=0.8)
                ax.plot(t, 1.2 * t, "k:", lw=0.6)
                ax.plot(t, 0.8 * t, "k:", lw=0.6)
            r = self.metrics.loc[m]
            ax.set_title(f"{m}: MAPE {_f(r['mape_pct'])} %, bias {_f(r['bias_pct'])} %, r {_f(r['pearson_r'], 3)}",
                         fontsize="small")
            ax.set_xlabel(f"measured {m} (AIPerf {METRICS[m]})")
            ax.set_ylabel(f"predicted {m}")
            ax.grid(alpha=0.3)
        ax = axes[0][3]
        v = np.sort(np.asarray(self._measured_itl if self._measured_itl is not None else [], dtype=float))
        if len(v):
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label="measured (AIPerf chunks)")
        r = self.metrics.loc["itl_ms"]
        pcts = [s for s in self.stats if s != "mean"]
        qs = [(r[f"predicted_{s}"], _quantile(s) / 100) for s in pcts]
        ax.plot([x for x, _ in qs], [q for _, q in qs], "o", color="tab:orange", label="predicted " + "/".join(pcts))
        ax.set_xlabel("ITL (ms), every gap pooled")
        ax.set_ylabel("fraction of gaps")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        fig.suptitle("aisimulate vs AIPerf measurement", fontsize="medium")
        return fig

    _measured_itl: Any = None


def _f(v: Any, d: int = 1) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{d}f}"


def _none(v: Any) -> Any:
    np = _lazy.module("numpy")

    if isinstance(v, (np.floating, float)):
        return None if math.isnan(v) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def _stats(v: np.ndarray, stats: tuple[str, ...] = _STATS) -> dict[str, float]:
    """The mean and percentiles (numpy's linear rule, as the core's) of ``v``'s values
    that are not NaN, keyed as ``stats`` names them; NaN each without a value."""
    np = _lazy.module("numpy")

    v = v[~np.isnan(v)]
    if not len(v):
        return {s: math.nan for s in stats}
    return {s: float(np.mean(v)) if s == "mean" else float(np.percentile(v, _quantile(s))) for s in stats}


def _paired(m: np.ndarray, p: np.ndarray) -> tuple[int, float, float, float]:
    np = _lazy.module("numpy")

    ok = ~(np.isnan(m) | np.isnan(p)) & (m > 0)
    m, p = m[ok], p[ok]
    if not len(m):
        return 0, math.nan, math.nan, math.nan
    rel = (p - m) / m
    r = float(np.corrcoef(m, p)[0, 1]) if len(m) > 1 and np.std(m) > 0 and np.std(p) > 0 else math.nan
    return len(m), float(np.mean(np.abs(rel)) * 100), float(np.mean(rel) * 100), r


def _chunk_gaps(report: Any, scored: list[dict[str, Any]], sim: Mapping[int, Any],
                index: Mapping[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The predicted gaps between chunks (ms, as AIPerf converts ns: × 1000 / 10⁹) of the
    scored records' requests that completed in the replay, pooled, and per request with
    a gap in both the measured and the predicted, the measured and predicted mean gap."""
    np = _lazy.module("numpy")

    ct = report.chunk_times
    pos = {int(v): i for i, v in enumerate(report.record_columns()["request_id"])}
    pooled, mean_m, mean_p = [], [], []
    for r in scored:
        rid = index[r["line"]]
        if sim.get(rid, {}).get("status") != "completed":
            continue
        i = pos[rid]
        start = int(ct["start"][i])
        gaps = np.diff(ct["times"][start:start + int(ct["count"][i])]) * (1000 / 1e9)
        pooled.append(gaps)
        if len(gaps) and r["icl_ms"]:
            mean_m.append(float(np.mean(r["icl_ms"])))
            mean_p.append(float(np.mean(gaps)))
    return (np.concatenate(pooled) if pooled else np.empty(0), np.asarray(mean_m, dtype=float),
            np.asarray(mean_p, dtype=float))


#: The longest line of a trace the core reads (core/workload/linecap.go, MaxLineBytes).
_MAX_LINE_BYTES = 16 << 20

#: A field of the trace compare writes → the export's field it was made from.
_TRACE_FIELDS = {"timestamp": "metadata.request_start_ns", "input_length": "metrics.input_sequence_length",
                 "output_length": "metrics.output_sequence_length", "hash_ids": "metrics.input_sequence_length"}


def _in_export(exc: DataError, trace: str, export: str, ok: list[dict[str, Any]]) -> DataError:
    """``exc`` about a row of compare's own trace (written from ``ok`` in order) told of
    the record it was made from: the export's file, line and field; other errors as
    they are."""
    if exc.file != trace or not exc.line or not 1 <= exc.line <= len(ok):
        return exc
    reason = exc.reason.removeprefix(f"{trace}:{exc.line}: ").removeprefix(f"{exc.field}: ")
    field = _TRACE_FIELDS.get(exc.field, exc.field)
    return DataError(f"{field}: {reason}", file=export, line=ok[exc.line - 1]["line"], field=field)


def compare(config: str | os.PathLike[str] | Mapping[str, Any] | Spec, aiperf: str | os.PathLike[str], *,
            concurrency: int | None = None, overrides: Mapping[str, Any] | None = None,
            progress: bool | None = None, percentiles: Any = None) -> Comparison:
    """Replay the requests of an AIPerf run on the deployment of ``config`` and compare.

    Args:
        config: the deployment (path, dict or :class:`Spec`); its ``traffic`` is replaced
            before the config is checked, so it may have none (the engine alone).
        aiperf: AIPerf's ``profile_export.jsonl`` of the measured run, or the artifact
            folder AIPerf wrote it in.
        concurrency: replay as a closed loop of this many clients (AIPerf
            ``--concurrency``) instead of at the measured send times.
        overrides: dotted fields set on the config before it is compiled (as ``--set``).
        progress: the replay's progress bar, as :func:`aisimulate.replay` takes it.
        percentiles: the percentiles compared (with the mean) in place of p50, p90
            and p99, e.g. ``[50, 99.9]``: checked as :func:`aisimulate.replay` checks
            them (each in (0, 100]), and the replay is asked for them.

    Returns:
        A :class:`Comparison`.

    Raises:
        DataError: the export cannot be read (``.file`` names it), is malformed, or has
            no successful record.
        ConfigError: the config is invalid, ``concurrency`` < 1, or a percentile is
            bad (``percentiles``).
        TypeError: ``percentiles`` is not a list of numbers.
        SimulationError: from the replay.
    """
    np = _lazy.module("numpy")
    pd = _lazy.module("pandas")

    from .run.replay import replay
    from .binding.args import flag

    progress = flag("progress", progress, auto=True)
    if percentiles is not None:
        from .run.replay import check_percentiles

        percentiles = check_percentiles(percentiles)
    stats = _chosen_stats(percentiles)
    records = read_profile_export(aiperf)
    ok = [r for r in records if r["error"] is None]
    if not ok:
        raise DataError("no successful request in the AIPerf export to replay", file=os.fspath(aiperf))
    if all(r["phase"] == "warmup" for r in ok):
        raise DataError("no successful profiling request in the AIPerf export to compare "
                        "(every one is a warm-up record)", file=os.fspath(aiperf))
    export = profile_export_path(aiperf)
    for r in ok:  # the replayed request's own lengths: what the engine could not take
        for key, name, why in (("isl", "input_sequence_length", "a prompt of at least one token"),
                               ("osl", "output_sequence_length",
                                "vLLM refuses max_tokens < 1: a request generates at least one token")):
            if r[key] < 1:
                raise DataError(f"field 'metrics.{name}.value' must be ≥ 1 to replay the request, got {r[key]} ({why}); "
                                "leave the record out of the export, or give it an error", file=export,
                                line=r["line"], field=f"metrics.{name}")
    if concurrency is not None and (isinstance(concurrency, bool) or not isinstance(concurrency, int)
                                    or concurrency < 1):
        raise ConfigError("traffic.load.concurrency", f"must be an integer ≥ 1, got {concurrency!r}")
    # The deployment as given, with the overrides: its traffic is replaced before it is
    # compiled, so a config of the engine alone is a valid deployment.
    raw = read_config(config)
    set_overrides(raw.data, overrides or {})
    traffic = raw.data.get("traffic")
    load = traffic.get("load") if isinstance(traffic, dict) else None
    keep = {k: v for k, v in (load.items() if isinstance(load, dict) else ())
            if k in ("response_overhead", "request_timeout_ms")}
    # Every request the client sent loaded the server, so a canceled one is replayed too
    # (prompt: error_isl; output: as long as max_model_len allows, so that it runs until
    # the client's timeout cancels it, as it ran in the measurement) and left out of the
    # statistics. The timeout is the config's request_timeout_ms, else the longest
    # measured send-to-cancel time when no successful record outlasted it (one client
    # timeout); else there is no timeout to end it, and it is replayed as its prompt
    # with one output token. Rejected and failed records are not replayed: the server
    # answered them with an error, not with work the record times.
    canceled = [r for r in records if r.get("canceled")]
    if canceled and "request_timeout_ms" not in keep:
        longest = max(max(r["cancel_ns"] - r["start_ns"], 1) for r in canceled)
        if all(r["end_ns"] - r["start_ns"] <= longest for r in ok):  # as one client timeout makes them
            keep["request_timeout_ms"] = longest / 1e6
    from .run.replay import check
    # the deployment's max_model_len: a longer prompt is rejected by the engine, as a
    # trace row's is, and gets no hash ids (_blocks)
    ctx = check(load_config(raw, overrides={"traffic": {
        "source": {"type": "synthetic", "num_requests": 1, "isl": 1, "osl": 1},
        "load": {"mode": "concurrency", "concurrency": 1}}}))["max_model_len"]
    for r in canceled:  # without a timeout to stop it: its prompt alone, the least it cost
        r["osl"], r["replay_osl"] = 0, max((ctx if "request_timeout_ms" in keep else 1) - r["isl"], 1)
    sent = sorted(ok + canceled, key=lambda r: (r["start_ns"], r["line"]))
    for r in sent:
        r["too_long"] = r["isl"] > ctx
    ok.sort(key=lambda r: (r["start_ns"], r["line"]))
    t0 = sent[0]["start_ns"]
    tempfile = _lazy.module("tempfile")

    fd, trace = tempfile.mkstemp(prefix="aisimulate-compare-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            mode = {"mode": "concurrency", "concurrency": concurrency} if concurrency else {"mode": "trace"}
            spec = load_config(raw, overrides={"traffic": {"source": {"type": "mooncake", "path": trace},
                                                           "load": {**mode, **keep}}})
            # hash ids of the engine's own KV blocks: turns share exactly the blocks the engine would find
            eng = spec.data["engine"]
            if eng["backend"] == "trtllm":
                block = eng["trtllm"]["kv_cache_config"]["tokens_per_block"]
            elif eng["backend"] == "sglang":  # its prefix hashes: the page, 16 tokens for page 1 (core/engine/sglang/plan.go)
                block = eng["sglang"]["page_size"] if eng["sglang"]["page_size"] > 1 else 16
            else:
                block = eng["scheduler"]["block_size"]
            deltas, rows = _trace_rows(sent, block)
            source = {"traffic.source.isl_block_size": block}
            if deltas:
                source["traffic.source.context_mode"] = "deltas_without_responses"
            spec = load_config(spec, overrides=source)
            for r, (session, isl, ids) in zip(sent, rows):
                row = {"timestamp": (r["start_ns"] - t0) / 1e6, "input_length": isl,
                       "output_length": r.get("replay_osl", r["osl"]), "hash_ids": ids}
                if session is not None:
                    row["session_id"] = str(session)
                text = json.dumps(row)
                if len(text) >= _MAX_LINE_BYTES:  # the trace reader's bound on one line
                    raise DataError(f"metrics.input_sequence_length: a prompt of {r['isl']:,} tokens takes "
                                    f"{len(ids):,} hash ids of {block}-token blocks, more than one line of the "
                                    f"trace compare replays holds ({_MAX_LINE_BYTES:,} bytes)", file=export, line=r["line"],
                                    field="metrics.input_sequence_length")
                fh.write(text + "\n")
        scored = [r for r in ok if r["phase"] == "profiling"]  # warm-up records were replayed, not scored
        chunked = any(r["icl_ms"] for r in scored)  # the measurement's chunk gaps: the replay's too
        try:
            report = replay(spec, progress=progress, token_gaps=chunked, percentiles=percentiles)
        except DataError as exc:
            raise _in_export(exc, trace, export, sent) from None
    finally:
        os.unlink(trace)

    sim = {r["request_id"]: r for r in report.requests}
    index = {r["line"]: i for i, r in enumerate(sent)}  # an export line → its request id in the replay
    rows = []
    for r in scored:
        s = sim.get(index[r["line"]], {})
        row = {"line": r["line"], "isl": r["isl"], "osl": r["osl"], "send_ms": (r["start_ns"] - t0) / 1e6,
               "status": s.get("status")}
        for m in ("ttft_ms", "tpot_ms", "e2e_ms"):
            row[f"measured_{m}"] = math.nan if r[m] is None else r[m]
            pv = s.get(m) if s.get("status") == "completed" else None
            row[f"predicted_{m}"] = math.nan if pv is None else pv
        rows.append(row)
    req = pd.DataFrame(rows)
    done = req[req["status"] == "completed"]
    measured_itl = np.array([x for r in scored for x in r["icl_ms"]], dtype=float)
    itl = report.summary.get("itl_ms") or {}
    table = {}
    for m in METRICS:
        if m == "itl_ms" and chunked:  # the scored requests' simulated chunk gaps
            predicted, mean_m, mean_p = _chunk_gaps(report, scored, sim, index)
            ms, ps = _stats(measured_itl, stats), _stats(predicted, stats)
            n, (_, mape, bias, r) = len(measured_itl), _paired(mean_m, mean_p)
        elif m == "itl_ms":  # the core's exact statistics of every simulated gap
            ms = _stats(measured_itl, stats)
            ps = {s: math.nan if itl.get(s) is None else float(itl[s]) for s in stats}
            n, mape, bias, r = len(measured_itl), math.nan, math.nan, math.nan
        else:
            pv = done[f"predicted_{m}"].to_numpy(float)
            ms, ps = _stats(req[f"measured_{m}"].to_numpy(float), stats), _stats(pv, stats)
            n, mape, bias, r = _paired(done[f"measured_{m}"].to_numpy(float), pv)
        row = {"n": n}
        for s in stats:
            row[f"measured_{s}"], row[f"predicted_{s}"] = ms[s], ps[s]
            row[f"error_{s}_pct"] = (ps[s] - ms[s]) / ms[s] * 100 if ms[s] and not math.isnan(ms[s]) else math.nan
        row.update(mape_pct=mape, bias_pct=bias, pearson_r=r)
        table[m] = row
    counts = {"records": len(records), "failed_in_measurement": len(records) - len(ok),
              "replayed": len(sent), "completed_in_simulation": int(len(done))}
    if len(scored) < len(ok):
        counts["warmup"] = sum(r["phase"] == "warmup" for r in records)
    rejected = [(r["line"], sim[index[r["line"]]].get("reason")) for r in scored
                if sim.get(index[r["line"]], {}).get("status") == "rejected"]
    if rejected:  # the engine refused them (a prompt longer than max_model_len, …)
        counts["rejected_in_simulation"] = len(rejected)
    c = Comparison(pd.DataFrame.from_dict(table, orient="index"), req, report, counts, stats)
    c._first_rejected = rejected[0] if rejected else None
    c._measured_itl = measured_itl
    return c

