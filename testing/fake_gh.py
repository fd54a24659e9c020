"""A stand-in for the GitHub CLI's `gh release` commands that .github/scripts/publish_warc.sh runs.

Run as a script (`python3 -S testing/fake_gh.py release ...`, standard library
only, so it starts in milliseconds), it does what the real `gh` does
(cli.github.com/manual/gh_release_view, gh_release_create, gh_release_upload)
against the REST API at $GH_API (testing/release_store.py on loopback,
https://api.github.com/repos/OWNER/REPO for the real one) with $GH_TOKEN:

  gh release view TAG                           exit 0 when the release exists, 1 when not
  gh release view TAG --json assets --jq '.assets[].name'   the assets' names, one a line
  gh release create TAG [--title T] [--notes N] POST {repo}/releases
  gh release upload TAG FILE                    POST the file to the release's upload_url
  gh api repos/OWNER/REPO [--jq .FIELD]          GET the repository (cli.github.com/manual/gh_api): the
                                                field, or the JSON; a 404 is `gh: Not Found (HTTP 404)`
                                                on standard error, as gh reports it

Any other command or a refused request exits 1 with the answer on standard error, as gh does.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote


def _call(method: str, url: str, body: bytes | None = None, content_type: str = "application/json"):
    request = urllib.request.Request(url, data=body, method=method)
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("Authorization", f"Bearer {os.environ.get('GH_TOKEN', '')}")
    if body is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def _release(api: str, tag: str):
    status, answer = _call("GET", f"{api}/releases/tags/{quote(tag, safe='')}")
    return answer if status == 200 else None


def _api_get(api: str, argv: list[str]) -> int:
    """`gh api repos/OWNER/REPO [--jq .FIELD]`: the repository, from the API root $GH_API names."""
    root = api[:api.index("/repos/")] if "/repos/" in api else api
    status, answer = _call("GET", f"{root}/{argv[1].lstrip('/')}")
    if status != 200:
        print(f"gh: {'Not Found' if status == 404 else 'error'} (HTTP {status})", file=sys.stderr)
        return 1
    field = argv[argv.index("--jq") + 1].lstrip(".") if "--jq" in argv else None
    print(answer[field] if field else json.dumps(answer))
    return 0


def main(argv: list[str]) -> int:
    api = os.environ["GH_API"].rstrip("/")
    if argv[:1] == ["api"] and len(argv) > 1:
        return _api_get(api, argv)
    if argv[:2] != ["release", "view"] and argv[:2] != ["release", "create"] and argv[:2] != ["release", "upload"]:
        print(f"fake gh: unsupported command {' '.join(argv)}", file=sys.stderr)
        return 1
    verb, tag, rest = argv[1], argv[2], argv[3:]
    if verb == "view":
        release = _release(api, tag)
        if release is None:
            print("release not found", file=sys.stderr)
            return 1
        if rest[:2] == ["--json", "assets"]:
            print("\n".join(a["name"] for a in release["assets"]))
        return 0
    if verb == "create":
        title = rest[rest.index("--title") + 1] if "--title" in rest else tag
        status, answer = _call("POST", f"{api}/releases", json.dumps({"tag_name": tag, "name": title}).encode())
        if status != 201:
            print(f"HTTP {status}: {answer}", file=sys.stderr)
            return 1
        return 0
    release = _release(api, tag)
    path = Path(rest[0])
    if release is None:
        print("release not found", file=sys.stderr)
        return 1
    upload = release["upload_url"].split("{")[0]
    status, answer = _call("POST", f"{upload}?name={quote(path.name)}", path.read_bytes(), "application/octet-stream")
    if status != 201:
        print(f"HTTP {status}: {answer}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
