"""Sweep points: a grid (cartesian product, coupled fields) or a list of scenarios, each
point a mapping of dotted spec fields to values, applied on a copy of the base spec."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any

from ..config import set_field
from ..errors import ConfigError

__all__ = ["expand", "apply"]


def _is_seq(v: Any) -> bool:
    return isinstance(v, Sequence) and not isinstance(v, (str, bytes))


def _field(key: Any, where: str) -> str:
    if not isinstance(key, str) or not key or any(not p for p in key.split(".")):
        raise ConfigError("", f"{where}: a sweep field is a dotted spec path such as "
                          f"'engine.workers.aggregated.tp', got {key!r}")
    return key


def expand(points: Mapping[Any, Sequence[Any]] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The sweep's points, in order.

    Args:
        points: either a grid, ``{field: [values…]}`` whose cartesian product is taken in
            key order (the last key varies fastest); a key may be a tuple of fields that
            vary together (*coupled*), its values then tuples of the same length:
            ``{("engine.workers.aggregated.count", "engine.workers.aggregated.tp"):
            [(8, 1), (4, 2), (2, 4)]}``; or a list of scenarios, each a mapping
            ``{field: value}`` (fields may differ between scenarios).

    Returns:
        One ``{field: value}`` dict per point.

    Raises:
        ConfigError: the grid or list is empty, a field is not a dotted path, a grid's
            values are not a list, or a coupled value does not match its fields.
    """
    if isinstance(points, Mapping):
        if not points:
            raise ConfigError("", "the sweep grid is empty")
        axes: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]] = []
        for key, values in points.items():
            fields = tuple(_field(k, "grid") for k in key) if isinstance(key, tuple) else (_field(key, "grid"),)
            if not _is_seq(values) or len(values) == 0:
                raise ConfigError(fields[0], f"grid values must be a non-empty list, got {values!r}")
            rows = []
            for v in values:
                if len(fields) == 1:
                    rows.append((v,))
                elif not _is_seq(v) or len(v) != len(fields):
                    raise ConfigError(fields[0], f"coupled fields {', '.join(fields)} need "
                                      f"{len(fields)} values per entry, got {v!r}")
                else:
                    rows.append(tuple(v))
            axes.append((fields, rows))
        out = []
        for combo in itertools.product(*(rows for _, rows in axes)):
            point: dict[str, Any] = {}
            for (fields, _), values in zip(axes, combo):
                point.update(zip(fields, values))
            out.append(point)
        return out
    if _is_seq(points):
        if len(points) == 0:
            raise ConfigError("", "the sweep has no scenarios")
        out = []
        for i, scenario in enumerate(points, start=1):  # counted from 1, as a reader of the file counts
            where = f"scenario {i} of {len(points)}"
            if not isinstance(scenario, Mapping):
                raise ConfigError("", f"{where} must be a mapping of dotted fields to "
                                  f"values, got {type(scenario).__name__}")
            out.append({_field(k, where): v for k, v in scenario.items()})
        return out
    raise ConfigError("", "sweep points must be a grid {field: [values]} or a list of "
                      f"scenarios [{{field: value}}], got {type(points).__name__}")


def apply(base: Mapping[str, Any], point: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``base`` with each dotted field of ``point`` set (intermediate
    mappings are created).

    Raises:
        ConfigError: a field passes through a value that is not a mapping.
    """
    data = copy.deepcopy(dict(base))
    for dotted, value in point.items():
        set_field(data, dotted, copy.deepcopy(value))
    return data
