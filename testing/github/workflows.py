"""Workflow dispatches and GitHub Pages deployments.

* POST /repos/{o}/{r}/actions/workflows/{workflow_id}/dispatches {ref, inputs}: 204, recorded in the
  repository's `dispatches` (docs.github.com/en/rest/actions/workflows#create-a-workflow-dispatch-event:
  needs actions write; 404 when the workflow file is not in the repository at `ref`, 422 when it has
  no `workflow_dispatch` trigger). Nothing runs: a test reads what was asked.
* Pages (docs.github.com/en/rest/pages/pages#create-a-github-pages-deployment): the real deploy-pages
  action posts the id of the `github-pages` artifact (a tar of the site, made by upload-pages-artifact)
  with an OIDC token. Here the site's tar (gzip or not) is first handed over with
  POST https://HOST/_artifacts/{o}/{r}?name=github-pages (a token with pages or actions write on the
  repository): 201 {"id": N, "name": ..., "size_in_bytes": ...}. Then
  POST /api/v3/repos/{o}/{r}/pages/deployments {artifact_id: N, pages_build_version, oidc_token,
  environment} (needs pages write): 200 {id, status_url, page_url}; the tar is unpacked as the
  deployed site, served at https://HOST/_pages/{o}/{r}/PATH and kept in the repository's
  `deployments`. GET .../pages/deployments/{id} answers {"status": "succeed"}; GET /repos/{o}/{r}/pages
  the site (build_type "workflow").
"""

from __future__ import annotations

import io
import mimetypes
import shutil
import subprocess
import tarfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from testing.github.access import Refused
from testing.github.http import Request, Response, answer, route
from testing.github.hub import Hub
from testing.github.state import Repository, now_iso


def routes(hub: Hub) -> list:
    repo_path = "/api/v3/repos/{owner}/{repo}"
    artifacts: dict[int, dict] = {}

    def dispatch(request: Request) -> Response:
        repo = hub.repo(request, "actions", "write")
        body, workflow = request.json(), request.params["workflow"]
        ref = body.get("ref")
        if not ref:
            raise Refused(422, "Invalid request. \"ref\" wasn't supplied.")
        text = subprocess.run(["git", "show", f"{ref}:.github/workflows/{workflow}"], cwd=repo.git,
                              capture_output=True, text=True)
        if text.returncode != 0:
            raise Refused(404, "Not Found")
        if "workflow_dispatch" not in text.stdout:
            raise Refused(422, "Workflow does not have 'workflow_dispatch' trigger")
        repo.dispatches.append({"workflow": workflow, "ref": ref, "inputs": body.get("inputs") or {},
                                "at": now_iso()})
        return Response(204)

    def hand_over(request: Request) -> Response:
        repo = hub.repo(request, "pages", "read")
        token = hub.caller(request)
        if token is None or not (token.kind == "user" or max(token.level("pages"), token.level("actions")) >= 2):
            raise Refused(403, "Resource not accessible by integration")
        artifact = {"id": next(hub.world.ids), "name": request.arg("name") or "github-pages",
                    "size_in_bytes": len(request.body), "repository": repo.key}
        path = hub.world.files("artifacts") / str(artifact["id"])
        path.write_bytes(request.body)
        artifacts[artifact["id"]] = {**artifact, "path": path}
        return answer(artifact, 201)

    def deploy(request: Request) -> Response:
        repo = hub.repo(request, "pages", "write")
        body = request.json()
        if body.get("artifact_url"):
            # "The URL of an artifact that contains the .zip or .tar of static assets to deploy": the
            # workflow run's artifact (a zip holding upload-pages-artifact's artifact.tar), fetched here.
            artifact = {"id": None, "data": _artifact_tar(body["artifact_url"])}
        else:
            artifact = artifacts.get(body.get("artifact_id"))
            if artifact is None or artifact["repository"] != repo.key:
                raise Refused(404, "Not Found")
            artifact = {**artifact, "data": artifact["path"].read_bytes()}
        deployment = {"id": next(hub.world.ids), "artifact_id": artifact["id"],
                      "pages_build_version": body.get("pages_build_version"),
                      "environment": body.get("environment") or "github-pages",
                      "oidc_token": bool(body.get("oidc_token")), "at": now_iso()}
        site = hub.world.files("pages", repo.key.replace("/", "__"), str(deployment["id"]))
        _unpack(artifact["data"], site)
        deployment["site"] = str(site)
        repo.deployments.append(deployment)
        return answer({"id": deployment["id"], "page_url": page_url(repo),
                       "status_url": f"{hub.api}/repos/{repo.full_name}/pages/deployments/{deployment['id']}"})

    def status(request: Request) -> Response:
        repo = hub.repo(request, "pages", "read")
        if not any(str(d["id"]) == request.params["id"] for d in repo.deployments):
            raise Refused(404, "Not Found")
        return answer({"status": "succeed"})

    def pages_site(request: Request) -> Response:
        repo = hub.repo(request, "pages", "read")
        if not repo.deployments:
            raise Refused(404, "Not Found")
        return answer({"url": f"{hub.api}/repos/{repo.full_name}/pages", "status": "built",
                       "html_url": page_url(repo), "build_type": "workflow", "public": True})

    def page_url(repo: Repository) -> str:
        return f"{hub.base}/_pages/{repo.full_name}/"

    def serve(request: Request) -> Response:
        repo = hub.world.repository(f"{request.params['owner']}/{request.params['repo']}")
        if repo is None or not repo.deployments:
            return Response(404, b"Site not found\n", {"Content-Type": "text/plain"})
        site = Path(repo.deployments[-1]["site"]).resolve()
        path = (site / (request.params.get("path") or "").strip("/")).resolve()
        if path.is_dir():
            path = path / "index.html"
        if not path.is_relative_to(site) or not path.is_file():
            return Response(404, b"File not found\n", {"Content-Type": "text/plain"})
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return Response(200, path.read_bytes(), {"Content-Type": kind})

    return [
        route("POST", repo_path + "/actions/workflows/{workflow}/dispatches", dispatch),
        route("POST", "/_artifacts/{owner}/{repo}", hand_over),
        route("POST", repo_path + "/pages/deployments", deploy),
        route("GET", repo_path + "/pages/deployments/{id}", status),
        route("GET", repo_path + "/pages", pages_site),
        route("GET", "/_pages/{owner}/{repo}/{path*}", serve),
        route("GET", "/_pages/{owner}/{repo}/", serve),
    ]


def _artifact_tar(url: str) -> bytes:
    """Return the site's tar behind an artifact URL (a loopback artifact server's signed URL only)."""
    if urllib.parse.urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1"):
        raise Refused(422, "artifact_url must be a loopback address here")
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            data = answer.read()
    except OSError as exc:
        raise Refused(422, f"could not fetch artifact_url: {exc}") from None
    if data[:2] == b"PK":  # a zip, as an artifact is downloaded: the tar inside it
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            tars = [n for n in archive.namelist() if n.endswith(".tar")]
            if len(tars) != 1:
                raise Refused(422, f"the artifact holds {len(tars)} tar files, not one")
            data = archive.read(tars[0])
    return data


def _unpack(data: bytes, folder) -> None:
    """Unpack a site's tar (plain or gzip), refusing members that would land outside the folder."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        archive.extractall(folder, filter="data")
