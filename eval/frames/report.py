"""A FRAMES run's summary.json, and its report.md with PNG plots and what the answer could see."""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from frames_agent.core.bounded import load_file
from frames_agent.eval.errors import EvalError
from frames_agent.eval.frames.datasets import normalize_title
from frames_agent.eval.frames.figures import num, pct, with_ci
from frames_agent.eval.frames.metrics import ORIGINS, RunSummary, judged_by, run_summary
from frames_agent.eval.frames.plots import ACCURACY_PLOT, RECALL_PLOT, run_label, write_plots
from frames_agent.eval.frames.records import REPORT_FILE, QuestionRecord, frames_run_dir, mark
from frames_agent.eval.judge import judge_label
from frames_agent.eval.rundir import SUMMARY_FILE
from frames_agent.retrieval.context import LARGE_CONTEXT_WORDS, PASSAGE_WORDS

_MAX_ROWS = 100
_MARKUP = re.compile(r"([\\`*_\[\]!<>|#&~])")


def _natural(qid: str) -> tuple:
    # Numbers by length, then digit by digit: the order of int() without converting (a 5,000-digit id is over
    # Python's int-string limit, and "²" passes isdigit() but is no number).
    number = qid.lstrip("0") or "0"
    return (0, len(number), number) if qid.isascii() and qid.isdigit() else (1, 0, qid)


def write_outputs(run_dir, config: dict, warnings: Sequence[str] = (), html: bool = True,
                  files: bool = True) -> tuple[RunSummary, list[QuestionRecord]]:
    """summary.json, report.md, plots and report.html of run_dir's records (files=False: only computed); both read."""
    loaded, _ = run_dir.load_records()
    records = [loaded[k] for k in sorted(loaded, key=_natural)]
    judge = judge_label(config["judge"], config) if config.get("judge") is not None else None
    summary = run_summary(records, system=config.get("system"), model=config.get("model"), judge=judge,
                          retrieval_only=config.get("retrieval_only"))
    summary.warnings = list(warnings)
    if files:
        run_dir.write(SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
        plots = write_plots(run_dir.path, summary)  # eval/frames/plots.py: the figures with their 95% intervals
        run_dir.write(REPORT_FILE, render_markdown(config, summary, records, plots))
    if html:
        from frames_agent.eval.frames.html.page import write_run_html

        write_run_html(run_dir.path, config, records)
    return summary, records


def rerender(path: Path, html: bool = False, files: bool = True) -> tuple[dict, RunSummary, list[QuestionRecord]]:
    """Re-render a run directory (files=False: only read it, html: its report.html too); (config, summary, records)."""
    run_dir = frames_run_dir(Path(path))
    config = run_dir.read_config()
    if config is None or not run_dir.results.exists():
        raise EvalError(f"{path} is not a frames run directory (needs config.json and results.jsonl)")
    try:  # a regular file, bounded: none yet, a FIFO or a link to /dev/zero in its place is no summary
        warnings = [str(w) for w in load_file(run_dir.path / SUMMARY_FILE).get("warnings", [])]
    except (OSError, ValueError, AttributeError, TypeError):
        warnings = []
    with run_dir.locked():
        summary, records = write_outputs(run_dir, config, warnings=warnings, html=html, files=files)
    return config, summary, records


# --- markdown ---------------------------------------------------------------------------------------------------
def _coverage_line(config: dict, s: RunSummary) -> str:
    if s.coverage is None:
        return "- Coverage: unknown (no index to check the gold articles against)."
    return (f"- Index `{config.get('index')}`: **coverage {pct(s.coverage)}** of the {s.gold_articles} gold "
            f"articles of these questions are in the index (mean per question {num(s.coverage_mean)}; "
            f"{s.fully_covered} of {s.n} questions have every gold article). Recall is bounded by coverage; "
            "covered recall counts only the gold articles the index holds.")


def headline(s: RunSummary) -> str:
    """Accuracy over rated answers; with any unrated, the exact-match rate (a lower bound) leads."""
    if s.accuracy is None and not s.unrated:
        return ""
    if not s.unrated and s.accuracy is not None:  # rated answers only: an accuracy (see above)
        right = round(s.accuracy * s.rated)
        return f"accuracy {pct(s.accuracy)} ({right}/{s.rated})"
    over = "no rated answers" if s.accuracy is None else f"{pct(s.accuracy)} over {s.rated} rated of {s.n}"
    return (f"exact-match rate (lower bound) {pct(s.exact_rate)} ({s.exact_matches}/{s.n}), accuracy {over}, "
            f"{s.unrated} unrated (no judge, or no readable verdict; rate them: python cli.py rejudge OUT --judge SPEC)")


def _judge_line(s: RunSummary) -> str:
    if s.retrieval_only:
        return "- Retrieval only: no answers, no judging."
    verdicts = ", ".join(f"{k} {v}" for k, v in sorted(s.verdicts.items())) or "none"
    line = f"- Rated by: {judged_by(s)}; verdicts: {verdicts}"
    if s.unrated:
        line += (f" (**{s.unrated} answer(s) unrated: no judge looked at them; accuracy is over the {s.rated} "
                 "rated, and the exact-match rate is a lower bound**)")
    if s.judge_errors:
        line += (f"; {s.judge_errors} question(s) could not be rated (no readable verdict, or the judge failed): "
                 "left unrated, never counted wrong")
    from frames_agent.eval.frames.judgecheck import agreement_note

    line += f"; {agreement_note(s.judge)}"
    agree = s.judge_agreement
    if agree:
        line += (f". Second judge agreement on {agree['n']} question(s): {pct(agree['agreement'])}, "
                 f"Cohen's kappa {num(agree['kappa'])}")
    return line + "."


def _oracle_line(config: dict, s: RunSummary) -> list[str]:
    if config.get("system") != "oracle":
        return []
    missing = sum(s.oracle_missing.values())
    if not missing:
        return [f"- Oracle: every one of the {s.gold_articles} gold articles was supplied."]
    why = " | ".join(f"{count}× {reason}" for reason, count in sorted(s.oracle_missing.items()))
    return [f"- Oracle: **{missing} of the {s.gold_articles} gold articles could not be supplied** ({why}); its "
            "answers had less than the gold evidence for those questions."]


def _accuracy_table(s: RunSummary) -> list[str]:
    rows = ["| | questions | rated | unrated | accuracy (rated) [95% CI] | recall [95% CI] |",
            "|---|---:|---:|---:|---:|---:|",
            f"| **overall** | {s.n} | {s.rated} | {s.unrated} | {with_ci(s.accuracy, s.accuracy_ci, True)} | "
            f"{with_ci(s.recall, s.recall_ci)} |"]
    rows += [f"| {_literal(name)} | {v.n} | {v.rated} | {v.unrated} | {pct(v.accuracy)} | {num(v.recall)} |"
             for name, v in s.by_reasoning_type.items()]
    return rows


def _step_table(s: RunSummary) -> list[str]:
    curve, covered = s.recall_by_step, s.covered_recall_by_step
    if not curve:
        return ["No retrieval steps (this system does not search step by step)."]
    cis = s.recall_by_step_ci
    rows = ["| step | recall [95% CI] | covered recall |", "|---:|---:|---:|"]
    rows += [f"| {i} | {with_ci(r, cis[i - 1] if i - 1 < len(cis) else None)} | "
             f"{num(covered[i - 1] if i - 1 < len(covered) else None)} |" for i, r in enumerate(curve, 1)]
    return rows


def _literal(text: object) -> str:
    """Data as Markdown text, on one line: its markup (an image, a link, a table cell's end) shows as written."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text or "").split()))


def _cut(text: object, width: int = 60) -> str:
    value = " ".join(str(text or "").split())
    return _literal(value if len(value) <= width else value[: width - 1] + "…")


def _question_rows(records: list[QuestionRecord]) -> list[str]:
    rows = ["| id | correct | recall | answer | gold |", "|---|---|---:|---|---|"]
    rows += [f"| {_literal(r.id)} | {mark(r)} | {num(r.recall)} | {_cut(r.answer)} | {_cut(r.gold_answer)} |"
             for r in records[:_MAX_ROWS]]
    if len(records) > _MAX_ROWS:
        rows.append(f"\n({len(records) - _MAX_ROWS} more in results.jsonl)")
    return rows


def _timing_lines(s: RunSummary) -> list[str]:
    """Where the time went, per node: calls, tokens read (not cached) and generated, and the runtime's rates."""
    def rate(value: float | None) -> str:
        return f"{value:.1f}" if value is not None else "n/a"

    return [f"- Time in {node}: {t.calls} call(s), {t.seconds:.0f} s; {t.read_tokens} of {t.prompt_tokens} prompt "
            f"tokens read (the rest from the prompt cache) at {rate(t.prompt_tps)} tok/s, {t.completion_tokens} "
            f"generated at {rate(t.generation_tps)} tok/s" for node, t in s.timing.items()]


def origin_lines(s: RunSummary) -> list[str]:
    """report.md's "Where the gold came from" section (a RunSummary with origin totals), or nothing."""
    if not s.gold_by_origin and not s.queries_by_origin:
        return []
    names = [o for o in (*ORIGINS, "given", "unknown") if o in {*s.queries_by_origin, *s.articles_by_origin,
                                                                   *s.gold_by_origin}]
    rows = ["## Where the gold came from", "",
            "Gold articles found, by the origin of the query that first brought them (new articles are credited to "
            "the first query, in query order, whose hits held them).", "",
            "| origin | queries | new articles | gold found | gold per 100 new articles |", "|---|---:|---:|---:|---:|"]
    for name in names:
        new, found = s.articles_by_origin.get(name, 0), s.gold_by_origin.get(name, 0)
        rows.append(f"| {name} | {s.queries_by_origin.get(name, 0)} | {new} | {found} | "
                    f"{num(100 * found / new if new else None, 1)} |")
    steps = s.gold_by_step_origin
    if steps:
        rows += ["", "| step | " + " | ".join(names) + " |", "|---:|" + "---:|" * len(names)]
        rows += [f"| {step} | " + " | ".join(str(counts.get(n, 0)) for n in names) + " |" for step, counts in steps.items()]
    return rows + [""]


def visibility_lines(config: dict, records: list[QuestionRecord], s: RunSummary) -> list[str]:
    """report.md's "What the answer could see": gold passages shown, format followed, answer-context recall."""
    lines = _passage_lines(config, records)
    if s.format_ok is not None:
        lines.append(f"- Answer format followed (format_ok: a usable structured reply, or the 'Answer:' line): "
                     f"{with_ci(s.format_ok, s.format_ok_ci)}; read from a structured reply: {s.structured_answers}.")
    if s.answer_in_prompt is not None or s.answer_context_recall is not None:
        lines += [f"- Answer-context recall (gold articles found that the answer prompt showed): "
                  f"{with_ci(s.answer_context_recall, s.answer_context_recall_ci)}; gold articles shown per question: "
                  f"{num(s.gold_shown, 1)}; shown among all covered gold articles: {num(s.shown_recall)}.",
                  f"- Gold answer in the answer prompt (its words or number; model-free): "
                  f"{with_ci(s.answer_in_prompt, s.answer_in_prompt_ci)}.",
                  f"- Wrong answers: {s.reader_failures} with the gold answer in the prompt (reader failures), "
                  f"{s.retrieval_failures} without it (retrieval failures)."]
    return ["## What the answer could see", "", *lines, ""] if lines else []


def _passage_lines(config: dict, records: list[QuestionRecord]) -> list[str]:
    """How much of each gold article the answer prompt showed (passage mode records which passages it showed)."""
    agent = config.get("agent") or {}
    shown, seen, in_context = [], 0, 0
    for record in records:
        gold = {normalize_title(t) for t in record.gold_titles}
        in_context += len(gold & {normalize_title(t) for t in record.retrieved_titles})
        for article in (record.answer_context or {}).get("passages") or []:
            if normalize_title(article.get("title", "")) in gold and article.get("article_tokens"):
                seen += 1
                # the shown text carries a title line and separators: a short article can come out above 100%
                shown.append(min(1.0, article["tokens"] / article["article_tokens"]))
    if not agent.get("answer_passages") or not in_context:
        return []
    shown.sort()
    median = shown[len(shown) // 2] if shown else 0.0
    words = agent.get("passage_words")  # unset: chosen by the context's size
    size = (f"~{PASSAGE_WORDS} words (few articles) or ~{LARGE_CONTEXT_WORDS} words (a larger context)"
            if words is None else f"~{words} words")
    how = ("passages ranked across the whole context, at most" if agent.get("context_selection", "context") == "context"
           else "articles by search rank, each with")
    return [f"- Answer budget {agent.get('answer_budget')} tokens: {how} {agent.get('answer_passages')} passages of "
            f"{size} per article (more when few articles leave room).",
            f"- Gold articles in the context: {in_context}; shown to the answer: {seen}; share of each shown gold "
            f"article's tokens the answer saw: median {pct(median)}, range {pct(shown[0] if shown else 0)}–"
            f"{pct(shown[-1] if shown else 0)}."]


def render_markdown(config: dict, s: RunSummary, records: list[QuestionRecord], plots: Sequence[str]) -> str:
    """The whole report.md."""
    lines = [f"# FRAMES run: {run_label(config)}", "",
             (f"- Questions: {s.n} finished ({s.failed} failed), data `{config.get('info', {}).get('data')}` "
              f"({config.get('data_fingerprint')}); index fingerprint `{config.get('index_fingerprint')}`."),
             _coverage_line(config, s), _judge_line(s),
             (f"- Cost: {s.calls} LLM calls, {s.tokens.prompt}+{s.tokens.completion} tokens "
              f"(prompt+completion), {s.seconds:.0f} s of question time; {s.judge_calls} judge call(s)."),
             *_timing_lines(s), ""]
    if s.accuracy is not None or s.unrated:
        lines += ["## Accuracy", "", f"**{headline(s)}**", "", *_accuracy_table(s), "",
                  ("Accuracy is over rated answers and counts failed questions as wrong; unrated answers (no judge) "
                   "are left out, never counted wrong; recall averages over the questions that finished. Accuracy's 95% "
                   "interval is Wilson's score interval, as in the plot by type (a bootstrap of 0 of 2 would say "
                   "[0–0])."), ""]
        lines += [f"![accuracy by reasoning type]({ACCURACY_PLOT})", ""] if ACCURACY_PLOT in plots else []
    lines += ["## Retrieval", "", f"- Gold-article recall of the final context: {with_ci(s.recall, s.recall_ci)} "
              "(95% CI: bootstrap; Wilson's where every question has the same recall)",
              f"- Covered recall (gold articles present in the index): "
              f"{with_ci(s.covered_recall, s.covered_recall_ci)}", *_oracle_line(config, s), "",
              "### Recall after each step", "", *_step_table(s), ""]
    lines += [f"![recall vs step]({RECALL_PLOT})", ""] if RECALL_PLOT in plots else []
    lines += origin_lines(s)
    lines += visibility_lines(config, records, s)
    if s.failures:
        lines += ["## Failed questions", ""]
        lines += [f"- {_literal(f['id'])}: {_cut(f['error'], 200)}" for f in s.failures] + [""]
    if s.warnings:
        lines += ["## Data warnings", ""] + [f"- {_literal(w)}" for w in s.warnings] + [""]
    lines += ["## Questions", "", *_question_rows(records), ""]
    return "\n".join(lines)
