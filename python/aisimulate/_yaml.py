"""The strict YAML reader of :mod:`aisimulate.config`: ``yaml.safe_load`` semantics with
bounds on nesting, expanded size and integer length, duplicate keys refused, and YAML
1.2 floats. A module of its own so that PyYAML is imported only when a config is read
as YAML (``import aisimulate`` does not load it)."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any

import yaml

from .config_bounds import MAX_CONFIG_DEPTH, MAX_CONFIG_VALUES, MAX_INT_DIGITS

__all__ = ["StrictLoader", "load_strict"]


class _TooBig(Exception):
    """A YAML document beyond one of the bounds of :mod:`aisimulate.config_bounds`, at ``mark``."""

    def __init__(self, what: str, mark: Any) -> None:
        super().__init__(what)
        self.what, self.mark = what, mark


class StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that rejects a key given twice in one mapping, and a document
    nested deeper than :data:`MAX_CONFIG_DEPTH`, holding more than
    :data:`MAX_CONFIG_VALUES` values once its aliases are expanded, or an integer of more
    than :data:`MAX_INT_DIGITS` digits (each a :class:`_TooBig`)."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        # PyYAML composes nested nodes recursively: a bound here stops a deep
        # document before Python's recursion limit (a RecursionError traceback).
        self._depth += 1
        try:
            if self._depth > MAX_CONFIG_DEPTH:
                raise _TooBig(f"nested more than {MAX_CONFIG_DEPTH} levels deep",
                              self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self) -> Any:
        node = super().compose_document()
        if node is not None:
            _check_expanded_size(node)
        return node


def _check_expanded_size(root: Any) -> None:
    """Raise :class:`_TooBig` when the node graph (an alias is a shared node) would
    expand to more than :data:`MAX_CONFIG_VALUES` values, or contains itself. Each node's
    expanded size is computed once, so an alias bomb is measured in time linear in its
    text, without recursion."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        kids = _children(node)
        if not done:
            if key in visiting:
                raise _TooBig("a value contains itself (a recursive alias)", node.start_mark)
            visiting.add(key)
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in sizes)
            continue
        visiting.discard(key)
        sizes[key] = 1 + sum(sizes[id(k)] for k in kids)
        if sizes[key] > MAX_CONFIG_VALUES:
            raise _TooBig(f"holds more than {MAX_CONFIG_VALUES:,} values once its aliases are "
                          "expanded (an alias bomb?)" if _has_alias(root) else
                          f"holds more than {MAX_CONFIG_VALUES:,} values (keys, values and list items; "
                          "a config is far smaller: is this a data file?)", node.start_mark)


def _has_alias(root: Any) -> bool:
    """Whether a node is reached twice in the graph (what an alias does)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        stack.extend(_children(node))
    return False


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _construct_int(loader: StrictLoader, node: yaml.ScalarNode) -> int:
    """YAML 1.1 integers, refusing more than :data:`MAX_INT_DIGITS` digits (Python's
    ``int()`` raises a ValueError past 4,300 decimal digits)."""
    if len(node.value) > MAX_INT_DIGITS:
        raise _TooBig(f"an integer of {len(node.value):,} characters is too large "
                      f"(at most {MAX_INT_DIGITS} digits)", node.start_mark)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:
            continue  # unhashable key: construct_mapping reports it
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)

# PyYAML follows YAML 1.1, whose float pattern needs a dot: ``1e-3`` and ``2e5`` would be
# read as strings. YAML 1.2 (and every other reader) takes them as numbers; so do we.
StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _count_values(text: str) -> None:
    """Refuse, before the document is composed, one that holds more than
    :data:`MAX_CONFIG_VALUES` values (keys, values and list items, aliases expanded) or
    nests deeper than :data:`MAX_CONFIG_DEPTH`: a pass over libyaml's parse events (C),
    stopped at the first value past the bound, so a large document is refused in a
    fraction of a second (the pure-Python parser of :class:`StrictLoader` took 2.6 s of
    CPU to reach the bound of a 60,000-key mapping). Anything this pass does not settle
    (no libyaml, invalid YAML, an alias of a value still open) is left to
    :class:`StrictLoader`, which checks the same bounds with the exact messages."""
    if not getattr(yaml, "__with_libyaml__", False):
        return
    total, aliased = 0, False
    open_: list[list[Any]] = []  # [values so far, anchor] of each collection being read
    sizes: dict[str, int] = {}  # anchor → its value's expanded size

    def add(n: int, mark: Any) -> None:
        nonlocal total
        total += n
        for entry in open_:
            entry[0] += n
        if total > MAX_CONFIG_VALUES:
            raise _TooBig((f"holds more than {MAX_CONFIG_VALUES:,} values once its aliases are expanded "
                           "(an alias bomb?)") if aliased else
                          (f"holds more than {MAX_CONFIG_VALUES:,} values (keys, values and list items; a "
                           "config is far smaller: is this a data file?)"), mark)

    try:
        for ev in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(open_) >= MAX_CONFIG_DEPTH:
                    raise _TooBig(f"nested more than {MAX_CONFIG_DEPTH} levels deep", ev.start_mark)
                add(1, ev.start_mark)
                open_.append([1, ev.anchor])
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                size, anchor = open_.pop()
                if anchor is not None:
                    sizes[anchor] = size
            elif isinstance(ev, yaml.ScalarEvent):
                add(1, ev.start_mark)
                if ev.anchor is not None:
                    sizes[ev.anchor] = 1
            elif isinstance(ev, yaml.AliasEvent):
                if ev.anchor not in sizes:  # unknown, or a value that contains itself
                    return
                aliased = True
                add(sizes[ev.anchor], ev.start_mark)
    except yaml.YAMLError:
        return


def load_strict(text: str) -> Any:
    """Parse one YAML document with :class:`StrictLoader` (after :func:`_count_values`).

    Raises:
        _TooBig: past a bound. yaml.YAMLError: invalid YAML.
    """
    _count_values(text)
    return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass
