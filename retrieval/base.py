"""The retriever contract and the error type every layer reports to users."""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from retrieval.types import Document


class FramesAgentError(Exception):
    """A user-facing failure; its message is one line the CLI prints as is."""


class RetrievalError(FramesAgentError):
    """A search, index or lookup failed."""


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
