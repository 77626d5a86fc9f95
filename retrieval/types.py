"""Typed values shared by retrievers, tools, the agent and the evaluation."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Document(BaseModel):
    """One retrieved unit: an article, a passage of one, or a tool result."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str = ""
    text: str = ""
    score: float = 0.0
    # Where it came from: "bm25:<index>", "crag:<endpoint>", "oracle", "wikipedia", ...
    source: str = "bm25"
    # Passages carry their article's id so that context dedup works per article.
    article_id: str | None = None

    @property
    def key(self) -> str:
        """Dedup key: the article for passages, else the document itself."""
        return self.article_id or self.id
