"""LangChain's standard retriever tests (langchain-tests) of FramesRetriever over the tiny Lucene BM25 index."""
from __future__ import annotations

from typing import Any

import pytest
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from frames_agent.retrieval.bridges import FramesRetriever


class TestFramesRetrieverOverBM25(RetrieversIntegrationTests):
    bm25: Any = None

    @pytest.fixture(autouse=True)
    def _index(self, tiny_retriever: Any) -> None:
        type(self).bm25 = tiny_retriever  # the standard tests build the retriever from the params below

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return FramesRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"retriever": self.bm25}

    @property
    def retriever_query_example(self) -> str:
        return "Brennick mayor"
