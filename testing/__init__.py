"""Loopback stand-ins for the world: farms of outlets, replicas of real ones, a fake Save Page Now, hostile servers.

Used by the tests, the demo and the benchmarks; never by the collector. Each fake cites the
documentation or real client its behaviour comes from, in its own module: Save Page Now
(fake_spn.py: the "Save Page Now 2 Public API Docs Draft", Google Doc
1Nsv52MvSjbLb2PCpHlat0gkzw0EvtSgpKHu4mk0MnrA, and the clients palewire/savepagenow and
overcast07's spn.sh, as shared/research/spn2-service.md gives them), RFC 3161 time-stamping (fake_tsa.py:
https://www.rfc-editor.org/rfc/rfc3161 and OpenSSL's openssl-ts(1)), GitHub's release assets and REST
API (release_store.py, fake_github.py: https://docs.github.com/en/rest/releases/assets), the outlets
(farm.py, replica.py: the real feeds, robots.txt files and pages under tests/data/, copied from
shared/corpus/).
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"  # real feeds, robots.txt files and pages the fakes serve
