"""The artifact stand-ins' steps (upload-artifact, download-artifact, upload-pages-artifact, deploy-pages).

The artifact service is the one the runner names in $ACTIONS_RESULTS_URL (under act, act's own artifact
server, --artifact-server-path), spoken in the v4 protocol (Twirp JSON, `Authorization: Bearer
$ACTIONS_RUNTIME_TOKEN`) that actions/upload-artifact@b7c566a (v6.0.0) and actions/download-artifact@37930b1
(v7.0.0) use, as nektos/act pkg/artifacts/artifacts_v4.go documents it:
  CreateArtifact {workflow_run_backend_id, workflow_job_run_backend_id, name, version: 4} -> signedUploadUrl;
  PUT signedUploadUrl&comp=block (the zip), &comp=blocklist; FinalizeArtifact {.., name, size, hash};
  ListArtifacts {.., name_filter}; GetSignedArtifactURL {.., name} -> signedUrl; GET it: the zip.
The run and job ids are the runtime token's `scp` claim, `Actions.Results:RUN:JOB` (how the toolkit's
@actions/artifact reads them). The artifact is a zip of the files, named relative to the folder the
`path` input names (a single file: its name), as the upload-artifact README says.

  python3 artifacts.py upload NAME PATH [if-no-files-found]   (prints artifact-id=, artifact-digest=)
  python3 artifacts.py download NAME DEST

Sources: https://github.com/nektos/act/blob/master/pkg/artifacts/artifacts_v4.go (the server act runs);
the client the real actions use, https://github.com/actions/toolkit/tree/main/packages/artifact
(src/internal/shared/artifact-twirp-client.ts, util.ts getBackendIdsFromToken); the actions' own
https://github.com/actions/upload-artifact/blob/b7c566a772e6b6bfb58ed0dc250532a479d7789f/README.md.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import io
import json
import os
import sys
import urllib.request
import zipfile
from pathlib import Path

SERVICE = "twirp/github.actions.results.api.v1.ArtifactService/"


def backend_ids() -> dict:
    claims = os.environ["ACTIONS_RUNTIME_TOKEN"].split(".")[1]
    scope = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))["scp"]
    run, job = next(s for s in scope.split() if s.startswith("Actions.Results:")).split(":")[1:3]
    return {"workflow_run_backend_id": run, "workflow_job_run_backend_id": job}


def twirp(method: str, body: dict) -> dict:
    request = urllib.request.Request(os.environ["ACTIONS_RESULTS_URL"].rstrip("/") + "/" + SERVICE + method,
                                     data=json.dumps({**backend_ids(), **body}).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": "Bearer " + os.environ["ACTIONS_RUNTIME_TOKEN"]})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read() or b"{}")


def put(url: str, data: bytes) -> None:
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method="PUT"), timeout=300):
        pass


def upload(name: str, path: str, if_no_files_found: str = "warn") -> int:
    pattern = Path(os.environ.get("GITHUB_WORKSPACE", ".")) / path
    files = [Path(f) for f in glob.glob(str(pattern), recursive=True)]
    files = [f for f in files for f in ([f] if f.is_file() else sorted(p for p in f.rglob("*") if p.is_file()))]
    if not files:
        message = f"No files were found with the provided path: {path}. No artifacts will be uploaded."
        print(("::error::" if if_no_files_found == "error" else "::warning::") + message)
        return 1 if if_no_files_found == "error" else 0
    root = pattern if pattern.is_dir() else pattern.parent
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in files:
            archive.write(file, file.relative_to(root).as_posix())
    data = buffer.getvalue()
    url = twirp("CreateArtifact", {"name": name, "version": 4})["signedUploadUrl"]
    put(url + "&comp=block", data)
    put(url + "&comp=blocklist", b"")
    digest = hashlib.sha256(data).hexdigest()
    done = twirp("FinalizeArtifact", {"name": name, "size": str(len(data)), "hash": "sha256:" + digest})
    print(f"artifact-id={done.get('artifactId', '')}\nartifact-digest={digest}")
    print(f"Artifact {name} ({len(files)} files, {len(data)} bytes) uploaded", file=sys.stderr)
    return 0


def fetch(name: str) -> bytes:
    listed = twirp("ListArtifacts", {"name_filter": name}).get("artifacts", [])
    if not listed:
        raise SystemExit(f"::error::Unable to download artifact(s): Artifact not found for name: {name}")
    url = twirp("GetSignedArtifactURL", {"name": name})["signedUrl"]
    with urllib.request.urlopen(url, timeout=300) as answer:
        return answer.read()


def download(name: str, dest: str) -> int:
    target = Path(os.environ.get("GITHUB_WORKSPACE", ".")) / dest
    target.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(fetch(name))) as archive:
        archive.extractall(target)
    print(f"Artifact {name} downloaded to {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    verb, *rest = sys.argv[1:]
    sys.exit(upload(*rest) if verb == "upload" else download(*rest))
