"""Runtimes as bench arms: the agent's recorded calls replayed on one llama.cpp runtime per process, greedily.

`record` renders a question's real plan and answer prompts without a model (the agent's own prompts, the question's
gold articles as the retrieved documents, a scripted planner) and saves each call's messages, JSON schema and token
cap. `replay` (run in a child process, one arm at a time) sends those calls in order to one runtime, keeping its
prompt cache between a question's calls as the product does, and prints one JSON line per call: prompt tokens read
and reused, prompt and generation seconds, tokens generated and the reply. bench/runtime.py drives it.

Runtimes: `xllamacpp` (the product's path: its in-process server through LangChain), `ik` (ik-llama-cpp-python's
libllama through ctypes: the binding's own Python layer has no grammar, prompt cache or chat template, so this file
drives the library directly), `sync` (llama-cpp-py-sync's Llama). Runtime options are `key=value` after the name,
e.g. `ik:repack=1,n_ubatch=512`.
"""
from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RUNTIMES = ("xllamacpp", "ik", "sync")


def np_isfinite(x: float) -> bool:
    """Not -inf (a grammar masks a token by setting its logit to -inf)."""
    return x > float("-inf")
WORD = re.compile(r"\w+|[^\w\s]|\s+")


@dataclass(frozen=True)
class RuntimeArm:
    """One arm: a runtime and its options (threads, batch sizes, repacking)."""

    name: str
    runtime: str
    options: dict[str, str] = field(default_factory=dict)

    def option(self, key: str, default: int) -> int:
        """An integer option, default when unset."""
        value = self.options.get(key, "")
        return int(value) if value.lstrip("-").isdigit() else default


def parse_runtime_arms(text: str) -> list[RuntimeArm]:
    """'name=runtime:key=value,key=value;name2=runtime' -> arms; an unknown runtime is a one-line ValueError."""
    arms = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        head, _, assigns = part.partition(":")
        name, _, runtime = head.partition("=")
        runtime = (runtime or name).strip()
        if runtime not in RUNTIMES:
            raise ValueError(f"arm {name!r}: unknown runtime {runtime!r}; choose {', '.join(RUNTIMES)}")
        options = dict(a.strip().partition("=")[::2] for a in filter(None, assigns.split(",")))
        arms.append(RuntimeArm(name.strip(), runtime, options))
    if len({a.name for a in arms}) != len(arms):
        raise ValueError("arm names must differ")
    return arms


def first_difference(a: str, b: str) -> tuple[int, str, str] | None:
    """(word index, a's word, b's word) where two replies first differ (words, punctuation and spaces as tokens);
    None when identical."""
    if a == b:
        return None
    left, right = WORD.findall(a), WORD.findall(b)
    for i, (x, y) in enumerate(zip(left, right)):
        if x != y:
            return i, x, y
    i = min(len(left), len(right))
    return i, left[i] if i < len(left) else "<end>", right[i] if i < len(right) else "<end>"


@dataclass
class CallResult:
    """One replayed call: tokens and seconds as the runtime reports them, and the reply."""

    prompt_tokens: int
    cached_tokens: int
    prompt_seconds: float
    completion_tokens: int
    generation_seconds: float
    seconds: float
    text: str


def question_totals(results: Sequence[CallResult]) -> dict[str, float]:
    """A question's calls summed: seconds, tokens read and generated, and the prompt and generation rates."""
    read = sum(r.prompt_tokens - r.cached_tokens for r in results)
    out = sum(r.completion_tokens for r in results)
    p_sec, g_sec = sum(r.prompt_seconds for r in results), sum(r.generation_seconds for r in results)
    return {"seconds": sum(r.seconds for r in results), "read": read, "out": out,
            "prompt_tps": read / p_sec if p_sec else 0.0, "gen_tps": out / g_sec if g_sec else 0.0,
            "prompt_seconds": p_sec, "generation_seconds": g_sec}


def projected_seconds(prompt_tps: float, gen_tps: float, read: int = 3700, out: int = 500) -> float:
    """Seconds a question reading `read` prompt tokens and writing `out` would take at these rates."""
    return read / prompt_tps + out / gen_tps if prompt_tps and gen_tps else float("inf")


def summary(per_arm: dict[str, list[dict]], first_diff: dict[str, list]) -> list[str]:
    """Per arm: median seconds a question, rates over all calls, the ratio against the first arm, the (5,5,10)
    projection, and how many replies match the first arm's (with the first difference seen)."""
    import statistics

    first = next(iter(per_arm))
    base = statistics.median(q["seconds"] for q in per_arm[first])
    lines = []
    for name, qs in per_arm.items():
        read, out = sum(q["read"] for q in qs), sum(q["out"] for q in qs)
        p_sec, g_sec = sum(q["prompt_seconds"] for q in qs), sum(q["generation_seconds"] for q in qs)
        ptps, gtps = (read / p_sec if p_sec else 0.0), (out / g_sec if g_sec else 0.0)
        median = statistics.median(q["seconds"] for q in qs)
        diffs = first_diff.get(name, [])
        same = sum(d is None for d in diffs)
        shown = next((d for d in diffs if d is not None), None)
        lines.append(f"{name:<12} median {median:6.1f} s/question  ratio {median / base:.2f}  prompt {ptps:5.1f} tok/s"
                     f"  gen {gtps:5.1f} tok/s  (5,5,10) ~{projected_seconds(ptps, gtps):5.0f} s  identical "
                     f"{same}/{len(diffs)}" + (f"  first diff at word {shown[1]}: {shown[2]!r} vs {shown[3]!r}"
                                               f" (call {shown[0]})" if shown else ""))
    return lines


# ---- recording -------------------------------------------------------------------------------------------------

class GoldRetriever:
    """The question's gold articles (frames_linked_pages) as every query's hits, rotated so steps see new ones."""

    name = "gold"

    def __init__(self, docs: list[Any]) -> None:
        self.docs, self.turn = docs, 0

    def search(self, query: str, k: int = 10) -> list[Any]:
        if not self.docs:
            return []
        self.turn += 1
        return [self.docs[(self.turn + j) % len(self.docs)] for j in range(min(k, len(self.docs)))]

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Any]]:
        return [self.search(q, k) for q in queries]

    def doc(self, doc_id: str) -> Any:
        return next((d for d in self.docs if d.id == doc_id), None)

    def by_title(self, title: str) -> Any:
        return next((d for d in self.docs if d.title.lower() == title.lower()), None)


def gold_documents(titles: Iterable[str], pages: Path) -> dict[str, Any]:
    """Documents of the wanted titles (lower-cased keys) from a {id,title,contents} .jsonl.gz."""
    from frames_agent.retrieval.types import Document

    wanted, found = {t.lower() for t in titles}, {}
    with gzip.open(pages, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["title"].lower() in wanted:
                found[row["title"].lower()] = Document(id=str(row["id"]), title=row["title"], text=row["contents"],
                                                       source="bm25:gold", article_id=str(row["id"]))
    return found


def scripted_reply(messages: list[Any]) -> dict:
    """A plausible plan (the question's capitalised phrases as queries) or answer, so later prompts carry docs."""
    text = str(messages[-1].content)
    question = re.search(r"Question: (.*)", text)
    words = re.findall(r"[A-Z][\w'-]+(?: [A-Z][\w'-]+)*", question.group(1) if question else text)
    if '"reasoning"' in json.dumps([str(m.content) for m in messages]) or "Answer" in text[-300:]:
        return {"reasoning": "From the documents.", "answer": words[0] if words else "unknown"}
    return {"thought": "Find the entities.", "queries": list(dict.fromkeys(words))[:5] or ["unknown"], "enough": False}


def record(questions: Sequence[Any], pages: Path, out: Path) -> int:
    """Record each question's calls (messages, schema, token cap) through the agent with a scripted model."""
    from frames_agent.agent import AgentConfig, FramesAgent
    from frames_agent.agent.llm import DEFAULT_MODEL
    from frames_agent.agent.llm.testing import ScriptedLLM

    docs = gold_documents([t for q in questions for t in q.gold_titles], pages)
    config = AgentConfig.for_model(DEFAULT_MODEL)
    with out.open("w", encoding="utf-8") as f:
        for q in questions:
            llm = ScriptedLLM(responder=scripted_reply, supports_json_schema=True)
            gold = [docs[t.lower()] for t in q.gold_titles if t.lower() in docs]
            FramesAgent(llm, GoldRetriever(gold), config=config).invoke(q.prompt)
            calls = [{"messages": [{"role": _role(m.type), "content": str(m.content)} for m in msgs],
                      "response_format": kw.get("response_format"), "max_tokens": kw.get("max_tokens")}
                     for msgs, kw in zip(llm.calls, llm.call_kwargs)]
            f.write(json.dumps({"id": q.id, "calls": calls}) + "\n")
    return 0


def _role(kind: str) -> str:
    return {"human": "user", "ai": "assistant"}.get(kind, kind)


def schema_of(response_format: Any) -> dict | None:
    """The JSON schema inside an OpenAI response_format, if any."""
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        return response_format["json_schema"].get("schema")
    return None


def schema_grammar(schema: dict) -> str:
    """GBNF for a JSON schema (llama-cpp-py-sync's converter, pure Python, shared by the ctypes arms)."""
    from llama_cpp_py_sync.constraints import response_format_to_grammar

    grammar = response_format_to_grammar({"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}})
    if grammar is None:
        raise ValueError("no grammar for the schema")
    return grammar


# ---- engines ---------------------------------------------------------------------------------------------------

Engine = Callable[[list[dict], "dict | None", int], CallResult]


def xllamacpp_engine(model: Path, arm: RuntimeArm) -> Engine:
    """The product's path: LocalRuntime's xllamacpp server, called through LocalChat (LangChain, HTTP)."""
    from frames_agent.agent.llm.providers.local import LocalRuntime, RuntimeSettings, make_local_chat
    from frames_agent.agent.llm.timing import runtime_timings

    threads = arm.option("threads", 2)
    settings = RuntimeSettings(threads=threads, batch_threads=arm.option("batch_threads", threads),
                                        n_batch=arm.option("n_batch", 2048), n_ubatch=arm.option("n_ubatch", 512))
    # A long timeout: on a busy machine one call can take minutes, and the bench times, it does not give up.
    chat = make_local_chat("model", LocalRuntime(model, name="model", settings=settings), timeout=7200)

    def call(messages: list[dict], schema: dict | None, max_tokens: int) -> CallResult:
        kwargs: dict[str, Any] = {"max_tokens": max_tokens}
        if schema is not None:
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
        started = time.perf_counter()
        reply = chat.invoke([(m["role"], m["content"]) for m in messages], **kwargs)
        seconds = time.perf_counter() - started
        t = runtime_timings(reply.response_metadata)
        usage = reply.usage_metadata or {}
        return CallResult(usage.get("input_tokens", 0), t.get("cached_tokens", 0), t.get("prompt_seconds") or 0.0,
                          usage.get("output_tokens", 0), t.get("generation_seconds") or 0.0, seconds,
                          str(reply.content))
    return call


class IkEngine:
    """ik_llama.cpp's libllama driven through ctypes: chat template, prompt-prefix reuse, grammar, greedy."""

    def __init__(self, model: Path, arm: RuntimeArm) -> None:
        import numpy as np
        from ik_llama_cpp import _ctypes_api as C

        self.np, self.C, lib = np, C, C._lib
        # Kept on self: a callback ctypes has freed crashes the library's next log line.
        self._quiet = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)(lambda *a: None)
        lib.llama_log_set(self._quiet, None)
        self._bind(lib)
        C.llama_backend_init()
        mp = C.llama_model_default_params()
        mp.repack_tensors = bool(arm.option("repack", 0))
        self.model = C.llama_model_load_from_file(str(model).encode(), mp)
        if not self.model:
            raise RuntimeError(f"ik could not load {model}")
        cp = C.llama_context_default_params()
        cp.n_ctx = arm.option("n_ctx", 8192)
        cp.n_batch, cp.n_ubatch = arm.option("n_batch", 2048), arm.option("n_ubatch", 512)
        cp.n_threads = arm.option("threads", 2)
        cp.n_threads_batch = arm.option("batch_threads", cp.n_threads)
        cp.flash_attn = bool(arm.option("flash_attn", 0))
        self.ctx = C.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise RuntimeError("ik could not make a context")
        self.n_batch = cp.n_batch
        self.vocab = C.llama_model_get_vocab(self.model)
        self.n_vocab = C.llama_vocab_n_tokens(self.vocab)
        self.template = lib.llama_model_chat_template(self.model, None)
        self.cached: list[int] = []
        self.cand = np.zeros(self.n_vocab, dtype=np.dtype([("id", np.int32), ("logit", np.float32),
                                                           ("p", np.float32)], align=True))
        self.cand["id"] = np.arange(self.n_vocab, dtype=np.int32)

    def _bind(self, lib: Any) -> None:
        C = self.C
        lib.llama_model_chat_template.argtypes, lib.llama_model_chat_template.restype = \
            [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_char_p
        lib.llama_kv_cache_seq_rm.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32]
        lib.llama_kv_cache_seq_rm.restype = ctypes.c_bool
        lib.llama_sampler_init_grammar.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.llama_sampler_init_grammar.restype = ctypes.c_void_p
        lib.llama_grammar_sample.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(C.llama_token_data_array)]
        lib.llama_grammar_accept_token.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32]
        lib.llama_grammar_free.argtypes = [ctypes.c_void_p]
        self.lib = lib

    def render(self, messages: list[dict]) -> str:
        """The model's own chat template rendered as a Jinja template, as llama.cpp's server does (Qwen's adds its
        default system turn; the library's built-in rendering does not)."""
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        template = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(
            self.template.decode("utf-8"))
        return template.render(messages=messages, add_generation_prompt=True, tools=None)

    def _decode(self, tokens: list[int], pos: int) -> None:
        from ik_llama_cpp._internals import make_batch_range

        for i in range(0, len(tokens), self.n_batch):
            chunk = tokens[i:i + self.n_batch]
            batch = make_batch_range(chunk, pos_start=pos + i, logits_last=i + self.n_batch >= len(tokens))
            ret = self.C.llama_decode(self.ctx, batch)
            self.C.llama_batch_free(batch)
            if ret != 0:
                raise RuntimeError(f"llama_decode failed: {ret}")

    def _pick(self, grammar: Any) -> int:
        np, C = self.np, self.C
        logits = np.ctypeslib.as_array(C.llama_get_logits_ith(self.ctx, -1), shape=(self.n_vocab,))
        best = int(np.argmax(logits))
        if grammar is None or self._allowed(grammar, best, float(logits[best])):
            return best
        # Only when the greedy token breaks the grammar is every candidate checked (as llama.cpp's common sampler).
        self.cand["id"] = np.arange(self.n_vocab, dtype=np.int32)
        self.cand["logit"] = logits
        arr = C.llama_token_data_array(self.cand.ctypes.data_as(ctypes.POINTER(C.llama_token_data)), self.n_vocab,
                                       -1, False)
        self.lib.llama_grammar_sample(grammar, self.ctx, ctypes.byref(arr))
        return int(self.cand["id"][np.argmax(self.cand["logit"][:arr.size])])

    def _allowed(self, grammar: Any, token: int, logit: float) -> bool:
        one = self.cand[:1]
        one["id"], one["logit"], one["p"] = token, logit, 0.0
        arr = self.C.llama_token_data_array(one.ctypes.data_as(ctypes.POINTER(self.C.llama_token_data)), 1, -1, False)
        self.lib.llama_grammar_sample(grammar, self.ctx, ctypes.byref(arr))
        return bool(np_isfinite(float(one["logit"][0])))

    def __call__(self, messages: list[dict], schema: dict | None, max_tokens: int) -> CallResult:
        C, started = self.C, time.perf_counter()
        text = self.render(messages)
        tokens = C_tokenize(C, self.model, text)
        common = 0
        for x, y in zip(self.cached, tokens[:-1]):
            if x != y:
                break
            common += 1
        self.lib.llama_kv_cache_seq_rm(self.ctx, 0, common, -1)
        grammar = self.lib.llama_sampler_init_grammar(self.vocab, schema_grammar(schema).encode(), b"root") \
            if schema is not None else None
        t0 = time.perf_counter()
        self._decode(tokens[common:], common)
        t1 = time.perf_counter()
        out: list[int] = []
        pos = len(tokens)
        for _ in range(max_tokens):
            tok = self._pick(grammar)
            if C.llama_token_is_eog(self.model, tok):
                break
            if grammar is not None:
                self.lib.llama_grammar_accept_token(grammar, self.ctx, tok)
            out.append(tok)
            self._decode([tok], pos)
            pos += 1
        t2 = time.perf_counter()
        if grammar is not None:
            self.lib.llama_grammar_free(grammar)
        self.cached = tokens + out
        pieces = b"".join(_piece(C, self.model, t) for t in out).decode("utf-8", "replace")
        return CallResult(len(tokens), common, t1 - t0, len(out), t2 - t1, time.perf_counter() - started, pieces)


def C_tokenize(C: Any, model: Any, text: str) -> list[int]:
    """Tokens of text with special tokens parsed (the chat template's markers), no BOS added."""
    raw = text.encode("utf-8")
    n = abs(C.llama_tokenize(model, raw, len(raw), None, 0, False, True))
    buf = (C.llama_token * n)()
    n = C.llama_tokenize(model, raw, len(raw), buf, n, False, True)
    return list(buf[:n])


def _piece(C: Any, model: Any, token: int) -> bytes:
    buf = ctypes.create_string_buffer(256)
    n = C.llama_token_to_piece(model, token, buf, 256, 0, False)
    return buf.raw[:max(n, 0)]


def sync_engine(model: Path, arm: RuntimeArm) -> Engine:
    """llama-cpp-py-sync's Llama: its chat template, its grammar from the schema, its prefix reuse (cache_key)."""
    from llama_cpp_py_sync import Llama

    threads = arm.option("threads", 2)
    llm = Llama(str(model), n_ctx=arm.option("n_ctx", 8192), n_batch=arm.option("n_batch", 2048),
                n_ubatch=arm.option("n_ubatch", 512), n_threads=threads,
                n_threads_batch=arm.option("batch_threads", threads), flash_attn_type=arm.option("flash_attn", 0))

    def call(messages: list[dict], schema: dict | None, max_tokens: int) -> CallResult:
        stats: dict[str, Any] = {}
        pieces: list[str] = []
        started = time.perf_counter()
        grammar = schema_grammar(schema) if schema is not None else None
        for chunk in llm.create_chat_completion(messages, max_tokens=max_tokens, temperature=0.0, top_k=1,
                                                repeat_penalty=1.0, seed=0, grammar=grammar, stream=True,
                                                cache_key="question", on_stats=stats.update):
            pieces.append(chunk["choices"][0]["delta"].get("content") or "")
        seconds = time.perf_counter() - started
        text = "".join(pieces)
        out = len(llm.tokenize(text, add_special=False)) if text else 0
        prefill = stats.get("prefill_seconds") or 0.0
        return CallResult(stats.get("input_tokens", 0), stats.get("reused_tokens", 0), prefill, out,
                          max(0.0, (stats.get("total_seconds") or seconds) - prefill), seconds, text)
    return call


def make_engine(model: Path, arm: RuntimeArm) -> Engine:
    """The arm's runtime loaded with its options."""
    if arm.runtime == "xllamacpp":
        return xllamacpp_engine(model, arm)
    if arm.runtime == "ik":
        return IkEngine(model, arm)
    return sync_engine(model, arm)


def replay(model: Path, arm: RuntimeArm, calls: list[dict]) -> list[CallResult]:
    """Every call of one question, in order, on a freshly loaded runtime."""
    engine = make_engine(model, arm)
    return [engine(c["messages"], schema_of(c["response_format"]), c.get("max_tokens") or 1024) for c in calls]


def main() -> int:
    """`record OUT [--questions N]` or `replay MODEL ARM CALLS_JSON` (one question; JSON lines out)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--questions", type=int, default=3)
    rec.add_argument("--split", default="tune")
    rec.add_argument("--pages", type=Path, default=Path("/work/shared/data/wiki/frames_linked_pages.jsonl.gz"))
    rep = sub.add_parser("replay")
    rep.add_argument("model", type=Path)
    rep.add_argument("arm")
    rep.add_argument("calls", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    if args.command == "record":
        from frames_agent.eval.frames.datasets import load_questions
        from frames_agent.eval.frames.split import select

        questions = select(load_questions(None, None).questions, args.split)[: args.questions]
        return record(questions, args.pages, args.out)
    arm = parse_runtime_arms(args.arm)[0]
    calls = json.loads(args.calls.read_text(encoding="utf-8"))
    for result in replay(args.model, arm, calls):
        print(json.dumps(asdict(result)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
