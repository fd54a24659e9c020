"""Who may do what: personal tokens, GitHub App JWTs and installation tokens, workflow tokens.

As GitHub decides it (docs.github.com/en/rest/authentication/authenticating-to-the-rest-api;
docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app;
docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app):

* A token is sent as `Authorization: Bearer T` or `token T` (REST), or as the password of HTTP Basic
  auth, any user name (git: docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/
  authenticating-as-a-github-app-installation, "https://x-access-token:TOKEN@github.com/owner/repo.git").
  An unknown or expired token is 401 `Bad credentials`, whatever the repository.
* A private repository the token may not see is 404 `Not Found`, never 403 (GitHub does not say
  it exists). A repository the token sees, for a permission it lacks, is 403 `Resource not accessible
  by integration` (an installation's or a workflow's token).
* An app authenticates with a JWT signed RS256 by its private key: `iss` its app id or client id,
  `iat` at most 60 s in the future, `exp` at most 10 minutes after `iat`. The JWT may only call the
  /app endpoints and the installation look-ups; a bad one is 401.
* An installation token (`ghs_`, one hour) covers the repositories named when it was made (all of the
  installation's when none were), with the permissions asked (all of the installation's when none
  were); asking for more than the installation has is 422. It always has `metadata: read`.
* A workflow's `github.token` is an installation token of the Actions app for the workflow's own
  repository, with the job's `permissions:` (docs.github.com/en/actions/security-for-github-actions/
  security-guides/automatic-token-authentication).
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

LEVELS = {"none": 0, "read": 1, "write": 2, "admin": 3}
TOKEN_LIFETIME = 3600  # seconds: an installation token expires after one hour (docs, ibid.)
JWT_MAX_LIFETIME = 600  # seconds: "no more than 10 minutes into the future"
CLOCK_DRIFT = 60  # seconds: GitHub's docs suggest iat 60 s in the past to allow for drift


class Refused(Exception):
    """A request GitHub would refuse: its status and message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


@dataclass
class Token:
    value: str
    kind: str  # "user", "installation" or "workflow"
    login: str  # who acts: the user, or the app's bot
    account: str | None = None  # an installation's (workflow's) account, lower case
    repositories: frozenset[str] | None = None  # lower-case full names; None: every one of `account`'s
    permissions: dict[str, str] = field(default_factory=dict)
    owns: frozenset[str] = frozenset()  # a user token's accounts (lower case), where it may do anything
    expires: float | None = None

    def level(self, permission: str) -> int:
        return LEVELS[self.permissions.get(permission, "none")]

    def covers(self, full_name: str) -> bool:
        """Return whether this token is scoped to the repository (any permission)."""
        owner = full_name.split("/")[0].lower()
        if self.kind == "user":
            return owner in self.owns
        return owner == self.account and (self.repositories is None or full_name.lower() in self.repositories)


@dataclass
class App:
    id: int
    client_id: str
    slug: str
    public_key: object  # cryptography RSA public key


@dataclass
class Installation:
    id: int
    app: App
    account: str  # as spelled
    target_type: str  # "Organization" or "User"
    repositories: frozenset[str] | None  # lower-case full names; None: all
    permissions: dict[str, str]


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Keys:
    """Every token and app the server knows."""

    def __init__(self, clock=time.time):
        self.tokens: dict[str, Token] = {}
        self.apps: dict[int, App] = {}
        self.installations: dict[int, Installation] = {}
        self.clock = clock
        self._next = 1

    def _id(self) -> int:
        self._next += 1
        return self._next

    def user_token(self, login: str, owns: list[str] | None = None, value: str | None = None) -> str:
        """Return a new personal token for `login`, which may do anything in its own and `owns` accounts."""
        value = value or "ghp_" + secrets.token_hex(18)
        owned = frozenset(a.lower() for a in [login, *(owns or [])])
        self.tokens[value] = Token(value, "user", login, owns=owned)
        return value

    def workflow_token(self, full_name: str, permissions: dict[str, str], value: str | None = None) -> str:
        """Return a job's `github.token`: the workflow's repository alone, with the job's `permissions:`."""
        value = value or "ghs_" + secrets.token_hex(18)
        permissions = {**permissions, "metadata": "read"}
        self.tokens[value] = Token(value, "workflow", "github-actions[bot]", full_name.split("/")[0].lower(),
                                   frozenset([full_name.lower()]), permissions)
        return value

    def register_app(self, app_id: int, public_key_pem: bytes | str, client_id: str | None = None,
                     slug: str = "takedownwatch") -> App:
        """Return an app known by its id and client id, whose JWTs the public key verifies."""
        pem = public_key_pem.encode() if isinstance(public_key_pem, str) else public_key_pem
        app = App(app_id, client_id or f"Iv1.{app_id:016x}", slug, serialization.load_pem_public_key(pem))
        self.apps[app_id] = app
        return app

    def install(self, app_id: int, account: str, permissions: dict[str, str], repositories: list[str] | None = None,
                target_type: str = "Organization") -> Installation:
        """Return the app's installation on `account`: on `repositories` (names), or on all of them."""
        scoped = None if repositories is None else frozenset(f"{account}/{r}".lower() for r in repositories)
        installation = Installation(self._id(), self.apps[app_id], account, target_type, scoped,
                                    {**permissions, "metadata": "read"})
        self.installations[installation.id] = installation
        return installation

    # -- who is asking ------------------------------------------------------------

    def bearer(self, authorization: str) -> str | None:
        """Return the token or JWT in an Authorization header (Bearer, token, or Basic's password)."""
        scheme, _, credential = authorization.strip().partition(" ")
        if scheme.lower() in ("bearer", "token"):
            return credential.strip() or None
        if scheme.lower() == "basic":
            try:
                return base64.b64decode(credential.strip()).decode().partition(":")[2] or None
            except ValueError:
                return None
        return None

    def token(self, value: str | None) -> Token | None:
        """Return the token, None for an anonymous request; refuse an unknown or expired one (401)."""
        if value is None:
            return None
        found = self.tokens.get(value)
        if found is None or (found.expires is not None and found.expires < self.clock()):
            raise Refused(401, "Bad credentials")
        return found

    def app_for(self, jwt: str | None) -> App:
        """Return the app a JWT was signed by, or refuse it (401) as GitHub does."""
        parts = (jwt or "").split(".")
        if len(parts) != 3:
            raise Refused(401, "A JSON web token could not be decoded")
        try:
            header, claims = json.loads(_b64decode(parts[0])), json.loads(_b64decode(parts[1]))
        except ValueError:
            raise Refused(401, "A JSON web token could not be decoded") from None
        if header.get("alg") != "RS256":
            raise Refused(401, "A JSON web token could not be decoded")
        issuer = str(claims.get("iss", ""))
        app = next((a for a in self.apps.values() if issuer in (str(a.id), a.client_id)), None)
        if app is None:
            raise Refused(401, "Integration not found")
        try:
            app.public_key.verify(_b64decode(parts[2]), f"{parts[0]}.{parts[1]}".encode(),
                                  padding.PKCS1v15(), hashes.SHA256())
        except (InvalidSignature, ValueError):
            raise Refused(401, "A JSON web token could not be decoded") from None
        now, issued, expires = self.clock(), claims.get("iat"), claims.get("exp")
        if not isinstance(issued, (int, float)) or not isinstance(expires, (int, float)):
            raise Refused(401, "A JSON web token could not be decoded")
        if issued > now + CLOCK_DRIFT:
            raise Refused(401, "'Issued at' claim ('iat') must be an Integer representing a time in the past.")
        if expires < now:
            raise Refused(401, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.")
        if expires - issued > JWT_MAX_LIFETIME + CLOCK_DRIFT:
            raise Refused(401, "'Expiration time' claim ('exp') is too far in the future")
        return app

    def installation_token(self, installation: Installation, repositories: list[str] | None,
                           permissions: dict[str, str] | None) -> Token:
        """Return a token of the installation narrowed to repositories (names) and permissions (422 beyond it)."""
        wanted = None if not repositories else frozenset(f"{installation.account}/{r}".lower() for r in repositories)
        if wanted is not None and installation.repositories is not None and not wanted <= installation.repositories:
            raise Refused(422, "There is at least one repository that does not exist or is not accessible to the parent installation.")
        wanted = installation.repositories if wanted is None else wanted
        granted = dict(installation.permissions)
        if permissions:
            for name, level in permissions.items():
                if LEVELS.get(level, 99) > LEVELS[installation.permissions.get(name, "none")]:
                    raise Refused(422, "The permissions requested are not granted to this installation.")
            granted = {**permissions, "metadata": "read"}
        value = "ghs_" + secrets.token_hex(18)
        token = Token(value, "installation", f"{installation.app.slug}[bot]", installation.account.lower(), wanted,
                      granted, expires=self.clock() + TOKEN_LIFETIME)
        self.tokens[value] = token
        return token

    def revoke(self, value: str) -> None:
        """Forget an installation (or workflow) token: from now on it is `Bad credentials`."""
        self.tokens.pop(value, None)

    # -- what it may do -----------------------------------------------------------------------

    def check(self, token: Token | None, full_name: str, visibility: str, permission: str, level: str) -> None:
        """Return when `token` may use `permission` at `level` on the repository; raise Refused as GitHub would."""
        public_read = visibility == "public" and level == "read"
        if token is None:
            if public_read:
                return
            if visibility == "public":
                raise Refused(401, "Requires authentication")
            raise Refused(404, "Not Found")
        if not token.covers(full_name):
            if public_read:
                return
            raise Refused(403 if visibility == "public" else 404,
                          "Resource not accessible by integration" if visibility == "public" else "Not Found")
        if token.kind == "user" or token.level(permission) >= LEVELS[level]:
            return
        raise Refused(403, "Resource not accessible by integration")
