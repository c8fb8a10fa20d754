"""What the HTTP model providers share on the wire: one JSON POST under a total time budget, and
the mapping of every way it can fail onto a ``ProviderError`` with a ``FallbackReason``.

=================================  ================================================
failure                            reason
=================================  ================================================
no answer within ``timeout``       TIMEOUT
HTTP 408                           TIMEOUT
HTTP 429                           RATE_LIMITED (``retry_after`` from the headers)
HTTP 5xx (500, 503, 529, ...)      SERVER_ERROR
other non-2xx (400, 401, 404 ...)  CLIENT_ERROR
refused, reset, closed mid-body    CONNECTION_ERROR
2xx body not JSON, fields missing  MALFORMED
=================================  ================================================

``retry_after`` (on 429, 408 and 5xx) comes from ``retry-after-ms`` or ``retry-after``.

An answer that is cut off (the server closes before ``Content-Length`` bytes) is a
CONNECTION_ERROR, not MALFORMED: the server did not finish, and another attempt may succeed.
Errors never chain the httpx exception: it carries the request, headers and key included, and a
traceback renderer that shows attributes or locals must not reach it. The exception's type and
message go into ``detail`` instead, with the key redacted should a server echo it.
"""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import httpx
from pydantic import SecretStr

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.worker.model.providers.pool import ClientPool

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_DETAIL_CHARS = 200


def post_json(
    pool: ClientPool, request: httpx.Request, timeout: float, *, secret: SecretStr | None = None
) -> dict[str, Any]:
    """Send ``request`` on a pooled client and return the JSON object it answered.

    ``timeout`` is the total budget (waiting for a client, connecting, sending, every read); the
    response is streamed so no single slow read can outlive it. Raises ``ProviderError``.
    """
    failure: tuple[FallbackReason, str] | None = None
    try:
        with pool.client(timeout) as client:
            response = client.send(request, stream=True)
            try:
                ok = response.is_success
                raw = _read(response, MAX_RESPONSE_BYTES if ok else MAX_ERROR_BODY_BYTES, ok)
            finally:
                response.close()
    except httpx.TimeoutException as exc:
        failure = FallbackReason.TIMEOUT, _describe(exc)
    except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
        failure = FallbackReason.CLIENT_ERROR, _describe(exc)
    except httpx.TransportError as exc:
        failure = FallbackReason.CONNECTION_ERROR, _describe(exc)
    except httpx.DecodingError as exc:
        failure = FallbackReason.MALFORMED, _describe(exc)
    except httpx.HTTPError as exc:
        failure = FallbackReason.CONNECTION_ERROR, _describe(exc)
    except RuntimeError:
        if not pool.closed:
            raise
        failure = FallbackReason.CONNECTION_ERROR, "the provider is closed"
    if failure is not None:
        # Raised outside the except blocks so no httpx exception rides along as __context__.
        raise ProviderError(failure[0], short(_redact(failure[1], secret)))
    if not ok:
        raise status_error(response.status_code, response.headers, raw, secret, request.url)
    try:
        data = json.loads(raw)
    except ValueError:
        raise ProviderError(
            FallbackReason.MALFORMED, f"HTTP {response.status_code} body is not JSON"
        ) from None
    if not isinstance(data, dict):
        raise ProviderError(FallbackReason.MALFORMED, "response body is not a JSON object")
    return data


def status_error(
    status: int,
    headers: httpx.Headers,
    body: bytes,
    secret: SecretStr | None = None,
    url: httpx.URL | None = None,
) -> ProviderError:
    """The ``ProviderError`` for a non-2xx answer, naming the API's own error type and message
    and the URL that answered (without credentials or query: a wrong base URL shows)."""
    if status == 429:
        reason = FallbackReason.RATE_LIMITED
    elif status == 408:
        reason = FallbackReason.TIMEOUT
    elif status >= 500:
        reason = FallbackReason.SERVER_ERROR
    else:
        reason = FallbackReason.CLIENT_ERROR
    where = f" ({_shown(url)})" if url is not None else ""
    said = short(_redact(f"HTTP {status} {_api_error(body)}".rstrip(), secret))
    detail = short(said[: MAX_DETAIL_CHARS - len(where) - 1].rstrip("…") + where)
    if reason is FallbackReason.CLIENT_ERROR:
        return ProviderError(reason, detail)
    return ProviderError(reason, detail, retry_after=retry_after_seconds(headers))


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (delta or HTTP date), if any."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def malformed(what: str) -> ProviderError:
    """The error for a 2xx answer that lacks what the wire format promises."""
    return ProviderError(FallbackReason.MALFORMED, short(what))


def optional_int(value: object) -> int | None:
    """A token count if the API reported a sane one."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _read(response: httpx.Response, limit: int, strict: bool) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            if strict:
                raise ProviderError(FallbackReason.MALFORMED, f"response body over {limit} bytes")
            break
    return b"".join(chunks)[:limit]


def _api_error(body: bytes) -> str:
    # Anthropic and OpenAI both nest {"type", "message"} under "error".
    try:
        data = json.loads(body)
    except ValueError:
        return body[:80].decode("utf-8", "replace").strip()
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return ""
    kind, message = error.get("type"), error.get("message")
    parts = [str(kind) if kind else "", str(message) if message else ""]
    return ": ".join(part for part in parts if part)


def _shown(url: httpx.URL) -> str:
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"


def _describe(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _redact(text: str, secret: SecretStr | None) -> str:
    key = secret.get_secret_value() if secret is not None else ""
    return text.replace(key, "[redacted]") if key else text


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"
