"""README.md stays the front page (issue 47): short, with the one install command and the test command CI runs."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_is_a_five_minute_front_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert 'pip install -e ".[all,dev]"' in readme and "python cli.py frames --k 5 --n 5" in readme
    # .ci/run ends with the README's test command: the two must stay the same.
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert ci[-1] == "python -m pytest" and f"```bash\n{ci[-1]}\n```" in readme
    for page in ("getting-started.md", "models.md", "library.md", "results.md", "reference/config.md"):
        assert f"(docs/{page}" in readme, page
