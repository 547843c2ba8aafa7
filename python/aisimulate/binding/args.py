"""Checks of the public API's list and mapping arguments, so that a value of the wrong
shape gets an error naming the argument and the forms it takes, not an AttributeError
from deep inside (a ``str`` is iterable: ``formats="csv"`` must not become
``["c", "s", "v"]``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any

from ..errors import AisimulateError


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


class GivenTwice(AisimulateError, ValueError):
    """A name given twice to :func:`names`; ``name`` is the name."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name

    def _ctor(self) -> tuple[tuple, dict]:
        return (str(self), self.name), {}


def names(arg: str, value: Any, choices: Iterable[str] | None, what: str, *,
          any_case: bool = False) -> list[str]:
    """``value`` as a list of names from ``choices`` (``None``: any name), order kept:
    one name (a ``str``) or an iterable of names. The one check of a name given twice,
    for the API and the CLI (``aisimulate.cli._parse_names``). With ``any_case`` (the
    format names of ``save``/``replay`` and ``--records``/``--export``, whose
    ``choices`` are lower case) a name is matched in any case and returned in lower
    case: ``"CSV"`` is ``"csv"`` (and ``["csv", "CSV"]`` gives it twice).

    Raises:
        TypeError: ``value`` is neither (or holds a non-string); the message names
            ``arg`` and the accepted forms.
        ValueError: a name is not among ``choices``; :class:`GivenTwice`, a name is
            given twice (refused, not dropped: as the CLI's ``--records parquet,parquet``).
    """
    choices = None if choices is None else list(choices)
    forms = ("a name or a list of names" if choices is None
             else f"one of {', '.join(map(repr, choices))} or a list of them")
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{arg} must be {forms}, got {_describe(value)}")
    else:
        items = list(value)
        odd = [v for v in items if not isinstance(v, str)]
        if odd:
            raise TypeError(f"{arg} must be {forms}, got {_describe(value)} holding {_describe(odd[0])}")
    if any_case:
        items = [v.lower() for v in items]
    unknown = [] if choices is None else [v for v in items if v not in choices]
    if unknown:
        raise ValueError(f"unknown {what} {unknown} in {arg}: choose from {', '.join(choices)}")
    twice = next((v for i, v in enumerate(items) if v in items[:i]), None)
    if twice is not None:
        one = what.replace("(s)", "")
        raise GivenTwice(f"{arg}: {twice!r} is given twice in {_shown(value, items)}: give each {one} once", twice)
    return items


def _shown(value: Any, items: list[str]) -> str:
    """A list or tuple as written (``['a', 'a']``), any other iterable as its items."""
    return repr(value) if isinstance(value, (list, tuple)) else repr(items)


def mapping(arg: str, value: Any, example: str) -> Mapping[str, Any]:
    """``value`` itself when it is a mapping, else a TypeError naming ``arg`` and
    showing ``example`` (the accepted form)."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{arg} must be a mapping such as {example}, got {_describe(value)}")
    return value


def flag(arg: str, value: Any, *, auto: bool = False) -> bool | None:
    """``value`` of a yes/no argument: ``True`` or ``False`` (and ``None`` with ``auto``,
    "decide for me", as ``progress=None``), else a TypeError naming ``arg``. A truthy
    stand-in (``"yes"``, ``"no"``, ``1``) is refused: ``bool("no")`` is True."""
    if value is True or value is False or (auto and value is None):
        return value
    forms = "True, False or None (automatic)" if auto else "True or False"
    raise TypeError(f"{arg} must be {forms}, got {_describe(value)}")
