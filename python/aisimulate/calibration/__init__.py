"""Calibration helpers: fit aisimulate's cost models from measurements.

Client path (DESIGN.md §6): :func:`fit_response_overhead`, :func:`fit_detokenization`,
:func:`detokenization_costs` (``calibration/client.py``) and the AIPerf per-request
export reader :func:`read_aiperf_records` (``calibration/aiperf.py``).

Roofline perf model: :func:`fit_roofline` (efficiencies and pass overhead against silicon
rows) and the stored fit with its provenance, :func:`fitted_roofline`
(``calibration/roofline.py``, ``roofline_fit.json``).
"""

from .aiperf import read_aiperf_records
from .client import (
    DetokenizationFit,
    ResponseOverheadFit,
    detokenization_costs,
    fit_detokenization,
    fit_response_overhead,
)
from .roofline import RooflineFit, fit_roofline
from .roofline import fitted as fitted_roofline

__all__ = [
    "DetokenizationFit",
    "ResponseOverheadFit",
    "RooflineFit",
    "detokenization_costs",
    "fit_detokenization",
    "fit_response_overhead",
    "fit_roofline",
    "fitted_roofline",
    "read_aiperf_records",
]
