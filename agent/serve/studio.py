"""The graph factory langgraph.json names, so LangGraph Server and Studio (`langgraph dev`) can load the agent, with
a run's settings from its `configurable` (docs/serving.md)."""
# No postponed annotations: LangGraph Server loads this file outside sys.modules, where pydantic can't resolve them.
import asyncio
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field
from typing_extensions import TypedDict

from frames_agent.agent.api import Variants
from frames_agent.agent.config import AgentConfig

# Graphs kept by settings, one store per server process: Studio asks for the schema and every run with the same settings.
_GRAPHS = Variants(4)


def _described(name: str) -> Any:
    """An AgentConfig field's description and bounds (ge, le), for the schema below."""
    return Field(description=AgentConfig.model_fields[name].description, **AgentConfig.bounds(name))


class StudioSettings(TypedDict, total=False):
    """What a run may set (as `configurable`); every other setting keeps the CLI's default."""

    model: Annotated[str, Field(description="model spec, e.g. gemini:gemini-2.5-flash (FRAMES_AGENT_MODEL)")]
    index: Annotated[str, Field(description="index name or directory (FRAMES_AGENT_INDEX)")]
    tools: Annotated[str, Field(description="wiki, crag, crag:<domain>, comma-separated (FRAMES_AGENT_TOOLS)")]
    k: Annotated[int, _described("k")]
    n: Annotated[int, _described("n")]
    n_docs: Annotated[int, _described("n_docs")]
    prompt: Annotated[str, _described("prompt")]


def graph_for(config: RunnableConfig | None = None) -> CompiledStateGraph:
    """The graph for a run's config (blocking: reads files, opens the index and the model)."""
    from frames_agent.agent.graph import build_graph
    from frames_agent.agent.settings import AgentSettings

    settings = AgentSettings.from_runnable_config(config)

    def compile_graph() -> CompiledStateGraph:
        agent = settings.build_agent()
        return build_graph(agent.llm, agent.retriever, agent.tools, agent.config, nodes=agent.nodes,
                           context_schema=StudioSettings, name="frames_agent")

    return _GRAPHS.get(settings.model_dump_json(), compile_graph)


def make_graph(config: RunnableConfig) -> Any:
    """The compiled agent graph for LangGraph Server: on an event loop, an awaitable building it in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return graph_for(config)
    return asyncio.to_thread(graph_for, config)
