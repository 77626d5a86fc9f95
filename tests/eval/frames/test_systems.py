"""Oracle fetch over https, and CoverageChecker on the tiny real index (redirects covered, reported as aliases)."""
from __future__ import annotations

import asyncio

import pytest

from frames_agent.eval.frames.systems import CoverageChecker, _wikipedia_page


def test_wikipedia_fetch_uses_https(monkeypatch):
    from wikipedia import wikipedia as api

    monkeypatch.setattr(api, "API_URL", "http://en.wikipedia.org/w/api.php")
    urls: list[str] = []

    def offline_get(url: str, **kwargs: object) -> None:
        urls.append(url)
        raise ConnectionError("offline")

    monkeypatch.setattr(api.requests, "get", offline_get)
    with pytest.raises(ConnectionError):
        _wikipedia_page("Olse River")
    assert urls and all(u.startswith("https://en.wikipedia.org/") for u in urls)


def test_coverage_resolves_redirects(tiny_retriever):
    checker = CoverageChecker(tiny_retriever)
    titles = ("Mayor_of_Brennick", "Olse River", "No Such Page")
    assert asyncio.run(checker.covered(titles)) == ["Mayor_of_Brennick", "Olse River"]
    assert checker.aliases(titles) == {"mayor of brennick": "tomas ferrante"}
