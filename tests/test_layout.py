"""The layout holds (issue: one pipeline kernel): small modules, no import cycle among the
project's packages, no untyped ``ctx.extra``, and ``fixtures`` (the loopback emulations) imported
only by tests and the sample environment.

Import cycles are looked for in the graph of *module-level* imports (what runs when a module is
imported; ``if TYPE_CHECKING:`` blocks left out), over the modules of :data:`PACKAGES`. An edge
goes to the module an import names: ``import a.b`` → ``a.b``, ``from a import b`` → ``a.b`` when
``a/b.py`` (or ``a/b/``) exists, else ``a``; the package ``__init__`` an import passes through is not
an edge of its own. Imports inside functions run late and break no import, so they are not
cycles here; they are counted for the ``fixtures`` rule, which is about what production code
depends on at all.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: the project's packages (the import graph and the fixtures rule)
PACKAGES = ("cinesub", "flows", "extractors", "validators", "warehouse", "fixtures", "benchmarks")
#: where project modules live (the size rule: source and test modules alike)
MODULE_DIRS = (*PACKAGES, "tests", "scripts")
MAX_LINES = 700
#: the one production module allowed to import fixtures: the sample environment
SAMPLE_ENVIRONMENT = "flows/env/sample.py"


def _modules(dirs: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    for d in dirs:
        base = ROOT / d
        if base.is_dir():
            out.extend(p for p in base.rglob("*.py") if "__pycache__" not in p.parts)
    return sorted(out)


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(path: Path, module_level: bool) -> list[tuple[str, int]]:
    """(imported name, line) of every import in ``path``: module-level ones only (statements not
    inside a function, ``TYPE_CHECKING`` blocks left out), or all of them."""
    name = _name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if module_level and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if module_level and isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit_stmt(sub)
                continue
            visit_stmt(child)

    def visit_stmt(child: ast.AST) -> None:
        if isinstance(child, ast.Import):
            found.extend((a.name, child.lineno) for a in child.names)
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base_parts = package.split(".") if package else []
                base_parts = base_parts[: len(base_parts) - (child.level - 1)] if child.level > 1 else base_parts
                base = ".".join(p for p in [*base_parts, child.module or ""] if p)
            else:
                base = child.module or ""
            for a in child.names:
                sub = f"{base}.{a.name}"
                found.append((sub if _exists(sub) else base, child.lineno))
        visit(child)

    visit(_tree(path))
    return found


def _exists(module: str) -> bool:
    p = ROOT.joinpath(*module.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _graph(module_level: bool) -> dict[str, set[str]]:
    mods = {_name(p): p for p in _modules(PACKAGES)}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        for target, _ in _imports(p, module_level):
            if target in mods and target != m:
                graph[m].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(out)


# --------------------------------------------------------------------------------------------
# the rules
# --------------------------------------------------------------------------------------------
def test_no_module_over_700_lines():
    mods = _modules(MODULE_DIRS)
    assert len(mods) > 100  # the walk finds the project
    long = {str(p.relative_to(ROOT)): n for p in mods
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"modules over {MAX_LINES} lines (split them along a real seam): {long}"


def test_no_import_cycle_among_the_packages():
    graph = _graph(module_level=True)
    assert "validators.candidate" in graph and graph["validators.candidate"]  # the graph has edges
    cycles = _cycles(graph)
    assert cycles == [], f"module-level import cycles: {cycles}"


def test_cycle_finder_finds_a_cycle():
    """The rule above can fail: the finder reports a planted cycle (and only that)."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_relative_and_from_imports_resolve():
    """``from pkg import mod`` is an edge to the module, ``from pkg.mod import name`` to pkg.mod,
    and a function-level import is not module-level."""
    edges = {t for t, _ in _imports(ROOT / "validators" / "candidate.py", module_level=True)}
    assert {"extractors.decode", "validators.checks", "cinesub.records"} <= edges
    src = ROOT / "validators" / "inspect_report.py"
    assert "validators.candidate" in {t for t, _ in _imports(src, module_level=True)}


def test_no_ctx_extra_outside_tests():
    hits = []
    for p in _modules(PACKAGES + ("scripts",)):
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if "ctx.extra" in line:
                hits.append(f"{p.relative_to(ROOT)}:{i}")
    assert hits == [], f"the untyped ctx.extra dict is gone (use the typed run context): {hits}"


def _fixtures_imports() -> list[str]:
    hits = []
    for p in _modules(PACKAGES + ("scripts",)):
        rel = p.relative_to(ROOT).as_posix()
        if rel.startswith("fixtures/") or rel == SAMPLE_ENVIRONMENT:
            continue
        for target, line in _imports(p, module_level=False):
            if target == "fixtures" or target.startswith("fixtures."):
                hits.append(f"{rel}:{line} imports {target}")
    return hits


def test_fixtures_imported_only_by_tests_and_the_sample_environment():
    assert (ROOT / SAMPLE_ENVIRONMENT).is_file(), "the sample environment module moved: update this test"
    hits = _fixtures_imports()
    assert hits == [], ("production code (and benchmarks) must not import fixtures/; the sample "
                        f"environment ({SAMPLE_ENVIRONMENT}) supplies them: {hits}")


@pytest.mark.parametrize("module", ["validators.candidate", "validators.inspect_report",
                                    "validators.coverage_optimizer", "validators.boxoffice_ranking",
                                    "validators.extraction_metrics", "extractors.decode_verify"])
def test_named_modules_exist(module):
    """Modules named for what they do (renames of the layout issue) are where the docs say."""
    assert _exists(module)
