"""Research tooling that runs beside the library, not part of what users import.

``import aisimulate`` never loads this package (a test checks it). It holds:

- :mod:`aisimulate.tools.accuracy`: the accuracy harness, predicted against measured
  TTFT and TPOT on a silicon CSV; its command is ``scripts/accuracy.py`` and its
  results are recorded in ``docs/accuracy.md``.
- :mod:`aisimulate.tools.real`: validation against real open-loop vLLM runs
  (``../shared/data/real``), run by run; its command is ``scripts/validate_real.py``.
- :mod:`aisimulate.tools.roofline_calibration`: the search that fits the roofline's
  efficiencies and overheads to silicon rows, and the stored fit
  (``roofline_fit.json``); its command is ``scripts/calibrate_roofline.py``.

They read the measured data beside the checkout (``../shared/data``) by default.
"""
