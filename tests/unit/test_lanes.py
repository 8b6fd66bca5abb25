"""The lanes a config describes: one place builds them for the scheduler, ``status`` and the registry."""

from __future__ import annotations

from mediaassist.core.config import parse_config
from mediaassist.core.lanes import DEFAULT_SWEEP_S, WEB_LANE_LIMIT, LaneSpec, lane_names, lane_specs, web_sites

CONFIG = parse_config({
    "providers": [
        {"name": "fast", "kind": "api", "type": "simulated", "concurrency": 4},
        {"name": "auto", "kind": "api", "type": "simulated", "concurrency": "auto", "max_concurrency": 5},
        {"name": "rh", "kind": "poll", "type": "simulated", "max_polling_tasks": 7,
         "queue_check_interval_s": 2.0},
    ],
    "models": [{"name": "chat", "kind": "web", "site": "lonely"}],
    "accounts": [{"name": "alice", "site": "demo-chat"}, {"name": "bob", "site": "demo-chat"}],
})


def test_provider_lanes_then_account_lanes_with_their_gates() -> None:
    assert lane_specs(CONFIG) == [
        LaneSpec(name="api:fast", kind="api", route="api:fast", limit=4),
        LaneSpec(name="api:auto", kind="api", route="api:auto", limit=5, adaptive=True),
        LaneSpec(name="poll:rh", kind="poll", route="poll:rh", limit=7, sweep_s=2.0),
        # web lanes take the longest expected task first (core/order.py)
        LaneSpec(name="web:alice", kind="web", route="web:demo-chat", limit=WEB_LANE_LIMIT, account="alice",
                 site="demo-chat", order="longest"),
        LaneSpec(name="web:bob", kind="web", route="web:demo-chat", limit=WEB_LANE_LIMIT, account="bob",
                 site="demo-chat", order="longest"),
    ]
    assert all(spec.sweep_s == DEFAULT_SWEEP_S for spec in lane_specs(CONFIG) if spec.kind != "poll")


def test_names_and_the_sites_that_need_a_provider() -> None:
    assert lane_names(CONFIG) == {"api:fast", "api:auto", "poll:rh", "web:alice", "web:bob"}
    # A web model's site needs a provider even with no account yet: its tasks queue there.
    assert web_sites(CONFIG) == ["demo-chat", "lonely"]


def test_an_empty_config_has_no_lanes() -> None:
    empty = parse_config({})
    assert lane_specs(empty) == [] and web_sites(empty) == []


def test_a_lane_takes_its_queue_in_the_order_its_config_names() -> None:
    config = parse_config({
        "providers": [{"name": "p", "kind": "poll", "type": "simulated", "order": "fair"},
                      {"name": "q", "kind": "poll", "type": "simulated"}],
        "accounts": [{"name": "alice", "site": "chat", "order": "fifo"}, {"name": "bob", "site": "chat"}],
    })
    assert {spec.name: spec.order for spec in lane_specs(config)} == {
        "poll:p": "fair", "poll:q": "fifo", "web:alice": "fifo", "web:bob": "longest"}
