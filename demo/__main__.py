"""The offline demo: the whole pipeline against loopback replicas of real outlets.

`make demo` runs this. It starts loopback hosts that serve replicas built
from the real files under tests/data/ (robots.txt, a homepage with feed
links, the outlets' real feeds with their dates moved to today, real article
pages), plus one host behind a Cloudflare challenge, one whose robots.txt
answers 503, and one that never answers. It then runs the real commands,
exactly as an operator would, into demo-output/:

    python -m collector run         (collect, at a loopback interval)
    python -m collector archive     (against a fake Save Page Now)
    python -m collector stats
    python -m collector build-site

and prints where everything is. Nothing leaves this machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from testing import replica  # noqa: E402
from testing.fake_spn import FakeSPN  # noqa: E402
from testing.farm import Farm, Reply, stall  # noqa: E402

OUT = ROOT / "demo-output"
INTERVAL = "0.1"  # seconds between requests to one loopback host

FEED_OUTLETS = {  # outlet id: (real feed, feed path, group)
    "prothomalo": ("prothomalo", "/feed/", "bangla-dailies"),
    "jagonews": ("jagonews", "/rss/rss.xml", "bangla-dailies"),
    "ittefaq": ("ittefaq", "/feed/", "bangla-dailies"),
    "banglatribune": ("banglatribune", "/feed/", "portals-and-tv"),
    "ekattor": ("ekattor", "/feed/", "portals-and-tv"),
    "amarbanglabd": ("amarbanglabd", "/feeds", "portals-and-tv"),
    "bd24live": ("bd24live", "/feed/", "others"),
}
TROUBLE = {"challenged": "others", "brokenrobots": "others", "silent": "others"}


def feed_outlet(farm: Farm, outlet: str, path: str, now: datetime):
    host = farm.add()
    page = replica.article_page()
    host.routes.update({
        "/robots.txt": replica.robots(disallow="/private"),
        "/": Reply(200, replica.homepage(path, title=f"{outlet} (replica)")),
        path: Reply(200, replica.shifted_feed(outlet, host.base, now), content_type="application/rss+xml"),
        "/*": replica.article_route(page, host.base),
    })
    return host


def trouble_outlets(farm: Farm) -> dict:
    challenge = (ROOT / "tests" / "data" / "cloudflare" / "challenge-khaborerkagoj.html").read_bytes()
    return {
        "challenged": farm.add({"/*": Reply(403, challenge, {"Server": "cloudflare", "cf-mitigated": "challenge"})}),
        "brokenrobots": farm.add({"/robots.txt": Reply(503), "/*": Reply(200, replica.homepage())}),
        "silent": farm.add({"/*": stall(25)}),
    }


def collector(*args: str, env: dict[str, str] | None = None) -> None:
    command = [sys.executable, "-m", "collector", *args]
    print("\n$ " + " ".join(["python", "-m", "collector", *args]), flush=True)
    subprocess.run(command, cwd=ROOT, check=True, env={**os.environ, **(env or {})})


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir()
    now = datetime.now(timezone.utc)
    started = time.monotonic()
    with Farm() as farm:
        hosts = {oid: feed_outlet(farm, real, path, now) for oid, (real, path, _g) in FEED_OUTLETS.items()}
        hosts.update(trouble_outlets(farm))
        groups: dict[str, list[str]] = {}
        for oid, (_r, _p, group) in FEED_OUTLETS.items():
            groups.setdefault(group, []).append(oid)
        for oid, group in TROUBLE.items():
            groups.setdefault(group, []).append(oid)
        registry = OUT / "outlets.toml"
        registry.write_text(replica.registry_toml(hosts, groups), encoding="utf-8")
        common = ["--db", str(OUT / "demo.db"), "--warc-dir", str(OUT / "warc"), "--outlets", str(registry),
                  "--vantage", "demo-loopback"]
        print(f"{len(hosts)} loopback outlets in {len(groups)} groups; one is behind a Cloudflare challenge, "
              "one has a broken robots.txt, one never answers (its timeouts take about a minute).")
        collector("run", *common, "--min-interval", INTERVAL)
        spn = FakeSPN(farm, polls=1)
        # Save Page Now refuses submissions without keys; the fake takes any key pair.
        collector("archive", *common, "--base-url", spn.base, "--min-interval", INTERVAL, "--poll-seconds", "0.2",
                  "--per-minute", "600", "--limit", "120",
                  env={"IA_ACCESS_KEY": "demo", "IA_SECRET_KEY": "demo-secret"})
    collector("stats", "--db", str(OUT / "demo.db"))
    collector("build-site", "--db", str(OUT / "demo.db"), "--out", str(OUT / "site"))
    warcs = sorted((OUT / "warc").rglob("*.warc.gz"))
    print(f"\nDone in {time.monotonic() - started:.0f} s. Everything is under {OUT.relative_to(ROOT)}/:")
    print(f"  the record     {OUT.relative_to(ROOT)}/demo.db   (make browse DB={OUT.relative_to(ROOT)}/demo.db)")
    print(f"  WARC files     {len(warcs)} under {OUT.relative_to(ROOT)}/warc/")
    print(f"  the site       {OUT.relative_to(ROOT)}/site/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
