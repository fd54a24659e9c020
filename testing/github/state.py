"""What the loopback GitHub holds: accounts, repositories (bare git repositories on disk), releases,
issues, labels, workflow dispatches and Pages deployments.

Names are matched without regard to case, as GitHub matches them ("Get a repository": owner and
repo "are not case sensitive", docs.github.com/en/rest/repos/repos#get-a-repository); the JSON
returned spells them as they were created. A repository made with `auto_init` has one commit
holding README.md on its default branch, `main` (docs.github.com/en/rest/repos/repos#create-an-
organization-repository: "auto_init: Pass true to create an initial commit with empty README").
Partial clones are served (uploadpack.allowFilter, as github.com does: github.blog, "Get up to
speed with partial clone and shallow clone").
"""

from __future__ import annotations

import itertools
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


def now_iso(at: float | None = None) -> str:
    """Return a timestamp as GitHub writes them: ISO 8601 in UTC, to the second, with Z."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if at is None else at))


@dataclass
class Account:
    login: str
    id: int
    type: str  # "User" or "Organization"

    def json(self, base: str) -> dict:
        return {"login": self.login, "id": self.id, "node_id": f"U_{self.id}", "type": self.type,
                "url": f"{base}/users/{self.login}", "site_admin": False}


@dataclass
class Asset:
    id: int
    name: str
    path: Path
    content_type: str
    label: str = ""
    created_at: str = field(default_factory=now_iso)

    @property
    def size(self) -> int:
        return self.path.stat().st_size


@dataclass
class Release:
    id: int
    tag: str
    name: str
    body: str = ""
    draft: bool = False
    prerelease: bool = False
    target: str = "main"
    assets: list[Asset] = field(default_factory=list)
    created_at: str = field(default_factory=now_iso)


@dataclass
class Comment:
    id: int
    body: str
    user: str
    created_at: str = field(default_factory=now_iso)


@dataclass
class Issue:
    number: int
    id: int
    title: str
    body: str
    user: str
    labels: list[str]
    state: str = "open"
    state_reason: str | None = None
    comments: list[Comment] = field(default_factory=list)
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)
    closed_at: str | None = None


@dataclass
class Repository:
    owner: Account
    name: str
    id: int
    visibility: str  # "public", "private" or "internal"
    git: Path  # the bare repository
    default_branch: str = "main"
    releases: list[Release] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    labels: dict[str, dict] = field(default_factory=dict)  # lower-case name -> label JSON
    dispatches: list[dict] = field(default_factory=list)  # workflow_dispatch events received
    deployments: list[dict] = field(default_factory=list)  # Pages deployments
    created_at: str = field(default_factory=now_iso)

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    @property
    def key(self) -> str:
        return self.full_name.lower()


class World:
    """Everything the server holds, behind one lock; files live under `root`."""

    def __init__(self, root: Path):
        self.root = Path(root)
        (self.root / "git").mkdir(parents=True, exist_ok=True)
        self.accounts: dict[str, Account] = {}
        self.repositories: dict[str, Repository] = {}
        self.lock = threading.RLock()
        self.ids = itertools.count(1000)

    def account(self, login: str, type: str = "Organization") -> Account:
        """Return the account `login`, made (as `type`) when missing."""
        with self.lock:
            found = self.accounts.get(login.lower())
            if found is None:
                found = self.accounts[login.lower()] = Account(login, next(self.ids), type)
            return found

    def repository(self, full_name: str) -> Repository | None:
        """Return the repository OWNER/NAME (any case, with or without .git), or None."""
        key = full_name.lower()
        return self.repositories.get(key[:-4] if key.endswith(".git") else key)

    def create_repository(self, full_name: str, visibility: str = "private", auto_init: bool = False,
                          default_branch: str = "main", owner_type: str = "Organization") -> Repository:
        """Return a new repository: a bare git repository served over smart HTTP."""
        owner_login, name = full_name.split("/", 1)
        with self.lock:
            if self.repository(full_name) is not None:
                raise ValueError(f"{full_name} exists")
            owner = self.account(owner_login, owner_type)
            git = self.root / "git" / owner.login.lower() / f"{name.lower()}.git"
            repo = Repository(owner, name, next(self.ids), visibility, git, default_branch)
            self.repositories[repo.key] = repo
        _init_bare(git, default_branch)
        if auto_init:
            _initial_commit(git, default_branch, name)
        return repo

    def ref(self, repo: Repository, name: str) -> str | None:
        """Return the commit a ref (refs/heads/X, refs/tags/X) points to, or None."""
        found = subprocess.run(["git", "rev-parse", "--verify", "-q", name + "^{commit}"], cwd=repo.git,
                               capture_output=True, text=True)
        return found.stdout.strip() or None

    def tag(self, repo: Repository, tag: str, target: str) -> bool:
        """Make refs/tags/TAG at the branch or commit `target`, as a release of a new tag does; False when empty."""
        if self.ref(repo, f"refs/tags/{tag}"):
            return True
        commit = self.ref(repo, f"refs/heads/{target}") or self.ref(repo, target)
        if commit is None:
            return False
        subprocess.run(["git", "update-ref", f"refs/tags/{tag}", commit], cwd=repo.git, check=True)
        return True

    def files(self, *parts: str) -> Path:
        """Return a folder under the state folder, made when missing."""
        path = self.root.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path


def _git(*args: str, cwd: Path | None = None, env: dict | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def _init_bare(git: Path, branch: str) -> None:
    git.parent.mkdir(parents=True, exist_ok=True)
    _git("init", "-q", "--bare", "-b", branch, str(git))
    for key, value in (("uploadpack.allowFilter", "true"), ("uploadpack.allowAnySHA1InWant", "true"),
                       ("http.receivepack", "true"), ("receive.denyNonFastForwards", "false")):
        _git("config", key, value, cwd=git)


def _initial_commit(git: Path, branch: str, name: str) -> None:
    """Write the first commit straight into the bare repository (no work tree): README.md."""
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=git, input=f"# {name}\n".encode(),
                          capture_output=True, check=True).stdout.decode().strip()
    tree = subprocess.run(["git", "mktree"], cwd=git, input=f"100644 blob {blob}\tREADME.md\n".encode(),
                          capture_output=True, check=True).stdout.decode().strip()
    identity = {"GIT_AUTHOR_NAME": "GitHub", "GIT_AUTHOR_EMAIL": "noreply@github.com",
                "GIT_COMMITTER_NAME": "GitHub", "GIT_COMMITTER_EMAIL": "noreply@github.com", "PATH": "/usr/bin:/bin"}
    commit = subprocess.run(["git", "commit-tree", tree, "-m", "Initial commit"], cwd=git, env=identity,
                            capture_output=True, check=True).stdout.decode().strip()
    _git("update-ref", f"refs/heads/{branch}", commit, cwd=git)
