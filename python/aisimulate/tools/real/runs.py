"""A measured run and how it becomes a replay spec."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..vllm_defaults import ASYNC_SCHEDULING_SINCE, async_default, version_tuple  # noqa: F401 (re-exported)


@dataclass
class RealRun:
    """One measured run: its identity, measured metrics and replay spec (per perf source).

    ``measured`` maps metric names (:data:`aisimulate.tools.real.METRICS`) to values, ms
    for times and requests/s for throughput; a metric the source did not measure is
    absent. ``spec`` is the replay spec without its ``engine.perf`` block
    (:meth:`spec_for` adds it); None when the run cannot be replayed at all.
    ``skip`` is the reason the run cannot be replayed ("" when it can).
    """
    source: str   # "llmservingsim" or "apex_plus"
    name: str     # unique within the source
    model: str
    system: str
    tp: int
    vllm: str     # the measured vLLM version
    measured: dict[str, float]
    spec: dict[str, Any] | None = None
    exact_tables: bool = True  # the perf tables are for this GPU and vLLM version
    notes: list[str] = field(default_factory=list)
    skip: str = ""

    def spec_for(self, perf: str, database: str) -> dict[str, Any]:
        """The replay spec under perf source ``perf`` ("aic" reads the tables of the
        run's vLLM version under ``database``, the nearest standing in)."""
        if self.spec is None:
            raise ValueError(f"{self.source}:{self.name} has no replay spec")
        spec = copy.deepcopy(self.spec)
        p: dict[str, Any] = {"source": perf}
        if perf == "aic":
            p.update(database=str(database), backend_version=self.vllm)
        spec["engine"]["perf"] = p
        return spec
