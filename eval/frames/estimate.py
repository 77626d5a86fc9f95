"""How long a FRAMES run will take on this machine, said up front."""
from __future__ import annotations

from frames_agent.agent.llm.spec import ModelSpec


def judge_spec(settings) -> str:
    """The judge model actually used: --judge, with "same" meaning the --model."""
    if settings.retrieval_only:
        return "none"
    return settings.model if settings.judge in (None, "", "same") else settings.judge


def default_concurrency(settings) -> int:
    """1 for the local model (2 cores serve one generation at a time), 8 for hosted models."""
    if settings.system in ("bm25", "oracle") and settings.retrieval_only:
        return 4
    return 1 if ModelSpec.of(settings.model).local else 8


def calls_per_question(settings, agent_config=None) -> tuple[int, int]:
    """(system LLM calls, judge calls at most) per question."""
    # Self-ask answers with a decomposition call and up to sub_questions sub-answers before the answer itself.
    sub = getattr(agent_config, "sub_questions", 0)
    answer = 0 if settings.retrieval_only else 1 + (1 + sub if sub else 0)
    steps = getattr(agent_config, "n", settings.n)  # --set n=... reaches the config, not the flag
    system = steps + answer if settings.system == "multistep" else answer
    judges = (judge_spec(settings) != "none") + bool(settings.judge2 and not settings.retrieval_only)
    return system, judges


# Measured here for the embedded 1.5B model on 2 cores (llama.cpp, bench/question.py and report.md's per-node
# timing): prompts read at 52-88 tok/s, replies generated at 18-20 tok/s. Per-call records of 60-question runs
# (sessions 4 and 6): a plan reply is ~80 tokens (its thought is held to one sentence), an answer ~130; after step 1
# llama.cpp's prompt cache reuses the plan prompt's stable head (instructions and question, ~500 of ~920 tokens), so
# a later plan call reads only its documents and earlier queries (~10 s a plan call, ~37 s a retrieval-only question).
LOCAL_PROMPT_TPS, LOCAL_OUTPUT_TPS = 70.0, 19.0
PLAN_OUTPUT_TOKENS, ANSWER_OUTPUT_TOKENS, JUDGE_OUTPUT_TOKENS, QUESTION_TOKENS = 80, 130, 50, 45
PREVIOUS_QUERIES_TOKENS = 60
# Self-ask (session 7's oracle run): sub-answers averaged ~40 tokens.
SUB_QUESTIONS_OUTPUT_TOKENS, SUB_ANSWER_OUTPUT_TOKENS = 60, 40
HOSTED_SECONDS_PER_CALL = 3.0


def estimate(settings, agent_config, questions: int, concurrency: int) -> str:
    """A one-line up-front estimate of the run time on this machine (said to be an estimate)."""
    from frames_agent.agent.prompts import load_prompt
    from frames_agent.retrieval.tokens import count_tokens

    system_calls, judge_calls = calls_per_question(settings, agent_config)
    calls = f"{system_calls} LLM call(s)" + (f" + up to {judge_calls} judge call(s)" if judge_calls else "")
    if not system_calls + judge_calls:  # retrieval only with bm25 or oracle: no model is involved
        return f"{questions} question(s), no LLM calls: searches only, seconds rather than minutes"
    if not ModelSpec.of(settings.model).local:
        total = questions * (system_calls + judge_calls) * HOSTED_SECONDS_PER_CALL / max(1, concurrency)
        return (f"{questions} question(s) × {calls}; at ~{HOSTED_SECONDS_PER_CALL:.0f} s a hosted call and concurrency "
                f"{concurrency}: roughly {duration(total)} (an estimate; provider speed varies)")

    def call_seconds(prompt_tokens: int, output_tokens: int) -> float:
        return prompt_tokens / LOCAL_PROMPT_TPS + output_tokens / LOCAL_OUTPUT_TPS

    head = count_tokens(load_prompt(agent_config.prompt).text) + QUESTION_TOKENS
    first_plan = call_seconds(head + agent_config.plan_budget, PLAN_OUTPUT_TOKENS)
    later_plan = call_seconds(agent_config.plan_budget + PREVIOUS_QUERIES_TOKENS, PLAN_OUTPUT_TOKENS)
    context = 0 if settings.system == "naive" else agent_config.answer_budget
    answer = call_seconds(count_tokens(load_prompt(agent_config.answer_prompt).text) + QUESTION_TOKENS + context,
                          ANSWER_OUTPUT_TOKENS)
    if agent_config.sub_questions:
        answer += call_seconds(count_tokens(load_prompt("subquestions").text) + QUESTION_TOKENS, SUB_QUESTIONS_OUTPUT_TOKENS)
        answer += agent_config.sub_questions * call_seconds(
            count_tokens(load_prompt("subanswer").text) + 2 * QUESTION_TOKENS + agent_config.sub_answer_budget,
            SUB_ANSWER_OUTPUT_TOKENS)
    judge = call_seconds(count_tokens(load_prompt("frames_judge").text) + 2 * QUESTION_TOKENS, JUDGE_OUTPUT_TOKENS)
    planning = first_plan + (agent_config.n - 1) * later_plan if settings.system == "multistep" else 0
    per_question = planning + (0 if settings.retrieval_only else answer) + judge_calls * judge
    return (f"{questions} question(s) × {calls} with {settings.model} on this machine: roughly "
            f"{duration(questions * per_question)} (an estimate from ~{LOCAL_PROMPT_TPS:.0f} prompt and "
            f"~{LOCAL_OUTPUT_TPS:.0f} output tokens/s measured on 2 idle cores, full token budgets, judge calls only "
            "when the short-cuts miss; other jobs on the machine slow it down; --limit N for a quick look)")


def duration(seconds: float) -> str:
    """A span of seconds said as a person would: "40 s", "12 min", "2.5 h"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
