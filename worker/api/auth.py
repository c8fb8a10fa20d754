"""Bearer-token auth: tokens from ``TERSIFY_API_TOKENS``, compared in constant time.

Each comma-separated entry is ``TOKEN`` (any session) or ``TOKEN:SCOPE``, where ``SCOPE`` is one
session id, or a prefix when it ends in ``*``; ``#TENANT`` at the end makes the token one of a
tenant's (``TERSIFY_TENANTS``). Tokens never appear in logs or error bodies.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from tersify.settings import Settings
from tersify.worker.api.problems import ApiProblem

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="tersify"'}


@dataclass(frozen=True, slots=True)
class Principal:
    """Who made a request: the sessions their token may touch (None: any), and its tenant."""

    scope: str | None = None
    tenant: str | None = None

    def allows(self, session_id: str) -> bool:
        """True when this token may act on ``session_id``."""
        if self.scope is None:
            return True
        if self.scope.endswith("*"):
            return session_id.startswith(self.scope[:-1])
        return hmac.compare_digest(session_id, self.scope)

    def check(self, session_id: str) -> None:
        """Raise the ``forbidden_session`` problem unless this token may use ``session_id``."""
        if not self.allows(session_id):
            raise ApiProblem("forbidden_session", "this token is scoped to other sessions")


ANYONE = Principal()


@dataclass(frozen=True, slots=True)
class _Token:
    digest: bytes
    principal: Principal


class TokenTable:
    """The configured tokens, kept only as SHA-256 digests."""

    def __init__(self, tokens: list[tuple[str, Principal]]) -> None:
        self._tokens = [_Token(_digest(t), principal) for t, principal in tokens]

    @classmethod
    def from_settings(cls, settings: Settings) -> TokenTable:
        """Parse ``TERSIFY_API_TOKENS``; ``ValueError`` on an empty token or scope, or a tenant
        ``TERSIFY_TENANTS`` does not name."""
        raw = settings.api_tokens.get_secret_value() if settings.api_tokens else ""
        known = settings.tenants
        parsed: list[tuple[str, Principal]] = []
        for entry in filter(None, (e.strip() for e in raw.split(","))):
            entry, hashed, tenant = entry.rpartition("#") if "#" in entry else (entry, "", "")
            token, sep, scope = entry.partition(":")
            if not token or (sep and not scope) or (hashed and tenant not in known):
                # the message names the position, never the entry: it holds a secret
                raise ValueError(f"TERSIFY_API_TOKENS entry {len(parsed) + 1} is malformed")
            parsed.append((token, Principal(scope or None, tenant or None)))
        return cls(parsed)

    def __bool__(self) -> bool:
        return bool(self._tokens)

    def lookup(self, token: str) -> Principal | None:
        """The principal of ``token``, or None; every entry is compared, so timing says nothing."""
        digest = _digest(token)
        found: Principal | None = None
        for entry in self._tokens:
            if hmac.compare_digest(digest, entry.digest):
                found = entry.principal
        return found


def _digest(token: str) -> bytes:
    # equal-length digests make compare_digest's time independent of the token's length too
    return hashlib.sha256(token.encode()).digest()


_bearer = HTTPBearer(auto_error=False, description="A token from TERSIFY_API_TOKENS.")


async def principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller, from ``Authorization: Bearer TOKEN``; the ``unauthorized`` problem if not."""
    table: TokenTable | None = request.app.state.tokens
    if table is None:  # auth disabled (TERSIFY_API_INSECURE_NO_AUTH on loopback)
        return ANYONE
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise ApiProblem("unauthorized", "send Authorization: Bearer TOKEN", headers=_CHALLENGE)
    found = table.lookup(credentials.credentials)
    if found is None:
        raise ApiProblem("unauthorized", "the token is not valid", headers=_CHALLENGE)
    return found


Caller = Annotated[Principal, Depends(principal)]
