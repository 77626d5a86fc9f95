"""Retrieval: the `Document` type and `Retriever` protocol, BM25 (`retrieval.lucene`), hybrid search, the CRAG
tools (`retrieval.crag`), LangChain retrievers in and out (`retrieval.bridges`) and the token-budgeted context."""
from frames_agent.core.errors import FramesAgentError, InstallError, RetrievalError, UsageError
from frames_agent.core.version import __version__
from frames_agent.retrieval.types import Document, Retriever

__all__ = ["Document", "FramesAgentError", "InstallError", "RetrievalError", "Retriever", "UsageError", "__version__"]
