"""io: files in other tools' formats, and the rules of writing a result folder.

The formats a report is written in (:mod:`.tables`: Parquet, CSV and JSON lines of the
per-request table, in bulk; :mod:`.exports`: AIPerf's profile exports and ``vllm bench
serve``'s result JSON; :mod:`.chrome_trace`: a Chrome / Perfetto trace), AIPerf's per-request export read back
(:mod:`.aiperf`, for compare and the calibration), the names of a
result folder's files (:mod:`.names`) and the safe-write rules that keep a result whole
or absent (:mod:`.files`). The writers take a report but import nothing above this layer:
they read what it holds (docs/design.md, "The Python package"). Imports only
:mod:`aisimulate.binding` and :mod:`aisimulate.errors`.
"""
