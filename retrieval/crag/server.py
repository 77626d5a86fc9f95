"""A CRAG mock API compatible server (FastAPI): the official 38 routes answered from the real company table and the
real server's recorded replies (else its no-match answers); and a helper that runs `crag-server` as a process."""
from __future__ import annotations

import ast
import csv
import inspect
import json
import os
import re
import socket
import string
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, create_model

from frames_agent.core.errors import FramesAgentError
from frames_agent.core.paths import project_root, shared_dir
from frames_agent.retrieval.bm25 import OkapiBM25
from frames_agent.retrieval.crag.endpoints import BY_NAME, ENDPOINTS, Endpoint

COMPANY_FILE = "company_name.dict"
RECORDED_FILE = "example_call_responses.json"
_PUNCT = str.maketrans("", "", string.punctuation)


# Searches the official mock_api normalises before BM25: any query with the same normalised words gets the same reply.
NORMALISED_SEARCHES = frozenset({"open_search_entity_by_name", "movie_get_person_info", "movie_get_movie_info",
                                 "music_search_artist_entity_by_name", "music_search_song_entity_by_name",
                                 "finance_get_company_name"})


def normalize(text: str) -> str:
    """The official server's name normalisation: lower case, no punctuation, single spaces."""
    return " ".join(text.lower().replace("_", " ").translate(_PUNCT).split())


class CompanyTable:
    """Company name search and name -> ticker, as the official FinanceKG does them."""

    def __init__(self, rows: list[tuple[str, str]], fuzzy_n: int = 10) -> None:
        self.fuzzy_n = fuzzy_n
        self.tickers: dict[str, str] = {}
        for name, symbol in rows:  # like dict(df.values): a repeated name keeps its last ticker
            self.tickers[name] = symbol
        self.key_map: dict[str, list[str]] = {}
        self.corpus: list[list[str]] = []
        for name in self.tickers:
            norm = normalize(name)
            self.key_map.setdefault(norm, []).append(name)
            self.corpus.append(norm.split())
        self.bm25 = OkapiBM25(self.corpus)

    @classmethod
    def load(cls, path: Path) -> CompanyTable:
        """Read the CSV `,Name,Symbol` table."""
        try:
            with open(path, newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                rows = [(r["Name"], r["Symbol"]) for r in reader if r.get("Name") and r.get("Symbol")]
        except (OSError, KeyError, UnicodeDecodeError, csv.Error) as exc:
            raise FramesAgentError(f"cannot read CRAG company table {path}: {exc}") from None
        return cls(rows)

    def search(self, query: str) -> list[str]:
        """Up to 10 company names best matching the query (BM25 over normalised names)."""
        scores = self.bm25.scores(normalize(query).split())
        top = np.argsort(scores)[::-1][: self.fuzzy_n]
        names: list[str] = []
        for i in top:
            if scores[i] != 0:
                names += self.key_map[" ".join(self.corpus[i])]
        return names[: self.fuzzy_n]

    def ticker(self, name: str) -> str | None:
        """The ticker of an exact company name."""
        return self.tickers.get(name)


def load_recorded(path: Path) -> list[tuple[Endpoint, dict[str, Any] | None, dict[str, Any]]]:
    """(endpoint, body, reply) of every recorded call whose reply can be read; a cut-off one is marked `truncated`."""
    try:
        calls = json.loads(path.read_text(encoding="utf-8"))["calls"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FramesAgentError(f"cannot read recorded CRAG replies {path}: {exc}") from None
    out: list[tuple[Endpoint, dict[str, Any] | None, dict[str, Any]]] = []
    for call in calls:
        ep = BY_NAME.get(call.get("client_method", ""))
        if ep is None:
            continue
        reply = call.get("response")
        if isinstance(reply, str):  # the notebook printed it as a Python repr, maybe cut with '...': the part shown
            try:
                reply = ast.literal_eval(re.sub(r",\s*\.\.\.\s*(\}+)\s*$", r"\1", reply.strip()))
            except (ValueError, SyntaxError):
                continue
        if isinstance(reply, dict) and "result" in reply:
            if call.get("truncated"):
                reply = {**reply, "truncated": True}
            out.append((ep, ep.body(dict(zip([p.name for p in ep.params], call.get("args") or []))), reply))
    return out


# The largest real request body is a few hundred bytes; anything near this limit is a mistake or an attack.
MAX_BODY_BYTES = 64 * 1024


class YearOutOfRange(ValueError):
    """The official movie KG raises this (an HTTP 500) for years outside 1990-2021."""


def _year_info(body: dict[str, Any]) -> None:
    if int(body["query"]) not in range(1990, 2022):  # a non-numeric year fails here too, as in the official server
        raise YearOutOfRange("Year must be between 1990 and 2021")
    return None


def _grammy_year(body: dict[str, Any]) -> list | None:
    return None if body["query"] < 1957 or body["query"] > 2019 else []


# What the official server answers when its knowledge graph has no match (see facebookresearch/CRAG mock_api).
NO_MATCH: dict[str, Callable[[Any], Any]] = {  # the validated body (None for the route without one)
    "open_search_entity_by_name": lambda b: [],
    "movie_get_person_info": lambda b: [],
    "movie_get_movie_info": lambda b: [],
    "movie_get_year_info": _year_info,
    "music_search_artist_entity_by_name": lambda b: [],
    "music_search_song_entity_by_name": lambda b: [],
    "music_get_billboard_rank_date": lambda b: [[], []] if 1 <= b["rank"] <= 100 else [None, None],
    "music_grammy_get_best_artist_by_year": _grammy_year,
    "music_grammy_get_best_song_by_year": _grammy_year,
    "music_grammy_get_best_album_by_year": _grammy_year,
    "music_grammy_get_award_count_by_artist": lambda b: 0,
    "music_grammy_get_award_count_by_song": lambda b: 0,
    "music_grammy_get_award_date_by_artist": lambda b: [],
    "music_grammy_get_all_awarded_artists": lambda b: [],
    "music_get_lifespan": lambda b: [None, None],
}


class TruncatedReply(LookupError):
    """Only the start of the real server's reply was recorded; serving it would pass a part off as the whole."""


def _canonical(ep: Endpoint, body: dict[str, Any] | None) -> str:
    """The lookup key of a call: searches by their normalised query words, as the official server ranks them."""
    if ep.name in NORMALISED_SEARCHES and body and isinstance(body.get("query"), str):
        return normalize(body["query"])
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def body_model(ep: Endpoint) -> type[BaseModel] | None:
    """The pydantic body of a route (None for the route without a body)."""
    if not ep.params:
        return None
    fields = {p.key: (p.type, ... if p.required else p.default) for p in ep.params}
    return create_model(f"{ep.name}_body", **fields)  # type: ignore[call-overload]


class CragBackend:
    """Answers endpoint calls from the company table, the recorded replies, and the no-match rules."""

    def __init__(self, data_dir: Path) -> None:
        for name in (COMPANY_FILE, RECORDED_FILE):
            if not (data_dir / name).is_file():
                raise FramesAgentError(f"CRAG data dir {data_dir} has no {name}; pass --data DIR")
        self.data_dir = data_dir
        self.companies = CompanyTable.load(data_dir / COMPANY_FILE)
        self.models = {ep.name: body_model(ep) for ep in ENDPOINTS}
        self.recorded: dict[tuple[str, str], Any] = {}
        self.truncated: set[tuple[str, str]] = set()
        for ep, body, reply in load_recorded(data_dir / RECORDED_FILE):
            model = self.models[ep.name]
            key = (ep.name, _canonical(ep, None if model is None else model.model_validate(body).model_dump()))
            if reply.get("truncated"):
                self.truncated.add(key)
            else:
                self.recorded[key] = reply["result"]

    def answer(self, ep: Endpoint, body: dict[str, Any] | None) -> Any:
        """The `result` value for a validated body."""
        key = (ep.name, _canonical(ep, body))
        if key in self.truncated:
            raise TruncatedReply("recorded reply truncated, not served as complete; the official server "
                                 "(CRAG_SERVER) has the full answer")
        if key in self.recorded:
            return self.recorded[key]
        if ep.name == "finance_get_company_name":
            assert body is not None, "the route takes a query"
            return self.companies.search(body["query"])
        if ep.name == "finance_get_ticker_by_name":
            assert body is not None, "the route takes a query"
            return self.companies.ticker(body["query"])
        rule = NO_MATCH.get(ep.name)
        return rule(body) if rule else None


def _route(backend: CragBackend, ep: Endpoint) -> Callable[..., Any]:
    model = backend.models[ep.name]

    # A plain def: FastAPI runs it on its thread pool, so one slow lookup never stalls the event loop.
    def handler(**kwargs: Any) -> Any:
        body = kwargs["body"].model_dump() if model is not None else None
        try:
            result = backend.answer(ep, body)
        except TruncatedReply as exc:  # a clear refusal, never a partial answer passed off as complete
            return PlainTextResponse(str(exc), status_code=501)
        except ValueError:  # the official server lets these escape: uvicorn answers a plain-text 500
            return PlainTextResponse("Internal Server Error", status_code=500)
        return JSONResponse({"result": result})

    params = [] if model is None else [inspect.Parameter("body", inspect.Parameter.KEYWORD_ONLY, annotation=model)]
    handler.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    handler.__name__ = ep.name
    handler.__doc__ = ep.description
    return handler


def create_app(data_dir: str | Path | None = None) -> FastAPI:
    """The FastAPI app serving all 38 CRAG routes plus GET / from data_dir (default: shared CRAG data)."""
    backend = CragBackend(Path(data_dir) if data_dir else shared_dir() / "data" / "crag")
    app = FastAPI(title="CRAG API (frames-agent compatible server)",
                  description="Company table and recorded replies of Meta's CRAG mock API")

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Callable[[Request], Any]) -> Any:
        return _body_refusal(request.headers) or await call_next(request)

    @app.get("/")
    async def root() -> dict[str, str]:
        return {"message": "The CRAG API service is running"}

    for ep in ENDPOINTS:
        app.post(ep.path, name=ep.name)(_route(backend, ep))
    app.state.backend = backend
    return app


def _body_refusal(headers: Any) -> JSONResponse | None:
    """413 for a body over MAX_BODY_BYTES, 411 for a streamed body of unknown size; None when acceptable."""
    length = headers.get("content-length")
    if length is None:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return JSONResponse({"detail": "send a Content-Length: streamed bodies are not accepted"}, status_code=411)
        return None
    if not length.strip().isdigit() or int(length) > MAX_BODY_BYTES:
        return JSONResponse({"detail": f"request body over {MAX_BODY_BYTES} bytes"}, status_code=413)
    return None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ServerProcess:
    """`python cli.py crag-server` started as a child process on loopback; stop() ends it."""

    def __init__(self, data_dir: str | Path | None = None, host: str = "127.0.0.1", port: int = 0,
                 startup_timeout: float = 60.0) -> None:
        self.host, self.port = host, port or free_port(host)
        self.url = f"http://{host}:{self.port}"
        cmd = [sys.executable, "-m", "frames_agent.cli", "crag-server", "--host", host, "--port", str(self.port)]
        if data_dir:
            cmd += ["--data", str(data_dir)]
        self.proc = subprocess.Popen(cmd, cwd=project_root(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._wait(startup_timeout)

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode(errors="replace").strip()
                raise FramesAgentError(f"CRAG server exited at start: {err.splitlines()[-1] if err else self.proc.returncode}")
            try:
                if httpx.get(self.url + "/", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise FramesAgentError(f"CRAG server did not answer at {self.url} within {timeout:g}s")

    def stop(self) -> None:
        """End the server process (terminate, then kill)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
