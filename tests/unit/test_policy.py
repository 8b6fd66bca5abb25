"""The scheduler's policy on plain data: which lanes claim how many, how an attempt ends, whether
a failure comes back, when a run's batches are settled. No store, no loop, no provider."""

from __future__ import annotations

import dataclasses

import pytest

from mediaassist.core.lane_api import StopReason
from mediaassist.core.lanes import AccountView, LaneConditions
from mediaassist.core.limiter import AUTO_START
from mediaassist.core.messages import verbatim
from mediaassist.core.policy import (
    ClaimRequest,
    End,
    LaneSlots,
    Outcome,
    QueueCount,
    Retry,
    batches_settled,
    blocked_lanes,
    current_limit,
    decide_end,
    decide_retry,
    plan_claims,
)

HERE = "machine-a"
ALICE = AccountView("alice", site="chat", login_state="ok")
BOB = AccountView("bob", site="chat", login_state="ok")
OPEN = LaneConditions(accounts={"alice": ALICE, "bob": BOB})


def web(account: str, running: int = 0) -> LaneSlots:
    return LaneSlots(name=f"web:{account}", kind="web", route="web:chat", limit=1, running=running, account=account)


def api(limit: int, running: int = 0, adaptive: bool = False, resting: bool = False) -> LaneSlots:
    return LaneSlots(name="api:x", kind="api", route="api:x", limit=limit, running=running, adaptive=adaptive,
                     resting=resting)


def poll(limit: int = 100, running: int = 0) -> LaneSlots:
    return LaneSlots(name="poll:rh", kind="poll", route="poll:rh", limit=limit, running=running)


# --- plan_claims -------------------------------------------------------------------------------

def test_web_lanes_claim_one_task_per_account_through_the_accounts_guard() -> None:
    claims = plan_claims([web("alice"), web("bob")], OPEN, HERE)
    assert claims == [ClaimRequest("web:alice", "web:chat", 1, account="alice", lane_limit=None),
                      ClaimRequest("web:bob", "web:chat", 1, account="bob", lane_limit=None)]


def test_a_web_account_running_its_one_task_claims_nothing() -> None:
    assert [c.lane for c in plan_claims([web("alice", running=1), web("bob")], OPEN, HERE)] == ["web:bob"]


def test_a_web_lane_limit_is_one_whatever_the_config_says() -> None:
    wide = LaneSlots(name="web:alice", kind="web", route="web:chat", limit=9, account="alice")
    assert [c.count for c in plan_claims([wide], OPEN, HERE)] == [1]


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("running", [0, 1, 5])
def test_an_api_lane_claims_its_free_slots_and_the_store_holds_its_limit(limit: int, running: int) -> None:
    claims = plan_claims([api(limit, running)], LaneConditions(), HERE)
    if running >= limit:
        assert claims == []
    else:
        # lane_limit: the claim counts every process's running rows against the same limit
        assert claims == [ClaimRequest("api:x", "api:x", limit - running, lane_limit=limit)]


def test_an_adaptive_lane_claims_up_to_its_learned_limit_within_the_ceiling() -> None:
    lane = api(5, adaptive=True)
    assert plan_claims([lane], LaneConditions(), HERE)[0].count == AUTO_START  # nothing learnt yet
    assert plan_claims([lane], LaneConditions(learned={"api:x": 4}), HERE)[0].lane_limit == 4
    assert plan_claims([lane], LaneConditions(learned={"api:x": 50}), HERE)[0].lane_limit == 5
    assert plan_claims([lane], LaneConditions(learned={"api:x": 0}), HERE)[0].lane_limit == 1


def test_a_poll_lane_claims_all_its_free_slots_in_one_request_from_the_queue_head() -> None:
    # One request: the store takes that many from the head (priority, then FIFO) in one statement.
    assert plan_claims([poll(100, running=97)], LaneConditions(), HERE) == [
        ClaimRequest("poll:rh", "poll:rh", 3, lane_limit=100)]


def test_paused_and_resting_lanes_claim_nothing_and_others_still_do() -> None:
    paused = LaneConditions(paused={"web:alice": "paused by operator"}, accounts=OPEN.accounts)
    lanes = [web("alice"), web("bob"), api(3, resting=True), poll()]
    assert [c.lane for c in plan_claims(lanes, paused, HERE)] == ["web:bob", "poll:rh"]


def test_claims_keep_lane_order() -> None:
    lanes = [poll(), api(2), web("bob"), web("alice")]
    assert [c.lane for c in plan_claims(lanes, OPEN, HERE)] == ["poll:rh", "api:x", "web:bob", "web:alice"]


@pytest.mark.parametrize(("account", "why"), [
    (None, "account not in the store"),
    (AccountView("alice", enabled=False), "account disabled"),
    (AccountView("alice", login_state="needs_login"), "account needs login"),
    (AccountView("alice", host="machine-b"), "account lives on machine-b"),
])
def test_a_web_lane_whose_account_cannot_run_here_claims_nothing_and_says_why(
        account: AccountView | None, why: str) -> None:
    conditions = LaneConditions(accounts={} if account is None else {"alice": account})
    assert plan_claims([web("alice")], conditions, HERE) == []
    assert {lane: str(reason) for lane, reason in blocked_lanes([web("alice")], conditions, HERE).items()} == {
        "web:alice": why}  # the English of the message the window and the CLI render


def test_an_account_bound_to_this_machine_runs_here() -> None:
    conditions = LaneConditions(accounts={"alice": AccountView("alice", host=HERE)})
    assert [c.lane for c in plan_claims([web("alice")], conditions, HERE)] == ["web:alice"]


def test_a_pause_is_the_reason_shown_before_an_accounts() -> None:
    conditions = LaneConditions(paused={"web:alice": "quota"}, accounts={"alice": AccountView("alice", enabled=False)})
    assert blocked_lanes([web("alice")], conditions, HERE) == {"web:alice": verbatim("quota")}


def test_pauses_of_lanes_not_run_here_are_not_ours() -> None:
    assert blocked_lanes([poll()], LaneConditions(paused={"api:gone": "x"}), HERE) == {}


def test_current_limit() -> None:
    assert current_limit("web", 7, False, None) == 1
    assert current_limit("api", 4, False, 2) == 4  # a fixed gate ignores anything learnt
    assert current_limit("api", 4, True, 2) == 2


# --- decide_end --------------------------------------------------------------------------------

@pytest.mark.parametrize(("outcome", "stop", "end"), [
    (Outcome.RESULT, None, End.SUCCESS),
    (Outcome.RESULT, StopReason.CANCEL, End.SUCCESS),  # the result arrived before the cancel took
    (Outcome.RESULT, StopReason.STALLED, End.DROP_RESULT),  # reaped: its retry owns the row
    (Outcome.STOPPED, StopReason.CANCEL, End.CANCELED),
    (Outcome.STOPPED, StopReason.SHUTDOWN, End.RELEASE),
    (Outcome.STOPPED, StopReason.STALLED, End.NOTHING),
    (Outcome.STOPPED, None, End.NOTHING),
    (Outcome.REQUEUE, None, End.RELEASE),
    (Outcome.CANCELED_ELSEWHERE, None, End.CANCELED),
    (Outcome.ERROR, None, End.FAIL),
    (Outcome.BUG, None, End.FAIL),
    # A stop we asked for decides over what the work raised on its way out.
    (Outcome.ERROR, StopReason.CANCEL, End.CANCELED),
    (Outcome.BUG, StopReason.SHUTDOWN, End.RELEASE),
    (Outcome.REQUEUE, StopReason.STALLED, End.NOTHING),
])
def test_decide_end(outcome: Outcome, stop: StopReason | None, end: End) -> None:
    assert decide_end(outcome, stop) is end


@pytest.mark.parametrize(("kwargs", "retry"), [
    ({"retry": True, "retries_left": 2, "crash_retries_left": 0}, Retry.LATER),
    ({"retry": True, "retries_left": 0, "crash_retries_left": 3}, Retry.NO),
    ({"retry": False, "retries_left": 2, "crash_retries_left": 3}, Retry.NO),
    ({"retry": True, "retries_left": 0, "crash_retries_left": 1, "crashed": True, "immediate": True}, Retry.NOW),
    ({"retry": True, "retries_left": 5, "crash_retries_left": 0, "crashed": True}, Retry.NO_CRASH_BUDGET),
])
def test_decide_retry_spends_the_crash_budget_only_on_crashes(kwargs: dict[str, object], retry: Retry) -> None:
    assert decide_retry(**kwargs) is retry  # type: ignore[arg-type]


# --- the end of a run --------------------------------------------------------------------------

def test_batches_are_settled_when_nothing_runs_and_nothing_pending_can_be_taken() -> None:
    done = [QueueCount("api:x", None, False, "success", 5), QueueCount("api:x", None, False, "failed", 1)]
    assert batches_settled(done, {"api:x"}, {None})
    assert not batches_settled([*done, QueueCount("api:x", None, False, "running")], set(), set())
    assert not batches_settled([QueueCount("api:x", None, False, "pending")], {"api:x"}, {None})
    # pending on a lane nobody here can open (paused, disabled account): settled
    assert batches_settled([QueueCount("web:chat", None, False, "pending")], {"api:x"}, {None})
    # pinned to an account that cannot run: settled; to one that can: not
    pinned = [QueueCount("web:chat", "bob", True, "pending")]
    assert batches_settled(pinned, {"web:chat"}, {"alice"})
    assert not batches_settled(pinned, {"web:chat"}, {"alice", "bob"})


# --- a provider's keys ---------------------------------------------------------------------------

def key(label: str, limit: int = 2, running: int = 0) -> LaneSlots:
    return LaneSlots(name=f"api:x/{label}", kind="api", route="api:x", limit=limit, running=running, key=label)


def test_keys_take_turns_one_task_each_least_loaded_first() -> None:
    claims = plan_claims([key("a", limit=2, running=1), key("b", limit=3), poll()], OPEN, HERE)
    # b is idle (0/3), a half full (1/2): b first; then b again, as a has no more free slots
    assert [(c.lane, c.count) for c in claims] == [("api:x/b", 1), ("api:x/a", 1), ("api:x/b", 1),
                                                   ("api:x/b", 1), ("poll:rh", 100)]
    assert {(c.key, c.lane_limit) for c in claims if c.key} == {("a", 2), ("b", 3)}


def test_a_limit_per_day_caps_what_a_lane_asks_for() -> None:
    capped = dataclasses.replace(OPEN, daily_left={"api:x": 1, "poll:rh": 0})
    assert [(c.lane, c.count) for c in plan_claims([api(3), poll()], capped, HERE)] == [("api:x", 1)]
