"""report.html in a real headless Chromium: filters, a question's trace with its gold marks, two runs side by side,
and record text that tries to run script."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from frames_agent import cli
from frames_agent.eval.frames.html.page import HTML_FILE, RunPage, write_page
from tests.eval.frames.html.test_page import HOSTILE, hostile_record

pytestmark = pytest.mark.slow  # each test drives a Chromium process


def _open(browser, path) -> None:
    from selenium.webdriver.support.wait import WebDriverWait

    browser.get(path.resolve().as_uri())
    WebDriverWait(browser, 10).until(lambda b: b.execute_script("return document.body.dataset.ready") == "1",
                                     "the page never finished building its table")


def _visible_ids(browser) -> list[str]:
    return browser.execute_script(
        "return [...document.querySelectorAll('#questions tbody tr')].filter(r => !r.hidden).map(r => r.dataset.id)")


def _errors(browser) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_filter_open_a_trace_and_see_its_steps_and_gold_marks(browser, two_runs):
    from selenium.webdriver.common.by import By

    _open(browser, two_runs[0] / HTML_FILE)
    assert len(_visible_ids(browser)) == 6
    browser.find_element(By.ID, "f-fns").click()
    found_not_shown = _visible_ids(browser)
    assert len(found_not_shown) < 6
    browser.find_element(By.ID, "f-fns").click()
    browser.find_element(By.ID, "f-search").send_keys("Punxsutawney")
    assert _visible_ids(browser) == ["2"]
    browser.find_element(By.CSS_SELECTOR, "#questions tbody tr[data-id='2']").click()
    trace = browser.find_element(By.ID, "trace")
    assert "Punxsutawney Phil" in trace.text and len(trace.find_elements(By.CSS_SELECTOR, ".step")) == 2
    assert trace.find_elements(By.CSS_SELECTOR, ".gold-mark") and "Gold found here" in trace.text
    assert "What the answer prompt showed" in trace.text and "Verdict:" in trace.text
    assert not _errors(browser)


def test_gold_found_but_not_shown_filter_keeps_exactly_those_questions(browser, two_runs):
    from selenium.webdriver.common.by import By

    from frames_agent.eval.frames.runner import frames_run_dir

    records, _ = frames_run_dir(two_runs[0]).load_records()
    expected = sorted(i for i, r in records.items() if r.answer_context_recall is not None and r.answer_context_recall < 1)
    _open(browser, two_runs[0] / HTML_FILE)
    browser.find_element(By.ID, "f-fns").click()
    assert sorted(_visible_ids(browser)) == expected


def test_two_runs_side_by_side(browser, two_runs, capsys):
    from selenium.webdriver.common.by import By

    root = two_runs[0].parent
    assert cli.main(["report", str(root), "--html"]) == 0
    _open(browser, root / HTML_FILE)
    browser.find_element(By.CSS_SELECTOR, "#questions tbody tr[data-id='0']").click()
    columns = browser.find_elements(By.CSS_SELECTOR, "#trace .trace-run")
    assert [c.get_attribute("data-run") for c in columns] == ["planning", "vanilla"]
    assert all(c.find_elements(By.CSS_SELECTOR, ".step") for c in columns)
    browser.find_element(By.ID, "sbs").click()  # one run at a time
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trace .trace-run")) == 1
    browser.find_element(By.ID, "f-disagree").click()
    assert len(_visible_ids(browser)) <= 6 and not _errors(browser)


def test_hostile_strings_in_every_field_run_nothing(browser, tmp_path):
    from selenium.webdriver.common.by import By

    page = write_page(tmp_path / HTML_FILE, [RunPage(HOSTILE, HOSTILE, [hostile_record("1"), hostile_record("2")])],
                      HOSTILE, HOSTILE.replace("<", "&lt;"))
    _open(browser, page)
    browser.find_element(By.CSS_SELECTOR, "#questions tbody tr").click()
    browser.find_element(By.ID, "f-search").send_keys("pwned")
    for details in browser.find_elements(By.CSS_SELECTOR, "#trace details"):
        browser.execute_script("arguments[0].open = true", details)
    time.sleep(0.2)
    assert browser.execute_script("return window.pwned") is None
    assert browser.execute_script("return document.querySelectorAll('#trace img, #questions img').length") == 0
    assert HOSTILE in browser.find_element(By.ID, "trace").text  # shown as the text it is


def test_screenshot_for_the_readme(browser, two_runs, tmp_path):
    """A picture of a compare page from a scripted run of the tiny questions; FRAMES_AGENT_SCREENSHOT=PATH keeps it
    (docs/report-screenshot.png was taken so)."""
    from selenium.webdriver.common.by import By

    root = two_runs[0].parent
    assert cli.main(["report", str(root), "--html"]) == 0
    _open(browser, root / HTML_FILE)
    browser.execute_script("document.querySelectorAll('.summary details').forEach(d => d.open = false)")
    browser.find_element(By.CSS_SELECTOR, "#questions tbody tr[data-id='1']").click()
    browser.execute_script("[...document.querySelectorAll('h2')].find(h => h.textContent === 'Questions')"
                           ".scrollIntoView()")
    target = Path(os.environ.get("FRAMES_AGENT_SCREENSHOT") or tmp_path / "report.png")
    browser.save_screenshot(str(target))
    assert target.stat().st_size > 10_000
