"""How the plan and answer steps ask the model, by what its backend can do: a JSON schema, the chat model's own
structured output and tool calling, or prompt text read by a tolerant parser."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool

from frames_agent.agent.answers import AnswerReply, FinalAnswer, answer_schema, no_answer, parse_reply, read_structured
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.llm.calls import (
    accepts_json_schema,
    astructured,
    bind_with_tools,
    message_text,
    native_structured,
    native_tools,
    read_native,
    read_tool_reply,
    response_format_for,
    schema_tool,
    structured,
    structured_runnable,
)
from frames_agent.agent.llm.errors import EmptyReplyError
from frames_agent.agent.llm.json_repair import Structured, parse_structured
from frames_agent.agent.prompts import Prompt, structured_twin
from frames_agent.agent.queries import PlanReply, fallback_plan, plan_schema, reply_extras
from frames_agent.agent.state import ToolCall
from frames_agent.agent.tools import describe_tools

PLAN_TOOL = "plan"  # the tool whose arguments are the plan when the model's tools are bound natively


class PlanCall:
    """The plan step's call: one JSON object of queries and tool calls, or a plan tool bound for a tool-calling model."""

    def __init__(self, llm: BaseChatModel, tools: Sequence[BaseTool], config: AgentConfig) -> None:
        self.llm, self.tools = llm, list(tools)
        self.cap = _cap(config.plan_max_tokens)
        schema_shaped = accepts_json_schema(llm)
        self.native = config.native_tools and not schema_shaped and (
            native_tools(llm) if self.tools else native_structured(llm))
        bound_tools = self.native and bool(self.tools) and config.max_tool_calls > 0
        in_json = bool(self.tools) and not bound_tools
        self.schema = plan_schema(config.k, config.max_tool_calls if in_json else 0, config.plan_thought_chars)
        self.reply_extras = reply_extras(in_json)
        self.tools_text = describe_tools(self.tools, config.max_tool_calls, native=bound_tools)
        self.bound: Runnable | None = None
        if bound_tools:
            plan = schema_tool(PLAN_TOOL, "This step's thought and search queries.", self.schema)
            self.bound = bind_with_tools(llm, [plan, *self.tools])

    def _read(self, message: Any) -> Structured[PlanReply]:
        reply, others = read_tool_reply(message, PLAN_TOOL, PlanReply, fallback_plan)
        calls = [ToolCall(name=c["name"], args=c["args"]) for c in others]
        reply.value = reply.value.model_copy(update={"tool_calls": [*reply.value.tool_calls, *calls]})
        return reply

    def invoke(self, text: str, config: RunnableConfig) -> Structured[PlanReply]:
        """The plan of one step (never raises for a bad reply)."""
        if self.bound is None:
            return structured(self.llm, text, PlanReply, fallback_plan, config=config, json_schema=self.schema,
                              native=self.native, **self.cap)
        try:
            return self._read(self.bound.invoke(_messages(text), config=config, **self.cap))
        except EmptyReplyError as exc:
            return Structured(fallback_plan(""), "", fallback=True, error=str(exc))

    async def ainvoke(self, text: str, config: RunnableConfig) -> Structured[PlanReply]:
        """Async invoke."""
        if self.bound is None:
            return await astructured(self.llm, text, PlanReply, fallback_plan, config=config, json_schema=self.schema,
                                     native=self.native, **self.cap)
        try:
            return self._read(await self.bound.ainvoke(_messages(text), config=config, **self.cap))
        except EmptyReplyError as exc:
            return Structured(fallback_plan(""), "", fallback=True, error=str(exc))


class AnswerCall:
    """The answer step's call: a structured {reasoning, answer} reply, else free text read by its "Answer:" line."""

    def __init__(self, llm: BaseChatModel, config: AgentConfig, prompt: Prompt) -> None:
        self.calculator, self.cap = config.calculator, _cap(config.answer_max_tokens)
        schema_shaped = accepts_json_schema(llm)
        self.native = config.native_tools and not schema_shaped and native_structured(llm)
        wanted = config.structured_answer
        twin = structured_twin(prompt) if wanted is not False else None
        self.structured = twin is not None and (wanted if wanted is not None else schema_shaped or self.native)
        self.prompt = twin if self.structured and twin is not None else prompt
        self.schema = answer_schema()
        if self.structured and self.native:
            self.runnable: Runnable = structured_runnable(llm, self.schema, self.cap)
        elif self.structured and schema_shaped:
            self.runnable = llm.bind(response_format=response_format_for(AnswerReply, self.schema), **self.cap)
        else:  # free text, or prompt JSON: the twin prompt asks for it, parse_structured repairs it
            self.runnable = llm.bind(**self.cap)

    def invoke(self, text: str, config: RunnableConfig) -> tuple[str, FinalAnswer]:
        """(the raw reply, the final answer read from it); provider failures and empty replies raise."""
        return self._read(self.runnable.invoke(_messages(text), config=config))

    async def ainvoke(self, text: str, config: RunnableConfig) -> tuple[str, FinalAnswer]:
        """Async invoke."""
        return self._read(await self.runnable.ainvoke(_messages(text), config=config))

    def _read(self, out: Any) -> tuple[str, FinalAnswer]:
        if self.structured and self.native:
            reply = read_native(out, AnswerReply, no_answer, str(self.schema.get("title", "AnswerReply")))
            return reply.raw, read_structured(reply, self.calculator)
        raw = message_text(out.content)
        if not self.structured:
            return raw, parse_reply(raw, calculator=self.calculator)
        return raw, read_structured(parse_structured(raw, AnswerReply, no_answer), self.calculator)


def _messages(text: str) -> list[BaseMessage]:
    return [HumanMessage(content=text)]


def _cap(max_tokens: int | None) -> dict[str, Any]:
    # Only a configured cap is sent: not every chat model takes max_tokens per call.
    return {"max_tokens": max_tokens} if max_tokens else {}
