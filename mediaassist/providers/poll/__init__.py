"""The poll lane for any submit-then-poll service: RunningHub as an adapter, any HTTP task API
by a profile (``type = "task_api"``)."""

from __future__ import annotations

from mediaassist.core.clock import Clock
from mediaassist.core.config import ProviderConfig
from mediaassist.providers.poll.lane import PollProvider


def build_poll_provider(prov: ProviderConfig, clock: Clock) -> PollProvider:
    if prov.type == "task_api":
        from mediaassist.providers.poll.task_api import TaskApiAdapter

        assert prov.task_profile is not None, "profiles are loaded with the config"
        return PollProvider(prov, clock, TaskApiAdapter(prov, prov.task_profile))
    from mediaassist.providers.poll.runninghub import RunningHubAdapter

    return PollProvider(prov, clock, RunningHubAdapter(prov))
