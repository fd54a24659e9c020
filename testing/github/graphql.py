"""The few GraphQL operations gh 2.23 sends on the way to the REST calls the scripts make, at
https://HOST/api/graphql (cli/cli v2.23.0 internal/ghinstance/host.go GraphQLEndpoint).

gh's queries are fixed strings named by their operation, so each is answered by name from its
variables, not by a GraphQL engine (docs.github.com/en/graphql/reference/objects#repository):

* `RepositoryReleaseByTag` {owner, name, tagName}: `repository.release` {databaseId, isDraft} or null.
  `gh release view/upload/download TAG` asks it beside the REST look-up of the tag's release and takes
  whichever answers first (pkg/cmd/release/shared/fetch.go FetchRelease), so it must be right.
* `RepositoryFindRef` {owner, name, tagName: "refs/tags/X"}: `repository.ref` {id} or null
  (pkg/cmd/release/create/http.go remoteTagExists, when a local tag exists).

Any other operation is answered with a GraphQL error naming it, and kept in `unanswered`, so a test
sees what gh asked that this server cannot answer.
"""

from __future__ import annotations

import re

from testing.github.access import Refused
from testing.github.http import Request, Response, answer, route
from testing.github.hub import Hub

OPERATION = re.compile(r"^\s*(?:query|mutation)\s+(\w+)")


def routes(hub: Hub, unanswered: list) -> list:

    def repository(variables: dict, request: Request):
        repo = hub.world.repository(f"{variables.get('owner')}/{variables.get('name')}")
        if repo is None:
            return None
        try:
            hub.keys.check(hub.caller(request), repo.full_name, repo.visibility, "contents", "read")
        except Refused as refused:
            if refused.status == 401:
                raise
            return None
        return repo

    def not_found(variables: dict) -> Response:
        name = f"{variables.get('owner')}/{variables.get('name')}"
        return answer({"data": {"repository": None}, "errors": [{
            "type": "NOT_FOUND", "path": ["repository"],
            "message": f"Could not resolve to a Repository with the name '{name}'."}]})

    def release_by_tag(variables: dict, request: Request) -> Response:
        repo = repository(variables, request)
        if repo is None:
            return not_found(variables)
        found = next((r for r in repo.releases if r.tag == variables.get("tagName")), None)
        release = None if found is None else {"databaseId": found.id, "isDraft": found.draft}
        return answer({"data": {"repository": {"release": release}}})

    def find_ref(variables: dict, request: Request) -> Response:
        repo = repository(variables, request)
        if repo is None:
            return not_found(variables)
        commit = hub.world.ref(repo, variables.get("tagName") or "")
        return answer({"data": {"repository": {"ref": {"id": f"REF_{commit}"} if commit else None}}})

    operations = {"RepositoryReleaseByTag": release_by_tag, "RepositoryFindRef": find_ref}

    def serve(request: Request) -> Response:
        if hub.caller(request) is None:
            raise Refused(401, "This endpoint requires you to be authenticated.")
        body = request.json()
        found = OPERATION.match(body.get("query") or "")
        name = found.group(1) if found else ""
        operation = operations.get(name)
        if operation is None:
            unanswered.append(body.get("query") or "")
            return answer({"errors": [{"message": f"loopback GitHub does not answer GraphQL operation {name!r}"}]})
        return operation(body.get("variables") or {}, request)

    return [route("POST", "/api/graphql", serve)]
