"""A fake GitHub CLI (`gh`) for the workflow scripts' tests: repositories as local bare git repositories,
their visibility, and releases. No network: git talks to folders.

What it answers, and where the behaviour comes from:

- `gh api repos/OWNER/NAME [--jq .FIELD]` is `GET /repos/{owner}/{repo}`
  (https://docs.github.com/en/rest/repos/repos#get-a-repository): the repository's
  `full_name` and `visibility` ("public", "private" or "internal"). A repository that
  does not exist, or that the token may not see, is a 404, which gh reports on
  standard error as `gh: Not Found (HTTP 404)` with exit status 1
  (https://cli.github.com/manual/gh_api; as seen by users in seachicken/gh-poi#12).
  `down` makes every API call fail another way (`HTTP 502`), as an outage would.
- `gh repo create OWNER/NAME --private --add-readme` (https://cli.github.com/manual/gh_repo_create):
  the repository, with one commit holding README.md on its default branch, `main`, served over
  file:// with partial clones allowed, as GitHub serves `git clone --filter=blob:none`
  (https://github.blog/open-source/git/get-up-to-speed-with-partial-clone-and-shallow-clone/).
- `gh release view TAG [--json assets --jq ...]`, `gh release create TAG ...`,
  `gh release upload TAG FILE` (https://cli.github.com/manual/gh_release), as
  publish_warc.sh uses them: a release is a file listing its assets' names.
- `gh auth setup-git` (https://cli.github.com/manual/gh_auth_setup-git) configures
  git's credential helper for github.com: nothing to do for folders.

Every call is appended to `calls`, one line each.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = r'''#!{python}
import os, subprocess, sys
from pathlib import Path

state = Path({state!r})
args = sys.argv[1:]
with open(state / "calls", "a") as log:
    log.write(" ".join(args) + "\n")


def fail(message):
    sys.stderr.write(message + "\n")
    sys.exit(1)


def repository(name):
    folder = state / "github" / (name + ".git")
    return folder if folder.is_dir() else None


if args[:1] == ["api"]:
    if (state / "down").exists():
        fail("gh: Bad Gateway (HTTP 502)")
    path = args[1]
    if not path.startswith("repos/") or repository(path[len("repos/"):]) is None:
        sys.stdout.write('{{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}}')
        fail("gh: Not Found (HTTP 404)")
    name = path[len("repos/"):]
    fields = {{"full_name": name, "visibility": (state / "visibility" / name).read_text().strip()}}
    jq = args[args.index("--jq") + 1] if "--jq" in args else None
    print(fields[jq.lstrip(".")] if jq else fields)
elif args[:2] == ["repo", "create"]:
    name = args[2]
    if repository(name) is not None:
        fail(f"GraphQL: Name already exists on this account (createRepository)")
    bare = state / "github" / (name + ".git")
    bare.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):  # partial clones, as GitHub serves
        subprocess.run(["git", "config", key, "true"], cwd=bare, check=True)
    seed = state / "seed" / name
    subprocess.run(["git", "clone", "-q", str(bare), str(seed)], check=True, capture_output=True)
    (seed / "README.md").write_text("# " + name + "\n")
    for command in (["add", "README.md"], ["-c", "user.name=gh", "-c", "user.email=gh@example.invalid",
                                             "commit", "-q", "-m", "Initial commit"],
                    ["push", "-q", "origin", "HEAD:main"]):
        subprocess.run(["git", *command], cwd=seed, check=True)
    visibility = "private" if "--private" in args else "internal" if "--internal" in args else "public"
    (state / "visibility" / name).parent.mkdir(parents=True, exist_ok=True)
    (state / "visibility" / name).write_text(visibility)
    print(f"https://github.com/{{name}}")
elif args[:2] == ["auth", "setup-git"]:
    pass
elif args[:1] == ["release"]:
    verb, tag = args[1], args[2]
    release = state / "releases" / tag
    if verb == "view":
        if not release.exists():
            fail("release not found")
        if "--json" in args:
            sys.stdout.write(release.read_text())
    elif verb == "create":
        release.parent.mkdir(parents=True, exist_ok=True)
        release.touch()
    elif verb == "upload":
        with open(release, "a") as assets:
            assets.write(Path(args[3]).name + "\n")
else:
    fail("fake gh: not understood: " + " ".join(args))
'''


class FakeGitHub:
    """A state folder and a `gh` on PATH that reads it; repositories live under `url_base`."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.bin = self.root / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        (self.root / "github").mkdir(exist_ok=True)
        gh = self.bin / "gh"
        gh.write_text(SCRIPT.format(python=sys.executable, state=str(self.root)), encoding="utf-8")
        gh.chmod(0o755)

    @property
    def url_base(self) -> Path:
        """Return the folder that stands for https://github.com: OWNER/NAME.git inside it."""
        return self.root / "github"

    def env(self, **extra: str) -> dict[str, str]:
        """Return an environment in which `gh` is this fake (and git finds these repositories)."""
        return dict(os.environ, PATH=f"{self.bin}{os.pathsep}{os.environ['PATH']}",
                    RECORD_URL_BASE=self.url_base.as_uri(), **extra)

    def create(self, name: str, visibility: str = "private") -> Path:
        """Return the bare repository made as `gh repo create NAME --<visibility> --add-readme` makes it."""
        subprocess.run([str(self.bin / "gh"), "repo", "create", name, f"--{visibility}", "--add-readme"],
                       check=True, capture_output=True)
        return self.url_base / f"{name}.git"

    def set_visibility(self, name: str, visibility: str) -> None:
        """Make a repository private, public or internal, as its Settings page would."""
        path = self.root / "visibility" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(visibility, encoding="utf-8")

    def calls(self) -> list[str]:
        """Return every call made, in order."""
        path = self.root / "calls"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def release_assets(self, tag: str) -> list[str]:
        """Return the names of a release's assets, or [] when there is no such release."""
        path = self.root / "releases" / tag
        return path.read_text(encoding="utf-8").split() if path.exists() else []

    def outage(self) -> None:
        """Make every API call fail as when GitHub does not answer."""
        (self.root / "down").touch()
