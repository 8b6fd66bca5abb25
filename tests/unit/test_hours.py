"""Working hours: parsing with errors that name the key, overnight ranges, the next opening, and the
policy's view of a lane outside its hours."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mediaassist.core.config import parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.hours import closed_reason, is_open, next_opening, parse_hours, parse_not_before
from mediaassist.core.importer import read_task_file
from mediaassist.core.lanes import LaneConditions
from mediaassist.core.policy import LaneSlots, blocked_lanes, closed_lanes, plan_claims, waiting_for_hours

NIGHT = parse_hours("23:00-07:00", "providers[0]")
DAY = datetime(2026, 12, 2)


def at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return DAY.replace(hour=hour, minute=minute, second=second)


def test_ranges_and_lists_parse_to_seconds_of_the_day() -> None:
    assert NIGHT == ((23 * 3600, 7 * 3600),)
    assert parse_hours(["09:00-12:00", " 14:00 - 18:30:15 "], "x") == ((32400, 43200), (50400, 66615))


@pytest.mark.parametrize(("value", "message"), [
    ("24:00-07:00", "providers[0].hours: '24:00-07:00' is not a time range"),
    ("9-17", "providers[0].hours: '9-17' is not a time range"),
    ("08:00-08:00", "providers[0].hours: '08:00-08:00' is empty"),
    (9, 'providers[0].hours: 9 is not allowed (allowed: "HH:MM-HH:MM" in local time'),
    ([], "providers[0].hours: [] is not allowed"),
    (["09:00-12:00", 5], "providers[0].hours: ['09:00-12:00', 5] is not allowed"),
])
def test_a_bad_range_names_the_key_and_what_is_allowed(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_hours(value, "providers[0]")
    assert message in str(caught.value)


@pytest.mark.parametrize(("moment", "open_"), [
    (at(23), True), (at(2), True), (at(6, 59, 59), True), (at(7), False), (at(12), False), (at(22, 59), False),
])
def test_an_overnight_range_is_open_across_midnight(moment: datetime, open_: bool) -> None:
    assert is_open(NIGHT, moment) is open_


def test_the_next_opening_and_the_reason_say_when() -> None:
    assert next_opening(NIGHT, at(12, 30)) == at(23)
    assert next_opening(NIGHT, at(2)) == at(2)
    assert str(closed_reason(NIGHT, at(12, 30))) == "outside its hours 23:00-07:00; opens at 23:00"
    assert closed_reason(NIGHT, at(3)) is None
    split = parse_hours(["09:00-12:00", "14:00-18:00"], "x")
    assert str(closed_reason(split, at(12, 5))) == "outside its hours 09:00-12:00, 14:00-18:00; opens at 14:00"
    assert str(closed_reason(split, at(19))) == "outside its hours 09:00-12:00, 14:00-18:00; opens at 09:00 tomorrow"


def test_a_closed_lane_claims_nothing_and_only_waits_for_its_hours() -> None:
    lanes = [LaneSlots(name="api:night", kind="api", route="api:night", limit=3),
             LaneSlots(name="api:day", kind="api", route="api:day", limit=3),
             LaneSlots(name="api:held", kind="api", route="api:held", limit=3)]
    closed = closed_lanes({"api:night": NIGHT, "api:held": NIGHT}, at(12))
    conditions = LaneConditions(paused={"api:held": "quota"}, closed=closed)
    assert [claim.lane for claim in plan_claims(lanes, conditions, "here")] == ["api:day"]
    blocked = blocked_lanes(lanes, conditions, "here")
    assert {lane: str(why) for lane, why in blocked.items()} == {
        "api:night": "outside its hours 23:00-07:00; opens at 23:00", "api:held": "quota"}
    assert waiting_for_hours(blocked, conditions) == {"api:night"}  # a paused lane waits for a person


NOON = datetime(2026, 12, 2, 12, 0).astimezone()


@pytest.mark.parametrize(("text", "expected"), [
    ("23:00", datetime(2026, 12, 2, 23, 0).astimezone()),
    ("09:30", datetime(2026, 12, 3, 9, 30).astimezone()),  # already past today: tomorrow
    ("2026-12-05 06:15", datetime(2026, 12, 5, 6, 15).astimezone()),
    ("2026-12-05T06:15:00+08:00", datetime.fromisoformat("2026-12-05T06:15:00+08:00")),
])
def test_not_before_reads_local_times_and_iso_with_offsets(text: str, expected: datetime) -> None:
    assert parse_not_before(text, NOON.replace(tzinfo=None)) == expected


def test_not_before_that_is_no_time_says_what_is_allowed() -> None:
    with pytest.raises(ValueError, match=r"'tonight' is not a time \(allowed: 2026-12-03 23:00"):
        parse_not_before("tonight", NOON)


def test_a_task_file_row_carries_its_not_before_and_a_bad_one_is_its_rows_error(tmp_path: Path) -> None:
    config = parse_config({"providers": [{"name": "sim", "kind": "api", "type": "simulated"}],
                           "models": [{"name": "writer", "kind": "api", "provider": "sim"}]})
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("model,prompt,not_before\nwriter,a,2026-12-05 06:15\nwriter,b,soon\nwriter,c,\n",
                     encoding="utf-8")
    report = read_task_file(tasks, config)
    assert [t.not_before for t in report.tasks] == [datetime(2026, 12, 5, 6, 15).timestamp(), 0.0]
    [error] = report.errors
    assert error.row == 3 and "not_before 'soon' is not a time" in error.reason
