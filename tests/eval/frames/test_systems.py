"""The oracle's Wikipedia fetch goes over https (the package's own default is plain http)."""
from __future__ import annotations

import pytest

from eval.frames.systems import _wikipedia_page


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
