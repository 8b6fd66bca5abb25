"""How a task API's key travels, by the profile's ``[auth] scheme``: small named signers.

``bearer`` and ``header`` send the key as it is (``Authorization: Bearer <key>``,
``Authorization: Token <key>``, ``x-goog-api-key: <key>``); ``jwt_hs256`` signs a short-lived
JSON Web Token from an access key (``iss``) and a secret key, with ``exp``/``nbf``, and keeps it
until it nears its end -- or until the service says it expired (clocks apart), when ``renew``
drops it and the next request signs a new one. A new scheme is one class added to ``SIGNERS``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Protocol

from mediaassist.core.messages import Message, msg, verbatim
from mediaassist.core.secrets import register_secret
from mediaassist.core.task_profiles import AuthSpec


class Signer(Protocol):
    def headers(self) -> dict[str, str]:
        """The headers that carry the key on the next request."""
        ...

    def renew(self) -> bool:
        """Forget a cached token (the service refused it as expired); False when there is
        nothing to renew (a static key: sending it again cannot help)."""
        ...

    def describe(self) -> Message:
        """The auth header with its secret masked, for ``profiles check``."""
        ...


class StaticKeySigner:
    """``bearer`` and ``header``: the key itself, after the profile's prefix."""

    def __init__(self, spec: AuthSpec, api_key: str, secret_key: str | None = None) -> None:
        self.spec, self.api_key = spec, api_key

    def headers(self) -> dict[str, str]:
        return {self.spec.header: f"{self.spec.prefix}{self.api_key}"}

    def renew(self) -> bool:
        return False

    def describe(self) -> Message:
        return verbatim(f"{self.spec.header}: {self.spec.prefix}***")


class JwtHs256Signer:
    """``jwt_hs256``: ``{"alg": "HS256", "typ": "JWT"}`` . ``{"iss": access key, "exp", "nbf"}``
    signed with the secret key (Kling's scheme)."""

    def __init__(self, spec: AuthSpec, api_key: str, secret_key: str | None,
                 now: Callable[[], float] = time.time) -> None:
        if not secret_key:
            raise ValueError("no secret key")
        self.spec, self.access_key, self.secret_key, self.now = spec, api_key, secret_key, now
        self._token: str | None = None
        self._expires = 0.0

    def token(self) -> str:
        now = self.now()
        if self._token is None or self._expires - now < self.spec.renew_before_s:
            self._expires = int(now + self.spec.ttl_s)
            self._token = sign_hs256({"iss": self.access_key, "exp": int(self._expires),
                                      "nbf": int(now - self.spec.not_before_s)}, self.secret_key)
            register_secret(self._token)  # a token is a credential too: never in a log
        return self._token

    def headers(self) -> dict[str, str]:
        return {self.spec.header: f"{self.spec.prefix}{self.token()}"}

    def renew(self) -> bool:
        self._token = None
        return True

    def describe(self) -> Message:
        return msg("{header}: {prefix}<JWT HS256 {{iss: access key ***, exp: now+{ttl} s, nbf: now-{nbf} s}} "
                   "signed with the secret key ***; renewed {renew} s before it expires>", header=self.spec.header,
                   prefix=self.spec.prefix, ttl=format(self.spec.ttl_s, "g"), nbf=format(self.spec.not_before_s, "g"),
                   renew=format(self.spec.renew_before_s, "g"))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_hs256(payload: dict[str, object], secret: str) -> str:
    """A compact JWS (RFC 7515) with HMAC-SHA256."""
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = _b64url(json.dumps(payload, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64url(signature)}"


SIGNERS: dict[str, type[StaticKeySigner] | type[JwtHs256Signer]] = {
    "bearer": StaticKeySigner,
    "header": StaticKeySigner,
    "jwt_hs256": JwtHs256Signer,
}


def make_signer(spec: AuthSpec, api_key: str, secret_key: str | None) -> Signer:
    """Raises ValueError when the scheme needs a secret key and there is none."""
    return SIGNERS[spec.scheme](spec, api_key, secret_key)
