"""report.html without a browser: written by frames and report, self-contained, record text embedded safely."""
from __future__ import annotations

import base64
import json
import re

from frames_agent import cli
from frames_agent.eval.frames.html.page import HTML_FILE, RunPage, passages, render, row, to_html, trace
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.judge import Verdict

HOSTILE = '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2"><!--'


def hostile_record(qid: str = "1") -> QuestionRecord:
    """A record with markup in every text field a page shows."""
    return QuestionRecord(
        id=qid + HOSTILE, question=HOSTILE, gold_answer=HOSTILE, reasoning_types=[HOSTILE], gold_titles=[HOSTILE],
        answer=HOSTILE, raw_answer=HOSTILE + " raw", error=None, retrieved_titles=[HOSTILE],
        steps=[{"step": 1, "queries": [HOSTILE], "origins": ["model"], "query_hits": [1], "new_doc_ids": ["d"],
                "new_doc_titles": [HOSTILE], "tool_calls": [HOSTILE], "dropped_queries": [HOSTILE],
                "errors": [HOSTILE]}],
        found_step={HOSTILE: 1}, found_origin={HOSTILE: "model"}, gold_shown=[HOSTILE], answer_context_recall=1.0,
        answer_context={"budget": 100, "shown_titles": [HOSTILE], "text": f"[1] {HOSTILE}\n{HOSTILE}"},
        final={"reasoning": HOSTILE}, truncated_queries=[HOSTILE],
        verdict=Verdict(outcome="incorrect", method="judge", explanation=HOSTILE, judge=HOSTILE, error=HOSTILE))


def test_frames_writes_report_html_and_report_html_rewrites_it(two_runs, capsys):
    for out in two_runs:
        page = (out / HTML_FILE).read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>")
        # self-contained: no file or address the page would have to fetch
        assert not re.search(r"""(?:src|href)=["'](?!data:|#)""", page), "the page links a file or address"
        assert "data:image/png;base64," in page and "http://" not in page and "https://" not in page
    (two_runs[0] / HTML_FILE).unlink()
    assert cli.main(["report", str(two_runs[0])]) == 0 and not (two_runs[0] / HTML_FILE).exists()
    assert cli.main(["report", str(two_runs[0]), "--html"]) == 0 and (two_runs[0] / HTML_FILE).exists()


def test_a_compare_directory_gets_one_page_of_both_runs_with_the_comparison_on_top(two_runs, capsys):
    root = two_runs[0].parent
    (root / "comparison.json").write_text(json.dumps({"order": ["vanilla", "planning"]}))  # as compare names them
    assert cli.main(["report", str(root), "--html"]) == 0
    out = capsys.readouterr().out
    assert "vanilla vs planning" not in out and "planning vs vanilla" in out  # the first named is the baseline
    page = (root / HTML_FILE).read_text(encoding="utf-8")
    index = json.loads(re.search(r'id="frames-index">(.*?)</script>', page).group(1))
    assert [r["name"] for r in index["runs"]] == ["vanilla", "planning"] and len(index["questions"]) == 6
    assert "Baseline: <code>vanilla</code>" in page and "Questions that flipped" in page
    assert json.loads((root / "comparison.json").read_text())["baseline"] == "vanilla"


def test_every_record_field_is_embedded_as_data_never_as_markup():
    page = render([RunPage("run " + HOSTILE, HOSTILE, [hostile_record()], to_html(f"# {HOSTILE}\n- **{HOSTILE}**"))],
                  HOSTILE)
    # outside the JSON blocks no record text appears unescaped; inside them no "<" survives to end a block early
    for block in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S):
        assert "<" not in block
    assert "<script>window.pwned" not in page and "<img src=x" not in page
    assert page.count("<script>") == 1  # the page's own script, and no other


def test_markdown_links_only_to_relative_targets():
    html = to_html("- [3](report.html#q=3) [x](javascript:alert(1)) [y](//host/p) [z](HTTP://host) <https://host>")
    assert '<a href="report.html#q=3">3</a>' in html and html.count("<a ") == 1 and "[x](javascript:alert(1))" in html


def test_markdown_escapes_raw_html_and_shifts_headings_marks_tables_and_inlines_figures():
    text = ("# Title\n\n<script>alert(1)</script>\n\n- **b** `c`\n\n| a | b |\n|---|---:|\n| <b>x</b> | 2 |\n\n"
            "![plot](p.png)\n\n![gone](q.png)\n\n```\n<i>\n```")
    html = to_html(text, lambda name: "data:image/png;base64,AAA" if name == "p.png" else None)
    assert "<h2>Title</h2>" in html and "<h1" not in html  # the page's own title is the h1
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<li><strong>b</strong> <code>c</code></li>" in html
    assert '<table class="md">' in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert '<img class="figure" alt="plot" src="data:image/png;base64,AAA">' in html
    assert "<p>[gone]</p>" in html and html.count("<img") == 1  # no data URI: the alt text stays
    assert "<pre><code>&lt;i&gt;\n</code></pre>" in html


def test_rows_and_traces_carry_the_filters_and_the_gold_marks():
    record = hostile_record()
    r = row(record)
    assert (r["v"], r["sw"], r["fns"], r["gs"], r["gf"], r["tq"]) == ("wrong", True, False, 1, 1, 1)
    t = trace(record)
    assert t["steps"][0]["new"] == [{"title": HOSTILE, "gold": True}] and t["steps"][0]["gold_found"] == [HOSTILE]
    assert t["steps"][0]["hits"] == 1 and t["gold"][0]["shown"] and t["passages"][0]["gold"]


def test_passages_split_by_article_and_mark_gold():
    context = {"shown_titles": ["Brennick", "Olse River"], "text": "[1] Brennick\nA town.\n…\n\n[2] Olse River\nLong."}
    got = passages(context, {"olse river"})
    assert [(p["title"], p["gold"], p["text"].strip()) for p in got] == [
        ("Brennick", False, "A town.\n…"), ("Olse River", True, "Long.")]


def test_an_unparsed_verdict_is_read_unrated_even_from_an_old_record():
    old = QuestionRecord(id="1", verdict={"outcome": "incorrect", "method": "unparsed", "error": "no decision"})
    assert old.unrated and old.correct is None and row(old)["v"] == "unrated"


def _run_naming(tmp_path, text: str):
    """A run directory whose reasoning types, model answers and server errors all hold text."""
    out = tmp_path / "run"
    out.mkdir()
    records = [{"id": "1", "question": "q", "gold_answer": "a", "answer": "a " + text, "reasoning_types": [text],
                "verdict": {"outcome": "accurate", "method": "exact"}},
               {"id": "2", "question": "q", "gold_answer": "a", "failed": True, "error": "server said " + text,
                "reasoning_types": [text], "final": {"reasoning": text}}]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (out / "config.json").write_text(json.dumps({"system": "multistep", "model": "m"}))
    return out


def test_an_image_named_by_data_is_never_inlined_only_the_runs_own_figures_are(tmp_path, capsys):
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\nnot for sharing")
    out = _run_naming(tmp_path, f"![x]({secret}) ![y](../secret.png) ![z](https://host/t.png)")
    assert cli.main(["report", str(out), "--html"]) == 0
    page = (out / HTML_FILE).read_text(encoding="utf-8")
    assert base64.b64encode(secret.read_bytes()).decode()[:16] not in page
    sources = re.findall(r'<img[^>]*src="([^"]*)"', page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)  # the accuracy figure
    assert len(sources) == 1 and str(secret) in page  # the reasoning type is shown as text
    assert "\\!\\[x\\]" in (out / "report.md").read_text(encoding="utf-8")  # report.md shows it as written too
