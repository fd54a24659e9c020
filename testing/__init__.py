"""Loopback stand-ins for the world: farms of outlets, replicas of real ones, a fake Save Page Now, hostile servers.

Used by the tests, the demo and the benchmarks; never by the collector. Each fake cites the
documentation or real client its behaviour comes from.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"  # real feeds, robots.txt files and pages the fakes serve
