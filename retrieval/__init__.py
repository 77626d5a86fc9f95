"""Retrieval: the `Document` type and `Retriever` protocol, the BM25 Lucene searcher (`retrieval.lucene`), the CRAG
mock knowledge-graph client and tools (`retrieval.crag`), and the deduplicated, token-budgeted context.

    from retrieval import Document, Retriever, FramesAgentError
    from retrieval.lucene import BM25Retriever
    from retrieval.bridges import FramesRetriever, LangChainRetriever   # LangChain retrievers in and out
"""
from retrieval.errors import FramesAgentError, InstallError, RetrievalError, UsageError
from retrieval.types import Document, Retriever
from retrieval.version import __version__

__all__ = ["Document", "FramesAgentError", "InstallError", "RetrievalError", "Retriever", "UsageError", "__version__"]
