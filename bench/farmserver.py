"""A loopback farm in its own process, so the servers' timestamps are not
perturbed by the crawler's threads (one interpreter, one GIL, would be).

Run: python bench/farmserver.py HOSTS PAGES OUT.json [REDIRECTS] [retries]
Prints one JSON line with the hosts' base addresses, then serves until
stdin closes, then writes every host's arrival log to OUT.json. With
REDIRECTS, host 0's first pages redirect to host 1, so a crawler that paces a redirect on the
old host's slot shows up as short gaps on host 1 (scrapy/scrapy issue 2141). With `retries`,
every host answers some pages with server errors and others with 404 or 410 (RETRY_PAGES). With
`articles`, every page is a real article (ARTICLE: ukbdnews.com's, 83 kB), whose extraction costs
real CPU time (bench/write_lock.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.setswitchinterval(0.0005)

from testing.farm import Farm, Reply, redirect, sequence  # noqa: E402

PAGE = Reply(200, b"<!doctype html><html><head><title>p</title></head><body><p>page</p></body></html>")
ARTICLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "articles" / \
    "ukbdnews.com__2020-08_23646__trafilatura-tests-eval.html"
ROBOTS = Reply(200, b"User-agent: *\nDisallow: /private\n", content_type="text/plain")
ERROR = Reply(503, b"busy", content_type="text/plain")
# The retry farm: page number -> what it answers. Server errors twice then the page,
# server errors for ever (three attempts, then given up), and answers never retried.
RETRY_PAGES = {0: "503x2", 2: "404", 3: "503", 5: "410", 6: "503x2", 9: "503", 11: "404", 14: "410"}


def retry_route(kind: str):
    if kind == "503x2":
        return sequence([ERROR, ERROR, PAGE])
    if kind == "503":
        return ERROR
    return Reply(int(kind), b"no", content_type="text/plain")


def build(farm: Farm, hosts: int, redirected: int, retries: bool = False, page: Reply = PAGE) -> list:
    """Return the hosts; host 0's first `redirected` pages redirect to host 1."""
    made = [farm.add({"/robots.txt": ROBOTS, "/p/*": page}) for _ in range(hosts)]
    for i in range(redirected):
        made[0].routes[f"/p/{i}"] = redirect(made[1].url(f"/moved/{i}"))
        made[1].routes[f"/moved/{i}"] = PAGE
    if retries:
        for host in made:
            for page, kind in RETRY_PAGES.items():
                host.routes[f"/p/{page}"] = retry_route(kind)
    return made


def main() -> None:
    count, out = int(sys.argv[1]), Path(sys.argv[3])
    redirected = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    retries = len(sys.argv) > 5 and sys.argv[5] == "retries"
    page = Reply(200, ARTICLE.read_bytes()) if len(sys.argv) > 5 and sys.argv[5] == "articles" else PAGE
    with Farm() as farm:
        hosts = build(farm, count, redirected, retries, page)
        print(json.dumps([h.base for h in hosts]), flush=True)
        sys.stdin.read()  # serve until the benchmark closes our stdin
        log = {h.base: [(s.at, s.path) for s in h.seen] for h in hosts}
    out.write_text(json.dumps(log))


if __name__ == "__main__":
    main()
