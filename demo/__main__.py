"""The offline demo: the whole lifecycle against loopback replicas of real outlets.

`make demo` runs this. Loopback hosts serve replicas built from the real
files under tests/data/ (robots.txt, a homepage with a feed link, the
outlets' real feeds with their dates moved, and one article page per feed
item made from the item's own words), plus one host behind a Cloudflare
challenge, one whose robots.txt answers 503, and one that never answers.
Then the real commands run, exactly as an operator runs them, into
demo-output/, over a day of simulated time (demo/lifecycle.py): collection
runs with revisits in which articles change, one disappears and one moves,
the archive job against a fake Save Page Now, `export new` after each run,
`export verify`, the review list, and the site. It ends with a short tour.
Nothing leaves this machine.

    python -m demo            the whole demo (about two minutes)
    python -m demo --small    a reduced one: four articles an outlet, no trouble hosts, no 24-hour checks
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from demo.lifecycle import run_demo
from demo.tour import tour

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo", description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a reduced demo (the test runs it)")
    parser.add_argument("--out", type=Path, default=ROOT / "demo-output", help="folder written (emptied first)")
    args = parser.parse_args(argv)
    demo = run_demo(args.out.resolve(), small=args.small)
    print(tour(demo), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
