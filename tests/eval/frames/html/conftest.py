"""Fixtures of the HTML report tests: scripted runs on the tiny real index, and a headless Chromium when installed."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.eval.frames.test_runner import run

BROWSER_MISSING = "needs Chromium and chromedriver (apt-get install -y chromium chromium-driver) and selenium"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, tiny_retriever) -> list[Path]:
    """The six tiny questions run with the planning and the vanilla prompt (scripted model, real index)."""
    root = tmp_path_factory.mktemp("html")
    planning, _ = run(root / "a", tiny_retriever, out=str(root / "cmp" / "planning"))
    vanilla, _ = run(root / "b", tiny_retriever, out=str(root / "cmp" / "vanilla"), prompt="vanilla")
    return [planning.out, vanilla.out]


def chromium_paths() -> tuple[str, str] | None:
    """(browser, driver) executables, or None when either is absent."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by Selenium; the test skips in one line without one."""
    paths = chromium_paths()
    if paths is None:
        pytest.skip(BROWSER_MISSING)
    webdriver = pytest.importorskip("selenium.webdriver", reason=BROWSER_MISSING)
    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=paths[1]), options=options)
    try:
        yield driver
    finally:
        driver.quit()
