"""Sharded collection at scale: 400 loopback sites crawled by 10 shard processes at once.

Each shard is a real `python -m collector run --shard K/10` process with its own
database; the sites are a farm of 400 hosts on distinct loopback addresses
(127.0.x.y) in a process of its own, each serving robots.txt (naming a news
sitemap), the sitemap and --pages small article pages. Printed per shard:

- its outlets, and the requests of its busiest host;
- its span as the servers saw it (first request to last, over its hosts);
- its pacing bound: interval x (busiest host's requests - 1);
- their ratio (target 1.02 or better) and the smallest gap any one host saw
  (never under the interval);
- the shard process's CPU time (start-up and imports included);
- the least span once the farm's own answer times are counted (a host's next
  request cannot start before its last answer is in: the sum over each host's
  requests but the last of the larger of the interval and that request's
  answer time, the farm's arrival to its last byte written, busiest host of the
  shard), and the span's ratio to it. The farm shares this machine's cores, so
  when they are busy its answers are slow; a real site's are not ours to speed up.

Then the shards' partition is checked (disjoint, every outlet in one); each
shard's database exports its record stream (streams/bench-KofN), and the
streams are merged into one database as `export rebuild` merges them: the
export and merge times and the merged database's size are printed (target:
merge under a minute).

Both ways the matrix can be pictured are run (--mode): `together`, all ten
processes at once on this machine (two cores: CPU-bound), and `alone`, one
shard process at a time against a fresh farm, as each matrix job runs on a
runner of its own. The worst and median ratio of each mode are printed.

Run: python bench/shards.py [--hosts 400] [--shards 10] [--pages 6] [--interval 1.0] [--mode both]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 11, 1, 6, 0, tzinfo=timezone.utc)
PAGE = ('<!doctype html><html lang="bn"><head><meta charset="utf-8"><title>খবর {n}</title></head>'
        '<body><article><h1>খবর {n}</h1><p>{text}</p></article></body></html>')


def serve(hosts: int, pages: int, out: Path) -> None:
    """Run the farm: print the hosts' bases as one JSON line, serve until stdin closes, write arrivals."""
    sys.setswitchinterval(0.0005)
    from testing import replica
    from testing.farm import Farm, Reply

    with Farm() as farm:
        made = []
        for _ in range(hosts):
            host = farm.add()
            entries = [(host.url(f"/p/{n}"), NOW - timedelta(hours=1)) for n in range(pages)]
            host.routes.update({
                "/robots.txt": replica.robots([host.url("/news.xml")]),
                "/news.xml": Reply(200, replica.news_sitemap(entries), content_type="application/xml"),
                "/p/*": lambda handler: Reply(200, PAGE.format(n=handler.path, text="সংবাদ। " * 60).encode()),
            })
            made.append(host)
        print(json.dumps([h.base for h in made]), flush=True)
        sys.stdin.read()
        log = {h.base: [(s.at, s.answered) for s in h.seen] for h in made}
    out.write_text(json.dumps(log))


def registry(bases: list[str]) -> str:
    lines = ['[groups.g]\nname = "G"\nname_bn = "জি"\n']
    for n, base in enumerate(bases):
        lines.append(f'[outlets.o{n}]\nname = "O{n}"\nname_bn = "ও{n}"\nhomepage = "{base}/"\n'
                     f'language = "bn"\ngroup = "g"\n')
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=400)
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument("--pages", type=int, default=6)
    # Below the 2 s floor, as loopback hosts allow (at 2 s the guard refuses loopback addresses).
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--mode", choices=("together", "alone", "both"), default="both",
                        help="together: every shard process at once on this machine; alone: one shard "
                             "process at a time, as each matrix job runs on its own runner; both (default)")
    parser.add_argument("--serve", nargs=2, metavar=("PAGES", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.hosts, int(args.serve[0]), Path(args.serve[1]))
        return
    modes = ("together", "alone") if args.mode == "both" else (args.mode,)
    worst = {}
    for mode in modes:
        work = Path(tempfile.mkdtemp(prefix=f"shards-{mode}-"))
        worst[mode] = crawl(args, work, mode)
        merged_figures(work, args.shards)
    print("; ".join(f"{mode}: worst {w:.4f} ({'met' if w <= 1.02 else 'MISSED'})" for mode, w in worst.items())
          + " (target 1.02)")


def crawl(args, work: Path, mode: str) -> float:
    """Crawl the farm with the shard processes (all at once, or one at a time); print the table, return the worst ratio."""
    from collector.collect.shards import in_shard

    farm = subprocess.Popen([sys.executable, __file__, "--hosts", str(args.hosts), "--serve", str(args.pages),
                             str(work / "arrivals.json")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    bases = json.loads(farm.stdout.readline())
    (work / "outlets.toml").write_text(registry(bases), encoding="utf-8")
    began = time.monotonic()
    at_once = args.shards if mode == "together" else 1
    ks = list(range(1, args.shards + 1))
    cpu: dict[int, float] = {}
    for first in range(0, len(ks), at_once):
        shards = {k: subprocess.Popen(
            [sys.executable, "-m", "collector", "run", "--db", str(work / f"shard{k}.db"),
             "--warc-dir", str(work / f"warc{k}"), "--outlets", str(work / "outlets.toml"),
             "--now", NOW.isoformat(), "--vantage", "bench", "--min-interval", str(args.interval),
             "--shard", f"{k}/{args.shards}", "--stream", f"bench-{k}of{args.shards}"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=(work / f"shard{k}.err").open("wb"))
            for k in ks[first:first + at_once]}
        for k, proc in shards.items():
            # wait4: the shard's own CPU time (user + system), start-up and imports included.
            _pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            cpu[k] = usage.ru_utime + usage.ru_stime
            if proc.returncode:
                sys.exit(f"shard {k} failed: {(work / f'shard{k}.err').read_text()[-2000:]}")
    wall = time.monotonic() - began
    farm.stdin.close()
    farm.wait()
    log = json.loads((work / "arrivals.json").read_text())
    arrivals = {base: sorted(at for at, _answered in seen) for base, seen in log.items()}
    taken = {k: [b for b in bases if in_shard(b + "/", (k, args.shards))] for k in ks}
    assert sorted(sum(taken.values(), [])) == sorted(bases), "shards must partition the outlets"
    how = "all at once" if mode == "together" else "one at a time"
    print(f"{mode}: {args.hosts} hosts, {args.shards} shard processes {how}, {args.pages} pages a host, "
          f"interval {args.interval} s; all shards done in {wall:.1f} s (work folder {work})")
    print(f"{'shard':>5} {'outlets':>7} {'busiest':>7} {'span s':>8} {'bound s':>8} {'ratio':>7} {'min gap s':>9} "
          f"{'cpu s':>6} {'+answers s':>10} {'ratio':>7}")
    ratios, answered_ratios = [], []
    for k, mine in taken.items():
        times = [t for b in mine for t in arrivals[b]]
        if not times:
            sys.exit(f"shard {k} made no request: see the shard databases in {work}")
        busiest = max(len(arrivals[b]) for b in mine)
        span, bound = max(times) - min(times), args.interval * (busiest - 1)
        gaps = [b - a for h in mine for a, b in zip(arrivals[h], arrivals[h][1:])]
        ratio = span / bound if bound else float("nan")
        ratios.append(ratio)
        # The least span once the farm's own answer times are counted: a host's next
        # request cannot go before its last answer is in (one connection per host).
        answered = max(sum(max(args.interval, (done or at) - at) for at, done in sorted(log[b])[:-1]) for b in mine)
        answered_ratios.append(span / answered if answered else float("nan"))
        print(f"{k:>5} {len(mine):>7} {busiest:>7} {span:>8.2f} {bound:>8.2f} {ratio:>7.4f} {min(gaps):>9.3f} "
              f"{cpu[k]:>6.1f} {answered:>10.2f} {answered_ratios[-1]:>7.4f}")
    worst = max(ratios)
    print(f"{mode}: the shards' CPU time {sum(cpu.values()):.1f} s in all ({os.cpu_count()} cores)")
    print(f"{mode}: worst shard ratio {worst:.4f}, median {statistics.median(ratios):.4f} "
          f"(target 1.02): {'met' if worst <= 1.02 else 'MISSED'}; counting the farm's answer times: "
          f"worst {max(answered_ratios):.4f}, median {statistics.median(answered_ratios):.4f}")
    return worst


def merged_figures(work: Path, shards: int) -> None:
    """Export every shard's stream, merge them into one database, print the times and the size."""
    from collector.record.export import export_new
    from collector.record.merge import rebuild_record
    from collector.record.store import Store
    from collector.record.streams import folder

    began = time.monotonic()
    for k in range(1, shards + 1):
        store = Store(work / f"shard{k}.db")
        export_new(store, folder(work / "record", f"bench-{k}of{shards}"), warc_dir=work / f"warc{k}", now=NOW)
        store.close()
    exported = time.monotonic() - began
    began = time.monotonic()
    counts = rebuild_record([work / "record"], work / "merged.db")
    merged = time.monotonic() - began
    size = (work / "merged.db").stat().st_size
    print(f"{shards} streams exported in {exported:.1f} s; merged into one database in {merged:.1f} s "
          f"(target under 60 s: {'met' if merged < 60 else 'MISSED'}), {size / 2**20:.1f} MiB, "
          f"{counts.get('requests', 0)} requests, {counts.get('snapshots', 0)} snapshots")


if __name__ == "__main__":
    main()
