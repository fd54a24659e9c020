"""RFC 3161 timestamp tokens checked in pure Python: a DER reader, X.509 certificates, CMS SignedData.

Part of the bundle's checker (verify.py), copied into every bundle beside it.
What it reads, and from where:

* DER (ITU-T X.690 section 10 / 8): tag, definite length, content.
* X.509 certificates, RFC 5280 section 4.1: tbsCertificate (serial, issuer,
  validity, subject, subjectPublicKeyInfo, extensions), signatureAlgorithm,
  signatureValue; key usage for time-stamping, RFC 3161 section 2.3: the
  signer's certificate has an extended key usage of id-kp-timeStamping.
* The token, RFC 3161 section 2.4.2: TimeStampResp { status, timeStampToken },
  the token a CMS ContentInfo of SignedData (RFC 5652 sections 5.1-5.4):
  encapContentInfo holds the TSTInfo (version, policy, messageImprint,
  serialNumber, genTime, ...); the signer's signedAttrs hold contentType and
  messageDigest (section 11.1, 11.2), and the signature is over their DER
  with the SET OF tag (section 5.4); the ESS signing-certificate attribute
  (RFC 2634 section 5.4, RFC 5035) names the signer's certificate by hash.

check_token() checks what `openssl ts -verify -data FILE -CAfile ROOT` and
rfc3161-client's verifier check: the status is granted, the message imprint is
the file's hash, the signedAttrs digest is the TSTInfo's, the signature is the
signer certificate's, that certificate is for time-stamping and valid at the
token's time, and it chains, signature by signature, to a root kept in the
bundle. Anything it cannot read, or an algorithm it does not know, fails.
"""

import base64
import hashlib
import re
from datetime import datetime, timezone

import verify_math


class Refused(Exception):
    """The token, or a certificate in it, is not good; the message says why."""


class Node:
    """One DER element: its tag, its whole encoding, its content."""

    __slots__ = ("tag", "raw", "body")

    def __init__(self, tag: int, raw: bytes, body: bytes):
        self.tag, self.raw, self.body = tag, raw, body

    def kids(self) -> list:
        out, pos = [], 0
        while pos < len(self.body):
            node, pos = read_at(self.body, pos)
            out.append(node)
        return out


def read_at(data: bytes, pos: int):
    """Return (the element at pos, where the next one starts)."""
    if pos + 2 > len(data):
        raise Refused("truncated DER")
    tag, length, start = data[pos], data[pos + 1], pos + 2
    if tag & 0x1F == 0x1F:
        raise Refused("a DER tag number above 30")
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or start + count > len(data):
            raise Refused("a DER length that is not definite")
        length, start = int.from_bytes(data[start:start + count], "big"), start + count
    end = start + length
    if end > len(data):
        raise Refused("truncated DER")
    return Node(tag, data[pos:end], data[start:end]), end


def read(data: bytes) -> Node:
    node, end = read_at(data, 0)
    if end != len(data):
        raise Refused("bytes after the DER element")
    return node


def whole(node: Node) -> Node:
    """Return node when every constructed element in it is made of whole elements (X.690 section 8.1)."""
    if node.tag & 0x20:
        for kid in node.kids():
            whole(kid)
    return node


def expect(node: Node, tag: int, what: str) -> Node:
    if node.tag != tag:
        raise Refused(f"{what} has the DER tag {node.tag:#04x}, not {tag:#04x}")
    return node


def algorithm_id(node: Node) -> Node:
    """AlgorithmIdentifier: SEQUENCE { OBJECT IDENTIFIER, parameters OPTIONAL } (RFC 5280 section 4.1.1.2)."""
    kids = expect(node, 0x30, "an algorithm").kids()
    if not 1 <= len(kids) <= 2:
        raise Refused("an algorithm identifier of another shape")
    oid(kids[0])
    return node


def name(node: Node) -> Node:
    """Name: SEQUENCE OF SET OF SEQUENCE { OBJECT IDENTIFIER, value } (RFC 5280 section 4.1.2.4)."""
    for relative in expect(node, 0x30, "a name").kids():
        for pair in expect(relative, 0x31, "a name's part").kids():
            kids = expect(pair, 0x30, "a name's attribute").kids()
            if len(kids) != 2 or kids[1].tag & 0x20:
                raise Refused("a name's attribute of another shape")
            oid(kids[0])
    return node


def oid(node: Node) -> str:
    if node.tag != 0x06 or not node.body:
        raise Refused("not an OBJECT IDENTIFIER")
    values, value = [], 0
    for byte in node.body:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            values.append(value)
            value = 0
    first = min(values[0] // 40, 2)
    return ".".join(str(v) for v in [first, values[0] - 40 * first, *values[1:]])


def integer(node: Node) -> int:
    if node.tag != 0x02:
        raise Refused("not an INTEGER")
    return int.from_bytes(node.body, "big", signed=True)


def bits(node: Node) -> bytes:
    if node.tag != 0x03 or not node.body or node.body[0] != 0:
        raise Refused("not a whole BIT STRING")
    return node.body[1:]


def when(node: Node) -> datetime:
    text = node.body.decode("ascii")
    if node.tag == 0x17:  # UTCTime, RFC 5280 section 4.1.2.5.1
        text = ("19" if int(text[:2]) >= 50 else "20") + text
    elif node.tag != 0x18:
        raise Refused("not a time")
    found = re.fullmatch(r"(\d{14})(\.\d+)?Z", text)
    if not found:
        raise Refused(f"a time not in UTC: {text}")
    stamp = datetime.strptime(found.group(1), "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
    return stamp.replace(microsecond=int(float(found.group(2) or 0) * 1_000_000))


HASHES = {"1.3.14.3.2.26": "sha1", "2.16.840.1.101.3.4.2.1": "sha256", "2.16.840.1.101.3.4.2.2": "sha384",
          "2.16.840.1.101.3.4.2.3": "sha512"}
CURVE_OIDS = {"1.2.840.10045.3.1.7": "P-256", "1.3.132.0.34": "P-384"}
RSA_KEY, EC_KEY, PSS = "1.2.840.113549.1.1.1", "1.2.840.10045.2.1", "1.2.840.113549.1.1.10"
SIGNATURES = {  # signature algorithm: (kind, hash or None for the digest algorithm given beside it)
    RSA_KEY: ("rsa", None), "1.2.840.113549.1.1.5": ("rsa", "sha1"), "1.2.840.113549.1.1.11": ("rsa", "sha256"),
    "1.2.840.113549.1.1.12": ("rsa", "sha384"), "1.2.840.113549.1.1.13": ("rsa", "sha512"),
    EC_KEY: ("ec", None), "1.2.840.10045.4.1": ("ec", "sha1"), "1.2.840.10045.4.3.2": ("ec", "sha256"),
    "1.2.840.10045.4.3.3": ("ec", "sha384"), "1.2.840.10045.4.3.4": ("ec", "sha512"), PSS: ("pss", None),
}
TIME_STAMPING = "1.3.6.1.5.5.7.3.8"


def hash_of(algorithm: Node) -> str:
    name = HASHES.get(oid(algorithm.kids()[0]))
    if name is None:
        raise Refused(f"an unknown digest algorithm {oid(algorithm.kids()[0])}")
    return name


class Certificate:
    """An X.509 certificate (RFC 5280 section 4.1), its shape checked whole; its values read when used."""

    def __init__(self, raw: bytes):
        parts = whole(expect(read(raw), 0x30, "a certificate")).kids()
        if len(parts) != 3:
            raise Refused("a certificate of another shape")
        tbs, self.algorithm, self._signature = parts
        algorithm_id(self.algorithm)
        expect(self._signature, 0x03, "a certificate's signature")
        fields = expect(tbs, 0x30, "a certificate's body").kids()
        if fields and fields[0].tag == 0xA0:
            expect(fields[0].kids()[0], 0x02, "a certificate's version")
            fields = fields[1:]
        if len(fields) < 6:
            raise Refused("a certificate's body of another shape")
        self.raw, self.tbs = raw, tbs.raw
        self.serial = integer(fields[0])
        algorithm_id(fields[1])
        self.issuer, self.subject = name(fields[2]).raw, name(fields[4]).raw
        self._validity = expect(fields[3], 0x30, "a certificate's validity").kids()
        if len(self._validity) != 2 or any(n.tag not in (0x17, 0x18) for n in self._validity):
            raise Refused("a certificate's validity of another shape")
        key_parts = expect(fields[5], 0x30, "a certificate's key").kids()
        if len(key_parts) != 2:
            raise Refused("a certificate's key of another shape")
        self._key_algorithm, self._key_bits = algorithm_id(key_parts[0]), expect(key_parts[1], 0x03, "a key")
        self.extensions = {}
        for item in fields[6:]:
            if item.tag not in (0x81, 0x82, 0xA3):
                raise Refused("a certificate's body of another shape")
            if item.tag == 0xA3:
                for extension in expect(item.kids()[0], 0x30, "extensions").kids():
                    parts = expect(extension, 0x30, "an extension").kids()
                    if parts[1:-1] and parts[1].tag != 0x01 or len(parts) not in (2, 3):
                        raise Refused("an extension of another shape")
                    self.extensions[oid(parts[0])] = expect(parts[-1], 0x04, "an extension's value").body

    @property
    def not_before(self) -> datetime:
        return when(self._validity[0])

    @property
    def not_after(self) -> datetime:
        return when(self._validity[1])

    @property
    def signature(self) -> bytes:
        return bits(self._signature)

    def public_key(self):
        """Return ("rsa", (n, e)) or ("ec", (curve, x, y)); refuse any other key."""
        kind, *params = self._key_algorithm.kids()
        key = bits(self._key_bits)
        if oid(kind) == RSA_KEY:
            return "rsa", tuple(integer(n) for n in expect(read(key), 0x30, "an RSA key").kids()[:2])
        curve = CURVE_OIDS.get(oid(params[0])) if oid(kind) == EC_KEY and params else None
        size = (len(key) - 1) // 2
        if curve is None or key[:1] != b"\x04" or len(key) != 1 + 2 * size:
            raise Refused(f"a key this checker does not know ({oid(kind)})")
        return "ec", (curve, int.from_bytes(key[1:1 + size], "big"), int.from_bytes(key[1 + size:], "big"))

    def is_ca(self) -> bool:
        found = self.extensions.get("2.5.29.19")
        kids = read(found).kids() if found else []
        return bool(kids and kids[0].tag == 0x01 and kids[0].body != b"\x00")

    def for_time_stamping(self) -> bool:
        found = self.extensions.get("2.5.29.37")
        return found is not None and TIME_STAMPING in {oid(k) for k in read(found).kids()}

    def key_id(self) -> bytes | None:
        found = self.extensions.get("2.5.29.14")
        return read(found).body if found else None

    def verifies(self, algorithm: Node, message: bytes, signature: bytes, digest: str | None = None) -> bool:
        """Return True when signature is this key's over message, made as `algorithm` names.

        With `digest` (a CMS signer's digestAlgorithm) the scheme is the
        key's own with that digest, as RFC 5652 section 5.3 lets
        signatureAlgorithm name just the key's algorithm, and OpenSSL reads it.
        """
        name_oid, *params = algorithm_id(algorithm).kids()
        kind, hashed = SIGNATURES.get(oid(name_oid), (None, None))
        key_type, key = self.public_key()
        if kind == "pss":
            return key_type == "rsa" and _pss(key, params, message, signature)
        if digest is not None:
            kind, hashed = key_type, digest
        if kind is None or hashed is None:
            raise Refused(f"a signature algorithm this checker does not know ({oid(name_oid)})")
        if kind == "rsa" == key_type:
            return verify_math.rsa_pkcs1_verify(*key, hashed, message, signature)
        if kind == "ec" == key_type:
            values = expect(read(signature), 0x30, "an ECDSA signature").kids()
            if len(values) != 2:
                raise Refused("an ECDSA signature of another shape")
            r, s = (integer(n) for n in values)
            return verify_math.ecdsa_verify(*key, hashlib.new(hashed, message).digest(), r, s)
        return False


def _pss(key, params, message: bytes, signature: bytes) -> bool:
    """RSASSA-PSS-params, RFC 8017 appendix A.2.3 (defaults: SHA-1, MGF1 with SHA-1, salt 20)."""
    hashed, mgf, salt = "sha1", "sha1", 20
    for item in (params[0].kids() if params else []):
        inner = item.kids()[0]
        if item.tag == 0xA0:
            hashed = hash_of(inner)
        elif item.tag == 0xA1:
            mgf = hash_of(inner.kids()[1])
        elif item.tag == 0xA2:
            salt = integer(inner)
    return verify_math.rsa_pss_verify(*key, hashed, mgf, salt, message, signature)


def pem_certificates(text: str) -> list:
    found = re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", text, re.S)
    return [Certificate(base64.b64decode("".join(block.split()))) for block in found]


def check_token(answer: bytes, data: bytes, roots: list) -> datetime:
    """Return the token's time when `answer` is a good RFC 3161 timestamp of `data` under one of the roots."""
    response = whole(expect(read(answer), 0x30, "the answer")).kids()
    status = integer(expect(response[0], 0x30, "the status").kids()[0])
    if status not in (0, 1) or len(response) != 2:
        raise Refused(f"the authority's status is {status}, not granted")
    content_type, wrapped = expect(response[1], 0x30, "the token").kids()
    if oid(content_type) != "1.2.840.113549.1.7.2" or wrapped.tag != 0xA0:
        raise Refused("the token is not CMS SignedData")
    signed = expect(wrapped.kids()[0], 0x30, "the SignedData").kids()
    integer(signed[0])
    digests = {hash_of(algorithm_id(a)) for a in expect(signed[1], 0x31, "the digest algorithms").kids()}
    encapsulated = expect(signed[2], 0x30, "the signed content").kids()
    if oid(encapsulated[0]) != "1.2.840.113549.1.9.16.1.4" or len(encapsulated) != 2:
        raise Refused("the token does not hold a TSTInfo")
    content = expect(expect(encapsulated[1], 0xA0, "the content").kids()[0], 0x04, "the TSTInfo").body
    info = whole(expect(read(content), 0x30, "the TSTInfo")).kids()
    integer(info[0])
    oid(info[1])
    imprint_algorithm, imprint = expect(info[2], 0x30, "the message imprint").kids()
    hashed = hash_of(algorithm_id(imprint_algorithm))
    if expect(imprint, 0x04, "the imprint").body != hashlib.new(hashed, data).digest():
        raise Refused(f"its message imprint is not the file's {hashed.upper()}")
    integer(info[3])
    gen_time = when(expect(info[4], 0x18, "the token's time"))
    optional = signed[3:-1]
    if [n.tag for n in optional] not in ([], [0xA0], [0xA1], [0xA0, 0xA1]):
        raise Refused("the SignedData of another shape")
    choices = [c for block in optional if block.tag == 0xA0 for c in block.kids()]  # RFC 5652 section 10.2.2
    if any(c.tag not in (0x30, 0xA0, 0xA1, 0xA2, 0xA3) for c in choices):
        raise Refused("a certificate of the token is not a CertificateChoices")
    embedded = [Certificate(c.raw) for c in choices if c.tag == 0x30]
    signers = expect(signed[-1], 0x31, "the signers").kids()
    if len(signers) != 1:
        raise Refused(f"{len(signers)} signers, not one")
    signer_info = expect(signers[0], 0x30, "the signer").kids()
    integer(signer_info[0])
    signer = _signer(signer_info[1], embedded)
    digest = hash_of(algorithm_id(signer_info[2]))
    if digest not in digests:
        raise Refused("the signer's digest algorithm is not among the SignedData's")
    attributes, rest = signer_info[3], signer_info[4:]
    if attributes.tag != 0xA0 or len(rest) not in (2, 3) or rest[2:] and rest[2].tag != 0xA1:
        raise Refused("the signer has no signed attributes, or is of another shape")
    values = {}
    for attribute in attributes.kids():
        kind, value = expect(attribute, 0x30, "an attribute").kids()
        values[oid(kind)] = expect(value, 0x31, "an attribute's values").kids()[0]
    if oid(values.get("1.2.840.113549.1.9.3") or Node(6, b"", b"\x00")) != "1.2.840.113549.1.9.16.1.4":
        raise Refused("its signed content type is not TSTInfo")
    if values.get("1.2.840.113549.1.9.4") is None or expect(values["1.2.840.113549.1.9.4"], 0x04, "a digest") \
            .body != hashlib.new(digest, content).digest():
        raise Refused("its signed message digest is not the TSTInfo's")
    _check_signing_certificate(values, signer)
    signed_attributes = b"\x31" + attributes.raw[1:]  # RFC 5652 section 5.4: signed as a SET OF
    if not signer.verifies(rest[0], signed_attributes, expect(rest[1], 0x04, "the signature").body, digest):
        raise Refused("its signature is not the signing certificate's")
    if not signer.for_time_stamping():
        raise Refused("its signing certificate is not for time-stamping (RFC 3161 section 2.3)")
    _chain(signer, embedded, roots, gen_time)
    return gen_time


def _signer(identifier: Node, embedded: list) -> Certificate:
    for certificate in embedded:
        if identifier.tag == 0x30:
            issuer, serial = identifier.kids()
            if certificate.issuer == name(issuer).raw and certificate.serial == integer(serial):
                return certificate
        elif identifier.tag == 0x80 and certificate.key_id() == identifier.body:
            return certificate
    raise Refused("the token does not carry its signing certificate")


def _check_signing_certificate(values: dict, signer: Certificate) -> None:
    """ESS signing-certificate (v1: SHA-1; v2: its hashAlgorithm, SHA-256 by default) names the signer."""
    for name, default in (("1.2.840.113549.1.9.16.2.47", "sha256"), ("1.2.840.113549.1.9.16.2.12", "sha1")):
        if name in values:
            first = values[name].kids()[0].kids()[0].kids()
            hashed = hash_of(first[0]) if first[0].tag == 0x30 else default
            certificate_hash = first[1] if first[0].tag == 0x30 else first[0]
            if certificate_hash.body != hashlib.new(hashed, signer.raw).digest():
                raise Refused("its signing-certificate attribute names another certificate")
            return


def _chain(certificate: Certificate, embedded: list, roots: list, at: datetime) -> None:
    """Follow issuers, each signature checked, to a root kept in the bundle."""
    for _depth in range(8):
        if not certificate.not_before <= at <= certificate.not_after:
            raise Refused("a certificate of its chain was not valid at the token's time")
        if any(certificate.raw == root.raw for root in roots):
            return
        for issuer in roots + embedded:
            if issuer.subject == certificate.issuer and (issuer in roots or issuer.is_ca()) and issuer.verifies(
                    certificate.algorithm, certificate.tbs, certificate.signature):
                if any(issuer.raw == root.raw for root in roots):
                    return
                certificate = issuer
                break
        else:
            raise Refused("its certificates do not chain to a root this bundle keeps for its authority")
    raise Refused("its chain of certificates is too long")
