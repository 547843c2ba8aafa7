"""vLLM's defaults by version, which the tools set in the specs they build."""

from __future__ import annotations

#: The first vLLM release whose scheduler runs asynchronously by default
#: (vllm-project/vllm pull request 27614, "[Core] Enable async scheduling by default",
#: released in v0.14.0, January 2026; earlier releases needed --async-scheduling).
ASYNC_SCHEDULING_SINCE = (0, 14, 0)


#: A build from main (``nightly``, ``nightly-<sha>``, ``latest``, ``main``): it follows
#: every release, as the core resolves it (``config.ResolveEngineVersion``: the newest
#: release known), so every default below that began at a release is on.
BUILD_FROM_MAIN = (1 << 31,)


def version_tuple(version: str) -> tuple[int, ...]:
    """``"0.19.0"`` and ``"v0.19.0"`` → ``(0, 19, 0)``; a suffix after the numbers
    (``rc1``) is dropped; a build from main is :data:`BUILD_FROM_MAIN`, the names the
    core reads as one.

    Raises:
        ValueError: the version does not start with MAJOR.MINOR numbers and is no
            build from main.
    """
    low = version.strip().lower()
    if any(low == n or low.startswith((n + "-", n + "_")) for n in ("nightly", "latest", "main")):
        return BUILD_FROM_MAIN
    parts = []
    for p in low.removeprefix("v").split("."):
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


#: The first vLLM release whose default engine is V1 (vLLM 0.8.0 release notes,
#: VLLM_USE_V1=1 by default), whose API server runs each request's input processing
#: and the output handling of the running requests in one asyncio event loop
#: (``vllm/v1/engine/async_llm.py``: the ``output_handler`` task; the core's
#: ``engine.tokenization.shared_event_loop``).
V1_ENGINE_SINCE = (0, 8, 0)


def shared_loop_default(vllm_version: str) -> bool:
    """Whether vLLM ``vllm_version``'s API server shares one event loop between its
    input processing and output handling (the V1 front end)."""
    return version_tuple(vllm_version) >= V1_ENGINE_SINCE


#: The first vLLM release that runs one API server per data-parallel rank by default
#: (vllm-project/vllm pull request 32525, "Default api_server_count to dp_size if not
#: specified"; ``vllm/entrypoints/cli/serve.py``); before it ``--api-server-count``
#: defaulted to 1: one front end, one event loop, for all of a server's ranks (the
#: core's ``api_server_count`` of a worker pool).
API_SERVER_PER_DP_RANK_SINCE = (0, 15, 0)


def api_server_count_default(vllm_version: str, data_parallel_size: int) -> int:
    """vLLM ``vllm_version``'s default ``--api-server-count`` for a server of
    ``data_parallel_size`` ranks (internal load balancing)."""
    if version_tuple(vllm_version) >= API_SERVER_PER_DP_RANK_SINCE:
        return data_parallel_size
    return 1
