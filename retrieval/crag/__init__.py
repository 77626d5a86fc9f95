"""The CRAG mock knowledge graph: the 38-endpoint table, an HTTP client, LangChain tools, and a compatible server."""
from frames_agent.retrieval.crag.client import DEFAULT_SERVER, CRAGClient
from frames_agent.retrieval.crag.endpoints import DOMAINS, ENDPOINTS, CRAGError, Endpoint, select_endpoints
from frames_agent.retrieval.crag.tools import build_tools, crag_tools

__all__ = ["CRAGClient", "CRAGError", "DEFAULT_SERVER", "DOMAINS", "ENDPOINTS", "Endpoint", "build_tools", "crag_tools",
           "select_endpoints"]
