"""`serve`'s chat completions as LangChain's ChatOpenAI reads them: the answer's sources reach the client in the
message content (ChatOpenAI keeps no extra field), unless the server turns that off. In process, no Lucene."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.serve.app import create_app
from frames_agent.agent.serve.guard import ServeSettings

pytest.importorskip("langchain_openai")


def agent() -> FramesAgent:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([LCDocument(id="brennick", page_content="Brennick's mayor is Tomas Ferrante.",
                                    metadata={"title": "Brennick"})])
    llm = ScriptedLLM(responder=lambda m: '{"thought": "", "queries": ["Brennick mayor"]}'
                      if "Reply with one JSON" in m[-1].content else "Answer: Tomas Ferrante")
    return FramesAgent(llm, store.as_retriever(), config=AgentConfig(k=1, n=1, n_docs=1))


def chat_model(settings: ServeSettings):
    from langchain_openai import ChatOpenAI

    client = TestClient(create_app(agent(), settings))
    return ChatOpenAI(model="frames-agent", base_url="http://127.0.0.1/v1", api_key="unused", http_client=client,
                      max_retries=0)


def test_chat_openai_gets_the_sources_in_the_content():
    model = chat_model(ServeSettings(access_log=False))
    reply = model.invoke("Who is the mayor of Brennick?")
    assert reply.content == "Tomas Ferrante\n\nSources:\n- Brennick [brennick]"
    streamed = "".join(chunk.content for chunk in model.stream("Who is the mayor of Brennick?"))
    assert streamed == reply.content


def test_sources_stay_out_of_the_content_when_the_server_says_so():
    reply = chat_model(ServeSettings(access_log=False, sources_in_content=False)).invoke("Who is the mayor?")
    assert reply.content == "Tomas Ferrante"


def test_the_serve_flag_pair():
    from frames_agent import cli

    parser = cli.build_parser("serve")
    assert parser.parse_args(["serve"]).sources_in_content is None  # ServeSettings' default: on
    assert parser.parse_args(["serve", "--no-sources-in-content"]).sources_in_content is False
