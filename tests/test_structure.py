"""The house's rules, read from the imports of every module (lazy imports inside functions included).

Each rule is checked on the real tree and, so that it can fail, on a small
tree written to tmp_path that breaks it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = {"collector", "collector.settings", "collector.clock", "collector.errors", "collector.urls",
        "collector.registry"}
SUBPACKAGES = ("net", "parse", "collect", "record", "wayback", "publish", "review", "evidence", "cli")
MAX_LINES = 400
LONGER: dict[str, int] = {}  # none: settings.py imports its health part to stay within MAX_LINES


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(root: Path, path: Path) -> list[tuple[str, str | None, int]]:
    """Return (module imported, name imported from it or None, line) for every import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(root, path).split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found += [(target, alias.name, node.lineno) for alias in node.names]
    return found


def graph(root: Path) -> dict[str, dict]:
    """Return every module under root/collector: its imports, resolved to modules where names are modules."""
    modules = {module_name(root, p): p for p in (root / "collector").rglob("*.py")}
    out = {}
    for name, path in modules.items():
        edges = []
        for target, item, line in imports(root, path):
            sub = f"{target}.{item}" if item else None
            if sub in modules:
                edges.append((sub, None, line))
            else:
                edges.append((target, item, line))
        out[name] = {"path": path, "imports": edges}
    return out


def broken_rules(root: Path) -> list[str]:
    """Return one line per broken rule of the house's shape (empty when all hold)."""
    g = graph(root)
    problems = []
    for name, info in g.items():
        path = info["path"].relative_to(root)
        lines = len(info["path"].read_text(encoding="utf-8").splitlines())
        if lines > LONGER.get(name, MAX_LINES):
            problems.append(f"{path}: {lines} lines (more than {LONGER.get(name, MAX_LINES)})")
        room = name.split(".")[1] if name.count(".") >= 1 and name.split(".")[1] in SUBPACKAGES else None
        for target, item, line in info["imports"]:
            where = f"{path}:{line}"
            if target.split(".")[0] == "click" and room != "cli":
                problems.append(f"{where}: imports click outside collector/cli/")
            if not target.startswith("collector"):
                continue
            target_room = target.split(".")[1] if target.count(".") >= 1 else None
            if room == "parse" and target not in CORE and target_room != "parse":
                problems.append(f"{where}: parse/ imports {target} (only core modules)")
            if room == "publish" and target_room == "net":
                problems.append(f"{where}: publish/ imports {target} (never net/)")
            if room == "net" and target_room == "record" and name != "collector.net.ledger":
                problems.append(f"{where}: net/ reaches the database other than through the ledger ({target})")
            if item and item.startswith("_") and not item.startswith("__") and target != name:
                problems.append(f"{where}: imports the private name {item} from {target}")
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(g)]
    return problems


def cycles(g: dict[str, dict]) -> list[list[str]]:
    """Return the import cycles between modules (a package's __init__ counts as the package)."""
    edges = {m: {t for t, _item, _line in info["imports"] if t in g and t != m} for m, info in g.items()}
    found, state = [], {}

    def visit(module, stack):
        state[module] = "open"
        stack.append(module)
        for target in sorted(edges[module]):
            if state.get(target) == "open":
                found.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [])
    return found


def test_the_tree_keeps_every_rule():
    assert broken_rules(ROOT) == []


def test_every_subpackage_says_what_it_is_for_and_may_import():
    for room in SUBPACKAGES:
        doc = ast.get_docstring(ast.parse((ROOT / "collector" / room / "__init__.py").read_text()))
        assert doc and "import" in doc.lower(), f"collector/{room}/__init__.py needs its two lines"


def test_demo_and_bench_do_not_import_the_test_suite():
    for folder in ("demo", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            targets = [t for t, _item, _line in imports(ROOT, path)]
            assert not [t for t in targets if t == "tests" or t.startswith("tests.")], path


BROKEN = {
    "click in a library module": ("collector/record/x.py", "import click\n", "imports click"),
    "parse importing the network": ("collector/parse/x.py", "from collector.net import fetcher\n", "parse/ imports"),
    "parse importing the store, lazily": (
        "collector/parse/x.py", "def f():\n    from collector.record.store import Store\n", "parse/ imports"),
    "publish importing net": ("collector/publish/x.py", "from ..net import wire\n", "publish/ imports"),
    "net writing outside the ledger": (
        "collector/net/x.py", "from collector.record.store import Store\n", "other than through the ledger"),
    "a private name": ("collector/record/x.py", "from collector.net.wire import _short\n", "private name"),
    "a long module": ("collector/record/x.py", "x = 1\n" * 401, "lines"),
    "a cycle through a lazy import": (
        "collector/record/x.py", "def f():\n    from collector.record import y\n", "import cycle"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_rule_fails_when_broken(tmp_path, case):
    for room in ("", *SUBPACKAGES):
        (tmp_path / "collector" / room).mkdir(parents=True, exist_ok=True)
        (tmp_path / "collector" / room / "__init__.py").write_text('"""A room. Imports nothing."""\n')
    for module in ("net/wire.py", "net/fetcher.py", "record/store.py"):
        (tmp_path / "collector" / module).write_text("def _short():\n    pass\n")
    (tmp_path / "collector" / "record" / "y.py").write_text("from collector.record import x\n")
    path, text, expected = BROKEN[case]
    (tmp_path / path).write_text(text)
    problems = broken_rules(tmp_path)
    assert any(expected in p for p in problems), problems
    (tmp_path / path).write_text("VALUE = 1\n")
    assert broken_rules(tmp_path) == []
