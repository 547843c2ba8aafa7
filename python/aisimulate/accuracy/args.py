"""Option types the harness scripts share (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse

from .run import check_length_ratio


def positive_int(text: str) -> int:
    """An integer ≥ 1 (processes, evaluations)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v}: want ≥ 1")
    return v


def non_negative_int(text: str) -> int:
    """An integer ≥ 0 (dataset entries; 0 = none)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v}: want ≥ 0")
    return v


def length_ratio(text: str) -> float:
    """A length ratio R, 0 < R ≤ 1."""
    try:
        v = float(text)
        check_length_ratio(v)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return v
