"""The Python package's layering, kept as ``core/layers_test.go`` keeps the Go core's.

Every module of ``python/aisimulate`` (but ``tools/``, the research tooling) belongs to
one layer (docs/design.md, "The Python package"), and ``ALLOWED`` says which layers each
layer may import. The imports are read from the source with :mod:`ast`, every one of
them: at the top of a module and inside a function (an import there still runs), but
not under ``if TYPE_CHECKING:`` (names of annotations only, never executed). The test
fails on

- an import that runs up or across the table (a layer importing one it may not),
- a circle: modules that import each other, directly or through others, even within a
  layer (what two modules share becomes a public name of the lower one),
- a private name (``_x``) of one module used by another: ``from .m import _x``,
  ``m._x``, or ``obj._x`` where ``_x`` is a private attribute of a class of another module
  (a method, a slot, a ``self._x``) and of none of this one's; a private *module*
  (``aisimulate._core``) is the package's own and may be imported within it,
- ``aisimulate.tools`` imported by the package (``import aisimulate`` never loads it);
  the circles and private names within ``tools/`` are its own (research tooling).

A deliberate new import is added to the table, in review.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PKG = REPO / "python" / "aisimulate"

#: The layers, bottom first, and the layers each may import besides itself.
ALLOWED: dict[str, tuple[str, ...]] = {
    # the native core, its loading and its calls (watched, stoppable), the exceptions,
    # the interrupt-safe lazy imports of optional libraries
    "binding": (),
    # YAML / JSON / a dict in, a canonical Spec out; where model configs, systems and
    # kernel tables are found
    "config": ("binding",),
    # files in other tools' formats and the safe-write rules of a result folder
    "io": ("binding",),
    # ReplayReport: the in-memory result and its tables
    "result": ("binding", "io"),
    # one replay (held or streamed into a folder), the perf model's API
    "run": ("binding", "config", "io", "result"),
    # many replays and what is drawn from them: sweep and its backends, compare,
    # calibration, plots
    "analysis": ("binding", "config", "io", "result", "run"),
    # the package itself (``aisimulate/__init__.py``): the public names, each re-exported
    # from the layer that defines it
    "api": ("binding", "config", "io", "result", "run", "analysis"),
    # the ``aisimulate`` command: one module per command over a shared argument module
    "cli": ("binding", "config", "io", "result", "run", "analysis", "api"),
    # research tooling outside what ``import aisimulate`` loads
    "tools": ("binding", "config", "io", "result", "run", "analysis", "api", "cli"),
}

#: Module → layer: a name and every module under it (the longest name that matches);
#: ``aisimulate`` is the package's ``__init__`` alone, so a new module is in no layer
#: until it is given one here.
LAYER_OF: dict[str, str] = {
    "aisimulate._core": "binding",
    "aisimulate.binding": "binding",
    "aisimulate.errors": "binding",
    "aisimulate._startup": "binding",  # beside __init__: import aisimulate loads it
    "aisimulate.config": "config",
    "aisimulate.catalogue": "config",
    "aisimulate._yaml": "config",
    "aisimulate.config_bounds": "config",
    "aisimulate.io": "io",
    "aisimulate.report": "result",
    "aisimulate.records": "result",  # the per-request column arrays and their conversions
    "aisimulate.report_text": "result",  # the text table: it reads the summary and metadata only
    "aisimulate.plot": "result",  # the figures: they import nothing of the package
    "aisimulate.run": "run",
    "aisimulate.perf": "run",
    "aisimulate.analysis": "analysis",
    "aisimulate.sweep": "analysis",
    "aisimulate._sweep": "analysis",  # the sweep's points and backends
    "aisimulate.compare": "analysis",
    "aisimulate.calibration": "analysis",
    "aisimulate": "api",
    "aisimulate.cli": "cli",
    "aisimulate.__main__": "cli",
    "aisimulate.tools": "tools",
}

#: Modules not yet in their layer's place: the current name → the name it will have.
#: The test prints them; the list only shrinks.
NOT_MOVED: dict[str, str] = {}

#: Imports that break the table today (importer, imported), each printed; the list only
#: shrinks, and a pair that no longer breaks it must leave the list.
KNOWN_UP: set[tuple[str, str]] = set()

#: Circles today: each as the sorted modules of one strongly connected component.
KNOWN_CIRCLES: set[tuple[str, ...]] = set()

#: Private names used across modules today: (user, owner, name).
KNOWN_PRIVATE: set[tuple[str, str, str]] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).with_suffix("")
        if rel.parts[0] == "_core":
            continue
        parts = ["aisimulate", *rel.parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _layer(module: str) -> str | None:
    name = NOT_MOVED.get(module, module)
    parts = name.split(".")
    for i in range(len(parts), 1, -1):
        layer = LAYER_OF.get(".".join(parts[:i]))
        if layer is not None:
            return layer
    return LAYER_OF.get(name)  # "aisimulate" is the package's __init__ alone


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _run_nodes(tree: ast.AST):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
            else:
                stack.append(child)


class _Imports:
    """Each module's imports of the package's modules and the private names it uses."""

    def __init__(self) -> None:
        self.modules = _modules()
        self.edges: dict[str, set[str]] = {m: set() for m in self.modules}
        self.private: set[tuple[str, str, str]] = set()
        self.members: dict[str, set[str]] = {}  # private attributes of the module's classes
        self.reads: dict[str, set[tuple[str, int]]] = {}  # obj._x read, obj not self / cls
        for module, path in self.modules.items():
            self._read(module, path)
        # an object's private attribute read in another module than its class's:
        # report._count() in an exporter is a private name crossing a module
        owners: dict[str, set[str]] = {}
        for module, names in self.members.items():
            for n in names:
                owners.setdefault(n, set()).add(module)
        for module, reads in self.reads.items():
            for name, _ in reads:
                theirs = owners.get(name, set())
                if theirs and module not in theirs:
                    for owner in theirs:
                        self.private.add((module, owner, name))

    def _target(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".")
        if not self.modules[module].name == "__init__.py":
            base = base[:-1]
        base = base[:len(base) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))

    def _read(self, module: str, path: Path) -> None:
        tree = ast.parse(path.read_text(), str(path))
        aliases: dict[str, str] = {}  # a name bound to one of the package's modules
        for node in _run_nodes(tree):
            if isinstance(node, ast.ImportFrom):
                target = self._target(module, node)
                if target.split(".")[0] != "aisimulate":
                    continue
                for a in node.names:
                    full = f"{target}.{a.name}"
                    if full in self.modules:
                        self.edges[module].add(full)
                        aliases[a.asname or a.name] = full
                    else:
                        self.edges[module].add(target)
                        if _private(a.name) and target != module:
                            self.private.add((module, target, a.name))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "aisimulate":
                        self.edges[module].add(a.name)
                        if a.asname:
                            aliases[a.asname] = a.name
            elif (dynamic := _dynamic_import(node)) is not None and dynamic.split(".")[0] == "aisimulate":
                self.edges[module].add(dynamic)
        for node in _run_nodes(tree):
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in aliases:
                owner = aliases[node.value.id]
            else:
                owner = _dynamic_import(node.value)
            if owner is not None and f"{owner}.{node.attr}" not in self.modules and owner != module:
                self.private.add((module, owner, node.attr))
        self.members[module] = _private_members(tree)
        self.reads[module] = {(node.attr, node.lineno) for node in _run_nodes(tree)
                              if isinstance(node, ast.Attribute) and _private(node.attr)
                              and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))}
        self.edges[module].discard(module)
        self.edges[module] = {e for e in self.edges[module] if e in self.modules or e.startswith("aisimulate._core")}


def _private_members(tree: ast.AST) -> set[str]:
    """The private attributes of a module's classes: their methods and properties, the
    names of ``__slots__`` and what their methods assign to ``self._x``."""
    out: set[str] = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(item.name):
                out.add(item.name)
            if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in item.targets):
                out.update(e.value for e in ast.walk(item.value)
                           if isinstance(e, ast.Constant) and isinstance(e.value, str) and _private(e.value))
        for node in ast.walk(cls):
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id == "self"):
                out.add(node.attr)
    return out


def _dynamic_import(node: ast.AST) -> str | None:
    """The module of ``__import__("name", ...)``, ``import_module("name")`` or
    ``_lazy.module("name")`` with a literal absolute name, else None."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    arg = node.args[0]
    if name in ("__import__", "import_module", "module") and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return None if arg.value.startswith(".") else arg.value
    return None


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _package_only(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The edges among the package's modules: ``tools/`` keeps its own habits (it is
    research tooling, outside what ``import aisimulate`` loads)."""
    return {m: {d for d in deps if _layer(d) != "tools"} for m, deps in edges.items() if _layer(m) != "tools"}


def _circles(edges: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: set[tuple[str, ...]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.add(tuple(sorted(comp)))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


IMPORTS = _Imports()


def test_every_module_has_a_layer():
    assert len(IMPORTS.modules) > 30, "the walk found too few modules"
    missing = [m for m in IMPORTS.modules if _layer(m) is None]
    assert not missing, f"modules in no layer of LAYER_OF: {missing}"
    for old, new in NOT_MOVED.items():
        assert old in IMPORTS.modules, f"NOT_MOVED lists {old}, which is gone: take it out"
    if NOT_MOVED:
        print("modules not yet in their layer's place:")
        for old, new in sorted(NOT_MOVED.items()):
            print(f"  {old} → {new}")


def test_imports_run_down_the_layers():
    broken = set()
    for module, deps in IMPORTS.edges.items():
        mine = _layer(module)
        for dep in deps:
            theirs = _layer(dep)
            if theirs != mine and theirs not in ALLOWED[mine]:
                broken.add((module, dep))
    for module, dep in sorted(broken & KNOWN_UP):
        print(f"known: {module} ({_layer(module)}) imports {dep} ({_layer(dep)})")
    new = sorted(broken - KNOWN_UP)
    assert not new, "imports outside their layer (may import ALLOWED[layer]):\n" + "\n".join(
        f"  {m} ({_layer(m)}) imports {d} ({_layer(d)})" for m, d in new)
    fixed = sorted(KNOWN_UP - broken)
    assert not fixed, f"no longer broken: take them out of KNOWN_UP: {fixed}"


def test_no_circles():
    circles = _circles(_package_only(IMPORTS.edges))
    for c in sorted(circles & KNOWN_CIRCLES):
        print("known circle:", " ↔ ".join(c))
    assert not circles - KNOWN_CIRCLES, f"import circles: {sorted(circles - KNOWN_CIRCLES)}"
    assert not KNOWN_CIRCLES - circles, f"gone: take them out of KNOWN_CIRCLES: {sorted(KNOWN_CIRCLES - circles)}"


def test_no_private_name_crosses_a_module():
    private = {p for p in IMPORTS.private if _layer(p[0]) != "tools"}
    new = sorted(private - KNOWN_PRIVATE)
    assert not new, "private names used from another module (make them public names of the owner):\n" + \
        "\n".join("  {} uses {}.{}".format(*p) for p in new)
    for p in sorted(private & KNOWN_PRIVATE):
        print("known: {} uses {}.{}".format(*p))
    fixed = sorted(KNOWN_PRIVATE - private)
    assert not fixed, f"no longer used: take them out of KNOWN_PRIVATE: {fixed}"


def test_every_module_says_what_it_is_for():
    # a reader opening a module first reads its docstring (docs/design.md, "The Python
    # package"): none is without one
    bare = sorted(m for m, path in IMPORTS.modules.items() if _layer(m) != "tools"
                  and not ast.get_docstring(ast.parse(path.read_text())))
    assert not bare, f"modules without a docstring: {bare}"


def test_the_package_never_imports_tools():
    users = sorted(m for m, deps in IMPORTS.edges.items()
                   if _layer(m) != "tools" and any(_layer(d) == "tools" for d in deps))
    assert not users, f"modules of the package that import aisimulate.tools: {users}"


def test_the_checks_see_a_bad_import():
    # the checks themselves: an up-import, a circle and a private name, made up
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {("a", "b", "c")}
    assert _layer("aisimulate.io.exports") == "io" and _layer("aisimulate") == "api"
    assert _layer("aisimulate.cli.sweep") == "cli" and _layer("aisimulate.binding.native") == "binding"
    assert _layer("aisimulate.new_module") is None and _layer("aisimulate.configure") is None
    assert "result" not in ALLOWED["io"] and "api" not in ALLOWED["analysis"]
    assert _private("_count") and not _private("__version__") and not _private("count")
