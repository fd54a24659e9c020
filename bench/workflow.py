"""The workflows' jobs as bench/runner.py reads them: steps, what each step's commands are, which write, expressions.

bench/runner.py takes every job's steps from the workflow files themselves
(.github/workflows/*.yml), in their order, instead of a copy of them: this module
reads a job, names each step's commands (its `command`), says which steps write
the database, the record or the Actions cache (`writes`), and evaluates the
`${{ }}` expressions and `if:` conditions the jobs use, as GitHub's expression
syntax defines them (docs.github.com/en/actions/reference/workflows-and-actions/expressions:
literals, `==`, `!=`, `&&`, `||`, `!`, property dereference, `fromJSON`,
`always()`; a missing property is null, and null, false, 0 and '' are falsy).

A step's command is what a reader of the workflow would name: `uses ACTION` for
an action (its ref left out), else the commands its `run:` script calls, in
order: `python -m collector SUB [SUBSUB]`, `bash .github/scripts/NAME.sh`,
`python3 .github/scripts/NAME.py` (with its verb for record_repository.sh and prune_cache.py),
`python -c <its PRAGMA>`, `date`. A
script none of whose commands is one of these (git config, echo) is `shell`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

WORKFLOWS = Path(__file__).resolve().parent.parent / ".github" / "workflows"

# What writes the database, the record (export files, their signatures and tokens, the pushed record
# repository, the WARC files and packages published as release assets, the published history) or the
# Actions cache. Every other command of the project (.github/scripts, python -m collector) must be in
# READS, so a new script or command is never taken for a reader unseen (`command_writes` refuses it).
WRITES = {
    "uses actions/cache/restore": "the database (the saved copy, restored)",
    "uses actions/cache/save": "the cache",
    "python3 .github/scripts/prune_cache.py prune": "the cache (entries the save supersedes deleted)",
    "bash .github/scripts/record_repository.sh checkout": "the record's clone",
    "bash .github/scripts/record_repository.sh seed": "the record (rolled over)",
    "bash .github/scripts/record_repository.sh prepare": "the record repositories (made)",
    "bash .github/scripts/sync_database.sh": "the database",
    "bash .github/scripts/follow_database.sh": "the database",
    "python -m collector run": "the database",
    "python -m collector archive": "the database",
    "python -m collector export new": "the record and the database",
    "python -m collector export timestamp": "the record and the database",
    "python -m collector export sign": "the record",
    "bash .github/scripts/publish_warc.sh": "the record's WARC files (release assets)",
    "bash .github/scripts/package_wacz.sh": "the record's WACZ packages (release assets)",
    "bash .github/scripts/commit_record.sh": "the record repository",
    "python -c PRAGMA wal_checkpoint(TRUNCATE)": "the database",
    "python -m collector publish": "the published history",
    "bash .github/scripts/commit_published.sh": "the published history (pushed)",
    "bash .github/scripts/rebuild_stream.sh": "the database",
    "python -m collector export follow": "the database",
    "python -m collector export rebuild": "the database",
    "python -m collector compare-vantages": "the database",
}
READS = {
    "date", "shell", "python -m collector export repositories", "python -m collector audit",
    "python -m collector build-site", "python -m collector export verify", "python -m collector health",
    "bash .github/scripts/require_private.sh", "bash .github/scripts/vantage.sh",
    "bash .github/scripts/check_site.sh", "bash .github/scripts/push_site.sh",
    "python3 .github/scripts/collect_matrix.py", "python3 .github/scripts/rebuild_matrix.py",
    "python .github/scripts/run_summary.py", "python3 .github/scripts/health_issues.py",
    "python3 .github/scripts/prune_cache.py usage", "python -m pip install",
    "bash .github/scripts/record_repository.sh history",
}

_COMMAND = re.compile(
    r"""(?:^|(?<=[\s;&|(`]))(?:
        (?P<collector>python3?\s+-m\s+collector(?:\s+[a-z][a-z-]*){1,2})
      | (?P<pip>python3?\s+-m\s+pip\s+install)
      | (?P<script>(?:bash|python3?)\s+\.github/scripts/(?:record_repository\.sh|prune_cache\.py)\s+[a-z]+(?=\s|$)
                  |(?:bash|python3?)\s+\.github/scripts/[\w.-]+)
      | (?P<inline>python3?\s+-c\s)
      | (?P<date>date(?=\s))
    )""", re.X | re.M)


class Unknown(Exception):
    """A step, command or expression this reading does not know: the runner stops rather than guess."""


@dataclass
class Step:
    """One step of a job, as written."""

    name: str
    command: str
    raw: dict

    @property
    def writes(self) -> bool:
        return any(command_writes(c) for c in self.command.split(" ; "))


def command_writes(command: str) -> bool:
    """Return whether a command writes the database, the record or the cache; refuse one of neither list."""
    if command.startswith("uses "):
        return command in WRITES or command.startswith("uses actions/cache")
    if command in WRITES:
        return True
    if command in READS:
        return False
    raise Unknown(f"{command!r}: a command bench/workflow.py has in neither WRITES nor READS")


def command(step: dict) -> str:
    """Return the commands of a step (see the module's docstring), ' ; ' between two."""
    if "uses" in step:
        return "uses " + step["uses"].split("@")[0]
    text = re.sub(r"(?m)^\s*#.*$", "", step["run"])
    found = []
    for match in _COMMAND.finditer(text):
        kind = match.lastgroup
        words = " ".join(match.group(kind).split())
        if kind == "collector":
            words = words.replace("python3 ", "python ", 1)
        elif kind == "inline":
            pragma = re.search(r"PRAGMA\s+([\w(),]+)", text[match.end():])
            words = f"python -c PRAGMA {pragma.group(1)}" if pragma else "python -c"
        elif kind == "pip":
            words = "python -m pip install"
        found.append(words)
    return " ; ".join(found) or "shell"


def jobs(workflow: str) -> dict[str, dict]:
    """Return a workflow's jobs, in the order their `needs` let them run (the file's order otherwise)."""
    raw = yaml.safe_load((WORKFLOWS / workflow).read_text(encoding="utf-8"))["jobs"]
    ordered: dict[str, dict] = {}
    while len(ordered) < len(raw):
        ready = [n for n, j in raw.items() if n not in ordered and set(needs_of(j)) <= set(ordered)]
        if not ready:
            raise Unknown(f"{workflow}: a cycle in its jobs' needs")
        ordered[ready[0]] = raw[ready[0]]
    return ordered


def needs_of(job: dict) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def steps(job: dict) -> list[Step]:
    """Return a job's steps, named as the Actions log names them (the action's name when it has none)."""
    return [Step(s.get("name") or s.get("uses") or s["run"].splitlines()[0], command(s), s) for s in job["steps"]]


def writing_steps(workflow: str) -> list[tuple[str, str, str]]:
    """Return (job, step name, command) of every step of a workflow that writes, in the order they run."""
    return [(name, s.name, s.command) for name, job in jobs(workflow).items() for s in steps(job) if s.writes]


# -- expressions ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!().,])"
                    r"|(?P<word>[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*))")


def substitute(text: str, context: dict) -> str:
    """Return text with each ${{ expression }} replaced by its value, as GitHub writes a value into a string."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _string(evaluate(m.group(1), context)), str(text))


def truthy(condition: str | bool | None, context: dict) -> bool:
    """Return whether an `if:` holds (absent: it does), with or without its ${{ }}."""
    if condition is None or isinstance(condition, bool):
        return condition is not False
    inner = condition.strip()
    if inner.startswith("${{") and inner.endswith("}}"):
        inner = inner[3:-2]
    return _truthy(evaluate(inner, context))


def evaluate(expression: str, context: dict):
    """Return the value of one expression (without its ${{ }})."""
    tokens = []
    position = 0
    expression = expression.strip()
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if not match or match.end() == position:
            raise Unknown(f"cannot read the expression {expression!r} at {position}")
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        position = match.end()
    value, rest = _or(tokens, context)
    if rest:
        raise Unknown(f"cannot read the expression {expression!r}: {rest[0][1]!r} left over")
    return value


def _or(tokens, context):
    left, tokens = _and(tokens, context)
    while tokens and tokens[0] == ("op", "||"):
        right, tokens = _and(tokens[1:], context)
        left = left if _truthy(left) else right
    return left, tokens


def _and(tokens, context):
    left, tokens = _compare(tokens, context)
    while tokens and tokens[0] == ("op", "&&"):
        right, tokens = _compare(tokens[1:], context)
        left = right if _truthy(left) else left
    return left, tokens


def _compare(tokens, context):
    left, tokens = _unary(tokens, context)
    while tokens and tokens[0] in (("op", "=="), ("op", "!=")):
        op = tokens[0][1]
        right, tokens = _unary(tokens[1:], context)
        same = _equal(left, right)
        left = same if op == "==" else not same
    return left, tokens


def _unary(tokens, context):
    if tokens and tokens[0] == ("op", "!"):
        value, tokens = _unary(tokens[1:], context)
        return not _truthy(value), tokens
    return _primary(tokens, context)


def _primary(tokens, context):
    if not tokens:
        raise Unknown("an expression ends too early")
    (kind, text), tokens = tokens[0], tokens[1:]
    if kind == "str":
        return text[1:-1].replace("''", "'"), tokens
    if kind == "num":
        return float(text), tokens
    if (kind, text) == ("op", "("):
        value, tokens = _or(tokens, context)
        return value, tokens[1:]
    if kind != "word":
        raise Unknown(f"unexpected {text!r} in an expression")
    if text in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[text], tokens
    if tokens and tokens[0] == ("op", "("):
        args, tokens = [], tokens[1:]
        while tokens[0] != ("op", ")"):
            value, tokens = _or(tokens, context)
            args.append(value)
            if tokens[0] == ("op", ","):
                tokens = tokens[1:]
        return _function(text, args), tokens[1:]
    value = context
    for part in re.findall(r"[\w-]+|\[\d+\]", text):
        if isinstance(value, list) and part.startswith("["):
            index = int(part[1:-1])
            value = value[index] if index < len(value) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
    return value, tokens


def _function(name: str, args: list):
    if name == "always":
        return True
    if name in ("success", "failure", "cancelled"):
        return name == "success"  # a step reached at all ran after every step before succeeded
    if name == "fromJSON":
        return json.loads(args[0])
    if name == "toJSON":
        return json.dumps(args[0])
    if name == "contains":
        # docs.github.com "Evaluate expressions in workflows", contains(search, item): an array holding item,
        # or a string holding it, without regard to case (a value of another type compared as its string).
        search, item = args
        if isinstance(search, list):
            return any(_equal(element, item) for element in search)
        return _string(item).lower() in _string(search).lower()
    if name == "format":
        return re.sub(r"\{(\d+)\}", lambda m: _string(args[1 + int(m.group(1))]), args[0])
    raise Unknown(f"the expression function {name}() is not one bench/workflow.py evaluates")


def _truthy(value) -> bool:
    return value not in (None, False, 0, 0.0, "")


def _equal(left, right) -> bool:
    """Return `left == right` as GitHub compares: strings case-insensitively, values of two types as numbers."""
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    if type(left) is type(right):
        return left == right
    return _number(left) == _number(right)


def _number(value) -> float:
    if value is None or isinstance(value, bool):
        return float(bool(value))
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip() or 0)
        except ValueError:
            return float("nan")
    return float("nan")


def _string(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)
