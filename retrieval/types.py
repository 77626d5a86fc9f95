"""Typed values shared by retrievers, tools, the agent and the evaluation."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class Retriever(Protocol):
    """Anything that finds documents for a query."""

    name: str

    def search(self, query: str, k: int = 10) -> list[Document]:
        """Top-k documents for one query, best first."""
        ...

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Document]]:
        """Top-k documents for each query, in the order of the queries."""
        ...

    def doc(self, doc_id: str) -> Document | None:
        """The stored document with this id, if any."""
        ...

    def by_title(self, title: str) -> Document | None:
        """The whole article with this title (case and underscores ignored), if any."""
        ...
