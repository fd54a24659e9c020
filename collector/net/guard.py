"""Keeps requests away from addresses a public crawler has no business reaching.

The guard resolves each host once per run (the crawl's DNS cache), judges every
address the name has, and the fetcher then connects to those very addresses
(collector/net/wire.py pins the connection), so a name cannot answer a public
address to the check and a private one to the connect (DNS rebinding): urllib3
would otherwise resolve the name again itself when it opens the connection.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
from typing import Callable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# RFC 6052 2.1: the well-known NAT64 prefix; a NAT64 gateway connects to the IPv4
# address in its last 32 bits. Python calls these addresses global whatever they embed.
NAT64 = ipaddress.ip_network("64:ff9b::/96")
# RFC 8215: the local-use NAT64 prefix, for translators inside one network.
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
# RFC 4291 2.5.5.1: "IPv4-compatible" addresses (deprecated), the IPv4 address last.
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")

Resolver = Callable[..., list]
# Set to "1" only by the Actions scenario (tests/actions), whose outlets, authorities, archive and GitHub all
# listen on 127.0.0.0/8 while the workflows run as written; tests/test_workflows.py fails if a workflow sets it.
LOOPBACK_WORLD = "TAKEDOWNWATCH_LOOPBACK_WORLD"


def loopback_world() -> bool:
    """True when the environment says every service of this run is on loopback (the Actions scenario)."""
    return os.environ.get(LOOPBACK_WORLD) == "1"


class AddressGuard:
    """Resolves each host once per run and says which addresses, if any, it may be reached at.

    Loopback is allowed only in test mode: the tests and the offline demo run
    their outlets on 127.0.0.0/8. Private, link-local, multicast and reserved
    addresses are always refused, and so is an IPv6 address that embeds one
    (NAT64, 6to4, Teredo, IPv4-mapped or -compatible), so a redirect or a DNS
    answer cannot steer the crawler into a private network. A name that does
    not resolve is refused too: nothing is sent to it.
    """

    def __init__(self, allow_loopback: bool = False, resolve: Resolver | None = None):
        # Loopback only, even then: private and other addresses stay refused.
        self.allow_loopback = allow_loopback or loopback_world()
        self._resolve_name = resolve or (lambda *args, **kwargs: socket.getaddrinfo(*args, **kwargs))
        self._cache: dict[str, list[str] | str] = {}
        self._lock = threading.Lock()

    def _resolve(self, host: str) -> list[str] | str:
        """Return the host's addresses in the resolver's order, or why it has none."""
        with self._lock:
            if host in self._cache:
                return self._cache[host]
        try:
            ipaddress.ip_address(host.strip("[]"))
            addresses: list[str] | str = [host.strip("[]")]
        except ValueError:
            try:
                infos = self._resolve_name(host, None, proto=socket.IPPROTO_TCP)
                # The resolver's order is its preference (RFC 6724): kept, each once.
                addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
            except (socket.gaierror, UnicodeError, OSError) as exc:
                addresses = f"cannot resolve {host}: {exc}"
            if not addresses:
                addresses = f"cannot resolve {host}: no address"
        with self._lock:
            self._cache[host] = addresses
        return addresses

    def is_loopback(self, host: str) -> bool:
        """Return True when every address of the host is a loopback address."""
        addresses = self._resolve(host)
        if isinstance(addresses, str) or not addresses:
            return False
        return all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)

    def admit(self, host: str) -> tuple[list[str] | None, tuple[str, str] | None]:
        """Return (the addresses to connect to, None), or (None, (result, why)) when the host is refused."""
        addresses = self._resolve(host)
        if isinstance(addresses, str):
            return None, ("connection_error", f"not sent: {addresses}")
        for text in addresses:
            why = self._refusal(ipaddress.ip_address(text.split("%")[0]))
            if why:
                return None, ("blocked_address", f"{host} resolves to {why} {text}")
        return addresses, None

    def check(self, host: str) -> str | None:
        """Return why the host must not be contacted, or None when it may be."""
        _addresses, refusal = self.admit(host)
        return refusal[1] if refusal else None

    def _refusal(self, address: IPAddress) -> str | None:
        """Return what makes an address one we never contact ('loopback address', ...), or None."""
        if address.version == 6:
            if address in NAT64_LOCAL:
                return "a local-use NAT64 address"
            embedded = _embedded_ipv4(address)
            if embedded is not None:
                if address.ipv4_mapped is not None and embedded.is_loopback and self.allow_loopback:
                    return None
                if not embedded.is_global:
                    return f"an address embedding the non-public {embedded}:"
        if address.is_loopback:
            return None if self.allow_loopback else "loopback address"
        if not address.is_global:
            return "non-public address"
        return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """Return the IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4, Teredo), or None."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address, de-obfuscated
    if address in NAT64 or (address in IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None
