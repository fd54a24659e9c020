"""The reader's own access to the project's private repositories: gh's token, the REST API, git clones.

For `python -m collector browse` (a person reading the record), not for
collection: nothing here is a request to an outlet, so it keeps no ledger row.

Where GitHub is: GITHUB_SERVER_URL and GITHUB_API_URL (the variables Actions
and act set), else GH_HOST (gh's own: any host but github.com is GitHub
Enterprise Server, its REST API at https://HOST/api/v3, cli/cli
internal/ghinstance/host.go), else github.com (settings.GITHUB_SERVER_URL).

The token is the reader's own, as gh keeps it: `gh auth token --hostname
HOST` prints the token gh would use for HOST (its environment variable, else
its hosts.yml). The host is always given: gh 2.23 asks for github.com
without it, whatever GH_HOST says; and for a host other than github.com gh
reads GH_ENTERPRISE_TOKEN, never GH_TOKEN (cli/go-gh pkg/auth/auth.go
tokenForHost; docs/ghserver.md).

git gets the token through its environment (GIT_CONFIG_COUNT, as
.github/scripts/git_token.sh and actions/checkout give it), never in argv, a
remote URL or a file, and scoped to the server's address
(`http.<url>.extraheader`, git-config(1)): git sends it to no other host.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from urllib.parse import quote, urlsplit

from collector import settings
from collector.clock import Clock
from collector.errors import TakedownWatchError
from collector.net.assets import api_headers
from collector.net.wire import new_pool, send_once

_REPOSITORY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


class AccessError(TakedownWatchError):
    """GitHub cannot be reached as the reader: no gh, not logged in, no access, no such repository."""


@dataclass(frozen=True)
class Server:
    """One GitHub: its web and git address, its REST API, and the host gh knows it by."""

    web: str  # https://github.com, https://HOST
    api: str  # https://api.github.com, https://HOST/api/v3
    host: str  # github.com, HOST[:PORT]


def server_from_env(env: Mapping[str, str] | None = None) -> Server:
    """Return the GitHub the environment names (GITHUB_SERVER_URL/GITHUB_API_URL, else GH_HOST, else github.com)."""
    env = os.environ if env is None else env
    web = (env.get("GITHUB_SERVER_URL") or (f"https://{env['GH_HOST']}" if env.get("GH_HOST")
                                            else settings.GITHUB_SERVER_URL)).rstrip("/")
    host = urlsplit(web).netloc
    if not urlsplit(web).scheme or not host:
        raise AccessError(f"GITHUB_SERVER_URL={web!r} is not an address such as https://github.com")
    default_api = settings.GITHUB_API_URL if host == "github.com" else f"{web}/api/v3"
    return Server(web, (env.get("GITHUB_API_URL") or default_api).rstrip("/"), host)


def check_repository_name(name: str) -> str:
    """Return an OWNER/NAME unchanged, or raise AccessError."""
    if not _REPOSITORY.match(name or ""):
        raise AccessError(f"{name!r} is not a repository name: give it as OWNER/NAME")
    return name


def gh_token(server: Server, env: Mapping[str, str] | None = None) -> str:
    """Return the token gh keeps for the server's host, or raise AccessError saying how to get one."""
    gh = shutil.which("gh", path=(os.environ if env is None else env).get("PATH"))
    if gh is None:
        raise AccessError("gh (GitHub's command line, https://cli.github.com) is not installed: install it, "
                          f"then run `gh auth login --hostname {server.host}`")
    done = subprocess.run([gh, "auth", "token", "--hostname", server.host], capture_output=True, text=True,
                          env=None if env is None else dict(env), timeout=settings.TOTAL_TIMEOUT_SECONDS)
    token = done.stdout.strip()
    if done.returncode != 0 or not token:
        why = done.stderr.strip() or "no token"
        hint = ("set GH_ENTERPRISE_TOKEN (gh reads no other variable for this host)" if server.host != "github.com"
                else "or set GH_TOKEN")
        raise AccessError(f"gh is not logged in to {server.host} ({why}): run `gh auth login --hostname "
                          f"{server.host}`, {hint}")
    return token


def api_get(server: Server, token: str, path: str) -> tuple[int, object]:
    """Return (status, the JSON answer or None) of GET {api}/{path} with the token."""
    exchange = send_once(new_pool(), "GET", f"{server.api}/{path.lstrip('/')}", data=None, headers=api_headers(token),
                         timeouts=(settings.CONNECT_TIMEOUT_SECONDS, settings.READ_TIMEOUT_SECONDS,
                                   settings.TOTAL_TIMEOUT_SECONDS),
                         max_bytes=settings.MAX_RESPONSE_BYTES, clock=Clock(), warc=None)
    if exchange.status is None:
        raise AccessError(f"{server.api} cannot be reached: {exchange.result} {exchange.detail or ''}".strip())
    try:
        return exchange.status, json.loads(exchange.content) if exchange.content else None
    except ValueError:
        return exchange.status, None


def repository(server: Server, token: str, name: str) -> dict | None:
    """Return a repository as the API gives it, None when the token may not see it (404), or raise AccessError."""
    status, answer = api_get(server, token, f"repos/{quote(check_repository_name(name), safe='/')}")
    if status == 200 and isinstance(answer, dict):
        return answer
    if status == 404:
        return None
    if status == 401:
        raise AccessError(f"{server.host} refused the token gh gave (401 Bad credentials): run "
                          f"`gh auth login --hostname {server.host}` again")
    message = answer.get("message") if isinstance(answer, dict) else None
    raise AccessError(f"{server.api}: asking for {name} was answered {status}" + (f" ({message})" if message else ""))


def git_env(server: Server, token: str, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return an environment in which git sends the token to the server's address alone, and never prompts."""
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {**(os.environ if env is None else env), "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": f"http.{server.web}/.extraheader",
            "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}"}


@dataclass(frozen=True)
class Update:
    """What bringing one clone up to date did."""

    cloned: bool  # a new clone (else fetched into an existing one)
    commits: int  # commits new to the clone (all of them for a new clone)
    head: str


def clone_or_update(server: Server, token: str, name: str, dest: Path) -> Update:
    """Return what was done after cloning a repository to dest, or fast-forwarding the clone there.

    The record is append-only: a history that no longer contains the clone's
    commit is refused (AccessError), and the clone is left as it was.
    """
    env = git_env(server, token)
    url = f"{server.web}/{check_repository_name(name)}.git"
    if not (dest / ".git").is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git(["clone", *_quiet(), "--", url, str(dest)], env, f"cloning {name}", show=True)
        return Update(True, int(_git(["-C", str(dest), "rev-list", "--count", "HEAD"], env, name)),
                      _git(["-C", str(dest), "rev-parse", "HEAD"], env, name))
    before = _git(["-C", str(dest), "rev-parse", "HEAD"], env, name)
    _git(["-C", str(dest), "fetch", *_quiet(), url, "HEAD"], env, f"fetching {name}", show=True)
    fetched = _git(["-C", str(dest), "rev-parse", "FETCH_HEAD"], env, name)
    if subprocess.run(["git", "-C", str(dest), "merge-base", "--is-ancestor", before, fetched], env=env).returncode:
        raise AccessError(f"{name}: its history no longer holds {before[:12]}, the commit {dest} is at. The record "
                          "is append-only: keep this clone and tell the people who run the project")
    _git(["-C", str(dest), "merge", "--quiet", "--ff-only", fetched], env, f"updating {dest}")
    return Update(False, int(_git(["-C", str(dest), "rev-list", "--count", f"{before}..{fetched}"], env, name)),
                  fetched)


def _quiet() -> list[str]:
    """git's own progress on a terminal (a first clone of a period takes minutes), else nothing."""
    return [] if sys.stderr.isatty() else ["--quiet"]


def _git(args: list[str], env: dict[str, str], doing: str, show: bool = False) -> str:
    """Return git's output; with `show`, its messages go to a terminal as they come (progress)."""
    shown = show and sys.stderr.isatty()
    done = subprocess.run(["git", *args], env=env, text=True, stdout=subprocess.PIPE,
                          stderr=None if shown else subprocess.PIPE)
    if done.returncode != 0:
        raise AccessError(f"{doing}: git failed: {(done.stderr or '').strip() or f'exit code {done.returncode}'}")
    return done.stdout.strip()
