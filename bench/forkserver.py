"""`python -m collector` for the workflows' scripts without an interpreter's start-up each time.

The scripts a job runs (sync_database.sh, commit_record.sh, ...) call
`"$PYTHON" -m collector ...`. A simulated year runs them some 20,000 times,
and on a busy 2-core machine half a second of each goes to starting Python
and importing the collector. This server imports the collector once; for each
call it forks a fresh child, which runs the command as `python -m collector`
would (collector.cli.main.main with the caller's arguments, working folder and
environment, its output on the caller's standard output and error) and exits
with its exit code. `python -c CODE ARGS` and `python SCRIPT.py ARGS` (the
steps' `python -c "...wal_checkpoint..."`, `python3 .github/scripts/collect_matrix.py`)
are run the same way, as the interpreter runs them (sys.argv, sys.path[0], `__main__`).
`client()` writes the shell script that $PYTHON names; anything else (another option,
standard input to read) runs the real interpreter.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

CLIENT = """#!/usr/bin/env bash
# $PYTHON for the workflows' scripts in bench/year.py: `-m collector ...`, `-c CODE ...` and `SCRIPT.py ...`
# go to bench/forkserver.py, with this process's environment.
if [[ "${{1:-}}" == -m && "${{2:-}}" == collector ]]; then shift 2; set -- -m "$@"
elif [[ "${{1:-}}" == -c && $# -ge 2 ]] || [[ "${{1:-}}" == *.py && -f "${{1:-}}" ]]; then :
else exec "{python}" "$@"; fi
reply="{folder}/reply.$$"
mkfifo "$reply.out" "$reply.err" "$reply.code"
env -0 > "$reply.env"
printf '%s\\0' "$PWD" "$@" > "$reply.args"  # a file: an argument (a -c script) may hold newlines
printf '%s\\n' "$reply" > "{folder}/calls"
cat "$reply.out" & cat "$reply.err" >&2 & read -r code < "$reply.code"
wait
rm -f "$reply.out" "$reply.err" "$reply.code" "$reply.env" "$reply.args"
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
                reply = line.rstrip(b"\n").decode()
                with open(f"{reply}.args", "rb") as given:
                    cwd, *args = given.read().split(b"\0")[:-1]
                _answer(command, reply, cwd.decode(), [a.decode() for a in args])


def _answer(command, reply: str, cwd: str, args: list[str]) -> None:
    child = os.fork()
    if child == 0:
        out, err = os.open(f"{reply}.out", os.O_WRONLY), os.open(f"{reply}.err", os.O_WRONLY)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.chdir(cwd)
        with open(f"{reply}.env", "rb") as given:
            os.environ.clear()
            os.environ.update(dict(item.decode().split("=", 1) for item in given.read().split(b"\0") if b"=" in item))
        code = 0
        try:
            if args[0] == "-m":  # -m collector ARGS
                sys.argv = ["python -m collector", *args[1:]]
                command.main()
            elif args[0] == "-c":  # -c CODE ARGS: sys.argv[0] is '-c', the folder is first on the path
                sys.argv, sys.path[0] = ["-c", *args[2:]], ""
                exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
            else:  # SCRIPT.py ARGS
                sys.argv, sys.path[0] = args, os.path.dirname(os.path.abspath(args[0]))
                runpy.run_path(args[0], run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _pid, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    with open(f"{reply}.code", "w") as answer:
        answer.write(f"{code if code >= 0 else 128 - code}\n")
