"""A loopback fake of GitHub release-asset downloads, where the record's WARC files are published.

Behaviour, and where it comes from:

* `GET /<owner>/<repo>/releases/download/<tag>/<name>` (an asset's
  browser_download_url) answers 302 Found with a Location on another host, a
  signed storage address (GitHub's REST documentation, "Releases: Get a
  release asset", and the `curl -I .../releases/download/...` transcript in
  gist dimkir/4a536581: `HTTP/1.1 302 Found`, `Location:
  https://github-production-release-asset-....s3.amazonaws.com/...?X-Amz-...`;
  google/go-github commit a4d01b4 follows that redirect with a client of its
  own). An unknown asset is 404 Not Found. These addresses work without
  credentials only for public repositories (Velopack's GithubReleaseAsset
  documentation of BrowserDownloadUrl).
* The storage host honours byte ranges as RFC 9110 section 14 defines them:
  `Range: bytes=a-b` gives 206 Partial Content with `Content-Range: bytes
  a-b/size` (b clamped to the last byte), a range starting past the end gives
  416 with `Content-Range: bytes */size`, and no Range header gives 200 with
  the whole file.

`ignore_ranges=True` makes the storage answer 200 with the whole file to
every request, as a server that does not support ranges may (RFC 9110
section 14.2: a server may ignore Range).
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import quote

from testing.farm import Farm, Handler, Reply

_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


class ReleaseAssets:
    """A download host and a storage host serving the files given as {(tag, name): bytes}."""

    def __init__(self, farm: Farm, owner: str = "activaterights", repo: str = "takedownwatch-record",
                 ignore_ranges: bool = False):
        self.files: dict[tuple[str, str], bytes] = {}
        self.ignore_ranges = ignore_ranges
        self.storage = farm.add({"/storage/*": self._storage})
        self.prefix = f"/{owner}/{repo}/releases/download/"
        self.download = farm.add({self.prefix + "*": self._redirect})

    @property
    def base_url(self) -> str:
        """Return the base of every asset address (what the plugin setting releases_url names)."""
        return self.download.base + self.prefix.rstrip("/")

    def publish(self, tag: str, name: str, data: bytes) -> None:
        self.files[(tag, name)] = data

    def _key(self, digest: str) -> tuple[str, str] | None:
        return next((k for k, v in self.files.items() if hashlib.sha256(v).hexdigest() == digest), None)

    def _redirect(self, handler: Handler) -> Reply:
        tag, _, name = handler.path[len(self.prefix):].partition("/")
        data = next((v for (t, n), v in self.files.items() if quote(t, safe="") == tag and quote(n, safe="") == name),
                    None)
        if data is None:
            return Reply(404, b"Not Found", content_type="text/plain")
        signed = f"/storage/{hashlib.sha256(data).hexdigest()}?X-Amz-Expires=300&X-Amz-Signature=fake"
        return Reply(302, b"", {"Location": self.storage.url(signed)}, content_type="text/html; charset=utf-8")

    def _storage(self, handler: Handler) -> Reply:
        key = self._key(handler.path.split("/")[2].split("?")[0])
        if key is None:
            return Reply(404, b"NoSuchKey", content_type="application/xml")
        data = self.files[key]
        found = _RANGE.match(handler.headers.get("Range", "").strip())
        if self.ignore_ranges or not found:
            return Reply(200, data, content_type="application/octet-stream")
        first = int(found.group(1))
        last = min(int(found.group(2)) if found.group(2) else len(data) - 1, len(data) - 1)
        if first >= len(data) or last < first:
            return Reply(416, b"", {"Content-Range": f"bytes */{len(data)}"}, content_type=None)
        return Reply(206, data[first:last + 1], {"Content-Range": f"bytes {first}-{last}/{len(data)}"},
                     content_type="application/octet-stream")
