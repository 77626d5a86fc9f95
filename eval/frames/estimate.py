"""How long a FRAMES run will take on this machine, said up front."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

from frames_agent.agent.llm.spec import ModelSpec
from frames_agent.core.paths import cache_dir


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


# The embedded 1.5B model on 2 idle cores. Measured: docs/measurements.md#estimates
LOCAL_PROMPT_TPS, LOCAL_OUTPUT_TPS = 70.0, 19.0
PLAN_OUTPUT_TOKENS, ANSWER_OUTPUT_TOKENS, JUDGE_OUTPUT_TOKENS, QUESTION_TOKENS = 80, 130, 50, 45
PREVIOUS_QUERIES_TOKENS = 60
SUB_QUESTIONS_OUTPUT_TOKENS, SUB_ANSWER_OUTPUT_TOKENS = 60, 40
HOSTED_SECONDS_PER_CALL = 3.0


# plan_calls 'when_new': the share of steps that ask the planner. Measured: docs/measurements.md#estimates
WHEN_NEW_PLAN_SHARE = 0.67
# The default index's build on 2 cores. Measured: docs/measurements.md#estimates
BUILD_BYTES_PER_SECOND = 2.6e6
# Opening the index and the model clients before the first question, whatever the model (docs/measurements.md).
OPEN_SECONDS = 4.0
RATES_FILE = "local-rates.json"  # under the cache directory: this machine's measured rates per local model


def opens_index(settings) -> bool:
    """Whether the run searches a BM25 index (the wiki tools, or the bm25 system)."""
    return "wiki" in (settings.tools or "").split(",") or settings.system == "bm25"


def index_build_seconds(settings) -> float | None:
    """Seconds to build the run's index first (the default index missing for the current corpus), else None."""
    if not opens_index(settings):
        return None
    from frames_agent.index.build import default_index_dir, default_spec, finished_manifest, is_default_name

    try:
        if not is_default_name(settings.index):
            return None
        spec = default_spec(settings.index)
        if finished_manifest(default_index_dir(settings.index, spec)) is not None:
            return None
        size = sum(Path(p).stat().st_size for p in spec.paths() if Path(p).is_file())
    except Exception:  # a corpus that cannot be found fails later, with its own message
        return None
    return size / BUILD_BYTES_PER_SECOND if size else None


def _read_rates() -> dict:
    """The rates file's models (empty when missing or damaged)."""
    try:
        rates = json.loads((cache_dir() / RATES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return rates if isinstance(rates, dict) else {}


def measured_rates(model: str) -> tuple[float, float] | None:
    """(prompt, output) tokens/s a local model measured on this machine (the fastest run), if a run recorded them."""
    try:
        entry = _read_rates()[model]
        prompt, output = float(entry["prompt_tps"]), float(entry["output_tps"])
    except (KeyError, TypeError, ValueError):
        return None
    return (prompt, output) if prompt > 0 and output > 0 else None


class _Seen:
    """The load factor this process's last estimate measured: the run it was made for records its rates under it."""

    slower: float | None = None


def record_rates(model: str, calls: Iterable) -> None:
    """Keep a local model's measured rates as on an idle machine (times the load met), the faster kept."""
    calls = [c for c in calls if c.prompt_seconds and c.generation_seconds]
    read, read_s = sum(c.read_tokens for c in calls), sum(c.prompt_seconds for c in calls)
    out, out_s = sum(c.completion_tokens for c in calls), sum(c.generation_seconds for c in calls)
    if not (ModelSpec.of(model).local and read and read_s and out and out_s):
        return  # only a local model's rates depend on this machine
    slower, _Seen.slower = _Seen.slower or load()[0], None
    rates, kept, path = _read_rates(), measured_rates(model) or (0.0, 0.0), cache_dir() / RATES_FILE
    try:
        rates[model] = {"prompt_tps": round(max(kept[0], slower * read / read_s), 1),
                        "output_tps": round(max(kept[1], slower * out / out_s), 1),
                        "calls": len(calls), "load": round(slower, 2), "when": time.strftime("%Y-%m-%d %H:%M")}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rates, indent=1), encoding="utf-8")
    except (OSError, ValueError):
        pass  # an estimate without this machine's rates falls back to the constants


def load_average() -> float:
    """The 1-minute load average (runnable threads, which may exceed the cores), 0 where there is none."""
    try:
        return float(os.getloadavg()[0])
    except (OSError, AttributeError):
        return 0.0


def load() -> tuple[float, str]:
    """How much slower local work runs at the load now (1 + others / cores, no cap; 1.0 idle), and a note saying so."""
    from frames_agent.agent.llm.providers.local import busy_cores, cores

    others, total = max(busy_cores(), load_average()), cores()
    factor = 1.0 if others < 0.5 else 1 + others / total
    _Seen.slower = factor
    if factor == 1.0:
        return 1.0, ""
    return factor, (f"; the machine is busy now (~{others:.1f} cores' worth of other work on {total} cores): "
                    f"counted as {factor:.1f}× slower")


def estimate(settings, agent_config, questions: int, concurrency: int) -> str:
    """A one-line up-front estimate of the run time on this machine, the index build included when needed."""
    from frames_agent.agent.prompts import load_prompt
    from frames_agent.eval.frames.autorater import JUDGE_PROMPT
    from frames_agent.retrieval.tokens import count_tokens

    build = index_build_seconds(settings) or 0.0
    tail = f"; includes ~{duration(build)} to build the default index first" if build else ""
    system_calls, judge_calls = calls_per_question(settings, agent_config)
    calls = f"{system_calls} LLM call(s)" + (f" + up to {judge_calls} judge call(s)" if judge_calls else "")
    opening = OPEN_SECONDS if opens_index(settings) else 0.0
    if not system_calls + judge_calls:  # retrieval only with bm25 or oracle: no model is involved
        return (f"{questions} question(s), no LLM calls: searches only, "
                + (f"roughly {duration(build + opening)}" if build else "seconds rather than minutes") + tail)
    if not ModelSpec.of(settings.model).local:
        total = build + opening + questions * (system_calls + judge_calls) * HOSTED_SECONDS_PER_CALL / max(1, concurrency)
        return (f"{questions} question(s) × {calls}; at ~{HOSTED_SECONDS_PER_CALL:.0f} s a hosted call and concurrency "
                f"{concurrency}: roughly {duration(total)} (an estimate; provider speed varies){tail}")
    measured = measured_rates(settings.model)
    prompt_tps, output_tps = measured or (LOCAL_PROMPT_TPS, LOCAL_OUTPUT_TPS)

    def call_seconds(prompt_tokens: int, output_tokens: int) -> float:
        return prompt_tokens / prompt_tps + output_tokens / output_tps

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
    judge = call_seconds(count_tokens(load_prompt(JUDGE_PROMPT).text) + 2 * QUESTION_TOKENS, JUDGE_OUTPUT_TOKENS)
    later_calls = agent_config.n - 1
    if getattr(agent_config, "plan_calls", "every_step") == "when_new":
        later_calls = max(min(1, later_calls), WHEN_NEW_PLAN_SHARE * agent_config.n - 1)
    planning = first_plan + later_calls * later_plan if settings.system == "multistep" else 0
    slower, note = load()
    per_question = slower * (planning + (0 if settings.retrieval_only else answer) + judge_calls * judge)
    source = ("this machine's measured rates, as on idle cores" if measured else "rates measured on 2 idle cores")
    return (f"{questions} question(s) × {calls} with {settings.model} on this machine: roughly "
            f"{duration(build + slower * opening + questions * per_question)} (an estimate from ~{prompt_tps:.0f} prompt and "
            f"~{output_tps:.0f} output tokens/s, {source}, full token budgets, judge calls only when the "
            f"short-cuts miss{note}; --limit N for a quick look; re-estimated after the first question){tail}")


def duration(seconds: float) -> str:
    """A span of seconds said as a person would: "40 s", "12 min", "2.5 h"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
