"""Money end to end: price tables against each demo service (tokens, images, seconds, coins),
two currencies in one batch, estimates against actuals, budgets that stop a batch between
tasks, a RunningHub balance that runs out -- real scheduler, real httpx, real demo servers,
a real store."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from mediaassist.core.budget import Budgeter, estimate_batch
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.money import SOURCE_PROVIDER, SOURCE_TABLE, Money, budget_day
from mediaassist.core.store import SPEND_SETTLED, NewTask, Spend, SpendTotal, Store
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY, VideoTaskDemoServer
from tests.harness import numbered_tasks, run_batch, scheduler_running, task_log, wait_until
from tests.helpers import toml_table
from tests.poll_helpers import SPEED

KEY = "sk-money-test-0123456789"


def _config(text: str) -> AppConfig:
    return parse_config(tomllib.loads(text))


def assert_totals_agree() -> None:
    """The running totals budgets read equal the spend rows they sum (every reservation,
    settlement and release kept them in step)."""
    sums: dict[str, int] = {}
    for row in Spend.select():
        for name in row.total_names:
            sums[name] = sums.get(name, 0) + row.amount
    assert {t.name: t.amount for t in SpendTotal.select() if t.amount or t.name in sums} == sums


def _settled(store: Store, task_id: str) -> list[Any]:
    return [r for r in store.task_spend([task_id]).get(task_id, []) if r.state == SPEND_SETTLED]


# --- price tables against each demo service ---------------------------------------------------

@pytest.fixture
def openai_server() -> Iterator[DemoOpenAIServer]:
    with DemoOpenAIServer(api_key=KEY, latency_s=(0.01, 0.03), models=("writer", "painter")) as server:
        yield server


@pytest.mark.asyncio
async def test_tokens_and_images_priced_in_two_currencies_in_one_batch(openai_server, store, data_dir) -> None:
    config = _config(
        toml_table("providers", name="acme", kind="api", type="openai", base_url=openai_server.base_url,
                   api_key=KEY, concurrency=3)
        + 'price = { currency = "CNY", per_1k_input_tokens = 0.002, per_1k_output_tokens = "0.008" }\n\n'
        + toml_table("models", name="writer", kind="api", provider="acme", endpoint="chat")
        + toml_table("models", name="painter", kind="api", provider="acme", endpoint="images")
        + 'price = { currency = "USD", per_image = 0.04 }\n')
    tasks = (numbered_tasks(4, "writer", "api", "api:acme", "w", prompt="a slogan for tea")
             + [NewTask(model="painter", model_kind="api", route="api:acme", prompt=f"a teapot {i}",
                        task_id=f"p{i}", params={"n": 2}) for i in range(2)])
    done = await run_batch(store, config, data_dir, tasks, SPEED)
    assert [t.state for t in done] == ["success"] * 6
    for task in done:
        [row] = _settled(store, task.task_id)
        usage = store.result(task.task_id).usage_dict
        if task.model == "writer":
            expected = (Decimal(usage["prompt_tokens"]) * Decimal("0.002")
                        + Decimal(usage["completion_tokens"]) * Decimal("0.008")) / 1000
            assert row.money == Money(expected, "CNY")
        else:
            assert row.money == Money(Decimal("0.08"), "USD")  # two images at $0.04
        assert row.source == SOURCE_TABLE and row.estimate is not None
        assert "cost " in task_log(store, task.task_id)
    totals = store.spend_totals(batch_ids=["b1"], settled_only=True)
    assert set(totals.by_currency) == {"CNY", "USD"}  # never one number across currencies
    assert totals.by_currency["USD"] == Decimal("0.16")
    cny = [_settled(store, t.task_id)[0].money.amount for t in done if t.model == "writer"]
    assert totals.by_currency["CNY"] == sum(cny, Decimal(0))


def _video_config(base_url: str, profile: str, price: str) -> AppConfig:
    return _config(toml_table("providers", name="gateway", kind="poll", type="task_api", profile=profile,
                              base_url=base_url, api_key=DEMO_VIDEO_KEY, max_polling_tasks=4, poll_interval_s=5)
                   + toml_table("models", name="video", kind="poll", provider="gateway", remote_model="sora-2"
                                if profile == "openai-videos" else "kling-v2") + f"price = {price}\n")


@pytest.mark.asyncio
@pytest.mark.parametrize(("profile", "words", "params", "seconds"), [
    ("openai-videos", "newapi", {"seconds": "8"}, 8),
    ("newapi-video", "huawei", {"duration": 6}, 6),
    ("newapi-video", "newapi", {}, 5),  # the service's default length, billed as it says
])
async def test_billed_seconds_are_priced_per_second(store, data_dir, profile, words, params, seconds) -> None:
    models = ("sora-2",) if profile == "openai-videos" else ("kling-v2",)
    with VideoTaskDemoServer(profile, words=words, models=models, job_limit=3, seed=3,
                             queued_s=(0.05, 0.1), run_s=(0.2, 0.4)) as server:
        config = _video_config(server.base_url, profile, '{ currency = "USD", per_second = 0.1 }')
        tasks = numbered_tasks(2, "video", "poll", "poll:gateway", "v", **params)
        done = await run_batch(store, config, data_dir, tasks, SPEED)
    assert [t.state for t in done] == ["success"] * 2
    for task in done:
        [row] = _settled(store, task.task_id)
        assert (row.money, row.source) == (Money(Decimal("0.1") * seconds, "USD"), SOURCE_TABLE)
        if params:  # the length was asked for: the estimate is the actual
            assert row.estimate == row.amount


@pytest.fixture
def runninghub() -> Iterator[RunningHubDemoServer]:
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.05, 0.1), run_s=(0.2, 0.4), seed=7) as server:
        yield server


def _rh_config(url: str, price: str | None = None, limit: int = 3, extra: str = "") -> AppConfig:
    return _config(
        toml_table("providers", name="rh", kind="poll", type="runninghub", base_url=url, api_key=DEMO_API_KEY,
                   max_polling_tasks=limit, poll_interval_s=5) + extra
        + toml_table("models", name="video", kind="poll", provider="rh", workflow_id="1904136902449209346",
                     prompt_node_id="6", prompt_field_name="text")
        + (f"price = {price}\n" if price else ""))


def _rh_tasks(n: int, prefix: str) -> list[NewTask]:
    return numbered_tasks(n, "video", "poll", "poll:rh", prefix)


@pytest.mark.asyncio
async def test_runninghub_coins_are_the_cost_and_the_record_corrects_the_next_estimate(
        runninghub, store, data_dir) -> None:
    """The table says 20 coins a task; RunningHub charges 17. The first batch reserves 20 and
    costs 17 (source: provider); the next batch's estimate has learnt it (within 1 %)."""
    config = _rh_config(runninghub.url, '{ currency = "coins", per_task = 20 }')
    first = await run_batch(store, config, data_dir, _rh_tasks(3, "r"), SPEED)
    for task in first:
        [row] = _settled(store, task.task_id)
        assert (row.money, row.source) == (Money(Decimal(17), "coins"), SOURCE_PROVIDER)
        assert row.estimate == 20_000_000  # micro-coins: the table, before any record
    budgeter = Budgeter(store, config)
    estimate = estimate_batch(budgeter, _rh_tasks(4, "s"))
    assert estimate.total.by_currency["coins"] == Decimal(68)  # 4 x 17: corrected by the record
    assert "corrected by the record of 3 task(s)" in estimate.models[0].basis
    second = await run_batch(store, config, data_dir, _rh_tasks(4, "s"), SPEED, batch="b2")
    assert_totals_agree()  # reserved 20 or 17, settled 17: the totals followed each change
    actual = store.spend_totals(batch_ids=["b2"], settled_only=True).by_currency["coins"]
    assert [t.state for t in second] == ["success"] * 4
    assert abs(store.batch_estimates(["b2"]).by_currency["coins"] - actual) <= actual / 100


@pytest.mark.asyncio
async def test_a_balance_running_out_pauses_the_lane_before_the_task_it_cannot_pay(store, data_dir) -> None:
    """40 coins on the key, 17 a task: two tasks run; the third is not created (RunningHub
    would refuse it with 416) -- the lane pauses saying what is left."""
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.05, 0.1), run_s=(0.2, 0.4), seed=7,
                              balance=40) as server:
        config = _rh_config(server.url, '{ currency = "coins", per_task = 17 }')
        done = await run_batch(store, config, data_dir, _rh_tasks(4, "r"), SPEED)
        stats = server.stats()
    assert [t.state for t in done] == ["success", "success", "pending", "pending"]
    assert stats["create_calls"] == 2 and "416" not in stats["rejects"]
    assert stats["balances"] == {DEMO_API_KEY: 6}
    reason = store.paused_lanes()["poll:rh"]
    assert reason == "balance: 6 coins left on rh, the next task needs about 17 coins"
    assert all(t.started_at is None and t.attempt == 1 for t in done[2:])  # never started


@pytest.mark.asyncio
async def test_the_balance_is_read_again_once_a_lane_has_run_its_batch(store, data_dir) -> None:
    """The window never calls ``refresh_balances`` as ``run`` does after its batch: the lane
    going idle reads it, so the panel shows what is left, not what there was at start."""
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.05, 0.1), run_s=(0.2, 0.4), seed=7,
                              balance=100) as server:
        async with scheduler_running(store, _rh_config(server.url), data_dir, SPEED) as sched:
            provider = sched.lanes["poll:rh"].provider
            assert provider.balance == Money(Decimal(100), "coins")  # read at start
            store.enqueue("b1", _rh_tasks(3, "r"))
            sched.wake()
            await sched.wait_for_batches(["b1"])
            await wait_until(lambda: provider.balance == Money(Decimal(100 - 3 * 17), "coins"))
            assert sched.budget.balances["poll:rh"][0] == provider.balance
        assert server.stats()["calls"]["account"] <= 3  # start, once idle (and maybe between tasks)


GATEWAY_BALANCE = '{ url = "/user/balance", amount = "balance_infos[0].total_balance", ' \
                  'currency_at = "balance_infos[0].currency" }'


@pytest.mark.asyncio
async def test_a_gateway_balance_is_read_and_the_lane_pauses_before_the_key_runs_dry(store, data_dir) -> None:
    """A prepaid gateway key (DeepSeek's balance route on the demo): its balance is read at start
    and spent down by the price table as tasks end; the lane pauses before a task the rest cannot
    pay -- the gateway never has to refuse one with its 402."""
    with DemoOpenAIServer(api_key=KEY, models=("writer",), balance=Decimal("2.00"),
                          price_per_1k_tokens=Decimal(2)) as server:
        config = _config(
            toml_table("providers", name="acme", kind="api", type="openai", base_url=server.base_url,
                       api_key=KEY, concurrency=1) + f"balance = {GATEWAY_BALANCE}\n"
            + 'price = { currency = "CNY", per_1k_input_tokens = 2, per_1k_output_tokens = 2 }\n\n'
            + toml_table("models", name="writer", kind="api", provider="acme", endpoint="chat"))
        done = await run_batch(store, config, data_dir,
                               numbered_tasks(24, "writer", "api", "api:acme", "w", prompt="a slogan for tea"), SPEED)
        statuses = [r.status for r in server.requests if r.path.endswith("/chat/completions")]
        left = server.balance
    ran = [t for t in done if t.state == "success"]
    assert 1 < len(ran) < 24 and all(t.state == "pending" and t.started_at is None for t in done[len(ran):])
    assert 402 not in statuses and left is not None and left > 0
    reason = store.paused_lanes()["api:acme"]
    assert reason.startswith("balance: ") and "left on acme" in reason
    spent = store.spend_totals(batch_ids=["b1"], settled_only=True).by_currency["CNY"]
    assert spent == Decimal("2.00") - left  # the price table charged what the gateway did


def test_a_balance_table_names_every_mistake() -> None:
    base = toml_table("providers", name="acme", kind="api", type="openai", base_url="http://127.0.0.1:9/v1")
    for table, expected in [
            ('{ url = "/b" }', "providers[0].balance.amount: required"),
            ('{ url = "/b", amount = "x" }', "name the currency"),
            ('{ url = "/b", amount = "x", currency = "CNY", currency_at = "c" }', "one of the two"),
            ('{ url = "/b", amount = "x..y", currency = "CNY" }', "is not a path"),
            ('{ url = "/b", amount = "x", currency = "CNY", left = 1 }', "providers[0].balance.left: unknown key")]:
        with pytest.raises(ConfigError, match=re.escape(expected)):
            _config(base + f"balance = {table}\n")
    rh = toml_table("providers", name="rh", kind="poll", type="runninghub", base_url="http://127.0.0.1:9")
    with pytest.raises(ConfigError, match='only for type = "openai"'):
        _config(rh + f"balance = {GATEWAY_BALANCE}\n")


@pytest.mark.asyncio
async def test_with_no_price_the_services_own_416_stops_the_lane(store, data_dir) -> None:
    """No price table and no record yet when the three are claimed together: nothing to check
    them against; RunningHub's refusal (its real code) pauses the lane, and the refused task
    waits, not failed. (Once a task is on record its charge is the estimate: see above.)"""
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.05, 0.1), run_s=(0.2, 0.4), seed=7,
                              balance=40) as server:
        done = await run_batch(store, _rh_config(server.url, limit=3), data_dir, _rh_tasks(3, "r"), SPEED)
        stats = server.stats()
    assert [t.state for t in done] == ["success", "success", "pending"]
    assert stats["rejects"] == {"416": 1}
    assert "416 TASK_CREATE_FAILED_BY_NOT_ENOUGH_WALLET" in store.paused_lanes()["poll:rh"]
    for task in done[:2]:  # what it did cost is known from the provider, with no table
        assert [(r.money, r.source) for r in _settled(store, task.task_id)] == \
            [(Money(Decimal(17), "coins"), SOURCE_PROVIDER)]
    assert not store.task_spend([done[2].task_id])  # refused before any spend: nothing reserved


# --- budgets -----------------------------------------------------------------------------------

def _sim_config(budget: str, price: str = '{ currency = "CNY", per_task = 0.40 }', concurrency: int = 1,
                provider_extra: str = "") -> AppConfig:
    return _config(budget + "\n"
                   + toml_table("providers", name="sim-api", kind="api", type="simulated", concurrency=concurrency,
                                min_duration_s=1, max_duration_s=2) + provider_extra
                   + toml_table("models", name="writer", kind="api", provider="sim-api") + f"price = {price}\n")


def _writer_tasks(n: int, prefix: str) -> list[NewTask]:
    return numbered_tasks(n, "writer", "api", "api:sim-api", prefix)


@pytest.mark.asyncio
@pytest.mark.parametrize("concurrency", [1, 3])
async def test_a_per_batch_budget_stops_the_batch_between_tasks(store, data_dir, concurrency) -> None:
    config = _sim_config('[budget]\nper_batch = { CNY = "1.00" }', concurrency=concurrency)
    done = await run_batch(store, config, data_dir, _writer_tasks(5, "a"), SPEED)
    assert [t.state for t in done] == ["success"] * 2 + ["pending"] * 3
    assert all(t.started_at is None and not store.task_spend([t.task_id]) for t in done[2:])
    assert store.spend_totals(batch_ids=["b1"]).by_currency == {"CNY": Decimal("0.8")}
    assert store.paused_lanes() == {"batch:b1": "budget: ¥0.80 of ¥1.00 spent on batch b1"}
    # The batch stopped, not the lane: another batch behind it runs on its own budget.
    other = await run_batch(store, config, data_dir, _writer_tasks(3, "b"), SPEED, batch="b2")
    assert [t.state for t in other] == ["success", "success", "pending"]
    assert [t.state for t in store.tasks(["b1"])] == ["success"] * 2 + ["pending"] * 3
    assert set(store.paused_lanes()) == {"batch:b1", "batch:b2"}
    assert_totals_agree()


@pytest.mark.asyncio
async def test_daily_and_provider_budgets_and_a_raise_resumes(store, data_dir) -> None:
    config = _sim_config('[budget]\ndaily = { CNY = 1.2 }', provider_extra='daily_budget = { CNY = 100 }\n')
    done = await run_batch(store, config, data_dir, _writer_tasks(4, "a"), SPEED)
    assert [t.state for t in done] == ["success"] * 3 + ["pending"]
    assert store.paused_lanes()["api:sim-api"] == "budget: ¥1.20 of ¥1.20 spent today"
    day = budget_day(store.now())
    assert store.spend_by_route(day)["api:sim-api"].by_currency == {"CNY": Decimal("1.2")}
    tighter = _sim_config('[budget]\ndaily = { CNY = 100 }', provider_extra='daily_budget = { CNY = 1.5 }\n')
    more = await run_batch(store, tighter, data_dir, _writer_tasks(2, "b"), SPEED, batch="b2")
    assert [t.state for t in more] == ["pending", "pending"]
    assert store.paused_lanes()["api:sim-api"] == "budget: ¥1.20 of ¥1.50 spent today on sim-api"
    raised = _sim_config('[budget]\ndaily = { CNY = 100 }')
    again = await run_batch(store, raised, data_dir, [], SPEED, batch="b2")
    assert [t.state for t in again] == ["success", "success"]
    assert "api:sim-api" not in store.paused_lanes()  # resumed by itself once the head fitted


@pytest.mark.asyncio
async def test_a_failed_attempt_that_spent_nothing_releases_its_reservation(store, data_dir) -> None:
    """Three failed attempts of 0.40 and two successes fit 1.20 only because the failures spent
    nothing and gave their reservations back."""
    config = _sim_config('[budget]\nper_batch = { CNY = 1.2 }')
    failing = NewTask(model="writer", model_kind="api", route="api:sim-api", prompt="fails", task_id="f0",
                      params={"sim_fail": "provider"})
    done = await run_batch(store, config, data_dir, [failing, *_writer_tasks(2, "a")], SPEED)
    assert [(t.state, t.attempt) for t in done] == [("failed", 3), ("success", 1), ("success", 1)]
    assert not store.task_spend(["f0"])
    assert [r.source for r in store.task_spend(["a000"])["a000"]] == [SOURCE_TABLE]
    assert_totals_agree()


@pytest.mark.asyncio
async def test_a_resumed_remote_task_is_taken_whatever_the_budget(runninghub, store, data_dir) -> None:
    """A task whose remote task was created (and paid) before the app stopped resumes polling
    even when the budget is spent: holding it back would lose what was paid for."""
    config = _rh_config(runninghub.url, '{ currency = "coins", per_task = 20 }', limit=2)
    config.budget.daily = {"coins": Decimal(20)}
    [first] = await run_batch(store, config, data_dir, _rh_tasks(1, "r"), SPEED)
    assert first.state == "success"
    store.enqueue("b2", _rh_tasks(2, "s"))
    store.save_remote_id(store.get("s000"), first.remote_id)  # as a process that stopped left it
    second = await run_batch(store, config, data_dir, [], SPEED, batch="b2")
    assert [t.state for t in second] == ["success", "pending"]  # the resumed one ran, the new one waits
    assert store.paused_lanes()["poll:rh"] == "budget: 34 coins of 20 coins spent today"  # 17 + 17 charged
    assert_totals_agree()
