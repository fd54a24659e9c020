"""Repositories, accounts and GitHub App installations, as the REST API answers them.

* GET /repos/{owner}/{repo} (docs.github.com/en/rest/repos/repos#get-a-repository);
* PATCH /repos/{owner}/{repo} with `visibility` or `private` (#update-a-repository: needs
  administration write);
* POST /user/repos and POST /orgs/{org}/repos with `name`, `private`/`visibility`, `auto_init`
  (#create-a-repository-for-the-authenticated-user, #create-an-organization-repository): 201, 422
  "name already exists on this account". An installation token cannot make a user's repository
  (403: the endpoint takes user tokens only); on an organization it needs administration write.
  gh 2.23 `gh repo create OWNER/NAME --private --add-readme` first asks GET /users/{owner} for the
  owner's type, then posts to one of these (cli/cli v2.23.0 pkg/cmd/repo/create/http.go repoCreate);
* GET /users/{username}, GET /user (docs.github.com/en/rest/users/users);
* with an app's JWT: GET /app, GET /repos/{owner}/{repo}/installation, /orgs/{org}/installation,
  /users/{username}/installation, and POST /app/installations/{id}/access_tokens with `repositories`
  (names) and `permissions` (docs.github.com/en/rest/apps/apps). A JWT is refused everywhere else;
* with an installation token: DELETE /installation/token, 204, and the token is refused (401 `Bad
  credentials`) from then on (docs.github.com/en/rest/apps/installations#revoke-an-installation-access-token:
  "Revokes the installation token you're using to authenticate ... Once an installation token is revoked,
  the token is invalidated and cannot be used"); create-github-app-token's post step calls it.
"""

from __future__ import annotations

from testing.github.access import Installation, Refused
from testing.github.http import Request, Response, answer, route
from testing.github.hub import Hub
from testing.github.state import now_iso

VISIBILITIES = ("public", "private", "internal")


def routes(hub: Hub) -> list:
    api = "/api/v3"

    def get_repo(request: Request) -> Response:
        return answer(hub.repo_json(hub.repo(request), hub.caller(request)))

    def update_repo(request: Request) -> Response:
        repo = hub.repo(request, "administration", "write")
        body = request.json()
        visibility = body.get("visibility") or ({True: "private", False: "public"}.get(body.get("private")))
        if visibility is not None:
            if visibility not in VISIBILITIES:
                raise Refused(422, "Validation Failed")
            repo.visibility = visibility
        if body.get("default_branch"):
            repo.default_branch = body["default_branch"]
        return answer(hub.repo_json(repo, hub.caller(request)))

    def create(owner: str, request: Request, owner_type: str) -> Response:
        body = request.json()
        name = body.get("name") or ""
        if not name:
            raise Refused(422, "Validation Failed")
        visibility = body.get("visibility") or ("private" if body.get("private") else "public")
        if hub.world.repository(f"{owner}/{name}") is not None:
            return answer({"message": "Repository creation failed.", "documentation_url": "https://docs.github.com/rest",
                           "errors": [{"resource": "Repository", "code": "custom", "field": "name",
                                       "message": "name already exists on this account"}], "status": "422"}, 422)
        repo = hub.world.create_repository(f"{owner}/{name}", visibility, bool(body.get("auto_init")),
                                           owner_type=owner_type)
        return answer(hub.repo_json(repo, hub.caller(request)), 201)

    def create_for_user(request: Request) -> Response:
        token = hub.caller(request)
        if token is None:
            raise Refused(401, "Requires authentication")
        if token.kind != "user":
            raise Refused(403, "Resource not accessible by integration")
        return create(token.login, request, "User")

    def create_for_org(request: Request) -> Response:
        token, org = hub.caller(request), request.params["org"]
        if token is None:
            raise Refused(401, "Requires authentication")
        allowed = (org.lower() in token.owns if token.kind == "user"
                   else token.account == org.lower() and token.level("administration") >= 2)
        if not allowed:
            raise Refused(403 if token.kind != "user" else 404,
                          "Resource not accessible by integration" if token.kind != "user" else "Not Found")
        return create(hub.world.account(org).login, request, "Organization")

    def get_user(request: Request) -> Response:
        found = hub.world.accounts.get(request.params["user"].lower())
        if found is None:
            raise Refused(404, "Not Found")
        return answer(found.json(hub.api))

    def authenticated_user(request: Request) -> Response:
        token = hub.caller(request)
        if token is None:
            raise Refused(401, "Requires authentication")
        if token.kind != "user":
            raise Refused(403, "Resource not accessible by integration")
        return answer(hub.world.account(token.login, "User").json(hub.api))

    return [
        route("GET", api + "/repos/{owner}/{repo}", get_repo),
        route("PATCH", api + "/repos/{owner}/{repo}", update_repo),
        route("POST", api + "/user/repos", create_for_user),
        route("POST", api + "/orgs/{org}/repos", create_for_org),
        route("GET", api + "/users/{user}", get_user),
        route("GET", api + "/user", authenticated_user),
        *app_routes(hub),
    ]


def installation_json(hub: Hub, installation: Installation) -> dict:
    """Return an installation as the API answers it (docs.github.com/en/rest/apps/apps#get-an-installation-for-the-authenticated-app)."""
    account = hub.world.account(installation.account, installation.target_type)
    return {"id": installation.id, "app_id": installation.app.id, "app_slug": installation.app.slug,
            "client_id": installation.app.client_id, "account": account.json(hub.api),
            "target_type": installation.target_type, "permissions": installation.permissions,
            "repository_selection": "all" if installation.repositories is None else "selected",
            "access_tokens_url": f"{hub.api}/app/installations/{installation.id}/access_tokens",
            "events": [], "created_at": now_iso(), "updated_at": now_iso(), "suspended_at": None}


def app_routes(hub: Hub) -> list:
    api = "/api/v3"

    def app_of(request: Request):
        scheme, _, jwt = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            raise Refused(401, "A JSON web token could not be decoded")
        return hub.keys.app_for(jwt.strip())

    def installation_where(request: Request, matches) -> Response:
        app = app_of(request)
        for installation in hub.keys.installations.values():
            if installation.app is app and matches(installation):
                return answer(installation_json(hub, installation))
        raise Refused(404, "Not Found")

    def for_repo(request: Request) -> Response:
        owner, name = request.params["owner"].lower(), request.params["repo"].lower()
        return installation_where(request, lambda i: i.account.lower() == owner and (
            i.repositories is None or f"{owner}/{name}" in i.repositories)
            and hub.world.repository(f"{owner}/{name}") is not None)

    def for_account(request: Request) -> Response:
        account = request.params["account"].lower()
        return installation_where(request, lambda i: i.account.lower() == account)

    def get_app(request: Request) -> Response:
        app = app_of(request)
        return answer({"id": app.id, "slug": app.slug, "client_id": app.client_id, "name": app.slug,
                       "owner": None, "permissions": {}, "events": []})

    def access_token(request: Request) -> Response:
        app = app_of(request)
        installation = hub.keys.installations.get(int(request.params["id"]))
        if installation is None or installation.app is not app:
            raise Refused(404, "Not Found")
        body = request.json()
        for name in body.get("repositories") or ():
            if hub.world.repository(f"{installation.account}/{name}") is None:
                raise Refused(422, "There is at least one repository that does not exist or is not accessible "
                                   "to the parent installation.")
        token = hub.keys.installation_token(installation, body.get("repositories"), body.get("permissions"))
        repositories = [hub.world.repository(name) for name in sorted(token.repositories or ())]
        answered = {"token": token.value, "expires_at": now_iso(token.expires), "permissions": token.permissions,
                    "repository_selection": "all" if token.repositories is None else "selected"}
        if token.repositories is not None:
            answered["repositories"] = [hub.repo_json(r) for r in repositories if r is not None]
        return answer(answered, 201)

    def revoke(request: Request) -> Response:
        token = hub.caller(request)
        if token is None:
            raise Refused(401, "Requires authentication")
        if token.kind == "user":
            raise Refused(403, "Resource not accessible by personal access token")
        hub.keys.revoke(token.value)
        return Response(204)

    return [
        route("DELETE", api + "/installation/token", revoke),
        route("GET", api + "/app", get_app),
        route("GET", api + "/repos/{owner}/{repo}/installation", for_repo),
        route("GET", api + "/orgs/{account}/installation", for_account),
        route("GET", api + "/users/{account}/installation", for_account),
        route("POST", api + "/app/installations/{id}/access_tokens", access_token),
    ]
