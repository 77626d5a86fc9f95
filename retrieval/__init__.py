"""Retrieval: the `Document` type and `Retriever` protocol, the BM25 Lucene searcher (`retrieval.lucene`), the CRAG
mock knowledge-graph client and tools (`retrieval.crag`), and the deduplicated, token-budgeted context.

    from frames_agent.retrieval import Document, Retriever, FramesAgentError
    from frames_agent.retrieval.lucene import BM25Retriever
    from frames_agent.retrieval.bridges import FramesRetriever, LangChainRetriever   # LangChain retrievers in and out
"""
from frames_agent.core.errors import FramesAgentError, InstallError, RetrievalError, UsageError
from frames_agent.core.version import __version__
from frames_agent.retrieval.types import Document, Retriever

__all__ = ["Document", "FramesAgentError", "InstallError", "RetrievalError", "Retriever", "UsageError", "__version__"]
