"""The bounded transports rely on httpcore's pool network backend: the installed httpcore is the release
pyproject.toml pins, its pool has the backend, and a pool without one is refused in one line."""
from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import httpcore
import httpx
import pytest
from packaging.requirements import Requirement

from frames_agent.core.errors import InstallError
from frames_agent.core.http import bounded_transport

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_httpcore_is_a_release_pyproject_pins_with_an_upper_bound():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    (pin,) = [Requirement(d) for d in deps if Requirement(d).name == "httpcore"]
    assert any(spec.operator == "<" for spec in pin.specifier), "an upper bound: a new release is tried, not assumed"
    assert pin.specifier.contains(httpcore.__version__)


def test_every_socket_of_the_transport_goes_through_the_bounding_backend():
    transport = bounded_transport()

    async def served_pool_backend() -> str:
        with pytest.raises(httpx.ConnectError):  # nothing listens on port 9: the pool is opened, then refused
            await transport.handle_async_request(httpx.Request("GET", "http://127.0.0.1:9/"))
        (pool,) = transport.pools.values()
        await transport.aclose()
        return type(pool._pool._network_backend).__name__

    assert type(transport.inner._pool._network_backend).__name__ == "_Backend"
    assert asyncio.run(served_pool_backend()) == "_AsyncBackend"
    transport.close()


def test_closing_on_a_loop_the_transport_never_served_opens_no_pool():
    transport = bounded_transport()
    asyncio.run(transport.aclose())
    assert len(transport.pools) == 0


def test_a_pool_without_a_network_backend_is_refused(monkeypatch):
    class Changed(httpx.HTTPTransport):  # a release that renamed or dropped the attribute
        def __init__(self, **options):
            super().__init__(**options)
            del self._pool._network_backend

    monkeypatch.setattr(httpx, "HTTPTransport", Changed)
    from frames_agent.core import http as bounded_http

    bounded_http._transport.cache_clear()
    try:
        with pytest.raises(InstallError, match=r"^httpcore .* has no network backend to bound; install .*<1\.1"):
            bounded_transport()
    finally:
        bounded_http._transport.cache_clear()
