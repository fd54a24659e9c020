"""Issues, their comments and labels, as the REST API answers them (docs.github.com/en/rest/issues).

* POST /repos/{o}/{r}/issues {title, body, labels}: 201 (needs issues write; a label named that the
  repository lacks is made, as GitHub does when the caller may push);
* GET /repos/{o}/{r}/issues with `state` (open, closed, all; default open), `labels` (comma-separated:
  issues that have every one), `sort` (created, updated; default created), `direction` (default desc),
  `per_page` (default 30, at most 100), `page`;
* GET and PATCH /repos/{o}/{r}/issues/{number} (title, body, state open/closed, state_reason, labels);
* POST and GET /repos/{o}/{r}/issues/{number}/comments; POST /repos/{o}/{r}/issues/{number}/labels;
* POST /repos/{o}/{r}/labels {name, color, description}: 201, 422 `already_exists`; GET .../labels.
"""

from __future__ import annotations

from testing.github.access import Refused
from testing.github.http import Request, Response, answer, route
from testing.github.hub import Hub
from testing.github.state import Comment, Issue, Repository, now_iso


def issue_summary(issue: Issue) -> dict:
    """Return what a test asks of an issue: number, title, state, labels, comment bodies."""
    return {"number": issue.number, "title": issue.title, "state": issue.state, "labels": issue.labels,
            "body": issue.body, "comments": [c.body for c in issue.comments]}


def routes(hub: Hub) -> list:
    repo_path = "/api/v3/repos/{owner}/{repo}"

    def label(repo: Repository, name: str) -> dict:
        with hub.world.lock:
            found = repo.labels.get(name.lower())
            if found is None:
                found = repo.labels[name.lower()] = {"id": next(hub.world.ids), "name": name, "color": "ededed",
                                                     "description": None, "default": False}
            return found

    def issue_json(repo: Repository, issue: Issue) -> dict:
        url = f"{hub.api}/repos/{repo.full_name}/issues/{issue.number}"
        return {"id": issue.id, "node_id": f"I_{issue.id}", "number": issue.number, "title": issue.title,
                "body": issue.body, "state": issue.state, "state_reason": issue.state_reason,
                "labels": [label(repo, name) for name in issue.labels], "user": {"login": issue.user},
                "comments": len(issue.comments), "created_at": issue.created_at, "updated_at": issue.updated_at,
                "closed_at": issue.closed_at, "url": url, "comments_url": url + "/comments",
                "html_url": f"{hub.base}/{repo.full_name}/issues/{issue.number}", "locked": False,
                "assignees": [], "milestone": None}

    def comment_json(repo: Repository, issue: Issue, comment: Comment) -> dict:
        return {"id": comment.id, "body": comment.body, "user": {"login": comment.user},
                "created_at": comment.created_at, "updated_at": comment.created_at,
                "issue_url": f"{hub.api}/repos/{repo.full_name}/issues/{issue.number}",
                "html_url": f"{hub.base}/{repo.full_name}/issues/{issue.number}#issuecomment-{comment.id}"}

    def who(request: Request) -> str:
        token = hub.caller(request)
        return token.login if token else "ghost"

    def find(repo: Repository, number: str) -> Issue:
        found = next((i for i in repo.issues if str(i.number) == number), None)
        if found is None:
            raise Refused(404, "Not Found")
        return found

    def create(request: Request) -> Response:
        repo = hub.repo(request, "issues", "write")
        body = request.json()
        if not body.get("title"):
            raise Refused(422, "Validation Failed")
        names = [n if isinstance(n, str) else n.get("name", "") for n in body.get("labels") or []]
        with hub.world.lock:
            issue = Issue(len(repo.issues) + 1, next(hub.world.ids), str(body["title"]), body.get("body") or "",
                          who(request), [label(repo, n)["name"] for n in names])
            repo.issues.append(issue)
        return answer(issue_json(repo, issue), 201)

    def listing(request: Request) -> Response:
        repo = hub.repo(request, "issues", "read")
        state = request.arg("state") or "open"
        wanted = {n.strip().lower() for n in (request.arg("labels") or "").split(",") if n.strip()}
        found = [i for i in repo.issues if (state == "all" or i.state == state)
                 and wanted <= {n.lower() for n in i.labels}]
        order = (lambda i: (i.updated_at, i.number)) if request.arg("sort") == "updated" else \
            (lambda i: (i.created_at, i.number))
        found.sort(key=order, reverse=(request.arg("direction") or "desc") == "desc")
        per_page, page = min(int(request.arg("per_page") or 30), 100), int(request.arg("page") or 1)
        return answer([issue_json(repo, i) for i in found[(page - 1) * per_page: page * per_page]])

    def get(request: Request) -> Response:
        repo = hub.repo(request, "issues", "read")
        return answer(issue_json(repo, find(repo, request.params["number"])))

    def update(request: Request) -> Response:
        repo = hub.repo(request, "issues", "write")
        issue, body = find(repo, request.params["number"]), request.json()
        if body.get("state") not in (None, "open", "closed"):
            raise Refused(422, "Validation Failed")
        with hub.world.lock:
            if body.get("state") == "closed" and issue.state != "closed":
                issue.state, issue.closed_at = "closed", now_iso()
                issue.state_reason = body.get("state_reason") or "completed"
            elif body.get("state") == "open" and issue.state != "open":
                issue.state, issue.closed_at, issue.state_reason = "open", None, "reopened"
            for key in ("title", "body"):
                if key in body:
                    setattr(issue, key, body[key] or "")
            if "labels" in body:
                issue.labels = [label(repo, n if isinstance(n, str) else n["name"])["name"] for n in body["labels"]]
            issue.updated_at = now_iso()
        return answer(issue_json(repo, issue))

    def comment(request: Request) -> Response:
        repo = hub.repo(request, "issues", "write")
        issue, body = find(repo, request.params["number"]), request.json()
        if not body.get("body"):
            raise Refused(422, "Validation Failed")
        with hub.world.lock:
            made = Comment(next(hub.world.ids), body["body"], who(request))
            issue.comments.append(made)
            issue.updated_at = now_iso()
        return answer(comment_json(repo, issue, made), 201)

    def comments(request: Request) -> Response:
        repo = hub.repo(request, "issues", "read")
        issue = find(repo, request.params["number"])
        return answer([comment_json(repo, issue, c) for c in issue.comments])

    def add_labels(request: Request) -> Response:
        repo = hub.repo(request, "issues", "write")
        issue, body = find(repo, request.params["number"]), request.json()
        for name in body.get("labels") or []:
            if label(repo, name)["name"] not in issue.labels:
                issue.labels.append(label(repo, name)["name"])
        return answer([label(repo, n) for n in issue.labels])

    def create_label(request: Request) -> Response:
        repo = hub.repo(request, "issues", "write")
        body = request.json()
        name = body.get("name") or ""
        if not name:
            raise Refused(422, "Validation Failed")
        if name.lower() in repo.labels:
            return answer({"message": "Validation Failed", "errors": [
                {"resource": "Label", "code": "already_exists", "field": "name"}], "status": "422"}, 422)
        made = label(repo, name)
        made.update(color=body.get("color") or "ededed", description=body.get("description"))
        return answer(made, 201)

    def labels(request: Request) -> Response:
        repo = hub.repo(request, "issues", "read")
        return answer(list(repo.labels.values()))

    return [
        route("POST", repo_path + "/issues", create),
        route("GET", repo_path + "/issues", listing),
        route("GET", repo_path + "/issues/{number}", get),
        route("PATCH", repo_path + "/issues/{number}", update),
        route("POST", repo_path + "/issues/{number}/comments", comment),
        route("GET", repo_path + "/issues/{number}/comments", comments),
        route("POST", repo_path + "/issues/{number}/labels", add_labels),
        route("POST", repo_path + "/labels", create_label),
        route("GET", repo_path + "/labels", labels),
    ]
