"""The deterministic proposer (article titles named in the sentences that matched), and which query brought each new
document into the context."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frames_agent.agent.evidence import Evidence, propose, question_evidence
from frames_agent.agent.queries import clean_queries
from frames_agent.agent.state import AgentState, StepRecord
from frames_agent.retrieval.types import Document


class Proposer:
    """The proposer of one agent, bound to its retriever's title lookup."""

    def __init__(self, retriever: Any, k: int) -> None:
        has_title = getattr(retriever, "has_title", None)
        self.is_title = has_title if has_title is not None else (lambda t: False)
        self.k = k

    def fill(self, state: AgentState, evidence: Sequence[Evidence], taken: Sequence[str], thought: str) -> list[str]:
        """Titles for the room the step's queries so far (`taken`) leave under k, new against every query so far."""
        asked = [*state.get("queries", []), *taken]
        read = [entry.title for entry in state.get("context", [])]
        offered = propose([*evidence, *question_evidence(state["question"], thought)], read, asked, self.is_title,
                          self.k, question=state["question"])
        return clean_queries(offered, asked, self.k)[0][: self.k - len(taken)]


def doc_origins(record: StepRecord, found: Sequence[tuple[int, Document]]) -> dict[str, str]:
    """Document id -> origin of the first query (in query order) whose hits held it. `found` holds the step's hits
    in query order (record.query_hits of them per query), then tool results ('tool')."""
    owners = [record.origins[i] if i < len(record.origins) else "model"
              for i, count in enumerate(record.query_hits) for _ in range(count)]
    origins: dict[str, str] = {}
    for position, (_, doc) in enumerate(found):
        origins.setdefault(doc.id, owners[position] if position < len(owners) else "tool")
    return origins
