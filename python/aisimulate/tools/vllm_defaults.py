"""vLLM's defaults by version, which the tools set in the specs they build."""

from __future__ import annotations

#: The first vLLM release whose scheduler runs asynchronously by default
#: (vllm-project/vllm pull request 27614, "[Core] Enable async scheduling by default",
#: released in v0.14.0, January 2026; earlier releases needed --async-scheduling).
ASYNC_SCHEDULING_SINCE = (0, 14, 0)


def version_tuple(version: str) -> tuple[int, ...]:
    """``"0.19.0"`` → ``(0, 19, 0)``; a suffix after the numbers (``rc1``) is dropped.

    Raises:
        ValueError: the version does not start with MAJOR.MINOR numbers.
    """
    parts = []
    for p in version.strip().split("."):
        digits = ""
        for ch in p:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) < len(p):
            break
    if len(parts) < 2:
        raise ValueError(f"vLLM version {version!r}: want MAJOR.MINOR[.PATCH]")
    return tuple(parts)


def async_default(vllm_version: str) -> bool:
    """Whether vLLM ``vllm_version`` schedules asynchronously by default."""
    return version_tuple(vllm_version) >= ASYNC_SCHEDULING_SINCE
