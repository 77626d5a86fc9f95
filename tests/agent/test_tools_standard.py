"""LangChain's standard tool tests (langchain-tests) of the agent as a tool (FramesAgent.as_tool over the tiny
index, a scripted model) and of a CRAG tool (its client on a transport that answers as the CRAG API)."""
from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.retrieval.crag import CRAGClient
from frames_agent.retrieval.crag.endpoints import BY_NAME
from frames_agent.retrieval.crag.tools import make_tool
from tests.agent.test_api_langchain import responder


class AgentToolParams:
    agent: Any = None

    @pytest.fixture(autouse=True)
    def _agent(self, tiny_retriever: Any) -> None:
        type(self).agent = FramesAgent(ScriptedLLM(responder=responder), tiny_retriever,
                                       config=AgentConfig(k=1, n=1, n_docs=2))

    @property
    def tool_constructor(self) -> BaseTool:
        return self.agent.as_tool()

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"question": "Where was Marta Kowalczyk born?"}


class TestAgentToolUnit(AgentToolParams, ToolsUnitTests):
    pass


class TestAgentToolIntegration(AgentToolParams, ToolsIntegrationTests):
    pass


def crag_api(request: httpx.Request) -> httpx.Response:
    """The CRAG API's reply to finance_get_eps for any ticker."""
    assert request.url.path == BY_NAME["finance_get_eps"].path and json.loads(request.content)
    return httpx.Response(200, json={"result": 22.95})


class CragToolParams:
    @property
    def tool_constructor(self) -> BaseTool:
        client = CRAGClient("http://crag.invalid", retries=0, http=httpx.Client(transport=httpx.MockTransport(crag_api)))
        return make_tool(client, BY_NAME["finance_get_eps"])

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"ticker_name": "META"}


class TestCragToolUnit(CragToolParams, ToolsUnitTests):
    pass


class TestCragToolIntegration(CragToolParams, ToolsIntegrationTests):
    pass
