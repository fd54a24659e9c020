"""The deploy-pages stand-in's step (action.yml says from what it is written): create the deployment,
poll its status until it succeeds, print `page_url=` for $GITHUB_OUTPUT.

Sources: GitHub's REST reference, https://docs.github.com/en/rest/pages/pages#create-a-github-pages-deployment
and #get-the-status-of-a-github-pages-deployment; https://github.com/actions/deploy-pages/blob/
cd2ce8fcbc39b97be8ca5fce6e763baed58fa128/action.yml (inputs token, timeout, artifact_name; output page_url).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# act copies each action's folder alone: the shared client is found where testing/act.py says.
sys.path.insert(0, str(Path(os.environ["TAKEDOWNWATCH_ACTION_STANDINS"]) / "upload-artifact"))
import artifacts  # noqa: E402  (the stand-ins' shared artifact client)

FAILED = {"deployment_failed", "deployment_perms_error", "deployment_content_failed", "deployment_lost",
          "deployment_cancelled", "syncing_files_failed"}


def api(method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(os.environ["GITHUB_API_URL"].rstrip("/") + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": "Bearer " + os.environ["TOKEN"],
                                              "Accept": "application/vnd.github+json",
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        raise SystemExit(f"::error::{method} {path}: HTTP {error.code} {error.read()[:300]!r}") from None


def main() -> int:
    name = os.environ["NAME"]
    if not artifacts.twirp("ListArtifacts", {"name_filter": name}).get("artifacts"):
        print(f"::error::Fetching artifact metadata failed: no artifact named {name}", file=sys.stderr)
        return 1
    url = artifacts.twirp("GetSignedArtifactURL", {"name": name})["signedUrl"]
    repository = os.environ["GITHUB_REPOSITORY"]
    created = api("POST", f"/repos/{repository}/pages/deployments",
                  {"artifact_url": url, "pages_build_version": os.environ["GITHUB_SHA"], "oidc_token": ""})
    deadline = time.monotonic() + int(os.environ.get("TIMEOUT_MS") or 600000) / 1000
    while True:
        status = api("GET", f"/repos/{repository}/pages/deployments/{created['id']}").get("status")
        if status == "succeed":
            break
        if status in FAILED or time.monotonic() > deadline:
            print(f"::error::Deployment failed: {status}", file=sys.stderr)
            return 1
        time.sleep(1)
    print(f"page_url={created.get('page_url', '')}")
    print(f"Reported success! {created.get('page_url', '')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
