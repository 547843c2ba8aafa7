"""Option types the harness scripts share (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse

from .run import check_length_ratio
from .spec import MAX_DATASET_ENTRIES


def positive_int(text: str) -> int:
    """An integer ≥ 1 (processes, evaluations)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v}: want ≥ 1")
    return v


def dataset_entries(text: str) -> int:
    """A number of dataset entries, 0 (none) to :data:`MAX_DATASET_ENTRIES`."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= v <= MAX_DATASET_ENTRIES:
        raise argparse.ArgumentTypeError(f"{v}: want 0 to {MAX_DATASET_ENTRIES}")
    return v


def length_ratio(text: str) -> float:
    """A length ratio R, 0 < R ≤ 1."""
    try:
        v = float(text)
        check_length_ratio(v)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return v
