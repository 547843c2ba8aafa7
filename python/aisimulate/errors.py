"""The exceptions aisimulate raises, and the mapping from the core's error envelope.

Three classes cover every failure a user can act on:

- :class:`ConfigError` (a ``ValueError``): the replay spec is wrong. ``.field`` is the
  dotted path of the offending key (``"engine.scheduler.max_num_seqs"``), the same path
  the Go core's ``config.Error`` carries; it is ``""`` when the problem is the whole
  document (a YAML syntax error, a file that is not a mapping), and then ``.file`` and
  ``.line`` locate it when they are known.
- :class:`InfeasibleError` (a ``ConfigError``): the spec is well formed but names a
  deployment that cannot start, as vLLM would refuse to (the model does not fit the
  GPUs, or its KV cache cannot hold one ``max_model_len`` request); a sweep records
  such a point as ``infeasible``.
- :class:`DataError` (a ``ValueError``): the workload data is wrong (a trace row without
  an output length, a non-numeric field). ``.file`` and ``.line`` (1-based) locate it;
  ``.field`` is the column or key as spelled in the file, or ``""``.
- :class:`SimulationError` (a ``RuntimeError``): any other error from the core.
  ``.kind`` is ``"simulation"`` or ``"panic"`` (a bug in the core, recovered by pybind).

The core reports errors as ``{"error": {"kind", "message", "field", "file", "line"}}``
(see ``pybind/pybind.go``); :func:`from_envelope` turns that object into one of these.

Every class here pickles to its constructor arguments and compares equal by type and
attributes, so an error raised in a worker process (a sweep point, a Ray task) crosses
back to the parent intact: the default exception pickling calls ``cls(*args)`` with the
formatted message only, which fails for a keyword-carrying constructor and, inside
``multiprocessing``, kills the pool's result thread and hangs the parent.
"""

from __future__ import annotations


TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Mapping

__all__ = ["AisimulateError", "BackendVersionWarning", "ConfigError", "DataError", "EngineLimitWarning",
           "InfeasibleError", "SimulationError", "from_envelope"]


class _MessageWarning(UserWarning):
    """A warning that compares equal by its message, as the errors here do (one raised
    in a sweep worker under ``-W error`` crosses back equal)."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.args == self.args

    def __hash__(self) -> int:
        return hash((type(self), self.args))


class BackendVersionWarning(_MessageWarning):
    """The kernel tables of ``engine.perf.backend_version`` are not in the database and
    another version's are used (the nearest measured; ``metadata.perf_metadata.tables``
    names each table's file). The replay runs, but it prices another vLLM release.
    Compares equal by its message."""


class EngineLimitWarning(_MessageWarning):
    """:func:`aisimulate.step_time` was given a pass the deployment's engine would never
    run: more sequences than ``max_num_seqs``, more tokens than its token budget
    (``max_num_batched_tokens``), or a request longer than ``max_model_len``. The pass is
    priced all the same (a roofline has no limits); the message names the batch, the
    limit and the value. Compares equal by its message."""


def _rebuild(cls: type, args: tuple, kwargs: dict) -> BaseException:
    """Unpickling hook: ``cls(*args, **kwargs)`` (module level so pickle can name it)."""
    return cls(*args, **kwargs)


class AisimulateError(Exception):
    """Mixin of every aisimulate exception: value semantics across processes.

    A subclass implements :meth:`_ctor`, the ``(args, kwargs)`` its constructor was
    given; pickling replays that call, and two errors are equal when their types and
    constructor arguments are.
    """

    def _ctor(self) -> tuple[tuple, dict]:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __reduce__(self):
        args, kwargs = self._ctor()
        return (_rebuild, (type(self), args, kwargs))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._ctor() == other._ctor()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        args, kwargs = self._ctor()
        return hash((type(self), args, tuple(sorted(kwargs.items()))))


class ConfigError(AisimulateError, ValueError):
    """A problem with one field of the replay spec.

    Attributes:
        field: dotted path of the offending key, e.g. ``"traffic.source.path"``;
            ``""`` when the problem concerns the whole document.
        reason: the message without the field prefix.
        file: the config file, when the problem is located in it (else ``None``).
        line: 1-based line in ``file`` (else ``None``).

    ``str(err)`` is ``"field: reason"`` (or ``"file:line: reason"`` for a document-level
    problem located in a file, or just ``reason``).
    """

    def __init__(self, field: str | None, reason: str, *, file: str | None = None,
                 line: int | None = None) -> None:
        self.field = field or ""
        self.reason = _strip_prefix(reason, self.field)
        self.file = file
        self.line = line
        if self.field:
            text = f"{self.field}: {self.reason}"
        elif file is not None and line is not None:
            text = f"{file}:{line}: {self.reason}"
        elif file is not None:
            text = f"{file}: {self.reason}"
        else:
            text = self.reason
        super().__init__(text)

    def _ctor(self) -> tuple[tuple, dict]:
        return (self.field, self.reason), {"file": self.file, "line": self.line}


class InfeasibleError(ConfigError):
    """A well-formed spec whose deployment cannot start, as vLLM refuses to start: the
    model does not fit the GPUs of a worker (weights, activations and reserves leave no
    room for one KV block; ``.field`` names the parallelism that would have to change,
    ``engine.workers.aggregated.tp``, and the message every memory term in GiB), or the
    KV cache cannot hold one request of ``max_model_len`` tokens (``.field`` is
    ``engine.scheduler.max_model_len``; the message gives the largest that fits)."""


class DataError(AisimulateError, ValueError):
    """A problem in the workload data (a trace file), found while replaying it.

    Attributes:
        file: the data file, as the core opened it (an absolute path after
            :func:`aisimulate.load_config`), or ``None``.
        line: 1-based physical line of the bad row, or ``None`` when the problem
            concerns the whole file.
        field: the column or key as spelled in the file (``"output_length"``), or ``""``.
        reason: the core's message.

    ``str(err)`` starts with ``"file:line: "`` whenever the file is known.
    """

    def __init__(self, reason: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.file = file or None
        self.line = line or None
        self.field = field or ""
        self.reason = reason
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}" if self.line else self.file
        text = reason if (not where or reason.startswith(where)) else f"{where}: {reason}"
        super().__init__(text)

    def _ctor(self) -> tuple[tuple, dict]:
        return (self.reason,), {"file": self.file, "line": self.line, "field": self.field}


class SimulationError(AisimulateError, RuntimeError):
    """Any other error from the simulation core.

    Attributes:
        kind: ``"simulation"`` for an error the core returned, ``"panic"`` for a Go
            panic recovered at the boundary (a bug: please report it with the spec).
        detail: for a panic, the Go stack where it happened (for the bug report; the
            message itself is one line); otherwise ``""``.
    """

    def __init__(self, message: str, *, kind: str = "simulation", detail: str = "") -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(message)

    def _ctor(self) -> tuple[tuple, dict]:
        kwargs = {"kind": self.kind}
        if self.detail:
            kwargs["detail"] = self.detail
        return (self.args[0],), kwargs


def _strip_prefix(message: str, field: str) -> str:
    """Drop a leading ``"field: "`` so that a message is never prefixed twice."""
    if field and message.startswith(field + ": "):
        return message[len(field) + 2:]
    return message


def from_envelope(err: Mapping[str, Any]) -> Exception:
    """Build the exception for the core's error object.

    Args:
        err: the value of ``"error"`` in a pybind result:
            ``{"kind": "config"|"data"|"simulation"|"panic", "message": str,
            "field"?: str, "file"?: str, "line"?: int, "detail"?: str,
            "infeasible"?: bool}``.

    Returns:
        InfeasibleError for kind ``config`` with ``"infeasible": true``, ConfigError for
        another ``config``, DataError for ``data``, SimulationError
        otherwise (an unknown kind is treated as ``simulation``).
    """
    kind = err.get("kind", "simulation")
    message = str(err.get("message", "")) or "unknown error from the core"
    if kind == "config" and err.get("infeasible"):
        return InfeasibleError(err.get("field") or "", message)
    if kind == "config":
        return ConfigError(err.get("field") or "", message)
    if kind == "data":
        return DataError(message, file=err.get("file"), line=err.get("line"),
                         field=err.get("field"))
    if kind == "panic":
        return SimulationError(message, kind="panic", detail=str(err.get("detail") or ""))
    return SimulationError(message, kind="simulation")
