"""The checkout stand-in's step (testing/actions/checkout/action.yml): a fresh clone over git smart HTTP.

What actions/checkout@08c6903 documents (action.yml, README.md at that commit) and this does:
- the repository `repository` of `github-server-url` (default $GITHUB_SERVER_URL) into `path` under
  $GITHUB_WORKSPACE; `ref` a branch, tag, `refs/...` or SHA (a bare name: the branch, else the tag);
  empty: the event's $GITHUB_SHA for the workflow's own repository, else the default branch;
  `fetch-depth` 1 (0: all history);
- the token reaches git as an `http.<server>/.extraheader` AUTHORIZATION header in the local config, kept
  there only when `persist-credentials` is true ("Set `persist-credentials: false` to opt-out"), a failed
  fetch included;
- `clean` true: nothing of an earlier checkout is left (the folder is emptied before the clone);
- `sparse-checkout`: the patterns, one a line, cone mode unless `sparse-checkout-cone-mode` is false.
Outputs `ref` and `commit`. Not done: ssh keys, submodules, LFS, fetch-tags, safe.directory (one user here).

Sources: https://github.com/actions/checkout/blob/08c6903cd8c0fde910a37f88322edcfb5dd907a8/action.yml and
README.md at the same commit; git's http.extraHeader, https://git-scm.com/docs/git-config#Documentation/
git-config.txt-httpextraHeader.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path


def git(*args: str, cwd: Path, quiet: bool = False) -> str:
    """Run git in cwd; print its command (no secret is in args) and return its standard output."""
    if not quiet:
        print("[command]git " + " ".join(args), flush=True)
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"::error::git {args[0]} failed with exit code {done.returncode}")
    return done.stdout


def fetch_and_check_out(target: Path, ref: str, env) -> tuple[str, str]:
    """Fetch `ref` (empty: the default branch) into the repository at target and check it out; return (ref, commit)."""
    depth = [] if env.get("INPUT_FETCH_DEPTH", "1") == "0" else [f"--depth={env['INPUT_FETCH_DEPTH']}"]
    if not ref:  # the default branch, as the server names it
        head = git("ls-remote", "--symref", "origin", "HEAD", cwd=target)
        ref = head.split()[1] if head.startswith("ref:") else "refs/heads/main"
    if len(ref) == 40 and all(c in "0123456789abcdef" for c in ref.lower()):
        git("fetch", "--no-tags", *depth, "origin", ref, cwd=target)
    else:
        full = ref if ref.startswith("refs/") else unqualified(target, ref)
        git("fetch", "--no-tags", *depth, "origin", f"+{full}:{full}", cwd=target)
    patterns = [p.strip() for p in env.get("INPUT_SPARSE_CHECKOUT", "").splitlines() if p.strip()]
    if patterns:
        cone = [] if env.get("INPUT_SPARSE_CHECKOUT_CONE_MODE", "true") == "true" else ["--no-cone"]
        git("sparse-checkout", "set", *cone, *patterns, cwd=target)
    git("checkout", "--quiet", "--force", "FETCH_HEAD", cwd=target)
    return ref, git("rev-parse", "HEAD", cwd=target, quiet=True).strip()


def unqualified(target: Path, ref: str) -> str:
    """Return refs/heads/REF, else refs/tags/REF, whichever the remote has (a branch first)."""
    found = git("ls-remote", "origin", f"refs/heads/{ref}", f"refs/tags/{ref}", cwd=target).split()[1::2]
    for full in (f"refs/heads/{ref}", f"refs/tags/{ref}"):
        if full in found:
            return full
    raise SystemExit(f"::error::A branch or tag with the name '{ref}' could not be found")


def main() -> None:
    env = os.environ
    workspace = Path(env["GITHUB_WORKSPACE"])
    target = (workspace / env.get("INPUT_PATH", "")).resolve()
    if workspace.resolve() not in (target, *target.parents):
        raise SystemExit(f"::error::Repository path '{target}' is not under '{workspace}'")
    server = (env.get("INPUT_GITHUB_SERVER_URL") or env["GITHUB_SERVER_URL"]).rstrip("/")
    repository = env["INPUT_REPOSITORY"]
    ref = env.get("INPUT_REF", "")
    if not ref and repository.lower() == env["GITHUB_REPOSITORY"].lower():
        ref = env["GITHUB_SHA"]
    if target.exists() and env.get("INPUT_CLEAN", "true") == "true":
        shutil.rmtree(target)
    target.mkdir(parents=True, exist_ok=True)
    git("init", "--quiet", cwd=target)
    git("remote", "add", "origin", f"{server}/{repository}", cwd=target)
    header = f"http.{server}/.extraheader"
    basic = base64.b64encode(f"x-access-token:{env.get('INPUT_TOKEN', '')}".encode()).decode()
    git("config", "--local", header, f"AUTHORIZATION: basic {basic}", cwd=target, quiet=True)
    try:
        ref, commit = fetch_and_check_out(target, ref, env)
    finally:  # whether or not the fetch succeeded: no token is left behind unless asked for
        if env.get("INPUT_PERSIST_CREDENTIALS", "true") != "true":
            subprocess.run(["git", "config", "--local", "--unset-all", header], cwd=target, capture_output=True)
    with open(env["GITHUB_OUTPUT"], "a") as out:
        out.write(f"ref={ref}\ncommit={commit}\n")


if __name__ == "__main__":
    main()
