"""HTTP client for the CRAG mock API (the official server or ours)."""
from __future__ import annotations

import inspect
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from frames_agent.core.bounded import JSONOutOfBounds
from frames_agent.core.http import bounded_transport
from frames_agent.retrieval.crag.endpoints import ENDPOINTS, CRAGError, Endpoint

DEFAULT_SERVER = "http://127.0.0.1:8000"
# Only transient statuses are retried: the CRAG server answers 500 for deterministic failures (a year out of range).
_RETRY_STATUSES = {502, 503, 504}


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class CRAGClient:
    """One method per endpoint, named like the official client; each returns the whole {"result": ...} reply."""

    def __init__(self, server: str | None = None, timeout: float = 30.0, retries: int = 2,
                 backoff: float = 0.25, http: httpx.Client | None = None) -> None:
        self.server = (server or os.environ.get("CRAG_SERVER") or DEFAULT_SERVER).rstrip("/")
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self._http = http
        self._owns_http = http is None
        self._lock = threading.Lock()  # tools run in parallel threads; they must share one pool

    @property
    def http(self) -> httpx.Client:
        """The pooled HTTP client (made on first use)."""
        with self._lock:
            if self._http is None:
                # Bounded: the timeout is each request's total, the reply's size and nesting are capped.
                self._http = httpx.Client(timeout=self.timeout, headers={"accept": "application/json"},
                                          transport=bounded_transport())
            return self._http

    def close(self) -> None:
        """Close the pooled connections this client opened."""
        if self._owns_http and self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> CRAGClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ping(self) -> bool:
        """Whether a CRAG API server answers GET / at this address."""
        try:
            reply = self.http.get(self.server + "/", timeout=min(self.timeout, 3.0))
            return reply.status_code == 200 and "CRAG" in reply.text
        except httpx.HTTPError:
            return False

    def post(self, ep: Endpoint, body: dict[str, Any] | None) -> dict[str, Any]:
        """POST a body to an endpoint, with bounded retries on transport errors and 502/503/504."""
        url = self.server + ep.path
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                reply = self.http.post(url, json=body) if body is not None else self.http.post(url)
            except JSONOutOfBounds as exc:
                raise CRAGError(f"CRAG {ep.name}: {self.server} answered with {exc} (not a CRAG reply)") from None
            except httpx.TimeoutException:
                if last:
                    raise CRAGError(f"CRAG {ep.name}: no reply from {self.server} within {self.timeout:g}s") from None
            except httpx.TransportError as exc:
                if last:
                    text = str(exc) or type(exc).__name__
                    reason = "connection refused" if "refused" in text.lower() else _short(text, 80)
                    raise CRAGError(f"CRAG {ep.name}: cannot reach CRAG server at {self.server} ({reason}); "
                                    "start one with `python cli.py crag-server` or set CRAG_SERVER") from None
            else:
                if reply.status_code not in _RETRY_STATUSES or last:
                    return _decode(ep, reply, body)
            time.sleep(self.backoff * (2 ** attempt))
        raise AssertionError("unreachable")


def _decode(ep: Endpoint, reply: httpx.Response, body: Any) -> dict[str, Any]:
    """The reply's JSON object, or a one-line CRAGError saying what came back instead."""
    status = reply.status_code
    if status == 422:
        raise CRAGError(f"CRAG {ep.name}: bad arguments {_short(body)} (HTTP 422: {_validation_detail(reply)})")
    if status >= 400:
        raise CRAGError(f"CRAG {ep.name}: server error HTTP {status} for {_short(body)}: {_short(reply.text, 80)}")
    try:
        data = reply.json()
    except ValueError:
        kind = reply.headers.get("content-type", "unknown type").split(";")[0]
        raise CRAGError(f"CRAG {ep.name}: reply is not JSON ({kind}: {_short(reply.text, 60)!r}); "
                        "is CRAG_SERVER a CRAG API server?") from None
    if not isinstance(data, dict) or "result" not in data:
        raise CRAGError(f"CRAG {ep.name}: reply has no 'result' field: {_short(data, 80)}")
    return data


def _validation_detail(reply: httpx.Response) -> str:
    try:
        detail = reply.json().get("detail")
        first = detail[0] if isinstance(detail, list) and detail else detail
        if isinstance(first, dict):
            where = ".".join(str(p) for p in first.get("loc", []) if p != "body")
            return f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", ""))
        return _short(first, 80)
    except (ValueError, AttributeError):
        return _short(reply.text, 80)


def _make_method(ep: Endpoint) -> Callable[..., Any]:
    """A client method with the official signature, e.g. music_get_billboard_rank_date(rank, date=None)."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=p.type,
                                 **({} if p.required else {"default": p.default})) for p in ep.params]
    signature = inspect.Signature(params)

    def method(self: CRAGClient, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            raise CRAGError(f"CRAG {ep.name}: {exc}") from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        values.pop("self")
        return self.post(ep, ep.body(values))

    method.__name__ = method.__qualname__ = ep.name
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__doc__ = f"POST {ep.path}: {ep.description}"
    return method


for _ep in ENDPOINTS:
    setattr(CRAGClient, _ep.name, _make_method(_ep))
