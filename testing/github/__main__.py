"""Run the loopback GitHub until killed: `python -m testing.github serve --state DIR [--port 0]`.

Prints one line of JSON first: {"base", "api_url", "host", "ca_file", "env", "made"} ("made": the
tokens and installations the --setup document asked for). Then serves until SIGTERM or SIGINT.

What it serves follows GitHub's REST reference, https://docs.github.com/en/rest, and gh's own requests
(https://github.com/cli/cli at v2.23.0); each route module of testing/github cites its pages, and
docs/ghserver.md lists what is served and what is not.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from testing.github.cache import BUDGET
from testing.github.server import LoopbackGitHub


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testing.github")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve until killed")
    serve.add_argument("--state", type=Path, required=True, help="folder for repositories, assets, caches, CA")
    serve.add_argument("--address", default="127.0.0.1", help="loopback address to listen on")
    serve.add_argument("--port", type=int, default=0, help="port (0: any free one; 443 drops it from URLs)")
    serve.add_argument("--setup", type=Path, help="JSON document of repositories, users, apps, tokens")
    serve.add_argument("--cache-budget", type=int, default=BUDGET, help="bytes of cache per repository")
    serve.add_argument("--extra-ca", type=Path, action="append", default=[], help="another CA for the bundle")
    arguments = parser.parse_args(argv)
    github = LoopbackGitHub(arguments.state, arguments.address, arguments.port, arguments.cache_budget,
                            arguments.extra_ca)
    made = github.apply(json.loads(arguments.setup.read_text())) if arguments.setup else {}
    stop = threading.Event()
    for sign in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sign, lambda *_: stop.set())
    github.start()
    print(json.dumps({"base": github.base, "api_url": github.api_url, "host": github.host,
                      "ca_file": str(github.ca_bundle), "env": github.env(), "made": made}), flush=True)
    stop.wait()
    github.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
