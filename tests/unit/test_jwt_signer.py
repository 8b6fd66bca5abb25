"""The auth signers: Kling's HS256 JWT (claims, signature, renewed before it expires and on
demand) and the static-key schemes, with a fake clock."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import pytest

from mediaassist.core.secrets import redact
from mediaassist.core.task_profiles import AuthSpec
from mediaassist.providers.poll.auth import JwtHs256Signer, StaticKeySigner, make_signer, sign_hs256

SPEC = AuthSpec("jwt_hs256", ttl_s=1800, not_before_s=5, renew_before_s=300)


def decode(token: str, secret: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, claims) after checking the signature the way a server does."""
    head, body, signature = token.split(".")
    expected = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    assert base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)) == expected

    def part(text: str) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        return loaded

    assert "=" not in token  # base64url without padding
    return part(head), part(body)


class FakeNow:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_token_carries_iss_exp_nbf_and_is_signed_with_the_secret() -> None:
    signer = JwtHs256Signer(SPEC, "AK-access", "SK-secret", now=FakeNow(1_000_000.0))
    [(name, value)] = signer.headers().items()
    assert name == "Authorization" and value.startswith("Bearer ")
    header, claims = decode(value.removeprefix("Bearer "), "SK-secret")
    assert header == {"alg": "HS256", "typ": "JWT"}
    assert claims == {"iss": "AK-access", "exp": 1_001_800, "nbf": 999_995}


def test_a_known_token_matches_the_rfc_7515_construction() -> None:
    token = sign_hs256({"iss": "a", "exp": 2, "nbf": 1}, "s")
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    body = base64.urlsafe_b64encode(b'{"iss":"a","exp":2,"nbf":1}').rstrip(b"=").decode()
    mac = hmac.new(b"s", f"{head}.{body}".encode(), hashlib.sha256).digest()
    assert token == f"{head}.{body}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def test_the_token_is_kept_until_it_nears_its_end_then_renewed() -> None:
    now = FakeNow(1_000_000.0)
    signer = JwtHs256Signer(SPEC, "AK", "SK", now=now)
    first = signer.token()
    now.now += 1499  # 301 s left: still good
    assert signer.token() == first
    now.now += 2  # 299 s left: below renew_before_s
    second = signer.token()
    assert second != first
    assert decode(second, "SK")[1]["exp"] == int(now.now + 1800)


def test_renew_drops_the_cached_token_and_a_static_key_cannot_be_renewed() -> None:
    now = FakeNow(5_000.0)
    signer = JwtHs256Signer(SPEC, "AK", "SK", now=now)
    first = signer.token()
    now.now += 1
    assert signer.renew() is True
    assert signer.token() != first
    assert StaticKeySigner(AuthSpec("bearer"), "k").renew() is False


def test_tokens_are_registered_as_secrets_and_describe_masks_everything() -> None:
    signer = JwtHs256Signer(SPEC, "AK-visible?", "SK-visible?")
    token = signer.token()
    assert redact(f"sent {token}") == "sent ***"
    shown = str(signer.describe())
    assert "AK-visible?" not in shown and "SK-visible?" not in shown and "***" in shown


@pytest.mark.parametrize("spec, header", [
    (AuthSpec("bearer"), ("Authorization", "Bearer k-1")),
    (AuthSpec("header", header="Authorization", prefix="Token "), ("Authorization", "Token k-1")),
    (AuthSpec("header", header="x-goog-api-key", prefix=""), ("x-goog-api-key", "k-1")),
])
def test_static_schemes_send_the_key_under_any_header_and_prefix(spec: AuthSpec, header: tuple[str, str]) -> None:
    signer = make_signer(spec, "k-1", None)
    assert signer.headers() == dict([header]) and not spec.needs_secret


def test_the_jwt_scheme_needs_a_secret_key() -> None:
    assert SPEC.needs_secret
    with pytest.raises(ValueError):
        make_signer(SPEC, "AK", None)
