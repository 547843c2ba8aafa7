"""Sweep a replay over many deployments or loads: one row per point, in parallel.

>>> import aisimulate
>>> df = aisimulate.sweep("examples/quickstart.yaml",
...                       {"engine.workers.aggregated.count": [1, 2, 4],
...                        "traffic.load.concurrency": [16, 64]})
>>> df[["engine.workers.aggregated.count", "traffic.load.concurrency", "status",
...     "ttft_ms.p95", "output_tps_per_gpu"]]

Points are a grid (cartesian product; a tuple key couples fields) or a list of
scenarios; each is the base spec with its dotted fields set. Every point becomes a row:
its fields, ``status`` (``ok`` | ``infeasible`` | ``error``), ``reason``, then every
summary metric flattened (:func:`metric_columns`). Points run on this machine's cores
(``backend="local"``, loky worker processes; tiny grids serially) or as tasks on a Ray
cluster (``backend="ray"``). A failing point never stops the others (unless
``errors="raise"``), a worker that dies fails only its own point, and the rows are in
point order whatever the order of completion, so a sweep's table is the same on every
backend and every run.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Mapping, Sequence

from ._sweep.local import run_local
from ._sweep.point import PointResult, RowOptions, failed, metric_columns
from ._sweep.points import apply, expand
from .binding import args as _args
from .binding import lazy as _lazy
from .io.files import input_files
from .config import Spec, load_config, read_config
from .errors import BackendVersionWarning, ConfigError

__all__ = ["sweep", "metric_columns", "point_inputs", "SUMMARY_COLUMNS", "BACKENDS"]

#: The backends :func:`sweep` runs points on.
BACKENDS = ("local", "ray")

#: Every metric column of a sweep row without an SLO (see :func:`metric_columns`).
SUMMARY_COLUMNS: tuple[str, ...] = tuple(metric_columns(None))


def _check_options(backend: str, errors: str, row: RowOptions,
                   columns: str | Sequence[str] | None, unused: Mapping[str, bool]) -> list[str]:
    """The metric columns to keep, once the options are checked (``row``'s SLO and
    percentiles already, by :func:`aisimulate.check_slo` and
    :func:`aisimulate.run.replay.check_percentiles`; ``unused``: option → whether it
    was given for the backend that does not take it)."""
    if backend not in BACKENDS:
        raise ConfigError("", f"sweep backend {backend!r} is not supported: use one of {', '.join(BACKENDS)}")
    # an option of the other backend would be ignored without a word: a user who forgot
    # backend="ray" would believe the sweep ran on the cluster
    for option, given in unused.items():
        if given:
            other = "local" if option == "jobs" else "ray"
            raise ConfigError("", f"sweep {option}= applies to backend={other!r} only, and this sweep's "
                                  f"backend is {backend!r}: " + ("leave jobs out (Ray places the tasks)"
                                  if option == "jobs" else "add backend='ray' or leave it out"))
    if errors not in ("record", "raise"):
        raise ConfigError("", f"sweep errors={errors!r}: use 'record' or 'raise'")
    every = metric_columns(row.slo, row.percentiles)
    if columns is None:
        return every
    try:
        return _args.names("columns", columns, every, "sweep column(s)")
    except ValueError as exc:  # unknown or given twice: a ConfigError, as every option's
        raise ConfigError("", str(exc)) from None


def sweep(base: str | os.PathLike[str] | Mapping[str, Any] | Spec,
          points: Mapping[Any, Sequence[Any]] | Sequence[Mapping[str, Any]], *,
          jobs: int | None = None, backend: str = "local", errors: str = "record",
          columns: str | Sequence[str] | None = None, slo: Mapping[str, float] | None = None,
          percentiles: Sequence[float] | None = None, return_reports: bool = False, progress: bool | None = None,
          ray_address: str | None = None, ray_files: str = "ship",
          path_map: Mapping[str, str] | None = None, max_retries: int = 2):
    """Replay every point of a sweep on top of ``base`` and return one row per point.

    Args:
        base: the base config (path, dict or :class:`Spec`).
        points: a grid ``{field: [values]}`` (cartesian product, last key fastest; a
            tuple key couples fields, its values tuples) or a list of scenarios
            ``[{field: value}, …]``. Fields are dotted spec paths; a relative file
            path among the values resolves against the working directory (as
            ``load_config(overrides=)`` and the CLI's ``--set``), not the base config's
            folder.
        jobs: local worker processes (default: the machine's cores); 1 runs every
            point in this process.
        backend: ``"local"`` (this machine's cores) or ``"ray"`` (tasks on the Ray
            cluster that ``ray.init(address=ray_address)`` connects to; default a local
            Ray; needs ``pip install 'aisimulate[ray]'``).
        errors: ``"record"`` (default): a failing point becomes a row with its status
            and reason and the sweep goes on; ``"raise"``: the first failure stops the
            sweep and is raised (its original type, with a note naming the point).
        columns: the metric columns to keep, one name or a list (default all, see
            :func:`metric_columns`); the point's fields, ``status`` and ``reason`` are always kept.
        slo: per-request thresholds in ms, ``{"ttft_ms": …, "tpot_ms": …, "e2e_ms":
            …}`` (any subset, at least one; each a finite number > 0, checked by
            :func:`aisimulate.check_slo` as :func:`aisimulate.replay` checks it): adds
            ``goodput_rps`` and ``slo_attainment``.
        percentiles: percentiles each point's replay reports beside the fixed ones
            (``replay(percentiles=…)``, checked as it checks them), e.g. ``[50, 99.9]``:
            adds a ``metric.pN`` column per latency metric for each one not among the
            fixed (``ttft_ms.p99.9``).
        return_reports: also return each point's :class:`~aisimulate.ReplayReport`.
        progress: show a tqdm progress bar (default: when stderr is a terminal).
        ray_address: the Ray cluster to connect to (``"auto"``, ``"ray://host:10001"``,
            ``"host:6379"``); ignored when Ray is already initialized.
        ray_files: ``"ship"`` (default): every file a point reads (trace, model and
            system files, the model's config) is sent through Ray's object store to the
            workers; ``"shared"``: workers read the same paths, after ``path_map``.
        path_map: ``{local prefix: cluster prefix}`` rewriting file paths for Ray
            workers (``ray_files="shared"``), e.g. ``{"/home/me/data": "/mnt/data"}``.
        max_retries: Ray retries of a point whose worker died before it is recorded
            as failed.

    Returns:
        A ``pandas.DataFrame`` in point order: the point's fields, ``status``,
        ``reason``, then the metric columns (``None``/NaN for a failed point). A count
        column (``completed``, ``rejected``, … ``gpus``) is int64, or float64 once a
        point failed: NaN, not pandas' ``NA``, so that ``math.isnan`` and numpy work on
        every metric alike (the CLI prints counts as integers). With
        ``return_reports=True``, ``(df, reports)``, ``reports[i]`` the report of row i
        or ``None`` for a failed point.

    Warns:
        BackendVersionWarning: once per message, for the points whose kernel-table
            version was stood in for (as :func:`aisimulate.replay`), from worker
            processes too.

    Raises:
        ConfigError: the points or options are malformed, or an option of the other
            backend is given (``jobs`` with ``backend="ray"``; ``ray_address``,
            ``ray_files``, ``path_map`` or ``max_retries`` without it) (a bad ``slo`` bound names
            ``slo.<name>``, an empty ``slo`` is ``slo``; a bad percentile
            ``percentiles``), or (:class:`UnknownFieldError`)
            a field is unknown in every point that sets it (a misspelt field; checked
            before anything runs); with
            ``errors="raise"``, also a point whose spec is invalid (checked the same way).
        ConfigError, InfeasibleError, DataError, SimulationError: ``errors="raise"`` and a
            point failed (``exc.__notes__`` names the point).
        TypeError: ``slo`` is not a mapping, ``percentiles`` not a list of numbers, ``columns`` neither a name nor a list of
            names, or ``progress`` not True, False or None.
        ImportError: pandas, or for ``backend="ray"`` Ray, is not installed.
    """
    pd = _lazy.module("pandas")
    from .binding.args import flag

    progress = flag("progress", progress, auto=True)
    if slo is not None:  # as replay() checks it: finite bounds > 0, at least one
        from .run.replay import check_slo

        slo = check_slo(slo)
    if percentiles is not None:  # likewise: ascending, without repeats, each in (0, 100]
        from .run.replay import check_percentiles

        percentiles = check_percentiles(percentiles)
    row = RowOptions(slo, tuple(percentiles or ()))
    ray = backend == "ray"
    keep = _check_options(backend, errors, row, columns, {
        "jobs": ray and jobs is not None, "ray_address": not ray and ray_address is not None,
        "ray_files": not ray and ray_files != "ship", "path_map": not ray and path_map is not None,
        "max_retries": not ray and max_retries != 2})
    compile_point = _point_compiler(base)
    pts = expand(points)
    results: list[PointResult | None] = [None] * len(pts)
    tasks = []
    for i, point in enumerate(pts):
        try:
            tasks.append((i, compile_point(point).data))
        except ConfigError as exc:
            results[i] = failed(i, exc)
    _refuse_unknown_fields(pts, results)  # a misspelt field first, whatever errors says
    first = next((r for r in results if r is not None), None)
    if errors == "raise" and first is not None:
        raise _named(first.error, first.index, pts[first.index])

    bar = _progress_bar(len(pts), progress)
    bar.update(len(pts) - len(tasks))
    stand_ins: dict[str, None] = {}  # the points' BackendVersionWarning messages, once each

    def on_result(r: PointResult) -> None:
        results[r.index] = r
        stand_ins.update(dict.fromkeys(r.warnings))
        bar.update(1)
        if r.status != "ok":
            bar.set_postfix(failed=sum(1 for x in results if x is not None and x.status != "ok"))
            if errors == "raise":
                raise _named(r.error or RuntimeError(r.reason), r.index, pts[r.index])

    try:
        if backend == "ray":
            from ._sweep.ray_backend import run_ray

            run_ray(tasks, row, return_reports, on_result, address=ray_address, files=ray_files,
                    path_map=path_map, max_retries=max_retries)
        else:
            n = jobs if jobs is not None else (os.cpu_count() or 1)
            if n < 1:
                raise ConfigError("", f"sweep jobs must be ≥ 1, got {jobs}")
            run_local(tasks, n, row, return_reports, on_result)
    finally:
        bar.close()
        for message in stand_ins:  # from worker processes too, where they were caught
            warnings.warn(message, BackendVersionWarning, stacklevel=2)

    rows = []
    for point, r in zip(pts, results):
        assert r is not None, "every point has a result"  # run_* report every task
        row = dict(point)
        row["status"], row["reason"] = r.status, r.reason
        for c in keep:
            row[c] = r.metrics.get(c)
        rows.append(row)
    fields = list(dict.fromkeys(k for p in pts for k in p))  # scenario fields may differ
    df = pd.DataFrame(rows, columns=fields + ["status", "reason"] + keep)
    if return_reports:
        return df, [r.report if r is not None else None for r in results]
    return df


def point_inputs(base: str | os.PathLike[str] | Mapping[str, Any] | Spec,
                 points: Mapping[Any, Sequence[Any]] | Sequence[Mapping[str, Any]]) -> list[str]:
    """Every file the points of a sweep read (absolute paths, each once, in point order):
    the trace, the model and system files and the named model's config files of each
    point's compiled spec, as :func:`sweep` compiles it. A point that does not compile
    reads nothing. The CLI refuses an output that is one of them before anything runs.

    Raises:
        ConfigError: the base config or the points are malformed.
    """
    compile_point = _point_compiler(base)
    found: dict[str, None] = {}
    for point in expand(points):
        try:
            spec = compile_point(point)
        except ConfigError:  # the point fails; it reads nothing
            continue
        found.update(dict.fromkeys(input_files(spec.data)))
    return list(found)


def _point_compiler(base: str | os.PathLike[str] | Mapping[str, Any] | Spec):
    """``point → Spec``: the base config as given with the point's fields set, compiled,
    as ``aisimulate replay BASE --set …`` compiles it, so that the defaults of what a
    point changes follow from it (an ``engine.backend`` point gets that engine's
    defaults, not the vLLM scheduler block the base's own compilation filled in). A
    :class:`Spec` from :func:`load_config` keeps the config as given (``Spec.given``):
    its points are set on that; one made by hand is compiled already: on it.

    Raises:
        ConfigError: the base config does not compile."""
    base_spec = load_config(base)  # the base alone is valid
    if not isinstance(base, Spec):
        given: Spec | None = read_config(base)
    else:
        given = Spec(base.given, base.source) if base.given is not None else None

    def compile_point(point: Mapping[str, Any]) -> Spec:
        if not point:
            return base_spec
        if given is None:
            return load_config(apply(base_spec.data, point))
        return load_config(given, overrides=point)

    return compile_point


class UnknownFieldError(ConfigError):
    """A sweep field (of the grid or the scenario list, not of the base config) that is
    unknown in every point that sets it: a misspelt field (:func:`_refuse_unknown_fields`).
    ``field`` and ``reason`` are the core's, as for any unknown field."""


def _refuse_unknown_fields(pts: Sequence[Mapping[str, Any]], results: Sequence[PointResult | None]) -> None:
    """A field that no point that sets it can compile, each for "unknown field", is a
    misspelt field, not points that failed: raise it before anything runs. (A field
    unknown in some points only — a source type's field where another type is chosen
    — stays those points' failure.)

    Raises:
        UnknownFieldError: naming the field and the fields known there.
    """
    for field in dict.fromkeys(k for p in pts for k in p):
        errors = [r.error if r is not None else None for p, r in zip(pts, results) if field in p]
        if errors and all(isinstance(e, ConfigError) and e.reason.startswith("unknown field")
                          and (field == e.field or field.startswith(e.field + ".")) for e in errors):
            raise UnknownFieldError(errors[0].field, errors[0].reason)


def _named(exc: BaseException, index: int, point: Mapping[str, Any]) -> BaseException:
    """``exc`` with a note naming the sweep point it came from."""
    desc = ", ".join(f"{k}={v!r}" for k, v in point.items())
    exc.add_note(f"in sweep point {index} ({desc})")
    return exc


def _progress_bar(total: int, progress: bool | None):
    tqdm = _lazy.module("tqdm").tqdm
    from .binding.calls import bar_width

    # disable=None: tqdm shows the bar only when its stream (stderr) is a terminal
    return tqdm(total=total, unit="point", desc="sweep", disable=None if progress is None else not progress,
                **bar_width(sys.stderr))
