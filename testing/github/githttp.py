"""git over smart HTTP for every repository the server holds, through git's own CGI, git-http-backend
(git-scm.com/docs/git-http-backend), at https://HOST/OWNER/NAME.git and https://HOST/OWNER/NAME.

Authentication as GitHub does it (docs.github.com/en/get-started/git-basics/about-remote-repositories,
"Cloning with HTTPS URLs"; actions/checkout sends `AUTHORIZATION: basic base64(x-access-token:TOKEN)`
as http.extraheader): HTTP Basic, any user name, the token as password (a Bearer header is taken too).

* no credentials, for a repository that is not public: 401 with `WWW-Authenticate: Basic
  realm="GitHub"`, so git asks its credential helpers and then fails "Authentication failed";
* an unknown token: 401 as well (GitHub: "Invalid username or token");
* a token that may not see the repository: 404 ("remote: Repository not found.");
* a push (service git-receive-pack) without contents write: 403 ("Permission to OWNER/NAME.git denied").

Protocol v2 (the `Git-Protocol` header, passed to the CGI as GIT_PROTOCOL) and partial clone
(--filter=blob:none: uploadpack.allowFilter is set in every repository) work as on github.com.
"""

from __future__ import annotations

import os
import re
import subprocess

from testing.github.access import Refused
from testing.github.http import Request, Response, route
from testing.github.hub import Hub

BACKEND = "/usr/lib/git-core/git-http-backend"
GIT_PATH = re.compile(r"info/refs|git-upload-pack|git-receive-pack|HEAD|objects/.+")


def _backend() -> list[str]:
    if os.path.exists(BACKEND):
        return [BACKEND]
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True).stdout.strip()
    return [os.path.join(exec_path, "git-http-backend")]


def routes(hub: Hub) -> list:
    backend = _backend()

    def serve(request: Request) -> Response:
        name = request.params["repo"]
        if not GIT_PATH.fullmatch(request.params["rest"]):
            return Response(404, b"Not Found\n", {"Content-Type": "text/plain"})
        repo = hub.world.repository(f"{request.params['owner']}/{name}")
        pushing = request.arg("service") == "git-receive-pack" or request.params["rest"] == "git-receive-pack"
        try:
            token = hub.caller(request)
            if repo is None:
                raise Refused(404, "Not Found")
            if token is None and repo.visibility != "public":
                raise Refused(401, "Requires authentication")
            hub.keys.check(token, repo.full_name, repo.visibility, "contents", "write" if pushing else "read")
        except Refused as refused:
            return _refused(refused, request, pushing)
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": str(repo.git.parent.parent),
            "GIT_HTTP_EXPORT_ALL": "1", "REQUEST_METHOD": request.method, "QUERY_STRING": _query(request),
            "PATH_INFO": f"/{repo.git.parent.name}/{repo.git.name}/{request.params['rest']}",
            "CONTENT_TYPE": request.headers.get("content-type", ""), "CONTENT_LENGTH": str(len(request.body)),
            "REMOTE_USER": token.login if token else "", "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": request.headers.get("git-protocol", ""),
            "HTTP_CONTENT_ENCODING": request.headers.get("content-encoding", ""),
        }
        done = subprocess.run(backend, input=request.body, env=environment, capture_output=True)
        head, _, body = done.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, body = done.stdout.partition(b"\n\n")
        status, headers = 200, {}
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers[key.strip()] = value.strip()
        return Response(status, body, headers)

    return [route("*", "/{owner}/{repo}/{rest*}", serve)]


def _query(request: Request) -> str:
    return "&".join(f"{k}={v}" for k, values in request.query.items() for v in values)


def _refused(refused: Refused, request: Request, pushing: bool) -> Response:
    name = f"{request.params['owner']}/{request.params['repo']}"
    if refused.status == 401:
        return Response(401, b"Invalid username or token. Password authentication is not supported for Git "
                             b"operations.\n", {"WWW-Authenticate": 'Basic realm="GitHub"',
                                                "Content-Type": "text/plain"})
    if refused.status == 403 or (pushing and refused.status != 404):
        message = f"Permission to {name.removesuffix('.git')}.git denied.\n"
        return Response(403, message.encode(), {"Content-Type": "text/plain"})
    return Response(404, b"Repository not found.\n", {"Content-Type": "text/plain"})
