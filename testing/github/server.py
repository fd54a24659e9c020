"""The loopback GitHub: one HTTPS server on a loopback address with the REST API, uploads, GraphQL
(the little gh asks), git over smart HTTP, the Actions cache service and Pages, over one state folder.

    with LoopbackGitHub(tmp_path / "github") as github:
        github.create_repository("takedownwatch/record-2026", "private", auto_init=True)
        token = github.user_token("maintainer", owns=["takedownwatch"])
        subprocess.run(["gh", "api", "repos/takedownwatch/record-2026"], env=github.env(token))

See docs/ghserver.md for the addresses, the environment and the setup JSON.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from testing.github import cache, githttp, graphql, issues, releases, repos, workflows
from testing.github.access import Keys
from testing.github.http import HttpsServer, Request, Response, Router, answer, route
from testing.github.hub import Hub
from testing.github.state import World
from testing.github.tls import bundle, make_certificates


class LoopbackGitHub:
    """A GitHub Enterprise Server-shaped GitHub on https://ADDRESS:PORT, for tests and act."""

    def __init__(self, state: Path, address: str = "127.0.0.1", port: int = 0, cache_budget: int = cache.BUDGET,
                 extra_cas: list[Path] = ()):
        self.state = Path(state)
        ca, chain, key = make_certificates(self.state / "tls", address)
        self.ca_file = ca
        self.ca_bundle = bundle(self.state / "tls", ca, list(extra_cas))
        self.router = Router()
        self.https = HttpsServer(self.router, address, port, str(chain), str(key))
        self.host = address if self.https.port == 443 else f"{address}:{self.https.port}"
        self.world, self.keys = World(self.state), Keys()
        self.hub = Hub(self.world, self.keys, f"https://{self.host}")
        self.caches = cache.Caches(self.hub, cache_budget)
        self.unanswered_graphql: list[str] = []
        self.router.add(repos.routes(self.hub) + releases.routes(self.hub) + issues.routes(self.hub)
                        + cache.routes(self.hub, self.caches) + workflows.routes(self.hub)
                        + graphql.routes(self.hub, self.unanswered_graphql) + self._admin_routes()
                        + githttp.routes(self.hub))

    # -- life ----------------------------------------------------------------------------------

    def start(self) -> "LoopbackGitHub":
        self.https.start()
        return self

    def close(self) -> None:
        self.https.close()

    def __enter__(self) -> "LoopbackGitHub":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- addresses and environment -------------------------------------------------------------

    @property
    def base(self) -> str:
        """Return GITHUB_SERVER_URL: https://ADDRESS:PORT (no port when it is 443)."""
        return self.hub.base

    @property
    def api_url(self) -> str:
        """Return GITHUB_API_URL: the REST API's root, BASE/api/v3."""
        return self.hub.api

    def cache_url(self, full_name: str) -> str:
        """Return ACTIONS_CACHE_URL for a repository's cache (ends with a slash, as the toolkit expects)."""
        return f"{self.base}/_caches/{full_name}/"

    def env(self, token: str | None = None, repository: str | None = None) -> dict[str, str]:
        """Return the variables that point gh, git, Python, Node and the scripts at this server.

        `token` becomes GH_ENTERPRISE_TOKEN (gh reads it, not GH_TOKEN, for a host other than
        github.com: cli/go-gh v1.0.0 pkg/auth/auth.go tokenForHost) and GH_TOKEN; `repository`
        (OWNER/NAME) becomes GH_REPO, with the host, and ACTIONS_CACHE_URL.
        """
        ca = str(self.ca_bundle)
        found = {"GITHUB_SERVER_URL": self.base, "GITHUB_API_URL": self.api_url,
                 "GITHUB_GRAPHQL_URL": self.hub.graphql, "GH_HOST": self.host,
                 "SSL_CERT_FILE": ca, "GIT_SSL_CAINFO": ca, "NODE_EXTRA_CA_CERTS": ca, "REQUESTS_CA_BUNDLE": ca,
                 "CURL_CA_BUNDLE": ca, "GH_CONFIG_DIR": str(self.world.files("gh-config")),
                 "GH_NO_UPDATE_NOTIFIER": "1", "GH_PROMPT_DISABLED": "1", "GIT_TERMINAL_PROMPT": "0"}
        if token:
            found.update(GH_ENTERPRISE_TOKEN=token, GH_TOKEN=token)
        if repository:
            found.update(GH_REPO=f"{self.host}/{repository}", ACTIONS_CACHE_URL=self.cache_url(repository))
        return found

    def process_env(self, token: str | None = None, repository: str | None = None) -> dict[str, str]:
        """Return os.environ with env() on top (for subprocess calls)."""
        return {**os.environ, **self.env(token, repository)}

    # -- setting up ------------------------------------------------------------------------------

    def create_repository(self, full_name: str, visibility: str = "private", auto_init: bool = False,
                          owner_type: str = "Organization"):
        """Return a new repository (see World.create_repository)."""
        return self.world.create_repository(full_name, visibility, auto_init, owner_type=owner_type)

    def user_token(self, login: str, owns: list[str] | None = None, value: str | None = None) -> str:
        """Return a personal token for `login` that may do anything in its own and the `owns` accounts."""
        self.world.account(login, "User")
        for account in owns or ():
            self.world.account(account)
        return self.keys.user_token(login, owns, value)

    def workflow_token(self, full_name: str, permissions: dict[str, str], value: str | None = None) -> str:
        """Return a `github.token` for a job of `full_name` with `permissions:` (e.g. {"contents": "write"})."""
        return self.keys.workflow_token(full_name, permissions, value)

    def runtime_token(self, full_name: str) -> str:
        """Return a token for the cache service of `full_name` (ACTIONS_RUNTIME_TOKEN's part)."""
        return self.keys.workflow_token(full_name, {"actions": "write"})

    def register_app(self, app_id: int, public_key_pem, client_id: str | None = None, slug: str = "takedownwatch"):
        """Return an app whose JWTs (iss = app id or client id) the public key verifies."""
        return self.keys.register_app(app_id, public_key_pem, client_id, slug)

    def install(self, app_id: int, account: str, permissions: dict[str, str], repositories: list[str] | None = None,
                target_type: str = "Organization"):
        """Return the app's installation on `account` (all repositories when `repositories` is None)."""
        self.world.account(account, target_type)
        return self.keys.install(app_id, account, permissions, repositories, target_type)

    def apply(self, setup: dict) -> dict:
        """Return the tokens and installations made from a setup document (docs/ghserver.md)."""
        made = {"tokens": {}, "installations": {}}
        for repo in setup.get("repositories", []):
            if self.world.repository(repo["full_name"]) is None:
                self.create_repository(repo["full_name"], repo.get("visibility", "private"),
                                       repo.get("auto_init", False), repo.get("owner_type", "Organization"))
        for user in setup.get("users", []):
            made["tokens"][user["login"]] = self.user_token(user["login"], user.get("owns"), user.get("token"))
        for app in setup.get("apps", []):
            self.register_app(app["id"], app["public_key"], app.get("client_id"), app.get("slug", "takedownwatch"))
            for place in app.get("installations", []):
                installation = self.install(app["id"], place["account"], place["permissions"],
                                            place.get("repositories"), place.get("target_type", "Organization"))
                made["installations"][place["account"]] = installation.id
        for job in setup.get("workflow_tokens", []):
            made["tokens"][job.get("name", job["repository"])] = self.workflow_token(
                job["repository"], job.get("permissions", {}), job.get("token"))
        return made

    # -- what happened ---------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """Return the server's state as JSON-ready data: repositories, caches, evictions, errors."""
        repositories = {}
        for repo in list(self.world.repositories.values()):
            repositories[repo.full_name] = {
                "visibility": repo.visibility, "default_branch": repo.default_branch, "git": str(repo.git),
                "releases": {r.tag: [{"name": a.name, "size": a.size, "id": a.id,
                                      "sha256": hashlib.sha256(a.path.read_bytes()).hexdigest()} for a in r.assets]
                             for r in repo.releases},
                "issues": [issues.issue_summary(i) for i in repo.issues],
                "dispatches": repo.dispatches, "deployments": repo.deployments}
        return {"base": self.base, "repositories": repositories,
                "caches": [{**e.json(), "repository": e.repository} for e in self.caches.entries.values()
                           if e.complete],
                "evictions": self.caches.evictions, "restores": self.caches.restores,
                "unanswered_graphql": self.unanswered_graphql, "errors": self.https.errors}

    def _admin_routes(self) -> list:
        def state(request: Request) -> Response:
            return answer(self.snapshot())

        def setup(request: Request) -> Response:
            return answer(self.apply(request.json()), 201)

        return [route("GET", "/_loopback/state", state), route("POST", "/_loopback/setup", setup)]
