"""A disaggregated (P/D) silicon row: its two sides' layouts, its concurrency and its
``engine.workers.disaggregated`` block, one reader for every backend.

A P/D row (``mode`` disagg) has no ``tp_size`` or ``batch_size`` of its own; each side
has AIConfigurator's columns with a ``prefill_`` or ``decode_`` prefix: ``num_workers``
(servers), ``tp_size`` (attention TP per rank), ``attention_dp_size`` (attention ranks
per server), ``moe_tp_size`` / ``moe_ep_size`` (how the experts split over the server's
GPUs, ``tp_size × attention_dp_size = moe_tp_size × moe_ep_size``; 0 or empty: not
recorded), ``pp_size`` and ``batch_size`` (its generator's per-server batch size). The
server's layout follows :func:`spec.row_layout` on those columns, with one addition: MoE
columns that are both 0 or empty (not recorded) leave the experts split by TP over the
server's GPUs, the engines' default without expert parallelism.

In spec terms a side is a pool of ``num_workers`` servers of ``tp`` GPUs per attention
rank and ``data_parallel_size`` ranks (vLLM's ``--data-parallel-size``, SGLang's
``--dp-size`` with ``--enable-dp-attention``), ``enable_expert_parallel`` when the experts
are split by EP; the KV moves over the system's network (``kv_transfer`` without a
bandwidth: one NIC per attention rank, docs/design.md "P/D disaggregation").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .rows import _int

#: The sides of a P/D row, in the order the spec gives its pools.
SIDES = ("prefill", "decode")
#: Placement of each P/D pool: the least loaded server (a Dynamo or SGLang router in
#: front of the servers; which policy each campaign's router used is not recorded).
PD_PLACEMENT = "least_outstanding"


@dataclass(frozen=True)
class Side:
    """One side of a P/D row: ``workers`` servers of ``attention_dp`` attention ranks of
    ``tp`` GPUs each, experts split by EP (``ep``) or TP; ``batch_size`` its generator's
    per-server batch size (``None``: not recorded); ``note`` when the layout was read
    with the not-recorded MoE rule."""
    name: str
    workers: int
    tp: int
    attention_dp: int
    ep: bool
    batch_size: int | None
    note: str = ""

    @property
    def gpus(self) -> int:
        """GPUs of one server."""
        return self.tp * self.attention_dp

    def pool(self) -> dict[str, Any]:
        """The spec's pool of this side (vLLM and SGLang terms)."""
        p: dict[str, Any] = {"count": self.workers, "tp": self.tp, "placement": PD_PLACEMENT}
        if self.attention_dp > 1:
            p["data_parallel_size"] = self.attention_dp
        if self.ep:
            p["enable_expert_parallel"] = True
        return p

    def text(self) -> str:
        """``"5×TP1"``, ``"1×TP1 DP8 EP8"``."""
        s = f"{self.workers}×TP{self.tp}"
        if self.attention_dp > 1:
            s += f" DP{self.attention_dp}"
        if self.ep:
            s += f" EP{self.gpus}"
        return s


def is_disagg(row: dict[str, str]) -> bool:
    """Whether the row measured a P/D deployment (``mode`` disagg)."""
    return (row.get("mode") or "agg").strip() == "disagg"


def side_of(row: dict[str, str], side: str, config_path: str) -> Side:
    """The layout of one side of a P/D row (module docstring).

    Raises:
        ValueError: a column missing or malformed, pipeline parallelism, or a layout
            the engines cannot run (the skip reason, naming the side's column)."""
    from .spec import row_layout

    p = f"{side}_"
    if _int(row, p + "pp_size", 1) > 1:
        raise ValueError(f"{p}pp_size = {row[p + 'pp_size']}: not simulated (pipeline parallelism)")
    workers, tp = _int(row, p + "num_workers"), _int(row, p + "tp_size")
    if min(workers, tp) < 1:
        raise ValueError(f"{p}num_workers and {p}tp_size must be ≥ 1")
    adp = _int(row, p + "attention_dp_size", 0)
    moe_tp, moe_ep = _int(row, p + "moe_tp_size", 0), _int(row, p + "moe_ep_size", 0)
    note = ""
    if moe_tp == 0 and moe_ep == 0:
        moe_tp, note = tp * max(adp, 1), "experts split by TP (the row records no MoE layout)"
    one = {"tp_size": str(tp), "attention_dp_size": str(adp), "moe_tp_size": str(moe_tp), "moe_ep_size": str(moe_ep)}
    try:
        dp, ep, why = row_layout(one, config_path)
    except ValueError as exc:
        raise ValueError(f"{side}: {exc}") from None
    if not why and note:
        from pathlib import Path
        from .spec import _is_moe
        why = note if _is_moe(Path(config_path)) else ""
    bs = _int(row, p + "batch_size", 0) or None
    return Side(side, workers, tp, dp, ep, bs, why)


#: What a P/D row without a tabulated recipe lacks when its columns cannot stand in
#: (:func:`records_sides`), for skip reasons.
SIDES_MISSING = ("prefill_num_workers, prefill_tp_size, decode_num_workers and decode_tp_size are needed; "
                 "InferenceX's dated exports record no worker counts")


def records_sides(row: dict[str, str]) -> bool:
    """Whether a P/D row's columns give both sides' workers and TP (a recipe not known
    for it can then be read off them)."""
    return all((row.get(f"{side}_{k}") or "").strip() for side in SIDES for k in ("num_workers", "tp_size"))


def sides_of(row: dict[str, str], config_path: str) -> tuple[Side, Side]:
    """The prefill and the decode side of a P/D row (:func:`side_of`)."""
    return side_of(row, "prefill", config_path), side_of(row, "decode", config_path)


def concurrency_of(row: dict[str, str]) -> int:
    """A P/D row's client concurrency: ``batch_size``, else the source's
    ``silicon_concurrency``, else AIConfigurator's estimate for a P/D deployment,
    decode workers × decode batch size (``rule_plugin/benchmark/*.rule``,
    ``BenchConfig.estimated_concurrency``).

    Raises:
        ValueError: none of them recorded."""
    if (row.get("batch_size") or "").strip():
        return _int(row, "batch_size")
    m = re.search(r"silicon_concurrency=(\d+)", row.get("silicon_data_source") or "")
    if m:
        return int(m.group(1))
    return _int(row, "decode_num_workers") * _int(row, "decode_batch_size")


def workers_block(prefill: Side, decode: Side) -> dict[str, Any]:
    """``engine.workers`` of a P/D row: the two pools and the KV over the system's
    network (``kv_transfer`` without a bandwidth)."""
    return {"disaggregated": {"prefill": prefill.pool(), "decode": decode.pool(), "kv_transfer": {}}}


def layout_text(spec: dict[str, Any]) -> str:
    """A P/D spec's layout as simulated: ``"P/D 5×TP1 + 11×TP1"``."""
    d = spec["engine"]["workers"]["disaggregated"]

    def one(p: dict[str, Any]) -> str:
        dp = p.get("data_parallel_size", 1)
        s = f"{p['count']}×TP{p['tp']}"
        if dp > 1:
            s += f" DP{dp}"
        if p.get("enable_expert_parallel"):
            s += f" EP{p['tp'] * dp}"
        return s

    return f"P/D {one(d['prefill'])} + {one(d['decode'])}"
