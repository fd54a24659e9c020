"""The documentation stays true: generated reference pages current, and everything the guides name exists.

- docs/reference/cli.md and settings.md equal what `make docs` writes now (collector/cli/docs.py);
- every `python -m collector ...` the README and docs/ show names a real command, and each of its
  `--options` is an option of that command (also a code span that starts with a command's name and
  gives an option, such as `export verify --tail`);
- every repository path they name (collector/..., tests/..., .github/workflows/NAME.yml, a bare
  script or workflow name such as `sync_database.sh`) exists, and every relative link resolves;
- the README stays the front door: short, its first commands `make run` and `make test` (what
  .ci/run runs), and it links every guide.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from collector.cli import docs as generator
from collector.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ("operating.md", "reading.md", "evidence.md", "how-it-works.md", "figures.md")
# Written at run time, never committed (.gitignore): a guide may name them.
RUNTIME = ("data/takedownwatch.db", "data/warc", "data/record", "data/published", "data/disclosure",
           "demo-output", "_site", "_site_screens", ".venv",
           "data/trust/wacz-signers.pem")  # made by the operator with the WACZ key (docs/operating.md)
# Guides other branches add (issue 31: the lead merges them); a link to one may dangle until then.
FROM_OTHER_BRANCHES = {"docs/health.md", "docs/actions.md", "docs/ghserver.md", "docs/runnercache.md",
                       "docs/datesign.md", "docs/wirerobots.md", "docs/spnwacz.md"}
PLACEHOLDER = re.compile(r"[A-Z]{2,}|\.\.\.|[*<>{}$]|YYYY|\bK/N\b")
KNOWN_UPPER = ("README.md", "VERIFY.md", "CONTINUES.json", "Makefile", "LICENSE", "CODEOWNERS")


def documents() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return out.split()


def code_spans(text: str) -> list[str]:
    """Inline code spans and the lines of fenced blocks (a line ending in \\ joined to the next)."""
    spans: list[str] = []
    fenced = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)
    for language, block in fenced.findall(text):
        if language.strip() != "mermaid":  # a diagram's arrows are not commands
            spans += block.replace("\\\n", " ").splitlines()
    rest = fenced.sub("", text)
    spans += re.findall(r"`([^`\n]+)`", rest)
    return spans


def invocations(span: str) -> list[list[str]]:
    """The words after each `python -m collector` in a span, up to a comment or shell operator."""
    found = []
    for match in re.finditer(r"python -m collector(?=\s|$)(.*)", span):
        words = []
        for word in match.group(1).split():
            if word.startswith("#") or word in ("|", "&&", ";", ">", "<", "2>&1") or word.startswith(")"):
                break
            words.append(word)
        found.append(words)
    top = set(cli.commands)  # type: ignore[attr-defined]
    first = span.split()[0] if span.split() else ""
    if "python -m collector" not in span and first in top and any(w.startswith("--") for w in span.split()):
        found.append(span.split())
    return found


def check_invocation(words: list[str]) -> str | None:
    """None when the words name a command and only its options; else what is wrong."""
    node: click.Command = cli
    rest = list(words)
    while isinstance(node, click.Group) and rest and not rest[0].startswith("-"):
        word = rest.pop(0)
        if PLACEHOLDER.fullmatch(word) or word.isupper():
            return None  # COMMAND, X: a placeholder, not a name
        if word not in node.commands:
            return f"no command {word!r} under {node.name!r}"
        node = node.commands[word]
    names = {"--help", "-h", "--version"}
    for param in node.params:
        names.update(param.opts + param.secondary_opts)
    for word in rest:
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            if option not in names:
                return f"{node.name!r} has no option {option}"
    return None


def test_the_generated_reference_is_current():
    # In a fresh interpreter: click takes its defaults from settings when collector.cli is first
    # imported, and a test in this process may have monkeypatched a setting at that moment.
    found = subprocess.run([sys.executable, "-c", "from collector.cli import docs\n"
                            "print('\\n'.join(map(str, docs.stale())))"],
                           capture_output=True, text=True, check=True, cwd=generator.ROOT)
    behind = found.stdout.split()
    assert not behind, f"{', '.join(map(str, behind))} stale: run `{generator.REGENERATE}` and commit the result"


def test_the_check_fails_on_a_stale_page(tmp_path):
    for path, text in generator.pages().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert generator.stale(tmp_path) == []
    page = tmp_path / generator.SETTINGS_PAGE
    page.write_text(page.read_text(encoding="utf-8").replace("MIN_INTERVAL_SECONDS = 2.0", "MIN_INTERVAL_SECONDS = 1.0"))
    assert generator.stale(tmp_path) == [generator.SETTINGS_PAGE]


def test_every_setting_is_in_the_settings_reference():
    from collector import settings
    page = generator.settings_page()
    names = [n for n in vars(settings) if n.isupper()]
    missing = [n for n in names if f"`{n} = " not in page]
    assert names and not missing, f"settings missing from the reference: {missing}"


def test_every_command_is_in_the_cli_reference():
    page = generator.cli_page()
    for path, command in generator.commands():
        assert f"## {' '.join(('python -m collector',) + path)}\n" in page
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("--") and not getattr(param, "hidden", False):
                    assert opt in page, f"{opt} of {path} not in the reference"


def test_every_command_and_option_named_exists():
    problems = []
    for doc in documents():
        for span in code_spans(doc.read_text(encoding="utf-8")):
            for words in invocations(span):
                wrong = check_invocation(words)
                if wrong:
                    problems.append(f"{doc.relative_to(ROOT)}: `{span.strip()}`: {wrong}")
    assert not problems, "\n".join(problems)


def test_the_invocation_check_catches_what_it_should():
    assert check_invocation(["export", "verify", "--tail"]) is None
    assert check_invocation(["export", "verify", "--no-such-option"]) == "'verify' has no option --no-such-option"
    assert check_invocation(["exprot", "verify"]) == "no command 'exprot' under 'cli'"
    assert invocations("python -m collector run --shard 2/4   # only shard 2") == [["run", "--shard", "2/4"]]
    assert invocations("export prune --for-figures") == [["export", "prune", "--for-figures"]]


def path_problems(doc: Path, files: set[str], names: set[str]) -> list[str]:
    """Repository paths a document names that do not exist."""
    text = doc.read_text(encoding="utf-8")
    tops = {f.split("/")[0] for f in files}
    dirs = {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)}
    problems = []
    tokens = [t.strip(".,;:()'\"") for span in code_spans(text) for t in span.split()]
    for token in tokens:
        bare = token.rstrip("/")
        if not bare or (PLACEHOLDER.search(bare) and not bare.endswith(KNOWN_UPPER)):
            continue
        if bare.startswith(RUNTIME) or bare.startswith("http") or "=" in bare:
            continue
        if "/" in bare and bare.split("/")[0] in tops:
            if bare not in files and bare not in dirs and bare not in FROM_OTHER_BRANCHES:
                problems.append(f"{doc.relative_to(ROOT)}: path `{token}` does not exist")
        elif "/" not in bare and re.fullmatch(r"[\w.-]+\.(yml|sh|py)", bare):
            if bare not in names:
                problems.append(f"{doc.relative_to(ROOT)}: file `{token}` is in no folder of the repository")
    for target, fragment in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        resolved = (doc.parent / target).resolve() if target else doc
        relative = resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else str(resolved)
        if not resolved.exists():
            if relative not in FROM_OTHER_BRANCHES:
                problems.append(f"{doc.relative_to(ROOT)}: link ({target}) resolves to nothing")
        elif fragment and resolved.suffix == ".md" and fragment not in headings(resolved):
            problems.append(f"{doc.relative_to(ROOT)}: link ({target}#{fragment}) names no heading there")
    return problems


def headings(doc: Path) -> set[str]:
    """The fragments GitHub makes of a Markdown file's headings (outside code blocks)."""
    text = re.sub(r"^```.*?^```", "", doc.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {generator.anchor(line.lstrip("#").strip().replace("`", "")) for line in text.splitlines()
            if re.match(r"#{1,6} ", line)}


def test_every_path_workflow_and_link_named_exists():
    files = set(tracked()) | {p.relative_to(ROOT).as_posix() for p in documents()}
    names = {f.rsplit("/", 1)[-1] for f in files}
    # The reference pages quote --help, whose defaults and examples are paths of a run, not of the repository.
    problems = [p for doc in documents() if "reference" not in doc.parts for p in path_problems(doc, files, names)]
    assert not problems, "\n".join(problems)


def test_the_path_check_catches_a_missing_file(tmp_path):
    doc = ROOT / "docs" / "_probe_for_test.md"
    doc.write_text("See `collector/no_such_module.py`, `no_such.yml`, [x](nowhere.md) and [y](#nowhere); "
                   "`collector/settings.py` exists; `data/record/YYYY/MM/DD/NNNNNN.jsonl.bz2` is a pattern.\n")
    try:
        files = set(tracked())
        problems = path_problems(doc, files, {f.rsplit("/", 1)[-1] for f in files})
    finally:
        doc.unlink()
    assert len(problems) == 4, problems


def test_the_readme_is_the_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 130, f"README.md has {len(lines)} lines: move detail into a guide under docs/"
    first_block = re.search(r"^```sh\n(.*?)^```", text, re.M | re.S).group(1).splitlines()
    assert first_block[0].startswith("make run") and first_block[1].startswith("make test")
    assert "make test" in (ROOT / ".ci" / "run").read_text().splitlines()  # CI runs the README's test command
    for guide in GUIDES:
        assert f"(docs/{guide})" in text, f"README.md does not link docs/{guide}"
        assert (ROOT / "docs" / guide).is_file()


@pytest.mark.parametrize("guide", GUIDES)
def test_each_guide_opens_with_its_readers_question(guide):
    lines = (ROOT / "docs" / guide).read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ") and "?" in "\n".join(lines[1:12]), \
        f"docs/{guide} should open with a title and its reader's first question"
