"""HTTP error classification shared by the SDK-based providers (which is retryable, and
how long the server asked us to wait)."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

from reflexion_bench.config import redact_text
from reflexion_bench.models.base import ModelError, TransientModelError

#: Statuses worth retrying: timeout, conflict, too early, rate limit, 5xx, Anthropic overload.
TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def scrub(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` (the key in use, whatever variable held it) and any
    key-looking string masked: error messages end up in the run log."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return redact_text(text)


def status_error(
    provider: str,
    status: int,
    message: str,
    headers: Mapping[str, str] | None,
    secret: str | None = None,
) -> ModelError:
    """The harness error for an HTTP error status (transient ones carry Retry-After)."""
    text = scrub(f"{provider} HTTP {status}: {message}", secret)
    if status in TRANSIENT_STATUSES:
        return TransientModelError(text, retry_after=retry_after_seconds(headers), kind=str(status))
    return ModelError(text)
