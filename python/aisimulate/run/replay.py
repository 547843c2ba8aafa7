"""One replay: :func:`replay` (held, or streamed into a result folder), :func:`check`,
:func:`estimate_memory`, :func:`config_schema` and the SLO check :func:`check_slo`.

The package exports each of them (``aisimulate.replay``, …); what runs many replays
(sweep, compare, search) imports them from here. This is the run layer (docs/design.md,
"The Python package"): it compiles the config (:mod:`aisimulate.config`), runs the core
(:mod:`aisimulate.binding.calls`) and makes the :class:`~aisimulate.ReplayReport`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import BackendVersionWarning, ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:  # names of annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Sequence

    from ..config import Spec
    from ..report import ReplayReport

__all__ = ["check", "check_percentiles", "check_slo", "config_schema", "estimate_memory", "replay"]


def check_percentiles(percentiles: Any) -> list[float]:
    """Chosen percentiles as the core takes them: ascending, without repeats, or a
    :class:`ConfigError` on ``percentiles`` naming the bad one (each a finite number in
    (0, 100]; at least one). One number or a string is a TypeError naming the form."""
    import math
    import numbers

    if isinstance(percentiles, (str, bytes, Mapping)) or not hasattr(percentiles, "__iter__"):
        raise TypeError(f"percentiles must be a list of numbers in (0, 100], e.g. [50, 90, 99, 99.9], "
                        f"got {percentiles!r}")
    values = list(percentiles)
    if not values:
        raise ConfigError("percentiles", "has none: give at least one percentile in (0, 100]")
    for p in values:
        if isinstance(p, bool) or not isinstance(p, numbers.Real):
            raise TypeError(f"percentiles: {p!r} is not a number")
        if not (math.isfinite(p) and 0 < p <= 100):
            raise ConfigError("percentiles", f"{p:g} is not a percentile: each must be a finite number in (0, 100]")
    return sorted({float(p) for p in values})


def check_slo(slo: Mapping[str, Any]) -> dict[str, float]:
    """An SLO as the core takes it, or a :class:`ConfigError` naming the bad entry
    (``slo.<name>``): keys from :data:`SLO_FIELDS`, values finite numbers of ms > 0.
    A ``slo`` that is not a mapping is a TypeError naming the form it takes."""
    import math

    from ..binding.args import mapping
    from ..report import SLO_FIELDS

    out: dict[str, float] = {}
    mapping("slo", slo, "{'ttft_ms': 200, 'tpot_ms': 20} (bounds in ms, any of "
            f"{', '.join(SLO_FIELDS)})")
    if not slo:
        raise ConfigError("slo", f"has no bound: give {', '.join(SLO_FIELDS)} (ms)")
    for key, value in slo.items():
        if key not in SLO_FIELDS:
            raise ConfigError(f"slo.{key}", f"is not an SLO bound: use {', '.join(SLO_FIELDS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value <= 0:
            raise ConfigError(f"slo.{key}", f"must be a finite number of ms > 0, got {value!r}")
        out[key] = float(value)
    return out


def replay(src: str | os.PathLike[str] | Mapping[str, Any] | Spec, *,
           timeline: bool = False, progress: bool | None = None,
           slo: Mapping[str, float] | None = None,
           percentiles: Sequence[float] | None = None, token_gaps: bool = False,
           output_dir: str | os.PathLike[str] | None = None,
           formats: str | Sequence[str] | None = None,
           exports: str | Sequence[str] | None = None, force: bool = False) -> ReplayReport:
    """Run one replay and return its report.

    Args:
        src: a config path (YAML or JSON), a dict, or a :class:`Spec` from
            :func:`load_config`.
        timeline: also record every engine pass (``report.timeline``: per pass its
            worker, start and end ms, prefill tokens, decode requests, queue, KV blocks
            in use). Off by default (it costs memory in proportion to the passes).
        slo: per-request bounds in ms, any of ``{"ttft_ms", "tpot_ms", "e2e_ms"}``: the
            summary gains ``goodput`` (``good_requests``, ``goodput_rps`` = good /
            duration s, ``slo_attainment`` = good / completed), as AIPerf counts good
            requests: a request of one output token has no TPOT, so it misses that bound.
        percentiles: percentiles to add to every statistic of the summary, e.g.
            ``[50, 90, 99, 99.9]`` (each a finite number in (0, 100]; sorted, repeats
            dropped): each one not among p50/p90/p95/p99 is a key ``p`` + its shortest
            decimal form (``p99.9``), numpy's linear rule as the others;
            ``metadata["percentiles"]`` lists them and :meth:`ReplayReport.table` shows
            them as its columns. ``None`` (default): the summary as always.
        token_gaps: also record when the client received each chunk of each response
            (``report.chunk_times``; the tokens received at one instant are one chunk,
            as a streamed message), so that the AIPerf export writes each record's
            ``inter_chunk_latency``. The replay then decodes token by token (the same
            report, more time) and holds 8 bytes per output token and 12 per request
            (the memory budget counts them). Not with ``output_dir``: save the report.
        progress: show a progress bar (requests finished / expected, simulated time) on
            stderr, or a widget in a notebook, once the replay has run for 2 s. ``None``
            (default): when stderr is a terminal or in a Jupyter kernel.
        output_dir: write the result folder as :meth:`ReplayReport.save` writes it
            (``formats``, ``exports``), streaming the per-request records into its
            tables in chunks of 65,536 as their requests finish instead of holding
            them (a 10-million-request replay then holds the requests in flight, not
            1.4 GB of records). The folder is replaced atomically once the replay has
            finished; Ctrl-C or an error leaves the previous result. The returned
            report reads its records back from the first of ``requests.parquet``,
            ``.csv``, ``.jsonl`` it wrote when they are first used (``requests``,
            ``to_pandas()``, an export). Rows are in ``request_id`` order, as ``save``
            writes them.
        formats, exports, force: with ``output_dir``, as :meth:`ReplayReport.save` takes
            them (checked before the replay starts; ``formats`` defaults to parquet,
            ``exports`` to none). Without ``output_dir`` they have nothing to apply to
            and giving one is a ValueError, as the CLI refuses ``--records``,
            ``--export`` and ``--force`` without ``--output-dir``.

    Returns:
        The :class:`ReplayReport` (summary, per-request records, metadata).

    Raises:
        ConfigError: the config is invalid or selects an unsupported mode (``.field`` is
            the dotted path), or an ``slo`` bound is (``slo.<name>``), or a
            percentile (``percentiles``).
        TypeError: ``slo`` is not a mapping, ``percentiles`` not a list of numbers, ``formats``/``exports`` neither a name
            nor a list of names, or ``progress`` (``timeline``) not True, False (or
            None).
        ValueError: with ``output_dir``, a format or export is unknown or given twice;
            without it, ``formats``, ``exports`` or ``force`` given (the argument named).
        DataError: the workload data is invalid (``.file``, ``.line``).
        SimulationError: any other error in the core, including a recovered panic.
        KeyboardInterrupt: Ctrl-C (or a notebook's interrupt) while it ran: the core
            stops within a few ms and no report is made.
        ImportError: the native core has not been built (``make build``).

    Warns:
        BackendVersionWarning: ``engine.perf.backend_version`` has no kernel tables in
            the database and another version's were used (once per version).
    """
    from ..binding.args import flag

    progress = flag("progress", progress, auto=True)
    options: dict[str, Any] = {"timeline": flag("timeline", timeline)}
    if slo is not None:
        options["slo"] = check_slo(slo)
    if percentiles is not None:
        options["percentiles"] = check_percentiles(percentiles)
    if flag("token_gaps", token_gaps):
        if output_dir is not None:
            raise ValueError("token_gaps holds the chunk times with the records: replay without output_dir, "
                             "then report.save(DIR, exports=['aiperf'])")
        options["token_gaps"] = True
    if output_dir is not None:
        from ..io.names import result_formats

        formats, exports = result_formats(("parquet",) if formats is None else formats,
                                          () if exports is None else exports)
    else:  # nothing to write them into: a silent no-op would hide the missing folder
        for name, given in (("formats", formats is not None), ("exports", exports is not None),
                            ("force", bool(force))):
            if given:
                raise ValueError(f"{name} applies to the result folder: give output_dir too "
                                 "(or save the report: report.save(DIR, ...))")
    from ..binding.calls import replay_native
    from ..config import load_config
    from ..report import ReplayReport

    spec = load_config(src)
    if output_dir is not None:
        from .stream import replay_into

        report = replay_into(spec.to_json(), options, output_dir, formats, exports,
                             progress=progress, on_error=_explain, config_file=spec.source, force=force)
        _warn_stand_in_tables(report.metadata)
        return report
    head, buf = replay_native(spec.to_json(), options, progress=progress, on_error=_explain)
    report = ReplayReport.from_columnar(head, buf)
    report.config_file = spec.source  # a later save must not overwrite it
    _warn_stand_in_tables(report.metadata)
    return report


def _warn_stand_in_tables(meta: Mapping[str, Any] | None) -> None:
    """One :class:`BackendVersionWarning` per version the core stood in for another:
    the kernel tables of ``engine.perf.backend_version`` are missing and the nearest
    version's are used (``metadata.perf_metadata.tables``: ``requested_version`` and
    ``version`` of each table read)."""
    import warnings

    perf = meta.get("perf_metadata") if isinstance(meta, Mapping) else None
    tables = perf.get("tables") if isinstance(perf, Mapping) else None
    used: dict[tuple[str, str], list[str]] = {}
    for t in tables if isinstance(tables, list) else ():
        if isinstance(t, Mapping) and t.get("requested_version") and t.get("version") != t["requested_version"]:
            used.setdefault((str(t["requested_version"]), str(t.get("version"))), []).append(str(t.get("table")))
    for (asked, got), names in used.items():
        warnings.warn(f"engine.perf.backend_version: the database has no kernel tables of version "
                      f"{asked} ({', '.join(names)}); those of version {got} are used",
                      BackendVersionWarning, stacklevel=3)


def estimate_memory(src: str | os.PathLike[str] | Mapping[str, Any] | Spec, *,
                    token_gaps: bool = False) -> dict[str, Any]:
    """Estimate a replay's peak memory before running it (nothing is simulated);
    ``token_gaps``: of a :func:`replay` with ``token_gaps=True`` (8 bytes more per
    output token and 12 per request in ``records_bytes``).

    Returns:
        ``{"requests", "exact", "in_flight", "queued", "service_rps", "base_bytes",
        "records_bytes", "in_flight_bytes", "held_turns_bytes", "kv_index_bytes",
        "dataset_bytes", "total_bytes", "budget_bytes", "budget_source"}``: bytes by
        part and in total, the requests and requests in flight counted (``exact`` is
        false when the count is only expected; ``queued`` is the part of ``in_flight``
        an overloaded open loop of synthetic requests is expected to leave waiting at
        its last arrival, from ``service_rps``, the requests per second the deployment
        is priced to serve), and the budget the replay is held to (``execution.
        max_memory_gb``, or half of this machine's memory). :func:`replay` refuses a
        spec whose total without the expected queue passes its budget (ConfigError on
        ``execution.max_memory_gb``) and stops one that grows past it. The estimate's
        error against measured peaks is stated in docs/benchmarks.md ("Memory").

    Raises:
        ConfigError, DataError: as :func:`replay` raises them, before any simulation.
    """
    import json

    from ..binding import native as _native
    from ..binding.args import flag
    from ..catalogue import explain_not_found
    from ..config import load_config

    spec = load_config(src)
    try:
        if flag("token_gaps", token_gaps):
            return _native.call("EstimateWith", spec.to_json(), "estimate", json.dumps({"token_gaps": True}))
        return _native.call("Estimate", spec.to_json(), "estimate")
    except ConfigError as exc:
        raise explain_not_found(exc) from None


def _explain(exc: BaseException) -> BaseException:
    from ..catalogue import explain_not_found

    return explain_not_found(exc) if isinstance(exc, ConfigError) else exc


def check(src: str | os.PathLike[str] | Mapping[str, Any] | Spec) -> dict[str, Any]:
    """Check a config without replaying it: compile it (:func:`load_config`), then build
    what the replay would run — model, GPU system, perf model, KV capacity of every
    pool, client path — and open its workload; a trace is read to its end by the
    replay's reader (nothing is replayed), so its first bad row is the error. The
    memory budget is held as :func:`replay` holds it: its estimate, and the later
    turns of open sessions the replay would read ahead to start its first sessions.

    Returns:
        The run metadata the report would carry (model, system, gpus, num_gpu_blocks,
        max_model_len, perf_model, the canonical spec …), with zero busy time.

    Raises:
        ConfigError, DataError: as :func:`replay` raises them, before any simulation.
        KeyboardInterrupt: Ctrl-C while it ran: the trace's read stops within a few ms.

    Warns:
        BackendVersionWarning: as :func:`replay` does.
    """
    from ..binding.calls import call_stoppable
    from ..catalogue import explain_not_found
    from ..config import load_config

    spec = load_config(src)
    try:
        meta = call_stoppable("Check", spec.to_json(), "check", {})["metadata"]
    except ConfigError as exc:
        raise explain_not_found(exc) from None
    _warn_stand_in_tables(meta)
    return meta


def config_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a replay config, generated from the core's
    types (``core/config/schema.go``; published as docs/config.schema.json): objects
    of the known fields only, each discriminated block (``engine.perf``,
    ``traffic.source``, ``traffic.load``, a length) a ``oneOf`` of its variants keyed by
    a ``const``; numbers carry their ranges (``minimum``, ``maximum``,
    ``exclusiveMinimum``) and ``engine.scheduler.block_size`` its choices (``enum``)
    from the table :func:`load_config` checks them with, and each enumerated string
    field (``engine.backend``, ``execution.mode``, …) its allowed values (``enum``) from
    the lists :func:`load_config` checks them with. Conditions between fields are
    checked by :func:`load_config` alone, whose errors name the dotted field.

    Raises:
        ImportError: the native core has not been built.
    """
    from ..binding import native as _native

    return _native.call("Schema", "", "schema")
