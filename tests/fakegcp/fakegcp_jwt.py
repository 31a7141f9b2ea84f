"""OAuth 2.0 token endpoint helpers: RS256 JWT verification in pure Python.

Imitates https://oauth2.googleapis.com/token (DESIGN GH.3, H.4): the
service-account JWT-bearer grant is verified for real (RSASSA-PKCS1-v1_5 with
SHA-256, checked with pow()), so a client that signs wrongly fails here as it
would at Google.  Public keys are parsed from PEM "BEGIN PUBLIC KEY"
(SubjectPublicKeyInfo) or "BEGIN RSA PUBLIC KEY" (PKCS#1) with a tiny DER
reader.
"""
import base64
import hashlib
import json
import re


class DerError(ValueError):
    pass


def _der_read(buf, pos):
    """Read one DER TLV at ``pos``; return (tag, value bytes, next pos)."""
    if pos + 2 > len(buf):
        raise DerError("truncated DER")
    tag = buf[pos]
    ln = buf[pos + 1]
    pos += 2
    if ln & 0x80:
        n = ln & 0x7F
        if n == 0 or n > 4 or pos + n > len(buf):
            raise DerError("bad DER length")
        ln = int.from_bytes(buf[pos:pos + n], "big")
        pos += n
    if pos + ln > len(buf):
        raise DerError("truncated DER value")
    return tag, buf[pos:pos + ln], pos + ln


def _der_seq(buf):
    """Children of a SEQUENCE body as a list of (tag, value)."""
    out = []
    pos = 0
    while pos < len(buf):
        tag, val, pos = _der_read(buf, pos)
        out.append((tag, val))
    return out


RSA_OID = bytes.fromhex("2a864886f70d010101")  # 1.2.840.113549.1.1.1


def parse_rsa_public_pem(pem):
    """Return (n, e) from a PEM public key."""
    m = re.search(r"-----BEGIN (RSA )?PUBLIC KEY-----(.*?)-----END",
                  pem, re.S)
    if not m:
        raise DerError("not a PEM public key")
    der = base64.b64decode("".join(m.group(2).split()))
    tag, body, _ = _der_read(der, 0)
    if tag != 0x30:
        raise DerError("expected SEQUENCE")
    items = _der_seq(body)
    if not m.group(1):  # SubjectPublicKeyInfo
        if len(items) != 2 or items[0][0] != 0x30 or items[1][0] != 0x03:
            raise DerError("bad SubjectPublicKeyInfo")
        alg = _der_seq(items[0][1])
        if not alg or alg[0][0] != 0x06 or alg[0][1] != RSA_OID:
            raise DerError("not an RSA key")
        bits = items[1][1]
        if bits[0] != 0:
            raise DerError("bad BIT STRING")
        tag, body, _ = _der_read(bits[1:], 0)
        items = _der_seq(body)
    if len(items) < 2 or items[0][0] != 2 or items[1][0] != 2:
        raise DerError("bad RSAPublicKey")
    return (int.from_bytes(items[0][1], "big"),
            int.from_bytes(items[1][1], "big"))


# DER prefix of DigestInfo { sha256, NULL } (RFC 8017 9.2 note 1)
SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")


def b64url_decode(s):
    s = s.encode() if isinstance(s, str) else s
    return base64.urlsafe_b64decode(s + b"=" * (-len(s) % 4))


def rsa_verify_sha256(n, e, message, signature):
    k = (n.bit_length() + 7) // 8
    if len(signature) != k:
        return False
    s = int.from_bytes(signature, "big")
    if s >= n:
        return False
    em = pow(s, e, n).to_bytes(k, "big")
    digest = hashlib.sha256(message).digest()
    t = SHA256_PREFIX + digest
    expected = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
    return em == expected


class JwtError(Exception):
    def __init__(self, description, error="invalid_grant"):
        Exception.__init__(self, description)
        self.error = error
        self.description = description


def verify_assertion(assertion, keys, audiences, now, scope_needed):
    """Check a JWT-bearer assertion; return its claims.

    ``keys``: dict client_email -> (n, e).  Raises JwtError with an RFC 6749
    error code and a description close to Google's."""
    parts = assertion.split(".")
    if len(parts) != 3:
        raise JwtError("Invalid JWT: Token must be a short-lived token "
                       "(60 minutes) and in a reasonable timeframe. "
                       "Malformed assertion.")
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        sig = b64url_decode(parts[2])
    except (ValueError, TypeError):
        raise JwtError("Invalid JWT: cannot decode assertion.")
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise JwtError("Invalid JWT: cannot decode assertion.")
    if header.get("alg") != "RS256":
        raise JwtError("Invalid JWT: unsupported algorithm %r; use RS256."
                       % header.get("alg"))
    iss = claims.get("iss")
    if iss not in keys:
        raise JwtError("Invalid grant: account not found", "invalid_grant")
    n, e = keys[iss]
    if not rsa_verify_sha256(n, e, (parts[0] + "." + parts[1]).encode(),
                             sig):
        raise JwtError("Invalid JWT Signature.")
    if claims.get("aud") not in audiences:
        raise JwtError("Invalid JWT: Failed audience check. The expected "
                       "value was %s but the actual value was %r."
                       % (audiences[0], claims.get("aud")))
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, (int, float)) or not isinstance(exp, (int, float)):
        raise JwtError("Invalid JWT: iat and exp must be numbers.")
    if abs(iat - now) > 300 or exp <= now or exp - iat > 3600:
        raise JwtError("Invalid JWT: Token must be a short-lived token "
                       "(60 minutes) and in a reasonable timeframe. Check "
                       "your iat and exp values in the JWT claim.")
    scopes = str(claims.get("scope", "")).split()
    if scope_needed not in scopes:
        raise JwtError("Invalid OAuth scope or ID token audience provided.",
                       "invalid_scope")
    return claims
