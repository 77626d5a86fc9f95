"""README.md stays the front page: short, with the one install command and the test command CI runs."""
from __future__ import annotations

import re
import unicodedata
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


def slugify(text: str) -> str:
    """A heading's id as MkDocs (Python-Markdown's toc) makes it."""
    text = unicodedata.normalize("NFKD", re.sub(r"[`*]", "", text)).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def test_readme_links_resolve():
    # mkdocs --strict checks the site's links; README lives outside it, so its links into docs/ are checked here.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", readme):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        page = ROOT / path
        if not page.exists():
            bad.append(target)
        elif anchor:
            headings = re.findall(r"^#+ (.+?)(?: \{#([\w-]+)\})?$", page.read_text(encoding="utf-8"), flags=re.M)
            ids = {explicit or slugify(text) for text, explicit in headings}
            bad += [target] if anchor not in ids else []
    assert not bad, bad
