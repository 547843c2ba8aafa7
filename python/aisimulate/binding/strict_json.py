"""``json.loads``' object hook that refuses a key given twice in one object (``json``
keeps the last silently; RFC 8259 leaves which counts undefined), for the config reader
(:mod:`aisimulate.config`) and the AIPerf export reader
(:mod:`aisimulate.io.aiperf`), which each say where the key is."""

from __future__ import annotations


TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any

from ..errors import AisimulateError


class DuplicateKey(AisimulateError, ValueError):
    """A key given twice in one JSON object; ``key`` is the key. Each reader turns it
    into its own error (ConfigError, DataError) naming the file and line."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key

    def _ctor(self) -> tuple[tuple, dict]:
        return (self.key,), {}


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object hook (``json.loads(text, object_pairs_hook=unique_keys)``).

    Raises:
        DuplicateKey: the first key the object gives twice.
    """
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKey(k)
        out[k] = v
    return out
