"""The signature schemes an evidence bundle's checker needs, in pure Python (standard library only).

Part of the bundle's checker (verify.py), copied into every bundle beside it:
a lawyer's laptop needs Python 3.11 and nothing else. Each scheme is the
verification half only, written from its specification:

* Ed25519 (the record's SSH key): RFC 8032 section 6, "Ed25519 Python
  Illustration" (https://www.rfc-editor.org/rfc/rfc8032#section-6), whose
  reference code `verify` and its point arithmetic are followed line for line.
* ECDSA over P-256 and P-384 (the loopback authorities' keys, and many real
  ones): SEC 1 v2 section 4.1.4 (https://www.secg.org/sec1-v2.pdf), with the
  curves of FIPS 186-5 / SP 800-186 section 3.2.1.
* RSA PKCS#1 v1.5 and RSASSA-PSS (the default authorities' RSA roots): RFC
  8017 sections 8.1.2, 8.2.2, 9.1.2 and 9.2 (the DigestInfo prefixes of its
  note 1), https://www.rfc-editor.org/rfc/rfc8017.

These check public data only, so constant time does not matter here.
"""

import hashlib

# -- Ed25519 (RFC 8032 section 6) ------------------------------------------------------------

_P = 2 ** 255 - 19
_D = -121665 * pow(121666, _P - 2, _P) % _P
_Q = 2 ** 252 + 27742317777372353535851937790883648493
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _point_add(a, b):
    first, second = (a[1] - a[0]) * (b[1] - b[0]) % _P, (a[1] + a[0]) * (b[1] + b[0]) % _P
    third, fourth = 2 * a[3] * b[3] * _D % _P, 2 * a[2] * b[2] % _P
    e, f, g, h = second - first, fourth - third, fourth + third, second + first
    return (e * f, g * h, f * g, e * h)


def _point_mul(scalar, point):
    result = (0, 1, 1, 0)  # the neutral element
    while scalar > 0:
        if scalar & 1:
            result = _point_add(result, point)
        point = _point_add(point, point)
        scalar >>= 1
    return result


def _point_equal(a, b):
    return (a[0] * b[2] - b[0] * a[2]) % _P == 0 and (a[1] * b[2] - b[1] * a[2]) % _P == 0


def _recover_x(y, sign):
    if y >= _P:
        return None
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P)
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P != 0:
        x = x * _SQRT_M1 % _P
    if (x * x - x2) % _P != 0:
        return None
    if (x & 1) != sign:
        x = _P - x
    return x


def _decompress(data: bytes):
    if len(data) != 32:
        return None
    y = int.from_bytes(data, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    x = _recover_x(y, sign)
    return None if x is None else (x, y, 1, x * y % _P)


_GY = 4 * pow(5, _P - 2, _P) % _P
_GX = _recover_x(_GY, 0)
_G = (_GX, _GY, 1, _GX * _GY % _P)


def ed25519_verify(public: bytes, message: bytes, signature: bytes) -> bool:
    """Return True when signature is an Ed25519 signature of message by the 32-byte public key."""
    if len(public) != 32 or len(signature) != 64:
        return False
    point_a, point_r = _decompress(public), _decompress(signature[:32])
    if point_a is None or point_r is None:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= _Q:
        return False
    h = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % _Q
    return _point_equal(_point_mul(s, _G), _point_add(point_r, _point_mul(h, point_a)))


# -- ECDSA (SEC 1 section 4.1.4) ---------------------------------------------------------------

CURVES = {  # name: (p, a, b, Gx, Gy, n), FIPS 186-5 / SP 800-186 section 3.2.1
    "P-256": (0xffffffff00000001000000000000000000000000ffffffffffffffffffffffff,
              -3,
              0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b,
              0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296,
              0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5,
              0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551),
    "P-384": (0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffff,
              -3,
              0xb3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aef,
              0xaa87ca22be8b05378eb1c71ef320ad746e1d3b628ba79b9859f741e082542a385502f25dbf55296c3a545e3872760ab7,
              0x3617de4a96262c6f5d9e98bf9292dc29f8f41dbd289a147ce9da3113b5f0b8c00a60b1ce1d7e819d7a431d7c90ea0e5f,
              0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973),
}


def on_curve(curve: str, x: int, y: int) -> bool:
    p, a, b, *_ = CURVES[curve]
    return 0 <= x < p and 0 <= y < p and (y * y - (x * x * x + a * x + b)) % p == 0


def _ec_add(curve, one, two):
    p, a = CURVES[curve][0], CURVES[curve][1]
    if one is None:
        return two
    if two is None:
        return one
    (x1, y1), (x2, y2) = one, two
    if x1 == x2 and (y1 + y2) % p == 0:
        return None
    if one == two:
        slope = (3 * x1 * x1 + a) * pow(2 * y1, -1, p) % p
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, p) % p
    x3 = (slope * slope - x1 - x2) % p
    return (x3, (slope * (x1 - x3) - y1) % p)


def _ec_mul(curve, scalar, point):
    result = None
    while scalar:
        if scalar & 1:
            result = _ec_add(curve, result, point)
        point = _ec_add(curve, point, point)
        scalar >>= 1
    return result


def ecdsa_verify(curve: str, x: int, y: int, digest: bytes, r: int, s: int) -> bool:
    """Return True when (r, s) is an ECDSA signature of the hash `digest` by the public point (x, y)."""
    p, _a, _b, gx, gy, n = CURVES[curve]
    if not on_curve(curve, x, y) or not (1 <= r < n and 1 <= s < n):
        return False
    e = int.from_bytes(digest, "big")
    if len(digest) * 8 > n.bit_length():
        e >>= len(digest) * 8 - n.bit_length()
    w = pow(s, -1, n)
    point = _ec_add(curve, _ec_mul(curve, e * w % n, (gx, gy)), _ec_mul(curve, r * w % n, (x, y)))
    return point is not None and point[0] % n == r


# -- RSA (RFC 8017) ------------------------------------------------------------------------------

DIGEST_INFO = {  # RFC 8017 section 9.2, note 1
    "sha1": bytes.fromhex("3021300906052b0e03021a05000414"),
    "sha256": bytes.fromhex("3031300d060960864801650304020105000420"),
    "sha384": bytes.fromhex("3041300d060960864801650304020205000430"),
    "sha512": bytes.fromhex("3051300d060960864801650304020305000440"),
}


def _rsa_open(n: int, e: int, signature: bytes) -> bytes | None:
    size = (n.bit_length() + 7) // 8
    value = int.from_bytes(signature, "big")
    if len(signature) != size or value >= n:
        return None
    return pow(value, e, n).to_bytes(size, "big")


def rsa_pkcs1_verify(n: int, e: int, hash_name: str, message: bytes, signature: bytes) -> bool:
    """Return True when signature is an RSASSA-PKCS1-v1_5 signature of message (RFC 8017 section 8.2.2)."""
    opened = _rsa_open(n, e, signature)
    if opened is None or hash_name not in DIGEST_INFO:
        return False
    t = DIGEST_INFO[hash_name] + hashlib.new(hash_name, message).digest()
    return len(opened) >= len(t) + 11 and opened == b"\x00\x01" + b"\xff" * (len(opened) - len(t) - 3) + b"\x00" + t


def _mgf1(seed: bytes, length: int, hash_name: str) -> bytes:
    out, counter = b"", 0
    while len(out) < length:
        out += hashlib.new(hash_name, seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return out[:length]


def rsa_pss_verify(n: int, e: int, hash_name: str, mgf_hash: str, salt_length: int, message: bytes,
                   signature: bytes) -> bool:
    """Return True when signature is an RSASSA-PSS signature of message (RFC 8017 sections 8.1.2, 9.1.2)."""
    opened = _rsa_open(n, e, signature)
    if opened is None:
        return False
    em_bits = n.bit_length() - 1
    em = opened[len(opened) - (em_bits + 7) // 8:]
    if opened[:len(opened) - len(em)].strip(b"\x00") or len(em) < 2:
        return False
    m_hash = hashlib.new(hash_name, message).digest()
    h_len = len(m_hash)
    if len(em) < h_len + salt_length + 2 or em[-1] != 0xBC:
        return False
    masked, h = em[:len(em) - h_len - 1], em[len(em) - h_len - 1:-1]
    zero_bits = 8 * len(em) - em_bits
    if masked[0] >> (8 - zero_bits) if zero_bits else 0:
        return False
    db = bytes(x ^ y for x, y in zip(masked, _mgf1(h, len(masked), mgf_hash)))
    db = bytes([db[0] & (0xFF >> zero_bits)]) + db[1:]
    padding, rest = db[:len(em) - h_len - salt_length - 2], db[len(em) - h_len - salt_length - 2:]
    if padding.strip(b"\x00") or rest[0] != 1:
        return False
    salt = rest[1:]
    return hashlib.new(hash_name, b"\x00" * 8 + m_hash + salt).digest() == h
