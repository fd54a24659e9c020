"""Every request result name the network code can produce, read from its source (not a list kept by hand).

A result is a string the fetcher records in `requests.result`. In collector/net/
it appears in one of three places, and this reads all three from the syntax tree:

* returned by a function, alone or first in a tuple (`return "too_large", detail`,
  `return raw, ("content_error", detail)`, `return "not_found"`);
* given to a parameter or dataclass field named `result` (`Response(url, final, "too_many_redirects")`,
  `_failed(..., "timeout", exc)`);
* compared with a result (`response.result != "redirect"`, `result in RETRYABLE`,
  where RETRYABLE is a module's tuple of names).

Only snake_case words count (a detail message is not a name).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

NET = Path(__file__).resolve().parents[2] / "collector" / "net"
NAME = re.compile(r"^[a-z]+(_[a-z]+)*$")


def _strings(node) -> list[str]:
    """Return the snake_case string constants of a constant or of a tuple/list/set of them."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str) and NAME.match(i.value)]


def _returned(node: ast.Return) -> list[str]:
    """Return the name a return statement gives back: the value, its first item, or a nested pair's first item."""
    value = node.value
    if isinstance(value, ast.IfExp):
        return [n for branch in (value.body, value.orelse) for n in _returned(ast.Return(branch))]
    if isinstance(value, ast.Tuple) and value.elts:
        first, last = value.elts[0], value.elts[-1]
        if isinstance(last, ast.Tuple) and last.elts:
            return _strings(last.elts[0]) + _strings(first)
        return _strings(first)
    return _strings(value) if value is not None else []


def _signatures(trees) -> dict[str, list[str]]:
    """Return parameter names of every function, method and dataclass defined in collector/net/, by name."""
    out = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [a.arg for a in node.args.posonlyargs + node.args.args]
                out[node.name] = names[1:] if names[:1] in (["self"], ["cls"]) else names
            elif isinstance(node, ast.ClassDef):
                out[node.name] = [s.target.id for s in node.body
                                  if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    return out


def _is_result(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "result") or (
        isinstance(node, ast.Name) and node.id == "result")


def result_names(root: Path = NET) -> set[str]:
    """Return every result name the modules under root can record."""
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in sorted(root.glob("*.py"))]
    signatures = _signatures(trees)
    tuples = {t.targets[0].id: _strings(t.value) for tree in trees for t in tree.body
              if isinstance(t, ast.Assign) and len(t.targets) == 1 and isinstance(t.targets[0], ast.Name)}
    found: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Return):
                found.update(_returned(node))
            elif isinstance(node, ast.Call):
                func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                params = signatures.get(func, [])
                for position, arg in enumerate(node.args):
                    if position < len(params) and params[position] == "result":
                        found.update(_strings(arg))
                found.update(n for k in node.keywords if k.arg == "result" for n in _strings(k.value))
            elif isinstance(node, ast.Compare) and any(map(_is_result, [node.left, *node.comparators])):
                for side in [node.left, *node.comparators]:
                    found.update(_strings(side))
                    if isinstance(side, ast.Name):
                        found.update(tuples.get(side.id, []))
    return found
