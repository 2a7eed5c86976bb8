"""Every runtime import is a declared dependency (issue 14, point 9).

Walks every module of the shipped packages, collects the top-level names of the absolute imports
they make at run time (module level or inside functions; ``if TYPE_CHECKING:`` blocks excluded),
maps each name to the distributions that provide it (``importlib.metadata.packages_distributions``)
and requires each to be the standard library, a first-party package, or provided by a distribution
named in ``[project].dependencies`` — a package that only a dev extra (or a transitive dependency)
brings is not enough: ``pip install cinesub`` would not have it.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("cinesub", "flows", "extractors", "validators", "warehouse", "fixtures")


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def runtime_imports(source: str, filename: str = "<src>") -> set[str]:
    """Top-level names of the absolute imports ``source`` makes at run time."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:  # only the else branch runs
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source, filename))
    return names


def declared_distributions(pyproject: Path) -> tuple[set[str], set[str]]:
    """(runtime dependencies, dev-extra dependencies) of ``pyproject``, canonical names."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    runtime = {_canon(Requirement(r).name) for r in project.get("dependencies", [])}
    extras = {_canon(Requirement(r).name) for reqs in project.get("optional-dependencies", {}).values()
              for r in reqs}
    return runtime, extras


def undeclared_imports(modules: dict[str, set[str]], declared: set[str], first_party: set[str],
                       providers: dict[str, list[str]]) -> dict[str, str]:
    """Imported name -> why it is not covered, for each name that is neither stdlib, first-party
    nor provided by a declared distribution."""
    bad: dict[str, str] = {}
    for name, files in sorted(modules.items()):
        if name in sys.stdlib_module_names or name in first_party or name == "__future__":
            continue
        dists = {_canon(d) for d in providers.get(name, [])}
        if not dists:
            bad[name] = f"no installed distribution provides it (imported by {sorted(files)[0]})"
        elif not dists & declared:
            bad[name] = (f"provided by {', '.join(sorted(dists))}, not in [project].dependencies "
                         f"(imported by {', '.join(sorted(files)[:3])})")
    return bad


def _scan() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            rel = str(path.relative_to(REPO))
            for name in runtime_imports(path.read_text(encoding="utf-8"), rel):
                found.setdefault(name, set()).add(rel)
    return found


def test_every_runtime_import_is_a_declared_dependency():
    runtime, _ = declared_distributions(REPO / "pyproject.toml")
    imports = _scan()
    assert "duckdb" in imports and "scipy" in imports  # the walk sees the code
    bad = undeclared_imports(imports, runtime, set(PACKAGES), md.packages_distributions())
    assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())


def test_declared_dependencies_are_pinned_in_the_lock():
    """Each runtime dependency has an exact pin in requirements.lock that satisfies its range
    and is the version installed here."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = {}
    for line in (REPO / "requirements.lock").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)", line.strip())
        if m:
            pins[_canon(m.group(1))] = m.group(2)
    for spec in project["dependencies"]:
        req = Requirement(spec)
        name = _canon(req.name)
        assert name in pins, f"{req.name} is not pinned in requirements.lock"
        assert req.specifier.contains(pins[name], prereleases=True), (spec, pins[name])
        assert md.version(req.name) == pins[name], (req.name, md.version(req.name), pins[name])


def test_the_check_catches_a_dev_only_import():
    """The rule itself: an import that only a dev extra provides is reported, one in a
    ``TYPE_CHECKING`` block or a relative import is not."""
    src = ("import os\nfrom typing import TYPE_CHECKING\nimport duckdb.typing\n"
           "if TYPE_CHECKING:\n    import pysrt\nfrom . import sibling\n"
           "def f():\n    from hypothesis import given\n    return given\n")
    names = runtime_imports(src)
    assert names == {"os", "typing", "duckdb", "hypothesis"}
    providers = {"duckdb": ["duckdb"], "hypothesis": ["hypothesis"]}
    bad = undeclared_imports({n: {"m.py"} for n in names}, {"duckdb"}, set(), providers)
    assert set(bad) == {"hypothesis"} and "not in [project].dependencies" in bad["hypothesis"]
    assert set(undeclared_imports({"nowhere_pkg": {"m.py"}}, set(), set(), {})) == {"nowhere_pkg"}
