"""Bridging entities: the sentences of the context that matched the queries, and the deterministic query proposer
that reads them for the next entity a multi-hop question needs (a birthplace, a founder, a winner)."""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from frames_agent.retrieval import context as ctx
from frames_agent.retrieval.bm25 import fold, words
from frames_agent.retrieval.tokens import count_tokens, truncate_tokens

# Function words and question/prompt scaffolding: never a query on their own, never a matching term.
FUNCTION_WORDS = frozenset("""
a an the in on of if i what which who whom whose when where why how as at by for and or but nor so to from with
into onto upon about after before during since until than then there here this that these those it its is was
were be been being are am do does did done has have had having my we our they them their he him his she her you
your me us not no yes all any some each every both few more most other such only own same too very can will just
should would could may might must shall also step now first next also documents question answer according imagine
let suppose consider assume given using based many much one two three four five six seven eight nine ten
several various numerous another either neither although though however while because despite following
""".split())

# Dates are not entities: a month or weekday alone (or with a day number) is never worth a search.
_CALENDAR = frozenset("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split())

# Capitalised spans ("University of Oxford", "Jørn Utzon") name entities: good BM25 queries.
_SPAN = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|du|von|van|and|for|in|on|la|le|y)\s+)*[A-Z0-9][\w'’.-]*)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])|\n+")
_MAX_SENTENCE_CHARS = 400
# Content words fold from five letters, BM25 terms from four (docs/measurements.md#one-word-rule).
CONTENT_FOLD = 5


def stem_terms(text: str) -> set[str]:
    """Content words of a text: words of three letters or more, not function words nor numbers, folded."""
    return {fold(word, CONTENT_FOLD) for word in words(text)
            if len(word) > 2 and word not in FUNCTION_WORDS and not word.isdigit()}


def substance(query: str) -> frozenset[str]:
    """What a query asks for: its content words, order and inflection ignored."""
    return frozenset(stem_terms(query))


def split_sentences(text: str) -> list[str]:
    """Sentences (and headings/lines) of a text, each cut to a readable length."""
    return [s.strip()[:_MAX_SENTENCE_CHARS] for s in _SENTENCE_END.split(text) if s and s.strip()]


@dataclass
class Evidence:
    """The sentences of one context article that matched the queries, best first."""

    title: str
    key: str
    score: float
    sentences: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)


def matched_sentences(context: Sequence[ctx.ContextEntry], queries: Iterable[str], per_doc: int,
                      max_docs: int = 20) -> list[Evidence]:
    """The most useful articles' per_doc sentences sharing the most (log N/df weighted) query terms, in text order."""
    wanted = set().union(*(stem_terms(q) for q in queries)) if queries else set()
    entries = ctx.ordered(context)
    split = [[(sentence, stem_terms(sentence) & wanted) for sentence in split_sentences(e.text())] for e in entries]
    df: dict[str, int] = {}
    for sentences in split:
        for term in set().union(*(t for _, t in sentences)) if sentences else ():
            df[term] = df.get(term, 0) + 1
    weight = {t: math.log(1 + len(entries) / n) for t, n in df.items()}
    found = []
    for order, (entry, sentences) in enumerate(zip(entries, split)):
        scored = [(round(sum(weight[t] for t in hit), 3), pos, s) for pos, (s, hit) in enumerate(sentences) if hit]
        best = sorted(scored, key=lambda t: (-t[0], t[1]))[:per_doc]
        best.sort(key=lambda t: t[1])
        score = sum(h for h, _, _ in best)
        found.append((-score, order, Evidence(entry.title, entry.key, score, [s for _, _, s in best],
                                              [h for h, _, _ in best])))
    found.sort(key=lambda t: (t[0], t[1]))
    return [ev for _, _, ev in found[:max_docs] if ev.sentences]


def render_evidence(evidence: Sequence[Evidence], budget: int, doc_tokens: int,
                    empty: str = "(no documents yet)") -> str:
    """Evidence as numbered "[i] Title: sentence … sentence" blocks under a token budget."""
    parts: list[str] = []
    remaining = budget
    for ev in evidence:
        block = truncate_tokens(f"[{len(parts) + 1}] {ev.title}: " + " … ".join(ev.sentences), doc_tokens)
        used = count_tokens(block) + 2
        if used > remaining:
            break
        parts.append(block)
        remaining -= used
    return "\n".join(parts) if parts else empty


def entity_spans(text: str) -> list[str]:
    """Entity-like spans of a text: capitalised runs, never a bare number nor a lone sentence-opening word."""
    spans = []
    for sentence in split_sentences(text):
        for n, clause in enumerate(re.split(r"[,;:()\[\]\"“”]+", sentence)):
            for found in _SPAN.finditer(clause):
                words = re.sub(r"(?:'s|’s|['’.])$", "", found.group()).split()
                opening = n == 0 and not clause[: found.start()].strip()
                while words and (words[0].lower() in FUNCTION_WORDS or words[0].isdigit()):
                    words.pop(0)
                    opening = False
                while words and (words[-1].lower() in FUNCTION_WORDS or words[-1].isdigit()):
                    words.pop()
                if (words and stem_terms(" ".join(words)) and not (opening and len(words) == 1)
                        and not all(w.lower() in _CALENDAR or w.isdigit() for w in words)):  # a date names no article
                    spans.append(" ".join(words))
    return spans


def names(text: str) -> set[str]:
    """The names a text shows a reader: its entity spans, each by its content words (order and inflection ignored)."""
    # A bare year or number is a fact, not something to search by name.
    return {" ".join(sorted(key)) for span in entity_spans(text)
            if (key := substance(span)) and not all(word.isdigit() for word in key)}


# A context sentence sharing fewer content words with the question matched a query word, not the question's subject.
MIN_SHARED = 2


def propose(evidence: Sequence[Evidence], read_titles: Iterable[str], asked: Iterable[str],
            is_title: Callable[[str], bool], limit: int, question: str = "") -> list[str]:
    """Up to `limit` new article titles named in matched sentences that share words with the question, best first."""
    skip = {substance(t) for t in read_titles} | {substance(q) for q in asked}
    wanted = stem_terms(question)
    seen: dict[frozenset[str], list] = {}
    order = 0
    for ev in evidence:
        # A sentence speaks of its article's subject ("She was born in ..."): the title's words count too.
        about = stem_terms(ev.title) & wanted
        for sentence, hits in zip(ev.sentences, ev.scores):
            if ev.key and len(about | (stem_terms(sentence) & wanted)) < MIN_SHARED:
                continue
            for span in entity_spans(sentence):
                key = substance(span)
                if not key or key in skip:
                    continue
                if key not in seen:
                    seen[key] = [span, 0, 0, order, len(span.split()) > 1]
                    order += 1
                entry = seen[key]
                entry[1] = max(entry[1], hits)
                entry[2] += 1
    # Several words name something more specific than one ("Nuclear Blast" before "Norway").
    ranked = sorted(seen.values(), key=lambda e: (-e[1], -e[4], -e[2], e[3]))
    return [e[0] for e in ranked[: limit * 8] if is_title(e[0])][:limit]  # title lookups are cheap, not free


def question_evidence(question: str, thought: str = "") -> list[Evidence]:
    """The planner's thought and the question as the weakest evidence (their entities are worth a search)."""
    return [Evidence("thought", "", 0, [thought], [0])] * bool(thought.strip()) + [
        Evidence("question", "", 0, [question], [0])]
