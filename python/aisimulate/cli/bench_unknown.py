"""An option of a benchmark's command line that ``aisimulate bench`` does not take, in
words: a likely typo of one it knows is named as such, where "not simulated" would
take it for an option of the tool."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (as bench.py: typing costs CPU at import)
    from typing import Iterable


def unknown_option(name: str, tool: str, known: Iterable[str], takes: str = "") -> str:
    """The message for an option of ``tool``'s command line that aisimulate bench does not
    take: a spelling close to one of ``known`` (the options it takes or lets pass) is named
    as a likely typo (``--num-promps``: did you mean --num-prompts?), which "not simulated"
    would misname as an option of the tool; any other, and a known one this command cannot
    take (genai-perf's --request-rate), is not simulated (``takes``: the options it takes,
    for the message)."""
    import difflib

    names = set(known)
    close = [] if name in names else difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.8)
    if close:
        return f"{name}: not an option aisimulate bench knows of {tool}: did you mean {close[0]}?"
    return (f"{name}: not simulated (an option that changes what {tool} sends or measures"
            + (f"; aisimulate bench takes {takes}" if takes else "") + ")")
