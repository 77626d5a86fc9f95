"""Where a step's queries come from besides the model: the deterministic proposer (entity titles from the matched
sentences), pseudo-relevance feedback, and which query brought each new document into the context."""
from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from frames_agent.agent.bridging import Specificity, feedback_queries, propose, question_evidence
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.queries import clean_queries
from frames_agent.agent.state import AgentState, StepRecord
from frames_agent.retrieval.types import Document


class Proposer:
    """The proposer and the feedback queries of one agent, bound to its retriever and configuration."""

    def __init__(self, retriever: Any, config: AgentConfig) -> None:
        self.retriever, self.config = retriever, config
        has_title = getattr(retriever, "has_title", None)
        self.is_title = has_title if has_title is not None else (lambda t: False)
        self._specificity: Specificity | None = None
        self._lock = threading.Lock()
        self._opened = False

    def specificity(self) -> Specificity | None:
        """The specificity ranking when configured and the retriever has a Lucene index (opened on first use)."""
        if self.config.proposer_rank != "specificity":
            return None
        with self._lock:
            if not self._opened:
                from frames_agent.agent.specificity import phrase_counts

                counts = phrase_counts(self.retriever)
                self._specificity = (Specificity(counts, counts.total, self.config.proposer_hub_share)
                                     if counts is not None and counts.total else None)
                self._opened = True
        return self._specificity

    def proposals(self, state: AgentState, evidence: list, asked: list[str], thought: str) -> list[str]:
        """The proposer's entity queries from the sentences that matched this question's queries."""
        read = [entry.title for entry in state.get("context", [])]
        cfg = self.config
        return propose([*evidence, *question_evidence(state["question"], thought)], read, asked, self.is_title, cfg.k,
                       question=state["question"], min_shared=cfg.proposer_min_shared,
                       titles_only=cfg.proposer_titles_only, specificity=self.specificity())

    def choose(self, state: AgentState, evidence: list, model: list[str], thought: str) -> tuple[list[str], list[str]]:
        """The step's queries and their origins: the model's, with proposer_slots (and any room left) for the
        proposer's; both are cleaned against every earlier query and each other."""
        cfg = self.config
        earlier = state.get("queries", [])
        if not cfg.propose_queries:
            return model, ["model"] * len(model)
        offered = self.proposals(state, evidence, [*earlier, *model], thought)
        proposed, _ = clean_queries(offered, [*earlier, *model], cfg.k, cfg.max_query_words, cfg.drop_fanout)
        # The model keeps at least half of a full step: the proposer reads sentences, not the question's intent.
        take = min(len(proposed), max(min(cfg.proposer_slots, cfg.k // 2), cfg.k - len(model)))
        kept = model[: cfg.k - take]
        proposed = proposed[: cfg.k - len(kept)]
        return [*kept, *proposed], ["model"] * len(kept) + ["proposer"] * len(proposed)

    def feedback(self, state: AgentState, evidence: list, step: int, queries: list[str]) -> list[str]:
        """Feedback queries for this step (from step 2, when configured), new against every query so far."""
        cfg = self.config
        if step < 2 or not cfg.feedback_queries:
            return []
        asked = [*state.get("queries", []), *queries]
        offered = feedback_queries(evidence, state["question"], asked, cfg.feedback_queries, cfg.max_query_words)
        return clean_queries(offered, asked, cfg.feedback_queries, cfg.max_query_words, cfg.drop_fanout)[0]


def doc_origins(record: StepRecord, found: Sequence[tuple[int, Document]]) -> dict[str, str]:
    """Document id -> origin of the first query (in query order) whose hits held it. `found` holds the step's hits
    in query order (record.query_hits of them per query), then tool results ('tool')."""
    owners = [record.origins[i] if i < len(record.origins) else "model"
              for i, count in enumerate(record.query_hits) for _ in range(count)]
    origins: dict[str, str] = {}
    for position, (_, doc) in enumerate(found):
        origins.setdefault(doc.id, owners[position] if position < len(owners) else "tool")
    return origins
