"""What the compatible CRAG server knows: the real company table and the recorded replies of the real server."""
from __future__ import annotations

import ast
import csv
import json
import re
import string
from pathlib import Path
from typing import Any

import numpy as np

from frames_agent.core.errors import FramesAgentError
from frames_agent.retrieval.bm25 import OkapiBM25
from frames_agent.retrieval.crag.endpoints import BY_NAME, Endpoint

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


def _parse_python_repr(text: str) -> Any:
    """A reply the notebook printed as a Python repr, possibly cut with '...': the part that was shown."""
    cut = re.sub(r",\s*\.\.\.\s*(\}+)\s*$", r"\1", text.strip())
    return ast.literal_eval(cut)


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
        if isinstance(reply, str):
            try:
                reply = _parse_python_repr(reply)
            except (ValueError, SyntaxError):
                continue
        if isinstance(reply, dict) and "result" in reply:
            if call.get("truncated"):
                reply = {**reply, "truncated": True}
            out.append((ep, ep.body(dict(zip([p.name for p in ep.params], call.get("args") or []))), reply))
    return out
