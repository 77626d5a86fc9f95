"""httpx transports for servers we do not trust: a request's timeout is its total deadline (a server dripping one byte
a second cannot outlive it), and its response body is bounded in size and JSON nesting before any parser reads it."""
from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib
import threading
import time
import weakref
import zlib
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
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

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> Any:
        return _Stream(self.inner.connect_unix_socket(path, _cut(timeout, self.core.ConnectTimeout), socket_options),
                       self.core)


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

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> Any:
        return _AsyncStream(await self.inner.connect_unix_socket(path, _cut(timeout, self.core.ConnectTimeout),
                                                                 socket_options), self.core)


def _deadline(request: Any) -> float | None:
    """now + the request's longest timeout (the SDKs give one number for all four): its total deadline."""
    timeouts = [t for t in (request.extensions.get("timeout") or {}).values() if isinstance(t, (int, float))]
    return time.monotonic() + max(timeouts) if timeouts else None


# Encodings we ask for and decode ourselves, within the size bound (httpx would inflate a gzip bomb unbounded).
ACCEPTED_ENCODINGS = "gzip, deflate"
_DECODED = {"gzip", "x-gzip", "deflate"}


class _Body:
    """Decodes (gzip, deflate) and counts a body's bytes and nesting as it is read; JSONOutOfBounds past either limit."""

    def __init__(self, max_bytes: int, max_depth: int, encoding: str = "") -> None:
        self.max_bytes, self.size, self.guard = max_bytes, 0, DepthGuard(max_depth)
        # wbits 47: a gzip or a zlib header, told apart by the decoder itself.
        self.decoder = zlib.decompressobj(wbits=47) if encoding in _DECODED else None

    def check(self, chunk: bytes) -> bytes:
        if self.decoder is None:
            return self._count(chunk)
        out = bytearray()
        try:
            while chunk:
                out += self._count(self.decoder.decompress(chunk, self.max_bytes - self.size + 1))
                chunk = self.decoder.unconsumed_tail
        except zlib.error as exc:
            raise JSONOutOfBounds(f"a compressed body that does not decode ({exc})") from None
        return bytes(out)

    def _count(self, chunk: bytes) -> bytes:
        self.size += len(chunk)
        if self.size > self.max_bytes:
            raise JSONOutOfBounds(f"a response body over the limit of {self.max_bytes:,} bytes")
        self.guard.feed(chunk)
        return chunk


def _body(response: Any, max_bytes: int, max_depth: int) -> _Body:
    """The body checker of a response; its Content-Encoding is decoded here, so the client sees plain bytes."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in ("", "identity"):
        return _Body(max_bytes, max_depth)
    if encoding not in _DECODED:  # br, zstd, chains: not asked for, and not decoded within bounds
        raise JSONOutOfBounds(f"a body in Content-Encoding {encoding[:40]!r}, which was not asked for")
    del response.headers["content-encoding"]
    response.headers.pop("content-length", None)
    return _Body(max_bytes, max_depth, encoding)


def _iterate(inner: Any, deadline: float | None, body: _Body) -> Iterator[bytes]:
    chunks = iter(inner)
    while True:
        token = _DEADLINE.set(deadline)  # around each read only: the caller's code between reads is free
        try:
            chunk = next(chunks, None)
        finally:
            _DEADLINE.reset(token)
        if chunk is None:
            return
        yield body.check(chunk)


async def _aiterate(inner: Any, deadline: float | None, body: _Body) -> AsyncIterator[bytes]:
    chunks = inner.__aiter__()
    while True:
        token = _DEADLINE.set(deadline)
        try:
            chunk = await chunks.__anext__()
        except StopAsyncIteration:
            return
        finally:
            _DEADLINE.reset(token)
        yield body.check(chunk)


class _PerLoop:
    """One async transport per event loop: an httpx connection pool is bound to the loop that opened it."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make, self.spare, self.lock = make, make(), threading.Lock()  # the first is made now: its checks run
        self.by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def current(self) -> Any:
        """The transport of the running loop."""
        loop = asyncio.get_running_loop()
        with self.lock:
            if loop not in self.by_loop:
                self.by_loop[loop], self.spare = self.spare or self.make(), None
            return self.by_loop[loop]

    def opened(self) -> Any:
        """The running loop's transport if it has one (closing must not open a pool)."""
        with self.lock:
            return self.by_loop.get(asyncio.get_running_loop())


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


@functools.cache
def _transport(http: ModuleType) -> type:
    """BoundedTransport, sync and async, for one httpx-like module (httpx, or httpx2 under openai)."""

    class BoundedTransport(http.BaseTransport, http.AsyncBaseTransport):  # type: ignore[name-defined]
        def __init__(self, max_bytes: int, max_depth: int, options: dict[str, Any], asynchronous: bool) -> None:
            self.max_bytes, self.max_depth = max_bytes, max_depth
            if asynchronous:
                self.loops = _PerLoop(lambda: _wrap_backend(http.AsyncHTTPTransport(**options), _AsyncBackend))
            else:
                self.inner = _wrap_backend(http.HTTPTransport(**options), _Backend)

        def handle_request(self, request: Any) -> Any:
            request.headers["accept-encoding"] = ACCEPTED_ENCODINGS
            deadline = _deadline(request)
            token = _DEADLINE.set(deadline)
            try:
                response = self.inner.handle_request(request)
            finally:
                _DEADLINE.reset(token)
            try:
                body = _body(response, self.max_bytes, self.max_depth)
            except JSONOutOfBounds:
                response.close()
                raise
            response.stream = _stream(http)(response.stream, deadline, body)
            return response

        async def handle_async_request(self, request: Any) -> Any:
            request.headers["accept-encoding"] = ACCEPTED_ENCODINGS
            deadline = _deadline(request)
            token = _DEADLINE.set(deadline)
            try:
                response = await self.loops.current().handle_async_request(request)
            finally:
                _DEADLINE.reset(token)
            try:
                body = _body(response, self.max_bytes, self.max_depth)
            except JSONOutOfBounds:
                await response.aclose()
                raise
            response.stream = _stream(http)(response.stream, deadline, body)
            return response

        def close(self) -> None:
            self.inner.close()

        async def aclose(self) -> None:
            transport = self.loops.opened()
            if transport is not None:
                await transport.aclose()

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


def bounded_transport(http: ModuleType = httpx, *, max_bytes: int | None = None, max_depth: int | None = None,
                      **options: Any) -> Any:
    """http.HTTPTransport(**options) (httpx, or the openai SDK's httpx2) with a total deadline and a bounded body."""
    return _transport(http)(max_bytes or bounded.MAX_JSON_BYTES, max_depth or bounded.MAX_DEPTH, options, False)


def async_bounded_transport(http: ModuleType = httpx, *, max_bytes: int | None = None, max_depth: int | None = None,
                            **options: Any) -> Any:
    """The async bounded_transport."""
    return _transport(http)(max_bytes or bounded.MAX_JSON_BYTES, max_depth or bounded.MAX_DEPTH, options, True)


def in_chain(exc: BaseException | None, kind: type[E]) -> E | None:
    """The first exception of type kind in exc's chain of causes (an SDK wraps what the transport raised), if any."""
    for _ in range(8):
        if exc is None or isinstance(exc, kind):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None
