"""Build the provider objects a config names, keyed by lane (``api:x``, ``api:x/<key>`` for each key of a
provider with ``keys``, ``poll:y``) and, for web sites, by route (``web:site``, shared by its accounts)."""

from __future__ import annotations

from pathlib import Path

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, ProviderConfig
from mediaassist.core.lanes import site_route, web_sites
from mediaassist.providers.base import Provider
from mediaassist.providers.simulated import SimulatedProvider

# Service times of the simulated web site (the operators' measured range: 31 s .. 6 min 10 s).
SIMULATED_SITE = "simulated"
SIMULATED_WEB_RANGE = (31.0, 370.0)


def build_providers(config: AppConfig, clock: Clock, data_dir: Path) -> dict[str, Provider]:
    providers: dict[str, Provider] = {}
    for prov in config.providers:
        for slot in prov.slots():  # a provider with several keys: one client per key
            providers[slot.lane] = _build_remote(slot, clock, data_dir)
    for site in web_sites(config):
        if site == SIMULATED_SITE:
            providers[site_route(site)] = SimulatedProvider(clock, *SIMULATED_WEB_RANGE)
        else:
            from mediaassist.providers.web import build_web_provider

            providers[site_route(site)] = build_web_provider(site, config, clock, data_dir)
    return providers


def _build_remote(prov: ProviderConfig, clock: Clock, data_dir: Path) -> Provider:
    if prov.type == "simulated":
        return SimulatedProvider(clock, prov.min_duration_s, prov.max_duration_s)
    if prov.type == "openai":
        from mediaassist.providers.openai_api import OpenAIProvider

        return OpenAIProvider(prov, clock)
    from mediaassist.providers.poll import build_poll_provider

    return build_poll_provider(prov, clock)
