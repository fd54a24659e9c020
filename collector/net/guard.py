"""Keeps requests away from addresses a public crawler has no business reaching."""

from __future__ import annotations

import ipaddress
import socket
import threading


class AddressGuard:
    """Resolves each host once per run (a DNS cache) and refuses non-public addresses.

    Loopback is allowed only in test mode: the tests and the offline demo run
    their outlets on 127.0.0.0/8. Private, link-local, multicast and reserved
    addresses are always refused, so a redirect cannot steer the crawler into
    a private network.
    """

    def __init__(self, allow_loopback: bool = False):
        self.allow_loopback = allow_loopback
        self._cache: dict[str, list[str] | str] = {}
        self._lock = threading.Lock()

    def _resolve(self, host: str) -> list[str] | str:
        with self._lock:
            if host in self._cache:
                return self._cache[host]
        try:
            ipaddress.ip_address(host.strip("[]"))
            addresses: list[str] | str = [host.strip("[]")]
        except ValueError:
            try:
                infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
                addresses = sorted({info[4][0] for info in infos})
            except (socket.gaierror, UnicodeError, OSError) as exc:
                addresses = f"cannot resolve {host}: {exc}"
        with self._lock:
            self._cache[host] = addresses
        return addresses

    def is_loopback(self, host: str) -> bool:
        """Return True when every address of the host is a loopback address."""
        addresses = self._resolve(host)
        if isinstance(addresses, str) or not addresses:
            return False
        return all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)

    def check(self, host: str) -> str | None:
        """Return why the host must not be contacted, or None when it may be."""
        addresses = self._resolve(host)
        if isinstance(addresses, str):
            return None  # unresolvable: the request itself records the failure
        for text in addresses:
            address = ipaddress.ip_address(text.split("%")[0])
            if address.is_loopback:
                if not self.allow_loopback:
                    return f"{host} resolves to loopback address {text}"
                continue
            if not address.is_global:
                return f"{host} resolves to non-public address {text}"
        return None
