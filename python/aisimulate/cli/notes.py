"""What the commands say on stderr of a default that stands in for a figure the config
left out and that moves the prediction much: the acceptance of speculative decoding's
drafts. vLLM's ``speculative_config`` and TensorRT-LLM's without ``acceptance_rates``
take AIConfigurator's MTP defaults (core/config/trtllm.go, DefaultMTPAcceptanceRates:
DeepSeek-V3's MTP, arXiv 2412.19437), SGLang's ``speculative_algorithm`` without
``speculative_acceptance_rates`` / ``_rate`` the same; a draft's acceptance depends on the
model, its draft and the prompts, so the note asks for the measured one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # the replay command's start-up loads no module it does not use (tests/test_import.py)
    from typing import Any

#: The speculative blocks, by the engine block that holds them: (the block's key, the
#: speculative block's key in it or "" for the block itself, the acceptance fields).
_BLOCKS = (("scheduler", "speculative_config", ("acceptance_rates", "acceptance_rate")),
           ("trtllm", "speculative_config", ("acceptance_rates", "acceptance_rate")),
           ("sglang", "", ("speculative_acceptance_rates", "speculative_acceptance_rate")))


def _engine_blocks(engine: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(dotted path, block) of engine and of each worker pool that may hold an engine
    block of its own."""
    yield "engine", engine
    workers = engine.get("workers")
    if not isinstance(workers, Mapping):
        return
    if isinstance(workers.get("aggregated"), Mapping):
        yield "engine.workers.aggregated", workers["aggregated"]
    dis = workers.get("disaggregated")
    for pool in ("prefill", "decode") if isinstance(dis, Mapping) else ():
        if isinstance(dis.get(pool), Mapping):
            yield f"engine.workers.disaggregated.{pool}", dis[pool]


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, Mapping):
            return None
        d = d.get(k)
    return d


def acceptance_notes(given: Mapping[str, Any] | None, data: Mapping[str, Any]) -> list[str]:
    """One note per speculative block of ``given`` (the config as written, with its
    overrides) that leaves its acceptance out, with the rates ``data`` (the canonical
    spec) resolved for it; [] when every one gives its own."""
    out: list[str] = []
    for where, block in _engine_blocks(_get(given, "engine") or {}):
        for key, inner, fields in _BLOCKS:
            spec = _get(block, key, inner) if inner else _get(block, key)
            if not isinstance(spec, Mapping):
                continue
            if not inner and not spec.get("speculative_algorithm"):
                continue  # an SGLang block without speculative decoding
            if any(spec.get(f) is not None for f in fields):
                continue
            if not inner and where != "engine" and any(_get(given, "engine", key, f) is not None for f in fields):
                continue  # a pool's SGLang arguments left out take engine.sglang's
            path = ".".join(p for p in (where, key, inner) if p)
            resolved = _get(data, *path.split("."), fields[0])
            out.append(f"{path}: no {' or '.join(fields)} given: {fields[0]} {resolved} stands in "
                       f"(AIConfigurator's MTP default, DeepSeek-V3's; a draft's acceptance depends on the "
                       f"model, its draft and the prompts: give the measured one)")
    return out


def stand_in_notes(metadata: Mapping[str, Any] | None, spec: Any) -> list[str]:
    """What the commands (replay, bench, validate) say stands in: the notes on
    ``engine.backend_version`` in ``metadata`` (report_text.version_notes), then one per
    speculative block of ``spec`` (the config with ``given`` and ``data``) that leaves its
    acceptance out (:func:`acceptance_notes`)."""
    from ..report_text import version_notes

    return version_notes(metadata) + acceptance_notes(spec.given, spec.data)
