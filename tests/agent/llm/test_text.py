"""A model's reply is valid text where it is read: a lone surrogate (a JSON "\\ud800" escape) becomes U+FFFD, in
plain text and in JSON the reply holds."""
from __future__ import annotations

from frames_agent.agent.llm.json_repair import parse_structured
from frames_agent.agent.llm.text import message_text
from frames_agent.agent.queries import PlanReply


def test_a_model_reply_is_valid_text_where_it_is_read():
    assert message_text("Answer: \ud800") == "Answer: \ufffd"
    assert message_text([{"type": "text", "text": "\udc00"}]) == "\ufffd"
    plan = parse_structured('{"thought": "", "queries": ["mayor \\ud800"]}', PlanReply, lambda raw: PlanReply())
    assert plan.value.queries == ["mayor \ufffd"]
