"""`python -m collector` for the workflows' scripts without an interpreter's start-up each time.

The scripts a job runs (level_database.sh, commit_record.sh, ...) call
`"$PYTHON" -m collector ...`. A simulated year runs them some 20,000 times,
and on a busy 2-core machine half a second of each goes to starting Python
and importing the collector. This server imports the collector once; for each
call it forks a fresh child, which runs the command as `python -m collector`
would (collector.cli.main.main with the caller's arguments and working folder,
the server's environment, its output on the caller's standard output and
error) and exits with its exit code. `client()` writes the shell script that
$PYTHON names; anything but `-m collector` runs the real interpreter.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CLIENT = """#!/usr/bin/env bash
# $PYTHON for the workflows' scripts in bench/year.py: `-m collector ...` goes to bench/forkserver.py.
if [[ "${{1:-}}" != -m || "${{2:-}}" != collector ]]; then exec "{python}" "$@"; fi
shift 2
reply="{folder}/reply.$$"
mkfifo "$reply.out" "$reply.err" "$reply.code"
{{ printf '%s\\0' "$reply" "$PWD" "$@"; printf '\\n'; }} > "{folder}/calls"
cat "$reply.out" & cat "$reply.err" >&2 & read -r code < "$reply.code"
wait
rm -f "$reply.out" "$reply.err" "$reply.code"
exit "$code"
"""


def client(folder: Path) -> tuple[Path, int]:
    """Return (the script to set as $PYTHON, the server's process id), the server started in `folder`.

    Call it before the process starts any thread: the server is a fork of it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "calls")
    server = os.fork()
    if server == 0:  # the server: one process, no threads, so every fork of it is clean
        os.setsid()
        serve(folder)
        os._exit(0)
    script = folder / "python"
    script.write_text(CLIENT.format(python=sys.executable, folder=folder), encoding="utf-8")
    script.chmod(0o755)
    return script, server


def serve(folder: Path) -> None:
    """Answer calls until the parent process is gone."""
    from collector.cli import main as command  # imported once, before any fork
    parent = os.getppid()
    while os.getppid() == parent:
        with open(folder / "calls", "rb") as calls:
            for line in calls:
                reply, cwd, *args = line.rstrip(b"\n").split(b"\0")[:-1]
                _answer(command, reply.decode(), cwd.decode(), [a.decode() for a in args])


def _answer(command, reply: str, cwd: str, args: list[str]) -> None:
    child = os.fork()
    if child == 0:
        out, err = os.open(f"{reply}.out", os.O_WRONLY), os.open(f"{reply}.err", os.O_WRONLY)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.chdir(cwd)
        sys.argv = ["python -m collector", *args]
        code = 0
        try:
            command.main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _pid, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    with open(f"{reply}.code", "w") as answer:
        answer.write(f"{code if code >= 0 else 128 - code}\n")
