"""The reference pages under docs/reference/, generated from the code itself.

`python -m collector.cli.docs` (what `make docs` runs) writes docs/reference/cli.md from every
command's own --help and docs/reference/settings.md from collector/settings.py's declarations and
comments; `--check` writes nothing and exits 1, naming the stale pages, when either differs from
what would be written (tests/test_docs.py runs it). Generated, never edited by hand: a command's
or a setting's documentation is its docstring or its comment.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import click

from collector.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
CLI_PAGE = Path("docs/reference/cli.md")
SETTINGS_PAGE = Path("docs/reference/settings.md")
REGENERATE = "make docs"  # or: .venv/bin/python -m collector.cli.docs
WIDTH = 100  # help text is wrapped at this width whatever the terminal, so the page is the same everywhere
PROG = "python -m collector"


def commands(group: click.Command = cli, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command and sub-command under `group`, in order, with the words that name it (a hidden one, a former
    name kept for old scripts such as `export level`, is not shown)."""
    found = [(path, group)]
    if isinstance(group, click.Group):
        for name in sorted(group.commands):
            if not group.commands[name].hidden:
                found += commands(group.commands[name], path + (name,))
    return found


def help_text(path: tuple[str, ...], command: click.Command) -> str:
    """The command's --help as a terminal WIDTH wide prints it."""
    ctx = None
    parent = None
    node: click.Command = cli
    for depth in range(len(path) + 1):
        name = " ".join((PROG,) + path[:depth])
        ctx = click.Context(node, info_name=name if depth == 0 else path[depth - 1], parent=parent,
                            terminal_width=WIDTH, max_content_width=WIDTH)
        parent = ctx
        if depth < len(path):
            node = node.commands[path[depth]]  # type: ignore[attr-defined]
    assert ctx is not None and ctx.command is command
    return command.get_help(ctx).rstrip()


def cli_page() -> str:
    """docs/reference/cli.md: an index of the commands, then each one's --help."""
    found = commands()
    lines = ["# Command-line reference", "",
             f"Generated from each command's own `--help` by `{REGENERATE}` (collector/cli/docs.py); do not edit:",
             "change the command's docstring or option help and regenerate. `tests/test_docs.py` fails when",
             "this page is stale.", ""]
    for path, _ in found:
        name = " ".join((PROG,) + path)
        lines.append(f"- [`{name}`](#{anchor(name)})")
    for path, command in found:
        name = " ".join((PROG,) + path)
        lines += ["", f"## {name}", "", "```text", help_text(path, command), "```"]
    return "\n".join(lines) + "\n"


def anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, spaces to dashes, punctuation but - and _ dropped."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def settings_blocks(source: str) -> list[tuple[list[str], list[tuple[str, str, str]]]]:
    """The settings file as groups: the comment above, then each setting under it (name, default, inline comment)."""
    lines = source.splitlines()
    tree = ast.parse(source)
    groups: list[tuple[list[str], list[tuple[str, str, str]]]] = []
    previous_end = 0
    for node in tree.body:
        targets = _names(node)
        if not targets:
            previous_end = node.end_lineno or node.lineno
            continue
        above = [ln.strip()[1:].strip() for ln in lines[previous_end:node.lineno - 1] if ln.strip().startswith("#")]
        value = ast.get_source_segment(source, node.value) if node.value is not None else ""  # type: ignore[attr-defined]
        last = lines[(node.end_lineno or node.lineno) - 1]
        inline = last.split("#", 1)[1].strip() if "#" in last and not _in_string(last) else ""
        if above or not groups:
            groups.append((above, []))
        for name in targets:
            groups[-1][1].append((name, " ".join((value or "").split()), inline))
        previous_end = node.end_lineno or node.lineno
    return groups


def _names(node: ast.stmt) -> list[str]:
    """The upper-case names a top-level assignment declares."""
    if isinstance(node, ast.Assign):
        targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        targets = [node.target.id]
    else:
        return []
    return [t for t in targets if t.isupper() or t == "__version__"]


def _in_string(line: str) -> bool:
    """True when the line's first # is inside a string literal (a URL's fragment, a format)."""
    head = line.split("#", 1)[0]
    return head.count('"') % 2 == 1 or head.count("'") % 2 == 1


PART = "from collector.settings_health import *"


def settings_source() -> str:
    """collector/settings.py's text with the part it imports (collector/settings_health.py) in its place."""
    source = (ROOT / "collector" / "settings.py").read_text(encoding="utf-8")
    part = (ROOT / "collector" / "settings_health.py").read_text(encoding="utf-8")
    part = part.split("from __future__ import annotations\n", 1)[1].strip("\n")
    return "\n".join(part if line.startswith(PART) else line for line in source.split("\n"))


def settings_page() -> str:
    """docs/reference/settings.md: every setting with its default and the reason the file gives."""
    source = settings_source()
    count = sum(len(members) for _, members in settings_blocks(source))
    lines = ["# Settings reference", "",
             f"Every tuned constant of the collector ({count} settings), in the order of `collector/settings.py`",
             "(the health checks' in `collector/settings_health.py`, which it imports where they stand),",
             "with its default and the reason the file gives for it (the comment above a group applies to each",
             f"setting under it). Generated by `{REGENERATE}` (collector/cli/docs.py); do not edit: change the",
             "file's comment and regenerate. `tests/test_docs.py` fails when this page is stale.", ""]
    for above, members in settings_blocks(source):
        if above:
            lines += ["", " ".join(above), ""]
        for name, value, inline in members:
            shown = value if len(value) <= 160 else value[:157] + "..."
            lines.append(f"- `{name} = {shown}`" + (f": {inline}" if inline else ""))
    return "\n".join(lines) + "\n"


def pages() -> dict[Path, str]:
    """Each generated page and the text it should hold."""
    return {CLI_PAGE: cli_page(), SETTINGS_PAGE: settings_page()}


def stale(root: Path = ROOT) -> list[Path]:
    """The generated pages whose file differs from what would be written now."""
    return [path for path, text in pages().items()
            if not (root / path).is_file() or (root / path).read_text(encoding="utf-8") != text]


def write(root: Path = ROOT) -> list[Path]:
    """Write every generated page; return the ones that changed."""
    changed = stale(root)
    for path, text in pages().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return changed


def main(argv: list[str]) -> int:
    """Write the pages, or with --check say which are stale (exit 1)."""
    if "--check" in argv:
        behind = stale()
        for path in behind:
            print(f"{path} is stale: run `{REGENERATE}`", file=sys.stderr)
        return 1 if behind else 0
    for path in write():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
