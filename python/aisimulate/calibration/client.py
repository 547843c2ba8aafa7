"""Least-squares calibration of the client path (docs/design.md, "The client path").

Two linear cost models are fitted here, each by ordinary least squares
(``numpy.linalg.lstsq`` on the design matrix ``[1, tokens]``):

- the load generator's **response overhead** (``traffic.load.response_overhead``):
  ``gap_ms = base_ms + per_output_token_us * 1e-3 * output_tokens`` — see
  :func:`fit_response_overhead`;
- the engine's **detokenization** job per pass (``engine.detokenization``):
  ``cost_us = base_us + per_token_us * tokens`` — see :func:`fit_detokenization` and
  :func:`detokenization_costs`.

Units are fixed by name: ``*_ms`` milliseconds, ``*_us`` microseconds, token counts are
plain numbers. Every function raises ``ValueError`` (never returns a silent fit) when the
input cannot determine both coefficients: fewer than two points, a single distinct token
count, NaN or infinite values, negative token counts or negative gaps/costs.

The fitted coefficients are unconstrained least squares; they can come out negative on
poor data. ``to_spec()`` on a result refuses negative values (the replay spec rejects
them), so a bad calibration cannot slip into a spec unnoticed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = [
    "DetokenizationFit",
    "ResponseOverheadFit",
    "detokenization_costs",
    "fit_detokenization",
    "fit_response_overhead",
]


@dataclass(frozen=True)
class ResponseOverheadFit:
    """Result of :func:`fit_response_overhead`.

    Attributes:
        base_ms: fitted intercept, ms per response.
        per_output_token_us: fitted slope, µs per output token.
        rmse_ms: root mean square of the residuals, ``sqrt(mean(r**2))`` (divides by
            ``n``, not ``n - 2``), in ms.
        n: number of gaps used in the fit.
    """

    base_ms: float
    per_output_token_us: float
    rmse_ms: float
    n: int

    def predict_ms(self, output_tokens: Any) -> np.ndarray:
        """Model gap in ms for a scalar or array of output token counts."""
        tokens = np.asarray(output_tokens, dtype=float)
        return self.base_ms + self.per_output_token_us * 1e-3 * tokens

    def to_spec(self) -> dict[str, float]:
        """The ``traffic.load.response_overhead`` block for a replay spec.

        Raises:
            ValueError: a fitted coefficient is negative (the spec requires ≥ 0).
        """
        return _spec_block("traffic.load.response_overhead",
                           {"base_ms": self.base_ms,
                            "per_output_token_us": self.per_output_token_us})


@dataclass(frozen=True)
class DetokenizationFit:
    """Result of :func:`fit_detokenization`.

    Attributes:
        base_us: fitted intercept, µs per pass job.
        per_token_us: fitted slope, µs per token produced in the pass.
        rmse_us: root mean square of the residuals (divides by ``n``), in µs.
        n: number of pass jobs used in the fit.
    """

    base_us: float
    per_token_us: float
    rmse_us: float
    n: int

    def predict_us(self, tokens: Any) -> np.ndarray:
        """Model job cost in µs for a scalar or array of per-pass token counts."""
        return self.base_us + self.per_token_us * np.asarray(tokens, dtype=float)

    def to_spec(self) -> dict[str, float]:
        """The ``engine.detokenization`` block for a replay spec.

        Raises:
            ValueError: a fitted coefficient is negative (the spec requires ≥ 0).
        """
        return _spec_block("engine.detokenization",
                           {"base_us": self.base_us, "per_token_us": self.per_token_us})


# --------------------------------------------------------------------------- response overhead


def fit_response_overhead(data: Any, end_ms: Sequence[float] | None = None,
                          next_start_ms: Sequence[float] | None = None) -> ResponseOverheadFit:
    """Fit the load generator's response overhead from concurrency-1 client records.

    At concurrency 1 the client sends its next request only after it has finished with
    the previous response, so the idle gap between them is the overhead (docs/design.md, "The client path"):

        gap_ms = next_start_ms - end_ms = base_ms + per_output_token_us * 1e-3 * output_tokens

    Two input forms:

    1. **Records** — ``fit_response_overhead(records)`` with a pandas DataFrame or a list
       of dicts (e.g. the output of :func:`aisimulate.calibration.read_aiperf_records`)
       having the columns

       - ``start_ms``: when the client sent the request (ms, any common origin);
       - ``end_ms``: when the client received the end of its response (ms, same origin);
       - ``output_tokens``: output tokens of the response (count);
       - optional ``error``: truthy for a request that failed (no usable output count).

       Pairing rule: records are ordered by ``start_ms`` (stable sort, so ties keep input
       order); record *i*'s gap is ``start_ms`` of the next record in that order minus
       ``end_ms`` of record *i*. The last record has no successor and is dropped. A
       failed record (truthy ``error``) keeps its place in the order — its start closes
       the previous record's gap — but its own gap is not fitted and its
       ``output_tokens`` is not read (it may be missing or ``None``). If the table has a
       ``next_start_ms`` column instead of ``start_ms``, the rows are taken as already
       paired (form 2, with failed rows skipped).

    2. **Paired sequences** — ``fit_response_overhead(output_tokens, end_ms,
       next_start_ms)``: three equal-length 1-D sequences, gap *i* = ``next_start_ms[i] -
       end_ms[i]``; no sorting, nothing dropped.

    Args:
        data: the records (form 1) or the ``output_tokens`` sequence (form 2).
        end_ms: form 2 only, response end received, ms.
        next_start_ms: form 2 only, send time of the following request, ms.

    Returns:
        ResponseOverheadFit(base_ms, per_output_token_us, rmse_ms, n), ``n`` = gaps used.

    Raises:
        TypeError: only one of ``end_ms`` / ``next_start_ms`` is given.
        ValueError: a missing column/key; a NaN, infinite or non-numeric value (naming the
            field and the record index in the input); negative ``output_tokens``; a
            negative gap (naming the index of the record whose gap it is — the records are
            then not from one concurrency-1 client); fewer than two gaps; all gaps having
            the same ``output_tokens`` (base and slope cannot be separated).
    """
    if (end_ms is None) != (next_start_ms is None):
        raise TypeError("fit_response_overhead: give both end_ms and next_start_ms "
                        "(paired sequences) or neither (a records table)")
    if end_ms is not None:
        tokens = _float_vector(data, "output_tokens")
        ends = _float_vector(end_ms, "end_ms")
        nexts = _float_vector(next_start_ms, "next_start_ms")
        if not (len(tokens) == len(ends) == len(nexts)):
            raise ValueError(f"fit_response_overhead: output_tokens, end_ms and "
                             f"next_start_ms must have equal lengths, got {len(tokens)}, "
                             f"{len(ends)} and {len(nexts)}")
        index = np.arange(len(tokens))
    else:
        table = _Table(data, "fit_response_overhead")
        failed = table.failed_mask()
        if table.has("next_start_ms"):
            keep = np.flatnonzero(~failed)
            tokens = table.floats("output_tokens", keep)
            ends = table.floats("end_ms", keep)
            nexts = table.floats("next_start_ms", keep)
            index = keep
        else:
            starts = table.floats("start_ms")
            all_ends = table.floats("end_ms")
            order = np.argsort(starts, kind="stable")
            index = np.array([i for i in order[:-1] if not failed[i]], dtype=int)
            successor = {int(a): int(b) for a, b in zip(order[:-1], order[1:])}
            tokens = table.floats("output_tokens", index)
            ends = all_ends[index]
            nexts = starts[[successor[int(i)] for i in index]] if len(index) else np.zeros(0)
    _check_nonnegative(tokens, index, "output_tokens")
    gaps = nexts - ends
    bad = np.flatnonzero(gaps < 0)
    if len(bad):
        k = bad[0]
        raise ValueError(
            f"fit_response_overhead: record {int(index[k])}: the next request starts "
            f"{-gaps[k]:.6g} ms before this response ends (next_start_ms {nexts[k]:.9g} < "
            f"end_ms {ends[k]:.9g}); the records are not from one client at concurrency 1")
    base, slope, rmse = _linear_fit(tokens, gaps, "fit_response_overhead", "gap",
                                    "output_tokens")
    return ResponseOverheadFit(base_ms=base, per_output_token_us=slope * 1e3, rmse_ms=rmse,
                               n=len(gaps))


# --------------------------------------------------------------------------- detokenization


def fit_detokenization(data: Any, cost_us: Sequence[float] | None = None) -> DetokenizationFit:
    """Fit the engine's per-pass detokenization job cost.

    Model (docs/design.md, "The client path"): every engine pass that produced outputs hands its worker's
    output processor one job costing ``cost_us = base_us + per_token_us * tokens``, where
    ``tokens`` is the number of output tokens produced in that pass (one per request that
    emitted a token: decoding requests plus prefills that finished).

    What to measure: per pass, the token count and the time the output processor spent
    on that pass's outputs (its service time, µs) — e.g. the duration of a tracer span or
    of timestamps logged around the output-processing/detokenize step for one engine
    step. Vary the number of tokens per pass (run at several concurrencies: a decode pass
    at batch size B produces B tokens) so that base and slope are separable. If instead
    you have timestamps of the pass end and of the delivery of its outputs, convert them
    with :func:`detokenization_costs`, which removes FIFO queueing; a raw delivery delay
    equals the cost only when the processor was idle at the pass end.

    Two input forms:

    1. ``fit_detokenization(records)``: a DataFrame or list of dicts with columns
       ``tokens`` (count) and ``cost_us`` (µs).
    2. ``fit_detokenization(tokens, cost_us)``: two equal-length 1-D sequences.

    Returns:
        DetokenizationFit(base_us, per_token_us, rmse_us, n).

    Raises:
        ValueError: a missing column/key; NaN, infinite or non-numeric values (naming
            field and index); negative tokens or costs; unequal lengths; fewer than two
            passes; a single distinct token count.
    """
    if cost_us is not None:
        tokens = _float_vector(data, "tokens")
        costs = _float_vector(cost_us, "cost_us")
        if len(tokens) != len(costs):
            raise ValueError(f"fit_detokenization: tokens and cost_us must have equal "
                             f"lengths, got {len(tokens)} and {len(costs)}")
    else:
        table = _Table(data, "fit_detokenization")
        tokens = table.floats("tokens")
        costs = table.floats("cost_us")
    index = np.arange(len(tokens))
    _check_nonnegative(tokens, index, "tokens")
    _check_nonnegative(costs, index, "cost_us")
    base, slope, rmse = _linear_fit(tokens, costs, "fit_detokenization", "cost", "tokens")
    return DetokenizationFit(base_us=base, per_token_us=slope, rmse_us=rmse, n=len(costs))


def detokenization_costs(pass_end_us: Sequence[float],
                         delivered_us: Sequence[float]) -> np.ndarray:
    """Per-job service times of one FIFO output processor, from its timeline.

    For one worker's passes in the order they ended, ``pass_end_us[i]`` is when pass *i*
    ended (its job entered the queue) and ``delivered_us[i]`` when its outputs were
    handed on (the job completed). A FIFO server starts job *i* at
    ``max(pass_end_us[i], delivered_us[i-1])``, so its cost is

        cost_us[i] = delivered_us[i] - max(pass_end_us[i], delivered_us[i-1])

    (``delivered_us[-1]`` taken as -inf). Both in µs on one clock.

    Returns:
        float array of shape ``(n,)``, µs, to pass to :func:`fit_detokenization`.

    Raises:
        ValueError: unequal lengths, NaN/inf, pass ends out of order, deliveries out of
            FIFO order, or a delivery before its own pass end (naming the index).
    """
    ends = _float_vector(pass_end_us, "pass_end_us")
    done = _float_vector(delivered_us, "delivered_us")
    if len(ends) != len(done):
        raise ValueError(f"detokenization_costs: pass_end_us and delivered_us must have "
                         f"equal lengths, got {len(ends)} and {len(done)}")
    costs = np.empty(len(ends))
    previous = -math.inf
    for i, (end, out) in enumerate(zip(ends, done)):
        if i and end < ends[i - 1]:
            raise ValueError(f"detokenization_costs: pass {i} ends at {end:.9g} µs, before "
                             f"pass {i - 1} ({ends[i - 1]:.9g} µs); give one worker's "
                             f"passes in order")
        if out < end:
            raise ValueError(f"detokenization_costs: pass {i} is delivered at {out:.9g} µs, "
                             f"before it ends at {end:.9g} µs")
        if out < previous:
            raise ValueError(f"detokenization_costs: pass {i} is delivered at {out:.9g} µs, "
                             f"before pass {i - 1} ({previous:.9g} µs); a FIFO output "
                             f"processor delivers in pass order")
        costs[i] = out - max(end, previous)
        previous = out
    return costs


# --------------------------------------------------------------------------- helpers


def _linear_fit(x: np.ndarray, y: np.ndarray, who: str, what: str,
                xname: str) -> tuple[float, float, float]:
    """OLS of y on [1, x]; returns (intercept, slope, rmse) after degeneracy checks."""
    n = len(y)
    if n < 2:
        raise ValueError(f"{who}: need at least 2 {what}s to fit a base and a per-token "
                         f"cost, got {n}")
    distinct = np.unique(x)
    if len(distinct) < 2:
        raise ValueError(f"{who}: all {n} {what}s have {xname} = {distinct[0]:g}; need at "
                         f"least two distinct {xname} values to separate the base from "
                         f"the per-token cost")
    design = np.column_stack([np.ones(n), x])
    (intercept, slope), *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - (intercept + slope * x)
    rmse = float(np.sqrt(np.mean(residuals ** 2)))
    return float(intercept), float(slope), rmse


def _float_vector(values: Any, name: str) -> np.ndarray:
    """A finite 1-D float array, or ValueError naming ``name`` and the bad index."""
    if isinstance(values, (str, bytes)) or isinstance(values, Mapping):
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, got "
                         f"{type(values).__name__}")
    items = list(values) if not isinstance(values, np.ndarray) else values.tolist()
    out = np.empty(len(items))
    for i, v in enumerate(items):
        out[i] = _finite(v, name, i)
    return out


def _finite(value: Any, name: str, index: int) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.number)):
        raise ValueError(f"{name}[{index}]: expected a number, got {value!r}")
    f = float(value)
    if not math.isfinite(f):
        raise ValueError(f"{name}[{index}]: must be finite, got {f}")
    return f


def _check_nonnegative(values: np.ndarray, index: np.ndarray, name: str) -> None:
    bad = np.flatnonzero(values < 0)
    if len(bad):
        k = bad[0]
        raise ValueError(f"{name}[{int(index[k])}]: must be ≥ 0, got {values[k]:g}")


def _is_failed(value: Any) -> bool:
    """Truthiness of an ``error`` cell: None, NaN, False, "" and 0 mean success."""
    if value is None:
        return False
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


class _Table:
    """Column access over a pandas DataFrame (anything with ``.columns``) or dict rows."""

    def __init__(self, data: Any, who: str) -> None:
        self.who = who
        if hasattr(data, "columns") and hasattr(data, "__getitem__"):
            self.columns = {str(c) for c in data.columns}
            self._get = lambda name: list(data[name])
            self.n = len(data)
        elif isinstance(data, (str, bytes, Mapping)) or not hasattr(data, "__iter__"):
            raise ValueError(f"{who}: expected a DataFrame or a list of dicts, got "
                             f"{type(data).__name__}")
        else:
            rows = list(data)
            for i, row in enumerate(rows):
                if not isinstance(row, Mapping):
                    raise ValueError(f"{who}: record {i} is a {type(row).__name__}, "
                                     f"not a dict")
            self.columns = None
            self.rows = rows
            self.n = len(rows)

    def has(self, name: str) -> bool:
        if self.columns is not None:
            return name in self.columns
        return bool(self.rows) and all(name in r for r in self.rows)

    def _column(self, name: str) -> list[Any]:
        if self.columns is not None:
            if name not in self.columns:
                raise ValueError(f"{self.who}: the table has no column {name!r} "
                                 f"(columns: {sorted(self.columns)})")
            return self._get(name)
        out = []
        for i, row in enumerate(self.rows):
            if name not in row:
                raise ValueError(f"{self.who}: record {i} has no key {name!r}")
            out.append(row[name])
        return out

    def floats(self, name: str, index: Sequence[int] | None = None) -> np.ndarray:
        """Finite floats of column ``name`` at ``index`` (all rows when None)."""
        if index is None:
            index = range(self.n)
        if self.columns is not None:
            column = self._column(name)
            values = [(int(i), column[int(i)]) for i in index]
        else:
            values = []
            for i in index:
                row = self.rows[int(i)]
                if name not in row:
                    raise ValueError(f"{self.who}: record {int(i)} has no key {name!r}")
                values.append((int(i), row[name]))
        out = np.empty(len(values))
        for k, (i, v) in enumerate(values):
            out[k] = _finite(v, name, i)
        return out

    def failed_mask(self) -> np.ndarray:
        if self.columns is not None:
            if "error" not in self.columns:
                return np.zeros(self.n, dtype=bool)
            return np.array([_is_failed(v) for v in self._get("error")], dtype=bool)
        return np.array([_is_failed(r.get("error")) for r in self.rows], dtype=bool)


def _spec_block(path: str, values: dict[str, float]) -> dict[str, float]:
    for key, value in values.items():
        if not value >= 0:
            raise ValueError(f"{path}.{key}: the fit gave {value:g}, but the spec requires "
                             f"a value ≥ 0; check the data (range of token counts, outliers)")
    return dict(values)
