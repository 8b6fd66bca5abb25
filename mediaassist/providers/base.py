"""The provider interface, re-exported from ``mediaassist.core.lane_api`` (where the scheduler
reads it too, without importing any provider), and what the HTTP providers share."""

from email.utils import parsedate_to_datetime

from mediaassist.core.lane_api import Provider, StopReason, TaskContext, TaskResult

__all__ = ["MAX_RETRY_AFTER_S", "Provider", "StopReason", "TaskContext", "TaskResult", "parse_retry_after"]

MAX_RETRY_AFTER_S = 3600.0  # a longer wait asked for is a broken header, not a plan


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - now
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return min(MAX_RETRY_AFTER_S, max(0.0, seconds))

