"""Judge-free answer measures, weaker than a judge (WEAKER_NOTE): token F1 (SQuAD-style, on our answer normalisation)
and ROUGE-L (Google's `rouge-score`)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.frames.shortcuts import normalize_answer

WEAKER_NOTE = ("token F1 and ROUGE-L compare the answer's words with the gold answer's: judge-free, and weaker than "
               "a judge (a right answer in other words scores low; a wrong one sharing words scores high)")


def token_f1(prediction: str, gold: str) -> float:
    """Harmonic mean of word precision and recall after normalising both (numbers, articles, punctuation)."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if not common:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


@lru_cache(maxsize=1)
def _scorer():
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        return None
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_available() -> bool:
    """True when `rouge-score` is installed."""
    return _scorer() is not None


def rouge_l(prediction: str, gold: str) -> float | None:
    """ROUGE-L F-measure (longest common subsequence of stemmed words); None without `rouge-score`."""
    scorer = _scorer()
    return None if scorer is None else scorer.score(gold, prediction)["rougeL"].fmeasure


def answered(records: Iterable[QuestionRecord]) -> list[QuestionRecord]:
    """Questions that finished with an answer (retrieval-only runs answer none)."""
    return [r for r in records if not r.failed and r.verdict is not None]


def f1_of(record: QuestionRecord) -> float:
    """Token F1 of one record's answer."""
    return token_f1(record.response(), record.gold_answer)


def answer_scores(records: Iterable[QuestionRecord]) -> dict[str, float | int | None]:
    """Mean token F1 and ROUGE-L over answered questions, and how many there were."""
    done = answered(records)
    if not done:
        return {"answered": 0, "token_f1": None, "rouge_l": None}
    rouge = [rouge_l(r.response(), r.gold_answer) for r in done]
    return {"answered": len(done), "token_f1": sum(map(f1_of, done)) / len(done),
            "rouge_l": None if None in rouge else sum(s for s in rouge if s is not None) / len(rouge)}
