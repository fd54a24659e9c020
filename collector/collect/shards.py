"""Which outlets a shard collects: rendezvous (highest-random-weight) hashing of registrable domains.

Shard K of N takes the outlets whose registrable domain weighs most on shard K
(Thaler and Ravishankar, "Using name-based mappings to increase hit rates",
IEEE/ACM ToN 6(1), 1998). Going from N to N+1 shards moves only the outlets
whose domain now weighs most on the new shard: about 1/(N+1) of them, and
none between the old shards. Outlets on one registrable domain (and so on one
host) always share a shard, so each host is paced by one process.
"""

from __future__ import annotations

import hashlib
import re

from collector.errors import BadArgument
from collector.urls import host_of, registrable_domain

_SHARD = re.compile(r"\A\s*(\d+)\s*/\s*(\d+)\s*\Z")


def parse_shard(text: str) -> tuple[int, int]:
    """Return (K, N) from 'K/N' with 1 <= K <= N; refuse anything else."""
    match = _SHARD.match(text or "")
    if not match:
        raise BadArgument(f"{text!r} is not K/N (for example 2/4)", option="--shard")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= k <= n:
        raise BadArgument(f"{text!r}: K must be between 1 and N", option="--shard")
    return k, n


def weight(domain: str, shard: int) -> int:
    """Return the rendezvous weight of a domain on a shard (the first 8 bytes of a SHA-256)."""
    return int.from_bytes(hashlib.sha256(f"{domain}\x00{shard}".encode("utf-8")).digest()[:8], "big")


def shard_of(domain: str, shards: int) -> int:
    """Return the shard (1..shards) that a registrable domain falls to."""
    return max(range(1, shards + 1), key=lambda shard: (weight(domain, shard), -shard))


def outlet_domain(homepage: str) -> str:
    """Return the registrable domain an outlet is sharded by: its homepage's."""
    return registrable_domain(host_of(homepage))


def in_shard(homepage: str, shard: tuple[int, int]) -> bool:
    """Return True when the outlet with this homepage belongs to shard (K, N)."""
    k, n = shard
    return n == 1 or shard_of(outlet_domain(homepage), n) == k
