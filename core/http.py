"""httpx transports for servers we do not trust: a request's timeout is its total deadline (a server dripping one byte
a second cannot outlive it), and its response body is bounded in size and JSON nesting before any parser reads it."""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import importlib
import threading
import time
import weakref
import zlib
from collections.abc import AsyncIterator, Iterable, Iterator
from types import ModuleType
from typing import Any, TypeVar

import httpx

from frames_agent.core import bounded
from frames_agent.core.bounded import DepthGuard, JSONOutOfBounds

E = TypeVar("E", bound=BaseException)
# The monotonic time the request being sent or read must end by; read by every socket operation of the transports.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("frames_request_deadline", default=None)


def _cut(timeout: float | None, error: type[Exception]) -> float | None:
    """A socket operation's timeout, cut to what is left of the request's deadline (error once it has passed)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the request's total timeout passed")
    return left if timeout is None else min(timeout, left)


class _Wrapped:
    """A wrapper that passes what it does not override to the wrapped socket or backend."""

    def __init__(self, inner: Any, core: ModuleType) -> None:
        """core: the httpcore-like module whose timeout errors the socket raises (httpcore2 under the openai SDK)."""
        self.inner, self.core = inner, core

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Stream(_Wrapped):
    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _cut(timeout, self.core.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _cut(timeout, self.core.WriteTimeout))

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> Any:
        return _Stream(self.inner.start_tls(ssl_context, server_hostname, _cut(timeout, self.core.ConnectTimeout)),
                       self.core)


class _Backend(_Wrapped):
    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> Any:
        return _Stream(self.inner.connect_tcp(host, port, _cut(timeout, self.core.ConnectTimeout), local_address,
                                              socket_options), self.core)


class _AsyncStream(_Wrapped):
    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self.inner.read(max_bytes, _cut(timeout, self.core.ReadTimeout))

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self.inner.write(buffer, _cut(timeout, self.core.WriteTimeout))

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> Any:
        return _AsyncStream(await self.inner.start_tls(ssl_context, server_hostname,
                                                       _cut(timeout, self.core.ConnectTimeout)), self.core)


class _AsyncBackend(_Wrapped):
    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> Any:
        return _AsyncStream(await self.inner.connect_tcp(host, port, _cut(timeout, self.core.ConnectTimeout),
                                                         local_address, socket_options), self.core)


# Encodings we ask for and decode ourselves, within the size bound (httpx would inflate a gzip bomb unbounded).
ACCEPTED_ENCODINGS = "gzip, deflate"
_DECODED = {"gzip", "x-gzip", "deflate"}


class _Body:
    """A response body, decoded here (the client sees plain bytes), counted in bytes and nesting as it is read."""

    def __init__(self, response: Any) -> None:
        self.size, self.guard, self.decoder = 0, DepthGuard(bounded.MAX_DEPTH), None
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding in _DECODED:
            del response.headers["content-encoding"]
            response.headers.pop("content-length", None)
            self.decoder = zlib.decompressobj(wbits=47)  # wbits 47: a gzip or a zlib header, told apart by zlib
        elif encoding not in ("", "identity"):  # br, zstd, chains: not asked for, and not decoded within bounds
            raise JSONOutOfBounds(f"a body in Content-Encoding {encoding[:40]!r}, which was not asked for")

    def check(self, chunk: bytes) -> bytes:
        """The chunk decoded; JSONOutOfBounds past the size or nesting limit, or when it does not decode."""
        if self.decoder is None:
            return self._count(chunk)
        out = bytearray()
        try:
            while chunk:
                out += self._count(self.decoder.decompress(chunk, bounded.MAX_JSON_BYTES - self.size + 1))
                chunk = self.decoder.unconsumed_tail
        except zlib.error as exc:
            raise JSONOutOfBounds(f"a compressed body that does not decode ({exc})") from None
        return bytes(out)

    def _count(self, chunk: bytes) -> bytes:
        self.size += len(chunk)
        if self.size > bounded.MAX_JSON_BYTES:
            raise JSONOutOfBounds(f"a response body over the limit of {bounded.MAX_JSON_BYTES:,} bytes")
        self.guard.feed(chunk)
        return chunk


@contextlib.contextmanager
def _until(deadline: float | None) -> Iterator[None]:
    """Every socket operation inside must end by deadline (around each read only: the caller's code between is free)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _iterate(inner: Any, deadline: float | None, body: _Body) -> Iterator[bytes]:
    chunks = iter(inner)
    while True:
        with _until(deadline):
            chunk = next(chunks, None)
        if chunk is None:
            return
        yield body.check(chunk)


async def _aiterate(inner: Any, deadline: float | None, body: _Body) -> AsyncIterator[bytes]:
    chunks = aiter(inner)
    while True:
        with _until(deadline):
            chunk = await anext(chunks, None)
        if chunk is None:
            return
        yield body.check(chunk)


@functools.cache
def _stream(http: ModuleType) -> type:
    """The bounded response stream, sync and async, of one httpx-like module."""

    class BoundedStream(http.SyncByteStream, http.AsyncByteStream):  # type: ignore[name-defined]
        def __init__(self, inner: Any, deadline: float | None, body: _Body) -> None:
            self.inner, self.deadline, self.body = inner, deadline, body

        def __iter__(self) -> Iterator[bytes]:
            return _iterate(self.inner, self.deadline, self.body)

        def __aiter__(self) -> AsyncIterator[bytes]:
            return _aiterate(self.inner, self.deadline, self.body)

        def close(self) -> None:
            self.inner.close()

        async def aclose(self) -> None:
            await self.inner.aclose()

    return BoundedStream


def _sent(request: Any) -> float | None:
    """Ask for the encodings we decode; the request's total deadline is now + its longest timeout (SDKs give one)."""
    request.headers["accept-encoding"] = ACCEPTED_ENCODINGS
    timeouts = [t for t in (request.extensions.get("timeout") or {}).values() if isinstance(t, (int, float))]
    return time.monotonic() + max(timeouts) if timeouts else None


@functools.cache
def _transport(http: ModuleType) -> type:
    """BoundedTransport, sync and async, for one httpx-like module (httpx, or httpx2 under openai)."""

    class BoundedTransport(http.BaseTransport, http.AsyncBaseTransport):  # type: ignore[name-defined]
        def __init__(self) -> None:
            self.inner = _wrap_backend(http.HTTPTransport(), _Backend)  # made now: its checks run
            # One async pool per event loop: an httpx connection pool is bound to the loop that opened it.
            self.pools: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
            self.lock = threading.Lock()

        def _bounded(self, response: Any, deadline: float | None) -> Any:
            response.stream = _stream(http)(response.stream, deadline, _Body(response))
            return response

        def handle_request(self, request: Any) -> Any:
            deadline = _sent(request)
            with _until(deadline):
                response = self.inner.handle_request(request)
            try:
                return self._bounded(response, deadline)
            except JSONOutOfBounds:
                response.close()
                raise

        async def handle_async_request(self, request: Any) -> Any:
            deadline, loop = _sent(request), asyncio.get_running_loop()
            with self.lock:
                if loop not in self.pools:
                    self.pools[loop] = _wrap_backend(http.AsyncHTTPTransport(), _AsyncBackend)
                pool = self.pools[loop]
            with _until(deadline):
                response = await pool.handle_async_request(request)
            try:
                return self._bounded(response, deadline)
            except JSONOutOfBounds:
                await response.aclose()
                raise

        def close(self) -> None:
            self.inner.close()

        async def aclose(self) -> None:
            with self.lock:  # closing must not open a pool
                pool = self.pools.get(asyncio.get_running_loop())
            if pool is not None:
                await pool.aclose()

    return BoundedTransport


def _wrap_backend(transport: Any, wrapper: type) -> Any:
    """Route every socket of the transport's pool through `wrapper` (an httpcore without the pinned attribute is refused)."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    core = importlib.import_module(type(pool).__module__.split(".")[0]) if pool is not None else None
    if backend is None or not callable(getattr(backend, "connect_tcp", None)):
        from frames_agent.core.errors import InstallError

        raise InstallError(f"httpcore {getattr(core, '__version__', '?')} has no network backend to bound; install "
                           "the httpcore release pyproject.toml pins (pip install 'httpcore>=1.0,<1.1')")
    pool._network_backend = wrapper(backend, core)  # type: ignore[union-attr]
    return transport


def bounded_transport(http: ModuleType = httpx) -> Any:
    """A sync and async transport of http (httpx, or the openai SDK's httpx2) with a total deadline and a bounded body."""
    return _transport(http)()


def in_chain(exc: BaseException | None, kind: type[E]) -> E | None:
    """The first exception of type kind in exc's chain of causes (an SDK wraps what the transport raised), if any."""
    for _ in range(8):
        if exc is None or isinstance(exc, kind):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None
