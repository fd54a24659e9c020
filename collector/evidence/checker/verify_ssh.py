"""SSH signatures (`ssh-keygen -Y sign`) checked in pure Python against an allowed-signers file.

Part of the bundle's checker (verify.py), copied into every bundle beside it.
What it follows, and from where:

* The signature format, OpenSSH's PROTOCOL.sshsig
  (https://github.com/openssh/openssh-portable/blob/master/PROTOCOL.sshsig):
  the armoured blob is "SSHSIG", version 1, the public key, the namespace, a
  reserved string, the hash algorithm (sha256 or sha512) and the signature;
  what is signed is "SSHSIG", the namespace, the reserved string, the hash
  algorithm and the hash of the message, each an SSH string (RFC 4251
  section 5).
* Keys and signatures: ssh-ed25519 (RFC 8709), ecdsa-sha2-nistp256/384
  (RFC 5656 section 3.1.2), rsa-sha2-256/512 (RFC 8332; sshsig never accepts
  ssh-rsa's SHA-1).
* The allowed-signers file, ssh-keygen(1) "ALLOWED SIGNERS": principals
  (a comma-separated pattern list), options (namespaces="...",
  valid-after, valid-before, cert-authority), then the key. A line with
  cert-authority names a CA, whose certificate-signed keys this checker does
  not follow: such a signature is refused, as is one by any key not listed
  for the principal and the namespace.
"""

import base64
import fnmatch
import hashlib
import re
from datetime import datetime, timezone

import verify_math

ARMOUR = re.compile(r"-----BEGIN SSH SIGNATURE-----(.*?)-----END SSH SIGNATURE-----", re.S)
CURVES = {"ecdsa-sha2-nistp256": ("P-256", "sha256"), "ecdsa-sha2-nistp384": ("P-384", "sha384")}


class Refused(Exception):
    """The signature is not a good one by the principal; the message says why."""


def strings(data: bytes) -> list:
    """Return the SSH strings (uint32 length, bytes) data is made of; refuse any other shape."""
    out, pos = [], 0
    while pos < len(data):
        if pos + 4 > len(data):
            raise Refused("a truncated SSH string")
        size = int.from_bytes(data[pos:pos + 4], "big")
        if pos + 4 + size > len(data):
            raise Refused("a truncated SSH string")
        out.append(data[pos + 4:pos + 4 + size])
        pos += 4 + size
    return out


def string(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def fingerprint(key: bytes) -> str:
    return "SHA256:" + base64.b64encode(hashlib.sha256(key).digest()).decode().rstrip("=")


def verify(message: bytes, armoured: str, allowed_signers: str, principal: str, namespace: str) -> str:
    """Return the signing key's fingerprint when armoured is a good signature of message by principal."""
    found = ARMOUR.search(armoured)
    if not found:
        raise Refused("not an armoured SSH signature")
    try:
        blob = base64.b64decode("".join(found.group(1).split()), validate=True)
    except ValueError:
        raise Refused("its armour is not base64") from None
    if blob[:6] != b"SSHSIG" or int.from_bytes(blob[6:10], "big") > 1:  # ssh-keygen refuses only above 1
        raise Refused("not an SSHSIG signature of version 1")
    fields = strings(blob[10:])
    if len(fields) != 5:
        raise Refused("not the five fields of an SSHSIG signature")
    key, signed_namespace, reserved, hash_name, signature = fields
    if signed_namespace != namespace.encode():
        raise Refused(f"made for the namespace {signed_namespace.decode(errors='replace')!r}, not {namespace!r}")
    if hash_name not in (b"sha256", b"sha512"):
        raise Refused(f"an unknown hash algorithm {hash_name!r}")
    if not _allowed(key, allowed_signers, principal, namespace):
        raise Refused(f"its key {fingerprint(key)} is not one the allowed signers name for {principal} "
                      f"under {namespace}")
    signed = (b"SSHSIG" + string(signed_namespace) + string(reserved) + string(hash_name)
              + string(hashlib.new(hash_name.decode(), message).digest()))
    if not _key_verifies(key, signed, signature):
        raise Refused("the signature is not its key's over this file")
    return fingerprint(key)


def _key_verifies(key: bytes, signed: bytes, signature: bytes) -> bool:
    parts, (kind, value) = strings(key), strings(signature)
    if kind == b"ssh-ed25519" and parts[0] == kind and len(parts) == 2:
        return verify_math.ed25519_verify(parts[1], signed, value)
    if kind in (b"rsa-sha2-256", b"rsa-sha2-512") and parts[0] == b"ssh-rsa" and len(parts) == 3:
        e, n = (int.from_bytes(p, "big") for p in parts[1:])
        return verify_math.rsa_pkcs1_verify(n, e, "sha" + kind.decode()[-3:], signed, value)
    if kind.decode(errors="replace") in CURVES and parts[0] == kind and len(parts) == 3:
        curve, hash_name = CURVES[kind.decode()]
        point, size = parts[2], (len(parts[2]) - 1) // 2
        if point[:1] != b"\x04":
            return False
        r, s = (int.from_bytes(p, "big") for p in strings(value))
        return verify_math.ecdsa_verify(curve, int.from_bytes(point[1:1 + size], "big"),
                                        int.from_bytes(point[1 + size:], "big"),
                                        hashlib.new(hash_name, signed).digest(), r, s)
    raise Refused(f"a key or signature type this checker does not know ({kind.decode(errors='replace')})")


def _patterns(text: str, value: str) -> bool:
    """ssh(1) pattern lists: comma-separated, `*` and `?`, a leading `!` negates (and wins)."""
    matched = False
    for pattern in text.split(","):
        if pattern.startswith("!") and fnmatch.fnmatchcase(value, pattern[1:]):
            return False
        matched = matched or fnmatch.fnmatchcase(value, pattern)
    return matched


def _allowed(key: bytes, allowed_signers: str, principal: str, namespace: str) -> bool:
    for line in allowed_signers.splitlines():
        if line.lstrip().startswith("#"):
            continue
        words = re.findall(r'(?:[^\s"]|"[^"]*")+', line)
        if len(words) < 3 or not _patterns(words[0].strip('"'), principal):
            continue
        options, rest = {}, words[1:]
        while rest and not re.fullmatch(r"(ssh|ecdsa|sk)-[\w@.-]+", rest[0]):
            name, _, value = rest.pop(0).partition("=")
            options[name.lower()] = value.strip('"')
        if len(rest) < 2 or "cert-authority" in options:
            continue
        if "namespaces" in options and not _patterns(options["namespaces"], namespace):
            continue
        if not _in_time(options):
            continue
        try:
            listed = base64.b64decode(rest[1], validate=True)
        except ValueError:
            continue
        if listed == key:
            return True
    return False


def _in_time(options: dict) -> bool:
    """valid-after / valid-before, YYYYMMDD[HHMM[SS]] (local time, or UTC with a trailing Z), against now."""
    now = datetime.now(timezone.utc)
    for name, later in (("valid-after", True), ("valid-before", False)):
        text = options.get(name)
        if text:
            digits = text.rstrip("Z").ljust(14, "0")
            bound = datetime.strptime(digits, "%Y%m%d%H%M%S")
            bound = bound.replace(tzinfo=timezone.utc) if text.endswith("Z") else bound.astimezone()
            if (now < bound) if later else (now >= bound):
                return False
    return True
