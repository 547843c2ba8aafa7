"""aisimulate: a GPU-free simulator of LLM inference serving.

Replays a request workload (a recorded trace or a synthetic generator) against a
modelled deployment on a virtual clock and predicts what a load generator would measure:
TTFT, TPOT, inter-token latency, end-to-end latency (ms), throughput, GPU hours.

>>> import aisimulate
>>> spec = aisimulate.load_config("replay.yaml")   # or a dict; raises ConfigError
>>> report = aisimulate.replay(spec)               # also accepts a path or a dict
>>> report.summary, report.requests                 # dict, sequence of dicts (docs/metrics.md)
>>> report.to_pandas(); print(report.table()); report.save("out/")

The simulation runs in the native core (Go, built by ``make build`` into
``aisimulate._core``); it is imported on first use.
"""

from __future__ import annotations

from ._startup import hold as _hold

_hold()  # in the `aisimulate` command only: Ctrl-C while it starts exits 130 (._startup)

import os  # noqa: E402

from .errors import (AisimulateError, BackendVersionWarning, ConfigError, DataError,  # noqa: E402
                     EngineLimitWarning, InfeasibleError, SimulationError)

TYPE_CHECKING = False
if TYPE_CHECKING:  # names of annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Sequence

    from .compare import compare
    from .config import Spec, load_config
    from .analysis.search import SearchResult, search
    from .perf import StepTime, memory_plan, step_time, step_times
    from .report import SLO_FIELDS, ReplayReport
    from .run.replay import check, check_slo, config_schema, estimate_memory, replay
    from .sweep import sweep

#: The package's names that load their module on first use (PEP 562), so that
#: ``import aisimulate`` stays light: name → the module defining it.
_LAZY = {"Spec": "config", "load_config": "config", "ReplayReport": "report",
         "SLO_FIELDS": "report", "sweep": "sweep", "compare": "compare",
         "list_models": "catalogue", "list_systems": "catalogue", "step_time": "perf",
         "step_times": "perf", "memory_plan": "perf", "StepTime": "perf", "search": "analysis.search",
         "SearchResult": "analysis.search", "replay": "run.replay", "check": "run.replay",
         "check_slo": "run.replay", "estimate_memory": "run.replay", "config_schema": "run.replay"}

#: The public submodules, loaded on first use too: ``aisimulate.calibration.fit_…`` and
#: ``aisimulate.plot.…`` work after ``import aisimulate`` alone.
_SUBMODULES = ("calibration", "plot")


def _version() -> str:
    """The installed package's version; from a source checkout that is not installed,
    the file it comes from (``core/version/VERSION``, the project's one version)."""
    from importlib import metadata
    from pathlib import Path

    try:
        return metadata.version("aisimulate")
    except metadata.PackageNotFoundError:  # pragma: no cover - uninstalled checkout
        return (Path(__file__).resolve().parents[2] / "core" / "version" / "VERSION").read_text().strip()


def __getattr__(name: str) -> Any:
    # __version__ on first use: importlib.metadata would load email, tempfile and
    # more at `import aisimulate`; the names of _LAZY from their modules
    if name == "__version__":
        globals()["__version__"] = v = _version()
        return v
    where = _LAZY.get(name)
    if where is not None or name in _SUBMODULES:
        from importlib import import_module

        if where is None:
            return import_module(f".{name}", __name__)  # binds itself on the package
        globals()[name] = value = getattr(import_module(f".{where}", __name__), name)
        return value
    raise AttributeError(f"module 'aisimulate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES) | {"__version__"})


class _Package(type(os)):
    """The package's module type: the functions ``sweep`` and ``compare`` keep their
    names when their submodules (``aisimulate.sweep``, ``aisimulate.compare``) are
    imported, as they did when ``__init__`` imported them eagerly (the import system
    binds a submodule on its package once it is loaded, which would replace the
    function by the module)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("sweep", "compare") and getattr(value, "__name__", None) == f"{__name__}.{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _Package


__all__ = [
    "AisimulateError",
    "BackendVersionWarning",
    "ConfigError",
    "DataError",
    "EngineLimitWarning",
    "InfeasibleError",
    "ReplayReport",
    "SimulationError",
    "Spec",
    "StepTime",
    "__version__",
    "check",
    "compare",
    "config_schema",
    "estimate_memory",
    "list_models",
    "list_systems",
    "load_config",
    "memory_plan",
    "replay",
    "SLO_FIELDS",
    "search",
    "SearchResult",
    "step_time",
    "step_times",
    "sweep",
]
