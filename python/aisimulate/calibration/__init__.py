"""Calibration helpers: fit the client path's cost models from measurements.

Client path (docs/design.md, "The client path"): :func:`fit_response_overhead`,
:func:`fit_detokenization`, :func:`detokenization_costs` (``calibration/client.py``) and
the AIPerf per-request export reader :func:`read_aiperf_records`
(``io/aiperf.py``).

The roofline's calibration against silicon rows is research tooling:
:mod:`aisimulate.tools.roofline_calibration`.
"""

from ..io.aiperf import read_aiperf_records
from .client import (
    DetokenizationFit,
    ResponseOverheadFit,
    detokenization_costs,
    fit_detokenization,
    fit_response_overhead,
)

__all__ = [
    "DetokenizationFit",
    "ResponseOverheadFit",
    "detokenization_costs",
    "fit_detokenization",
    "fit_response_overhead",
    "read_aiperf_records",
]
