"""Releases and their assets (docs.github.com/en/rest/releases/releases, /releases/assets), as gh 2.23
uses them (cli/cli v2.23.0 pkg/cmd/release: view, create, upload, download, delete-asset).

* GET /repos/{o}/{r}/releases (newest first), /releases/{id}, /releases/tags/{tag} (404 when none),
  /releases/latest; HEAD of a tag's release (gh release create asks it);
* POST /repos/{o}/{r}/releases with tag_name, name, body, draft, prerelease, target_commitish: 201;
  422 `already_exists` when the tag has a release; the tag is made at target_commitish (default
  branch) when the repository has no such tag, as GitHub does. Needs contents write.
* PATCH /releases/{id} (gh publishes the draft it made while uploading), DELETE /releases/{id};
* the upload_url is `https://HOST/api/uploads/repos/{o}/{r}/releases/{id}/assets{?name,label}` (GitHub
  Enterprise Server's, ibid. "Upload a release asset"): POST with the bytes and ?name=: 201; 422
  `already_exists` for a name taken (an asset is never replaced);
* GET /releases/assets/{id} with `Accept: application/octet-stream` is a 302 to a short-lived
  download address that needs no token ("API clients should handle both a 200 or 302 response"),
  with any other Accept the asset's JSON; GET /releases/{id}/assets lists them; DELETE removes one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from testing.github.access import Refused
from testing.github.http import Request, Response, answer, route
from testing.github.hub import Hub
from testing.github.state import Asset, Release, Repository

OCTET = "application/octet-stream"


def already_exists(resource: str, field: str) -> Response:
    return answer({"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
                   "errors": [{"resource": resource, "code": "already_exists", "field": field}], "status": "422"}, 422)


def routes(hub: Hub) -> list:
    api, repo_path = "/api/v3", "/api/v3/repos/{owner}/{repo}"
    signing = secrets.token_bytes(16)

    def release_json(repo: Repository, release: Release) -> dict:
        url = f"{hub.api}/repos/{repo.full_name}/releases/{release.id}"
        return {"id": release.id, "node_id": f"RE_{release.id}", "tag_name": release.tag, "name": release.name,
                "body": release.body, "draft": release.draft, "prerelease": release.prerelease,
                "target_commitish": release.target, "created_at": release.created_at,
                "published_at": None if release.draft else release.created_at, "url": url,
                "html_url": f"{hub.base}/{repo.full_name}/releases/tag/{release.tag}",
                "assets_url": url + "/assets",
                "upload_url": f"{hub.uploads}/repos/{repo.full_name}/releases/{release.id}/assets{{?name,label}}",
                "tarball_url": None, "zipball_url": None, "author": {"login": "github-actions[bot]"},
                "assets": [asset_json(repo, a) for a in release.assets]}

    def asset_json(repo: Repository, asset: Asset) -> dict:
        return {"id": asset.id, "node_id": f"RA_{asset.id}", "name": asset.name, "label": asset.label,
                "size": asset.size, "state": "uploaded", "content_type": asset.content_type,
                "download_count": 0, "created_at": asset.created_at, "updated_at": asset.created_at,
                "url": f"{hub.api}/repos/{repo.full_name}/releases/assets/{asset.id}",
                "browser_download_url": f"{hub.base}/{repo.full_name}/releases/download/"
                                        f"{_release_of(repo, asset).tag}/{asset.name}"}

    def by_id(repo: Repository, release_id: str) -> Release:
        found = next((r for r in repo.releases if str(r.id) == release_id), None)
        if found is None:
            raise Refused(404, "Not Found")
        return found

    def list_releases(request: Request) -> Response:
        repo = hub.repo(request, "contents", "read")
        return answer([release_json(repo, r) for r in reversed(repo.releases)])

    def get_by_tag(request: Request) -> Response:
        repo = hub.repo(request, "contents", "read")
        found = next((r for r in repo.releases if r.tag == request.params["tag"] and not r.draft), None)
        if found is None:
            raise Refused(404, "Not Found")
        return answer(release_json(repo, found))

    def latest(request: Request) -> Response:
        repo = hub.repo(request, "contents", "read")
        found = [r for r in repo.releases if not r.draft and not r.prerelease]
        if not found:
            raise Refused(404, "Not Found")
        return answer(release_json(repo, found[-1]))

    def get_release(request: Request) -> Response:
        repo = hub.repo(request, "contents", "read")
        return answer(release_json(repo, by_id(repo, request.params["id"])))

    def create(request: Request) -> Response:
        repo = hub.repo(request, "contents", "write")
        body = request.json()
        tag = body.get("tag_name") or ""
        if not tag:
            raise Refused(422, "Validation Failed")
        with hub.world.lock:
            if any(r.tag == tag for r in repo.releases):
                return already_exists("Release", "tag_name")
            target = body.get("target_commitish") or repo.default_branch
            if not body.get("draft") and not hub.world.tag(repo, tag, target):
                raise Refused(422, "Repository is empty.")
            release = Release(next(hub.world.ids), tag, body.get("name") or tag, body.get("body") or "",
                              bool(body.get("draft")), bool(body.get("prerelease")), target)
            repo.releases.append(release)
        return answer(release_json(repo, release), 201)

    def update(request: Request) -> Response:
        repo = hub.repo(request, "contents", "write")
        release, body = by_id(repo, request.params["id"]), request.json()
        for key, attribute in (("name", "name"), ("body", "body"), ("draft", "draft"), ("prerelease", "prerelease")):
            if key in body:
                setattr(release, attribute, body[key])
        if body.get("tag_name"):
            release.tag = body["tag_name"]
        if not release.draft:
            hub.world.tag(repo, release.tag, release.target)
        return answer(release_json(repo, release))

    def delete(request: Request) -> Response:
        repo = hub.repo(request, "contents", "write")
        repo.releases.remove(by_id(repo, request.params["id"]))
        return Response(204)

    def list_assets(request: Request) -> Response:
        repo = hub.repo(request, "contents", "read")
        return answer([asset_json(repo, a) for a in by_id(repo, request.params["id"]).assets])

    def upload(request: Request) -> Response:
        repo = hub.repo(request, "contents", "write")
        release, name = by_id(repo, request.params["id"]), request.arg("name") or ""
        if not name:
            raise Refused(422, "Validation Failed")
        with hub.world.lock:
            if any(a.name == name for a in release.assets):
                return already_exists("ReleaseAsset", "name")
            asset_id = next(hub.world.ids)
            path = hub.world.files("assets", repo.key.replace("/", "__")) / str(asset_id)
            path.write_bytes(request.body)
            asset = Asset(asset_id, name, path, request.headers.get("content-type") or OCTET, request.arg("label") or "")
            release.assets.append(asset)
        return answer(asset_json(repo, asset), 201)

    def find_asset(repo: Repository, asset_id: str) -> Asset:
        found = next((a for r in repo.releases for a in r.assets if str(a.id) == asset_id), None)
        if found is None:
            raise Refused(404, "Not Found")
        return found

    def signature(asset: Asset) -> str:
        return hmac.new(signing, f"{asset.id}:{asset.path}".encode(), hashlib.sha256).hexdigest()

    def get_asset(request: Request) -> Response:
        repo = hub.repo(request, "contents", "read")
        asset = find_asset(repo, request.params["id"])
        if OCTET not in request.headers.get("accept", ""):
            return answer(asset_json(repo, asset))
        location = f"{hub.base}/_downloads/{asset.id}?signature={signature(asset)}"
        return Response(302, b"", {"Location": location})

    def delete_asset(request: Request) -> Response:
        repo = hub.repo(request, "contents", "write")
        asset = find_asset(repo, request.params["id"])
        _release_of(repo, asset).assets.remove(asset)
        return Response(204)

    def download(request: Request) -> Response:
        """The signed address is its own credential (a token beside it is ignored here)."""
        for repo in list(hub.world.repositories.values()):
            for release in repo.releases:
                for asset in release.assets:
                    if str(asset.id) == request.params["id"] and hmac.compare_digest(
                            signature(asset), request.arg("signature") or ""):
                        return Response(200, asset.path.read_bytes(), {"Content-Type": OCTET})
        return Response(403, b"<Error><Code>AccessDenied</Code></Error>", {"Content-Type": "application/xml"})

    def browser_download(request: Request) -> Response:
        repo = hub.repo(request, "contents", "read")
        release = next((r for r in repo.releases if r.tag == request.params["tag"]), None)
        asset = next((a for a in (release.assets if release else []) if a.name == request.params["name"]), None)
        if asset is None:
            raise Refused(404, "Not Found")
        return Response(302, b"", {"Location": f"{hub.base}/_downloads/{asset.id}?signature={signature(asset)}"})

    return [
        route("GET", repo_path + "/releases", list_releases),
        route("POST", repo_path + "/releases", create),
        route("GET", repo_path + "/releases/latest", latest),
        route("GET", repo_path + "/releases/tags/{tag*}", get_by_tag),
        route("HEAD", repo_path + "/releases/tags/{tag*}", get_by_tag),
        route("GET", repo_path + "/releases/assets/{id}", get_asset),
        route("DELETE", repo_path + "/releases/assets/{id}", delete_asset),
        route("GET", repo_path + "/releases/{id}", get_release),
        route("PATCH", repo_path + "/releases/{id}", update),
        route("DELETE", repo_path + "/releases/{id}", delete),
        route("GET", repo_path + "/releases/{id}/assets", list_assets),
        route("POST", "/api/uploads/repos/{owner}/{repo}/releases/{id}/assets", upload),
        route("GET", "/_downloads/{id}", download),
        route("GET", "/{owner}/{repo}/releases/download/{tag}/{name}", browser_download),
    ]


def _release_of(repo: Repository, asset: Asset) -> Release:
    return next(r for r in repo.releases if asset in r.assets)
