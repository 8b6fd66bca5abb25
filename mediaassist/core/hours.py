"""Working hours of a lane: ``hours = "23:00-07:00"`` (or a list of ranges), in local time.

A provider or an account may run only inside its hours -- at night when a quota resets, or
during the hours a team watches it. Outside them its lane rests: it takes no new work (running
work finishes), says when it opens, and the scheduler looks again at that moment. A range whose
end is before its start runs past midnight. Pure functions: the scheduler passes the local time.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from mediaassist.core.errors import ConfigError
from mediaassist.core.messages import Message, msg

DAY_S = 86400
# (start, end) in seconds since local midnight; end < start: the range runs past midnight.
Hours = tuple[tuple[int, int], ...]
_TIME = r"([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?"
_RANGE = re.compile(rf"\s*{_TIME}\s*-\s*{_TIME}\s*")


def parse_hours(value: object, where: str) -> Hours:
    """``"HH:MM-HH:MM"`` or a list of them (seconds allowed: ``"HH:MM:SS"``), as ``Hours``."""
    given = value if isinstance(value, list) else [value]
    texts = [text for text in given if isinstance(text, str)]
    if not texts or len(texts) != len(given):
        raise ConfigError(msg("{where}.hours: {value} is not allowed (allowed: \"HH:MM-HH:MM\" in local time, or a "
                              "list of them, e.g. \"23:00-07:00\" or [\"09:00-12:00\", \"14:00-18:00\"])",
                              where=where, value=repr(value)))
    ranges = []
    for text in texts:
        match = _RANGE.fullmatch(text)
        if match is None:
            raise ConfigError(msg("{where}.hours: {text} is not a time range (allowed: \"HH:MM-HH:MM\" in local "
                                  "time, 00:00 to 23:59, e.g. \"23:00-07:00\")",
                                  where=where, text=repr(text)))
        h1, m1, s1, h2, m2, s2 = match.groups()
        start = int(h1) * 3600 + int(m1) * 60 + int(s1 or 0)
        end = int(h2) * 3600 + int(m2) * 60 + int(s2 or 0)
        if start == end:
            raise ConfigError(msg("{where}.hours: {text} is empty (start and end are the same time); leave hours "
                                  "out to run at any time",
                                  where=where, text=repr(text)))
        ranges.append((start, end))
    return tuple(ranges)


def _seconds_of_day(moment: datetime) -> int:
    return moment.hour * 3600 + moment.minute * 60 + moment.second


def is_open(hours: Hours, moment: datetime) -> bool:
    if not hours:
        return True
    now = _seconds_of_day(moment)
    return any(start <= now < end if start < end else now >= start or now < end for start, end in hours)


def next_opening(hours: Hours, moment: datetime) -> datetime:
    """When the lane opens next (``moment`` itself when it is open)."""
    if is_open(hours, moment):
        return moment
    now = _seconds_of_day(moment)
    wait = min((start - now) % DAY_S for start, _end in hours)
    return moment.replace(microsecond=0) + timedelta(seconds=wait)


def describe(hours: Hours) -> str:
    return ", ".join(f"{_clock(start)}-{_clock(end)}" for start, end in hours)


def closed_reason(hours: Hours, moment: datetime) -> Message | None:
    """Why the lane takes no work now (``outside its hours 23:00-07:00; opens at 23:00``), or None."""
    if is_open(hours, moment):
        return None
    opens = next_opening(hours, moment)
    ranges, at = describe(hours), _clock(_seconds_of_day(opens))
    if opens.date() == moment.date():
        return msg("outside its hours {hours}; opens at {time}", hours=ranges, time=at)
    return msg("outside its hours {hours}; opens at {time} tomorrow", hours=ranges, time=at)


def parse_not_before(text: str, now: datetime) -> datetime:
    """When a task may start at the earliest: ``2026-12-03 23:00`` (local time, seconds optional),
    an ISO 8601 time with its offset, or ``23:00`` (the next time the clock shows it).
    Raises ``ValueError`` saying what is allowed."""
    text = text.strip()
    time_only = re.fullmatch(_TIME, text)
    if time_only is not None:
        hour, minute, second = (int(part or 0) for part in time_only.groups())
        moment = now.replace(hour=hour, minute=minute, second=second, microsecond=0)
        return (moment if moment > now else moment + timedelta(days=1)).astimezone()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(str(not_a_time(text))) from None
    return moment if moment.tzinfo is not None else moment.astimezone()


def not_a_time(text: str) -> Message:
    """Why ``text`` is no ``parse_not_before`` time, and what is allowed."""
    return msg("{text} is not a time (allowed: 2026-12-03 23:00, an ISO 8601 time with its offset, or 23:00 for "
               "the next time the clock shows it)", text=repr(text.strip()))


def _clock(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")
