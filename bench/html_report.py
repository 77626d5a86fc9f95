"""report.html for a whole FRAMES run of synthetic multistep records: the page's size against results.jsonl, and its
open time in headless Chromium (median of --repeats loads)."""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from frames_agent.eval.frames.html.page import HTML_FILE, RunPage, write_page
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.judge import Verdict

TYPES = ["Numerical reasoning", "Tabular reasoning", "Multiple constraints", "Temporal reasoning", "Post processing"]
WORDS = ("river town mayor founded century treaty election museum stadium prize novel railway bridge census county "
         "festival island president harbour cathedral").split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def synthetic_record(i: int, rng: random.Random) -> QuestionRecord:
    """One multistep record shaped like the embedded model's (steps, hits, answer prompt, calls, verdict)."""
    gold = [f"Gold {i} {g}" for g in range(rng.randint(2, 5))]
    steps, titles = [], []
    for s in range(1, 6):
        new = [f"Article {i} {s} {d}" for d in range(15)] + ([gold[s - 1]] if s <= len(gold) and rng.random() < .6 else [])
        titles += new
        steps.append({"step": s, "queries": [_text(rng, rng.randint(2, 6)) for _ in range(5)], "tool_calls": [],
                      "new_docs": len(new), "fallback": False, "filled_queries": [], "dropped_queries": [],
                      "errors": [], "origins": ["model"] * 4 + ["proposer"], "new_doc_ids": [f"id{hash(t)}" for t in new],
                      "new_doc_titles": new, "query_hits": [10, 10, 10, 10, 3], "new_doc_origins": ["model"] * len(new)})
    shown = titles[:9]
    text = "\n\n".join(f"[{k}] {t}\n{_text(rng, 110)}\n…\n" for k, t in enumerate(shown, 1))
    found = {g: next((st["step"] for st in steps if g in st["new_doc_titles"]), None) for g in gold}
    correct = rng.random() < .3
    return QuestionRecord(
        id=str(i), question=_text(rng, 40) + "?", gold_answer=_text(rng, 3), reasoning_types=rng.sample(TYPES, 2),
        gold_titles=gold, system="multistep", answer=_text(rng, 4), raw_answer="Reasoning: " + _text(rng, 60),
        retrieved_titles=titles, steps=steps, covered_titles=gold, found_step=found,
        found_at={g: rng.randint(1, 75) if s else None for g, s in found.items()},
        found_origin={g: "model" if s else None for g, s in found.items()}, articles_by_step=[15, 30, 45, 60, 75],
        steps_run=5, recall=sum(v is not None for v in found.values()) / len(gold), covered_recall=.5, coverage=1.0,
        llm_calls=7, tokens={"prompt": 6200, "completion": 500}, gold_shown=[g for g in gold if g in shown],
        answer_context_recall=.5, shown_recall=.4, answer_in_prompt=rng.random() < .3,
        answer_context={"documents_shown": 9, "documents_cut": 66, "tokens_cut": 400000, "prompt": "answer",
                        "budget": 1600, "shown_titles": shown, "selection": "context", "passages_ranked": 4000,
                        "text": text, "passages": [{"key": t, "title": t, "passages": [0, 3], "of": 20, "cut": False,
                                                    "tokens": 200, "article_tokens": 3000} for t in shown]},
        final={"answer": "x", "reasoning": _text(rng, 50)}, exact_match=False,
        verdict=Verdict(outcome="accurate" if correct else "incorrect", method="judge", explanation=_text(rng, 25),
                        judge="local", replies=["Explanation: " + _text(rng, 25) + "\nDecision: FALSE"]),
        calls=[{"node": "plan", "prompt_tokens": 900, "completion_tokens": 80, "seconds": 12.0}] * 5
        + [{"node": "answer", "prompt_tokens": 1900, "completion_tokens": 130, "seconds": 30.0}],
        seconds=rng.uniform(40, 300))


def open_times(page: Path, repeats: int) -> tuple[float, float, float]:
    """Median seconds in headless Chromium: navigation to the built table, opening a trace, a text search."""
    from selenium import webdriver
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or ""
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=shutil.which("chromedriver")),
                              options=options)
    ready, trace, search = [], [], []
    # Timed inside the page (performance.now(): from navigation start; layout forced so rendering is counted).
    opening = ("const t = performance.now(); document.querySelector(\"tr[data-id='400']\").click(); "
               "document.body.offsetHeight; return performance.now() - t")
    searching = ("const t = performance.now(), box = document.getElementById('f-search'); box.value = 'river'; "
                 "box.dispatchEvent(new Event('input')); document.body.offsetHeight; return performance.now() - t")
    try:
        for _ in range(repeats):
            driver.get(page.as_uri())  # returns after the load event: the script has built the table
            while driver.execute_script("return document.body.dataset.ready") != "1":
                time.sleep(0.01)
            ready.append(float(driver.execute_script("return document.body.dataset.readyAt")) / 1000)
            trace.append(driver.execute_script(opening) / 1000)
            assert driver.find_elements(By.CSS_SELECTOR, "#trace .step")
            search.append(driver.execute_script(searching) / 1000)
    finally:
        driver.quit()
    return statistics.median(ready), statistics.median(trace), statistics.median(search)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=824)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=None, help="keep results.jsonl and report.html here")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="html-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    records = [synthetic_record(i, rng) for i in range(args.questions)]
    results = out / "results.jsonl"
    results.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    started = time.perf_counter()
    page = write_page(out / HTML_FILE, [RunPage("multistep", "multistep planning (k=5, n=5 steps)", records)], "bench")
    written = time.perf_counter() - started
    size, base = page.stat().st_size, results.stat().st_size
    print(f"{args.questions} questions: results.jsonl {base / 1e6:.2f} MB ({base / args.questions / 1e3:.1f} KB/question), "
          f"report.html {size / 1e6:.2f} MB, ratio {size / base:.2f}; page written in {written:.1f} s")
    if args.no_browser or not (shutil.which("chromium") and shutil.which("chromedriver")):
        print("open time: skipped (needs chromium and chromium-driver)")
        return
    ready, trace, search = open_times(page, args.repeats)
    print(f"open in headless Chromium: table built {ready:.2f} s after navigation, a trace opened in {trace:.3f} s, "
          f"a text search in {search:.3f} s (median of {args.repeats})")


if __name__ == "__main__":
    main()
