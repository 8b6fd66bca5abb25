"""HTTP clients that go through a provider's ``proxy``, naming the proxy when it is what failed.

With a proxy, every connection goes to the proxy: a refused or unreachable connection, or a
CONNECT the proxy answered with an error, is the proxy's failure, and an operator looking at
"ConnectError: All connection attempts failed" would look at the service instead. So those errors
are raised again with the proxy's scheme, host and port in front (never its user or password).
A 407 is the proxy refusing the request (for a plain-HTTP service it comes back as a response,
not a failed CONNECT), so it becomes the same kind of error.
"""

from __future__ import annotations

from typing import Any

import httpx

from mediaassist.core.config import proxy_label

_PROXY_FAILURES = (httpx.ProxyError, httpx.ConnectError, httpx.ConnectTimeout)
PROXY_AUTH_REQUIRED = 407


class _ProxyNamingTransport(httpx.AsyncBaseTransport):
    def __init__(self, proxy: str, limits: httpx.Limits) -> None:
        self._inner = httpx.AsyncHTTPTransport(proxy=proxy, limits=limits)
        self.label = proxy_label(proxy)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except _PROXY_FAILURES as exc:
            raise type(exc)(f"proxy {self.label}: {exc or type(exc).__name__}", request=request) from None
        if response.status_code == PROXY_AUTH_REQUIRED:  # only ever a proxy's answer, never the service's
            await response.aclose()
            raise httpx.ProxyError(f"proxy {self.label}: 407 Proxy Authentication Required (check the user "
                                   "and password in its URL)", request=request)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def http_client(proxy: str | None, **kwargs: Any) -> httpx.AsyncClient:
    """``httpx.AsyncClient(**kwargs)``, through ``proxy`` when one is configured. A configured
    proxy wins over the environment's HTTP(S)_PROXY (``trust_env=False``)."""
    if proxy is None:
        return httpx.AsyncClient(**kwargs)
    limits = kwargs.pop("limits", httpx.Limits())
    return httpx.AsyncClient(transport=_ProxyNamingTransport(proxy, limits), trust_env=False, **kwargs)
