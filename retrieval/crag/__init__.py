"""The CRAG mock knowledge graph: the 38-endpoint table, an HTTP client, LangChain tools, and a compatible server.

    from retrieval.crag import CRAGClient, crag_tools, build_tools
"""
from retrieval.crag.client import DEFAULT_SERVER, CRAGClient
from retrieval.crag.endpoints import DOMAINS, ENDPOINTS, Endpoint, select_endpoints
from retrieval.crag.errors import CRAGError
from retrieval.crag.tools import ToolSpec, build_tools, crag_tools, parse_tool_spec

__all__ = ["CRAGClient", "CRAGError", "DEFAULT_SERVER", "DOMAINS", "ENDPOINTS", "Endpoint", "ToolSpec", "build_tools",
           "crag_tools", "parse_tool_spec", "select_endpoints"]
