"""What every route needs: the world, the keys, the server's addresses, and the look-ups that
decide whether a request may touch a repository.

The addresses are GitHub Enterprise Server's layout, which is what gh and act use for any host other
than github.com: REST at https://HOST/api/v3/, uploads at https://HOST/api/uploads/, GraphQL at
https://HOST/api/graphql, git and web pages at https://HOST/OWNER/NAME (cli/cli v2.23.0
internal/ghinstance/host.go RESTPrefix, GraphQLEndpoint, HostPrefix; docs.github.com/en/
enterprise-server@3.14/rest/quickstart: "http(s)://HOSTNAME/api/v3"; nektos/act
pkg/model/github_context.go: GITHUB_API_URL = https://INSTANCE/api/v3 for --github-instance).
"""

from __future__ import annotations

from testing.github.access import Keys, Refused, Token
from testing.github.http import Request
from testing.github.state import Repository, World


class Hub:
    def __init__(self, world: World, keys: Keys, base: str):
        self.world, self.keys, self.base = world, keys, base.rstrip("/")
        self.api = self.base + "/api/v3"
        self.uploads = self.base + "/api/uploads"
        self.graphql = self.base + "/api/graphql"

    def caller(self, request: Request) -> Token | None:
        """Return the token the request carries (None: anonymous); 401 for one the server does not know."""
        return self.keys.token(self.keys.bearer(request.headers.get("authorization", "")))

    def repo(self, request: Request, permission: str = "metadata", level: str = "read") -> Repository:
        """Return the route's repository {owner}/{repo} when the caller may use `permission` at `level`."""
        token = self.caller(request)
        repo = self.world.repository(f"{request.params['owner']}/{request.params['repo']}")
        if repo is None:
            raise Refused(404, "Not Found")
        self.keys.check(token, repo.full_name, repo.visibility, permission, level)
        return repo

    def repo_json(self, repo: Repository, token: Token | None = None) -> dict:
        """Return a repository as "Get a repository" answers it (docs.github.com/en/rest/repos/repos)."""
        full, url = repo.full_name, f"{self.api}/repos/{repo.full_name}"
        answer = {
            "id": repo.id, "node_id": f"R_{repo.id}", "name": repo.name, "full_name": full,
            "owner": repo.owner.json(self.api), "private": repo.visibility != "public",
            "visibility": repo.visibility, "html_url": f"{self.base}/{full}", "url": url,
            "clone_url": f"{self.base}/{full}.git", "git_url": f"{self.base}/{full}.git",
            "default_branch": repo.default_branch, "fork": False, "archived": False, "disabled": False,
            "has_issues": True, "created_at": repo.created_at, "updated_at": repo.created_at,
            "releases_url": url + "/releases{/id}", "issues_url": url + "/issues{/number}",
        }
        if token is not None:
            writes = token.kind == "user" or token.level("contents") >= 2
            answer["permissions"] = {"admin": token.kind == "user" or token.level("administration") >= 2,
                                     "maintain": False, "push": writes, "triage": writes, "pull": True}
        return answer
