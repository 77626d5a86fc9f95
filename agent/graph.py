"""FRAMES Algorithm 1 as a LangGraph state machine: plan -> retrieve -> merge, n times, then answer."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import All, Checkpointer, Overwrite

from frames_agent.agent.config import AgentConfig
from frames_agent.agent.nodes import Nodes
from frames_agent.agent.prompts import load_prompt
from frames_agent.agent.state import AgentInput, AgentOutput, AgentState
from frames_agent.retrieval.bridges import as_retriever
from frames_agent.retrieval.tokens import count_tokens
from frames_agent.retrieval.types import Retriever


def begin(state: AgentState) -> dict[str, Any]:
    """A question's own start: an earlier question's state stays behind, only its messages carry on the thread."""
    return {"step": 0, "queries": Overwrite([]), "steps": Overwrite([]), "context": Overwrite([]),
            "pending_queries": [], "pending_tools": [], "retrieved": [], "answer": "", "raw_answer": "",
            "final": None, "answer_context": None, "messages": [HumanMessage(state["question"])]}


def after_merge(state: AgentState, n: int) -> Literal["plan", "answer", "__end__"]:
    """Plan again until n steps are done, then answer (or end, for retrieval-only runs)."""
    if state["step"] < n:
        return "plan"
    return "__end__" if state.get("skip_answer") else "answer"  # END


def build_nodes(llm: BaseChatModel, retriever: Retriever | Any | None, tools: Sequence[BaseTool],
                config: AgentConfig) -> Nodes:
    """The nodes with their prompts loaded and checked (a LangChain BaseRetriever is adapted)."""
    count_tokens("")  # loads the token encoding from disk now, not in a run's first node on a server's event loop
    return Nodes(llm, as_retriever(retriever), tools, config, load_prompt(config.prompt),
                 load_prompt(config.answer_prompt))


def build_graph(llm: BaseChatModel, retriever: Retriever | Any | None, tools: Sequence[BaseTool] = (),
                config: AgentConfig | None = None, nodes: Nodes | None = None,
                context_schema: type | None = None, *, name: str | None = None, checkpointer: Checkpointer = None,
                store: BaseStore | None = None, interrupt_before: All | list[str] | None = None,
                interrupt_after: All | list[str] | None = None, debug: bool = False) -> CompiledStateGraph:
    """Compile the agent graph from its dependencies; the keywords go to StateGraph.compile."""
    config = config or AgentConfig()
    nodes = nodes or build_nodes(llm, retriever, tools, config)
    graph = StateGraph(AgentState, context_schema=context_schema, input_schema=AgentInput, output_schema=AgentOutput)
    # Each node has a sync and an async body, so ainvoke never parks LLM calls in a small thread pool.
    graph.add_node("begin", begin)
    graph.add_node("plan", RunnableLambda(nodes.plan, afunc=nodes.aplan, name="plan"))
    graph.add_node("retrieve", RunnableLambda(nodes.retrieve, afunc=nodes.aretrieve, name="retrieve"))
    graph.add_node("merge", nodes.merge)
    graph.add_node("answer", RunnableLambda(nodes.answer, afunc=nodes.aanswer, name="answer"))
    graph.add_edge(START, "begin")
    graph.add_edge("begin", "plan")
    graph.add_edge("plan", "retrieve")
    graph.add_edge("retrieve", "merge")
    graph.add_conditional_edges("merge", RunnableLambda(lambda state: after_merge(state, config.n), name="after_merge"),
                                ["plan", "answer", END])
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer, store=store, interrupt_before=interrupt_before,
                         interrupt_after=interrupt_after, debug=debug, name=name)
