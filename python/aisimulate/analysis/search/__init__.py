"""Capacity planning by simulation: which deployment to run for a workload and an SLO.

>>> import aisimulate
>>> result = aisimulate.search("question.yaml", gpus=8, slo={"ttft_ms": 500, "tpot_ms": 30})
>>> result.best.command          # vllm serve … --tensor-parallel-size … --max-num-seqs …
>>> result.table()               # the answer, the front, why each family was pruned
>>> result.front, result.to_pandas(), result.plot("pareto.png")

The question is a replay spec whose engine names the model, the GPU system, the serving
engine (``engine.backend``) and its perf source; its workers, if any, are ignored (their
placement kept). The search enumerates the deployments the engine can run on the GPU
counts allowed (``core/search/space.go``: worker count × TP × DP × EP, aggregated and
prefill/decode-disaggregated, the batch limits, the weight and KV formats the checkpoint
and the GPU allow), prunes what cannot work before simulating it (the deployment does not
start: memory, the start-up KV check; an analytic bound settles its miss:
``core/search/bounds.go``), replays the rest on this machine's cores (or a Ray cluster),
stopping a replay as soon as its miss of the SLO is certain, and recommends the deployment
with the most output tokens/s per GPU among those that meet the SLO (:func:`_front.best`).

The SLO bounds the ``percentile``-th percentile (default 90, numpy's linear
interpolation) of each of TTFT, TPOT and E2E it names, over the measured requests; a
request that does not complete counts as missing every bound. The result is deterministic:
the same question gives the same answer whatever the cores, the backend or whether it was
interrupted and resumed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping

from ...binding import native as _native
from ...errors import ConfigError
from ...io.names import percentile_key
from . import _front, _unmet
from ._run import JOURNAL, Journal, digest, progress_bar, run_local, run_ray
from .flags import launch_commands

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Sequence

__all__ = ["search", "SearchResult", "Deployment", "BACKENDS"]

#: The backends :func:`search` runs candidates on.
BACKENDS = ("local", "ray")


def _gpus(gpus: Any) -> list[int]:
    if isinstance(gpus, (bool, str, bytes)):
        raise ConfigError("gpus", f"a GPU budget (int) or the GPU counts allowed, got {gpus!r}")
    if isinstance(gpus, int):
        if gpus < 1:
            raise ConfigError("gpus", f"a budget of {gpus} GPUs: want ≥ 1")
        return list(range(1, gpus + 1))
    try:
        out = sorted({int(g) for g in gpus})
    except (TypeError, ValueError):
        raise ConfigError("gpus", f"a GPU budget (int) or the GPU counts allowed (a list), got {gpus!r}") from None
    if not out or out[0] < 1:
        raise ConfigError("gpus", f"{gpus!r}: want counts ≥ 1")
    return out


def _slo(slo: Any, percentile: float) -> dict[str, float]:
    from ...run.replay import check_slo

    bounds = check_slo(slo)
    if isinstance(percentile, bool) or not isinstance(percentile, (int, float)) or not 0 < percentile <= 100:
        raise ConfigError("percentile", f"{percentile!r}: want a number in (0, 100]")
    return {**bounds, "percentile": float(percentile)}


class Deployment:
    """One candidate deployment of a search, with its launch commands.

    Attributes:
        index: its place in the enumeration; key: its text name.
        mode: ``aggregated`` or ``disaggregated``; gpus: the GPUs it uses.
        result: its result (``core/search/run.go`` ``Result``: fate, percentiles,
            summary, …).
        spec: its replay spec (the question with these workers, limits and formats):
            ``aisimulate.replay(deployment.spec)`` replays it.
        launch: per pool, its worker count and one worker's command
            (:func:`flags.launch_commands`).
    """

    def __init__(self, result: Mapping[str, Any], spec: dict[str, Any]) -> None:
        self.result, self.spec = dict(result), spec
        self.index, self.key = result["index"], result["key"]
        self.mode, self.gpus = result["candidate"]["mode"], result["gpus"]
        self.launch = launch_commands(spec)

    @property
    def command(self) -> str:
        """The launch commands as shell lines, each pool's preceded by its worker count."""
        lines = []
        for p in self.launch:
            lines.append(f"# {p['pool']}: {p['workers']} worker(s) × {p['gpus_per_worker']} GPU(s)")
            if p["options"]:
                lines.append(f"# {p['pool']}.yaml (--extra_llm_api_options): {json.dumps(p['options'], sort_keys=True)}")
            lines.append(p["command"])
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Deployment({self.key!r}, gpus={self.gpus})"


class SearchResult:
    """A search's outcome.

    Attributes:
        results: every candidate's result, by index (dicts as the core writes them).
        candidates: every candidate (mode, pools, limits, formats, key, gpus).
        invalid: the layouts the model cannot run (never candidates), with the reason.
        space: the space searched, defaults filled; slo: its bounds and percentile.
        offer: the load the question offers (requests, mean lengths, whether sends are
            fixed).
        elapsed_s: wall seconds of this call (a resumed search: this call's only).
        price_per_gpu_hour: the price the costs are in, or ``None``.
    """

    def __init__(self, plan: Mapping[str, Any], results: dict[int, dict[str, Any]], request: dict[str, Any],
                 elapsed_s: float, price_per_gpu_hour: float | None, resumed: int) -> None:
        self.candidates = list(plan["candidates"])
        self.results = [results[i] for i in range(len(self.candidates))]
        self.invalid, self.space, self.slo, self.offer = plan["invalid"], plan["space"], plan["slo"], plan["offer"]
        self.elapsed_s, self.price_per_gpu_hour, self.resumed = elapsed_s, price_per_gpu_hour, resumed
        self._request = request
        self._specs: dict[int, dict[str, Any]] = {}
        self.front = _front.front(self.results)
        b = _front.best(self.results)
        self._best_index = None if b is None else b["index"]

    def _spec(self, index: int) -> dict[str, Any]:
        if index not in self._specs:
            rq = dict(self._request, specs_of=[index])
            self._specs[index] = _native.call("SearchPlan", json.dumps(rq), "plan")["specs"][str(index)]
        return self._specs[index]

    def deployment(self, index: int) -> Deployment:
        """Candidate ``index`` as a :class:`Deployment` (its spec and launch commands)."""
        return Deployment(self.results[index], self._spec(index))

    @property
    def best(self) -> Deployment | None:
        """The recommended deployment (:func:`_front.best`), or ``None`` when no candidate
        met the SLO."""
        return None if self._best_index is None else self.deployment(self._best_index)

    @property
    def counts(self) -> dict[str, int]:
        """Candidates by fate: ``simulated`` (replayed to the end), ``stopped`` (replayed
        until their miss was certain), ``pruned`` (not replayed), and ``met`` (of the
        simulated, those that met the SLO)."""
        out = {"candidates": len(self.results), "simulated": 0, "stopped": 0, "pruned": 0, "met": 0}
        for r in self.results:
            out[r["fate"]] = out.get(r["fate"], 0) + 1
            out["met"] += r.get("meets") is True
        return out

    def unmet(self) -> str:
        """Why no candidate met the SLO, one sentence naming the bounds none met
        (:func:`_unmet.unmet`); ``""`` when one did."""
        return _unmet.unmet(self.results, self.slo, len(self.invalid))

    def families(self) -> list[dict[str, Any]]:
        """Why each family (mode, pools, formats) of pruned or stopped candidates was
        (:func:`_front.families`)."""
        return _front.families(self.results)

    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per candidate: its settings, fate, verdict and metrics."""
        out = []
        for r in self.results:
            c, s = r["candidate"], r.get("summary") or {}
            row = {"index": r["index"], "key": r["key"], "mode": c["mode"], "gpus": r["gpus"],
                   "pools": " + ".join(f"{p['count']}×TP{p['tp']}" + (f"×DP{p['dp']}" if p.get("dp", 1) > 1 else "")
                                       + ("+EP" if p.get("ep") else "") for p in c["pools"]),
                   "max_num_seqs": c["max_num_seqs"], "max_num_batched_tokens": c["max_num_batched_tokens"],
                   "decode_max_num_seqs": c.get("decode_max_num_seqs"),
                   "decode_max_num_batched_tokens": c.get("decode_max_num_batched_tokens"),
                   "weights": c.get("weights") or None, "kv_cache": c.get("kv_cache") or None,
                   "fate": r["fate"], "kind": r.get("kind") or None, "meets": r.get("meets"),
                   "slo_ratio": r.get("slo_ratio"), "output_tps_per_gpu": r.get("output_tps_per_gpu"),
                   "output_token_throughput_tps": s.get("output_token_throughput_tps"),
                   "completed": s.get("completed"), "rejected": s.get("rejected"),
                   "cost_per_million_tokens": _front.cost_per_million(r, self.price_per_gpu_hour),
                   "reason": r.get("reason") or None}
            for m, v in (r.get("percentiles") or {}).items():
                row[f"{m}.{percentile_key(self.slo['percentile'])}"] = v
            out.append(row)
        return out

    def to_pandas(self):  # -> pandas.DataFrame
        """:meth:`rows` as a DataFrame (needs pandas)."""
        from ...binding import lazy as _lazy

        return _lazy.module("pandas").DataFrame(self.rows())

    def to_json(self) -> str:
        """The answer as JSON: counts, the best deployment (key, result, launch
        commands), the front's indices, the families, every result."""
        b = self.best
        return json.dumps({"slo": self.slo, "space": self.space, "offer": self.offer, "counts": self.counts,
                           "elapsed_s": self.elapsed_s,
                           "best": None if b is None else {"index": b.index, "key": b.key, "launch": b.launch,
                                                           "result": b.result},
                           "front": [r["index"] for r in self.front], "families": self.families(),
                           "invalid": self.invalid, "results": self.results}, indent=1, allow_nan=False)

    def table(self, front_rows: int = 10) -> str:
        """The answer as text: what was searched, candidates by fate, the recommended
        deployment and its commands, the front, why each family was pruned or stopped."""
        from ._text import render

        return render(self, front_rows)

    def plot(self, path: str | os.PathLike[str] | None = None):
        """The Pareto plot (output tokens/s per GPU against the SLO ratio) as a
        matplotlib Figure, written to ``path`` when given (needs matplotlib)."""
        from .plot import pareto_figure

        return pareto_figure(self, path)

    def __repr__(self) -> str:
        c = self.counts
        return (f"SearchResult({c['candidates']} candidates: {c['simulated']} simulated, {c['stopped']} stopped, "
                f"{c['pruned']} pruned; best {None if self._best_index is None else self.results[self._best_index]['key']!r})")


def _run_by_gpus(plan: Mapping[str, Any], journal: Journal, todo: list[int], run: Any, *,
                 dominance: bool) -> None:
    """Settle the candidates ``todo`` (``run(indices, dominated)``): with ``dominance`` and
    a load that bounds the throughput (``plan["offer"]["max_output_tps"]``), by GPU count,
    fewest first, each count's candidates once every smaller count's are settled; when a
    count cannot be recommended against the best of the smaller counts
    (:func:`_front.dominated`), its candidates are run with that reason (those that can
    start are pruned as ``dominated``, not replayed). Each decision reads the results of
    smaller counts only, so it is the same whatever order the results came in, the
    backend, or a resume."""
    cands, offer = plan["candidates"], plan["offer"]
    if not (dominance and offer.get("max_output_tps")):
        run(todo, None)
        return
    for g in sorted({cands[i]["gpus"] for i in todo}):
        lead = _front.leader(journal.results.values(), below=g)
        run([i for i in todo if cands[i]["gpus"] == g], None if lead is None else _front.dominated(g, offer, lead))


def search(question: Any, *, gpus: int | Sequence[int], slo: Mapping[str, float], percentile: float = 90.0,
           modes: Sequence[str] | None = None, tp: Sequence[int] | None = None, dp: Sequence[int] | None = None,
           ep: Sequence[bool] | None = None, max_num_seqs: Sequence[int] | None = None,
           max_num_batched_tokens: Sequence[int] | None = None,
           prefill_max_num_seqs: Sequence[int] | None = None,
           prefill_max_num_batched_tokens: Sequence[int] | None = None,
           decode_max_num_seqs: Sequence[int] | None = None,
           decode_max_num_batched_tokens: Sequence[int] | None = None,
           weights: Sequence[str | None] | None = None,
           kv_cache: Sequence[str | None] | None = None, kv_transfer: Mapping[str, float] | None = None,
           out: str | os.PathLike[str] | None = None, resume: bool = True, jobs: int | None = None,
           backend: str = "local", ray_address: str | None = None, early_stop: bool = True,
           prune: bool = True, progress: bool | None = None,
           price_per_gpu_hour: float | None = None) -> SearchResult:
    """Search the deployments of a question by simulation and recommend one.

    Args:
        question: a replay spec (path, dict or :class:`~aisimulate.Spec`): the model,
            system, engine, perf source and workload; its workers are the search's.
        gpus: the GPU budget (every count from 1 to it) or the GPU counts allowed
            (``[8, 16]``).
        slo: bounds in ms, any of ``ttft_ms``, ``tpot_ms``, ``e2e_ms``, on their
            ``percentile``-th percentile (default 90).
        modes, tp, dp, ep, max_num_seqs, max_num_batched_tokens, weights, kv_cache,
            kv_transfer: the space (``core/search/space.go``, ``Space``): a list replaces
            that axis's default (``weights``/``kv_cache``: ``None`` is the checkpoint's /
            the question's format; ``kv_transfer``: ``{"bandwidth_gb_per_s",
            "latency_ms"}`` of the P/D link). ``max_num_seqs`` and
            ``max_num_batched_tokens`` are the aggregated candidates' limits.
        prefill_max_num_seqs, prefill_max_num_batched_tokens, decode_max_num_seqs,
            decode_max_num_batched_tokens: a P/D candidate's limits, each pool its own
            (vLLM; default: the prefill pool every ``max_num_batched_tokens`` at the
            engine's default sequences, the decode pool every ``max_num_seqs`` at the
            engine's default tokens; with TensorRT-LLM and SGLang both pools share the
            decode lists' pair).
        out: a folder for the search's journal (``search.jsonl``): each result is kept
            there as it is settled, and a search asked again with the same ``out`` and the
            same question continues where it stopped (Ctrl-C, a crash) unless ``resume``
            is false (then it starts over). Without it the journal is a temporary file.
        jobs: candidates replayed at once (default: the machine's cores; ``backend="local"``).
        backend: ``"local"`` or ``"ray"`` (tasks of 16 candidates on the cluster
            ``ray.init(address=ray_address)`` joins).
        early_stop: stop a replay once its miss of the SLO is certain (default on).
        prune: skip candidates an analytic bound settles, and those of a GPU count whose
            throughput bound cannot reach the best of fewer GPUs (``dominated``: never
            recommended, their verdict unknown) (default on); deployments that cannot start
            are skipped either way.
        progress: a progress bar on stderr (default: when stderr is a terminal).
        price_per_gpu_hour: adds each candidate's cost per million output tokens.

    Returns:
        A :class:`SearchResult` (``best``, ``front``, ``table()``, ``plot()``, …).

    Raises:
        ConfigError: the question, the SLO or the space is invalid (``.field`` names it:
            ``slo.ttft_ms``, ``gpus``, ``space``), or ``out`` holds another question's journal.
        KeyboardInterrupt: Ctrl-C: the replays stop; with ``out`` the results so far stay
            in the journal and a new call resumes.
        ImportError: ``backend="ray"`` without Ray.
    """
    from ...config import load_config

    if backend not in BACKENDS:
        raise ConfigError("backend", f"{backend!r}: use one of {', '.join(BACKENDS)}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ConfigError("jobs", f"{jobs!r}: want an integer ≥ 1")
    if price_per_gpu_hour is not None:
        from ...report import MAX_PRICE_PER_GPU_HOUR, is_gpu_hour_price

        if not is_gpu_hour_price(price_per_gpu_hour):
            raise ConfigError("price_per_gpu_hour",
                              f"{price_per_gpu_hour!r}: want a number in (0, {MAX_PRICE_PER_GPU_HOUR:.0f}] (as replay's)")
    t0 = time.perf_counter()
    spec = load_config(question)
    space: dict[str, Any] = {"gpus": _gpus(gpus)}
    for name, value in (("modes", modes), ("tp", tp), ("dp", dp), ("ep", ep), ("max_num_seqs", max_num_seqs),
                        ("max_num_batched_tokens", max_num_batched_tokens),
                        ("prefill_max_num_seqs", prefill_max_num_seqs),
                        ("prefill_max_num_batched_tokens", prefill_max_num_batched_tokens),
                        ("decode_max_num_seqs", decode_max_num_seqs),
                        ("decode_max_num_batched_tokens", decode_max_num_batched_tokens)):
        if value is not None:
            space[name] = list(value)
    for name, value in (("weights", weights), ("kv_cache", kv_cache)):
        if value is not None:
            space[name] = ["" if v is None else v for v in value]
    if kv_transfer is not None:
        space["kv_transfer"] = dict(kv_transfer)
    request = {"spec": spec.data, "space": space, "slo": _slo(slo, percentile), "early_stop": bool(early_stop),
               "prune": bool(prune)}
    plan = _native.call("SearchPlan", json.dumps(request), "plan")
    # the space and SLO as the core resolved them: what the digest and a resume compare
    request["space"], request["slo"] = plan["space"], plan["slo"]
    header = {"aisimulate_search": 1, "digest": digest(request), "candidates": len(plan["candidates"])}
    tmp = None
    if out is None:
        import tempfile

        tmp = tempfile.TemporaryDirectory(prefix="aisimulate-search-")
        folder = tmp.name
    else:
        folder = os.fspath(out)
    try:
        journal = Journal.open(os.path.join(folder, JOURNAL), header, resume=resume)
        resumed = len(journal.results)
        todo = [i for i in range(len(plan["candidates"])) if i not in journal.results]
        bar = progress_bar(len(todo), progress)
        try:
            def run(indices: list[int], dominated: str | None) -> None:
                rq = request if dominated is None else dict(request, dominated=dominated)
                if backend == "ray":
                    run_ray(rq, journal, indices, progress, address=ray_address, bar=bar)
                else:
                    run_local(rq, journal, indices, jobs or os.cpu_count() or 1, progress, bar=bar)

            _run_by_gpus(plan, journal, todo, run, dominance=bool(prune))
        finally:
            if bar is not None:
                bar.close()
        return SearchResult(plan, journal.results, request, time.perf_counter() - t0, price_per_gpu_hour, resumed)
    finally:
        if tmp is not None:
            tmp.cleanup()
