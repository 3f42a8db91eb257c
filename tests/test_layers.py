"""tlaloc's layers (docs/architecture.md, "Layers"): every import, at module or function level,
goes down this list or stays inside its own layer, and no import cycle exists among tlaloc's
modules. The test reads the sources with `ast`; it imports nothing of tlaloc."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tlaloc"

# Bottom first, as in docs/architecture.md. A module belongs to the layer of the longest
# prefix naming it ("tlaloc" names the package's __init__ only); a module may import its own
# layer and the layers below it (`if TYPE_CHECKING:` blocks aside).
LAYERS = [
    ("base", ["tlaloc._native", "tlaloc._dtypes", "tlaloc._config", "tlaloc._tree",
              "tlaloc.tree", "tlaloc._context", "tlaloc._numpy_names"]),
    ("protocol", ["tlaloc._protocol"]),
    ("graph", ["tlaloc._graph"]),
    ("lowering", ["tlaloc.lowering"]),
    ("primitives", ["tlaloc._prims"]),
    ("backends", ["tlaloc.backends"]),
    ("devices", ["tlaloc._devices", "tlaloc._mesh", "tlaloc.distributed"]),
    ("array", ["tlaloc._array"]),
    ("namespace core", ["tlaloc._api._core", "tlaloc._api._ops"]),
    ("namespace", ["tlaloc._api", "tlaloc._runtime_api"]),
    ("autodiff", ["tlaloc.autodiff", "tlaloc._vmap"]),   # the transformations
    ("extensions", ["tlaloc.linalg", "tlaloc.fft", "tlaloc.special"]),
    ("named", ["tlaloc.named"]),
    ("operators", ["tlaloc._operators"]),
    ("capture", ["tlaloc._state", "tlaloc._jit", "tlaloc._export", "tlaloc.control_flow",
                 "tlaloc._sharding", "tlaloc._dynamic"]),
    # profiling and explanations (docs/profiling.md): they observe every layer below through
    # the observer slot of tlaloc/_context.py, which the lower layers call
    ("observation", ["tlaloc._program_diff", "tlaloc._observe", "tlaloc._explain",
                     "tlaloc._profile", "tlaloc._collectives"]),
    ("package", ["tlaloc"]),
    # imported on first use (tlaloc.__getattr__), written on the public namespace
    ("random", ["tlaloc.random"]),
    # NumPy's spellings (imported on first use, or as `import tlaloc.numpy`), written on the
    # public namespace and tlaloc.random
    ("numpy", ["tlaloc.numpy"]),
]

# Upward imports still in the code, each with the change that removes it. Nothing else may
# be added here.
PENDING = set()


def _modules():
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def layer_of(module):
    best, rank = None, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            inside = module.startswith(p + ".") and p != "tlaloc"   # the package: itself only
            if (module == p or inside) and (best is None or len(p) > len(best)):
                best, rank = p, i
    return rank


def _type_checking_nodes(tree):
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            skip.update(id(n) for n in ast.walk(node))
    return skip


def imports(module):
    """(imported tlaloc module, line) for every import statement of `module`."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    skip = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            # `from pkg import sub` imports the submodule; `from mod import name`, the module
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != module and not t.startswith(module + "."):
                found.append((t, node.lineno))
    return found


def test_every_module_has_a_layer():
    """A new module is placed in LAYERS (and in docs/architecture.md's table)."""
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_imports_go_down():
    upward = []
    for module in MODULES:
        mine = layer_of(module)
        for target, line in imports(module):
            theirs = layer_of(target)
            if theirs > mine and (module, target) not in PENDING:
                upward.append(f"{module}:{line} imports {target} "
                              f"({LAYERS[mine][0]} -> {LAYERS[theirs][0]})")
    assert upward == [], "\n".join(upward)


def test_no_import_cycles():
    graph = {m: {t for t, _ in imports(m)} for m in MODULES}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):      # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for m in sorted(graph):
        if m not in index:
            visit(m)
    assert cycles == []


@pytest.mark.parametrize("module", ["tlaloc._array", "tlaloc._prims", "tlaloc._graph", "tlaloc.lowering", "tlaloc.backends"])
def test_the_core_does_not_import_the_namespace(module):
    targets = {t for m in MODULES if m == module or m.startswith(module + ".")
               for t, _ in imports(m) if (m, t) not in PENDING}
    above = ("tlaloc._api", "tlaloc._array", "tlaloc.named", "tlaloc.linalg", "tlaloc.autodiff")
    assert sorted(t for t in targets if t == "tlaloc" or t.startswith(above)) == []
