"""The names of the files a result folder holds, and the check of a save's formats.

One home for what the writers (:mod:`.tables`, :mod:`.exports`) and the safe-write rules
(:mod:`.files`) share: the per-request tables by format, each export's files, the marker
of a complete result, the key of a chosen percentile. Imports nothing of the package but :mod:`aisimulate.binding.args`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..binding.args import names

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any

#: The file that marks a complete result.
MARKER = "prediction.json"

#: The per-request table's file by record format.
FILES = {"parquet": "requests.parquet", "csv": "requests.csv", "jsonl": "requests.jsonl"}

#: The files :func:`aisimulate.io.exports.write_aiperf` writes, in AIPerf's names.
AIPERF_FILES = ("profile_export.jsonl", "profile_export_aiperf.json", "profile_export_aiperf.csv")

#: Export name → the files it writes (the AIPerf JSON is the one written last).
EXPORT_FILES = {"aiperf": AIPERF_FILES, "vllm": ("vllm_bench_result.json",)}


def result_names() -> frozenset[str]:
    """Every file name an aisimulate save writes into a result folder: :data:`MARKER`,
    the per-request tables and the export files. A save removes no other name, whatever
    a marker in the folder lists."""
    return frozenset({MARKER, *FILES.values(), *(n for names in EXPORT_FILES.values() for n in names)})


def result_files(formats: Iterable[str], exports: Iterable[str]) -> list[str]:
    """The file names a save of the record ``formats`` and the ``exports`` writes, in
    the order it writes them: the tables, the exports' files, :data:`MARKER` last."""
    names = [FILES[f] for f in dict.fromkeys(formats)]
    return names + [n for e in dict.fromkeys(exports) for n in EXPORT_FILES[e]] + [MARKER]


def result_formats(formats: Any, exports: Any) -> tuple[list[str], list[str]]:
    """``save``'s and ``replay(output_dir=)``'s ``formats`` (at least one) and
    ``exports`` as lists of lower-case names (:func:`aisimulate.binding.args.names`,
    ``any_case``).

    Raises:
        TypeError, ValueError: as :func:`~aisimulate.binding.args.names`; ValueError also
        for no format.
    """
    formats = names("formats", formats, FILES, "record format(s)", any_case=True)
    if not formats:
        raise ValueError(f"formats is empty: choose from {', '.join(FILES)}")
    return formats, names("exports", exports, EXPORT_FILES, "export(s)", any_case=True)


def percentile_key(p: float) -> str:
    """The key of percentile ``p`` (in [0, 100]) in a stats dict: ``p`` and vLLM's
    word for it (``p50``, ``p99.9``, ``p1e-05``: :func:`vllm_percentile_word`), as the
    core writes it (report.PercentileKey)."""
    return "p" + vllm_percentile_word(float(p))


def vllm_percentile_word(p: float) -> str:
    """vLLM's name of percentile ``p`` in its result keys (``p99_ttft_ms``,
    ``p99.9_ttft_ms``): ``str(int(p))`` for a whole number, else ``str(p)``
    (vllm/benchmarks/serve.py); a value that is not finite as given (``nan``), for the
    message that refuses it."""
    import math

    if not math.isfinite(p):
        return str(p)
    return str(int(p)) if int(p) == p else str(p)

