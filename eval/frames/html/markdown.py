"""The Markdown our reports write (headings, lists, tables, bold, code, images) as HTML, every text escaped first."""
from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable
from pathlib import Path

_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)\s]+)\)$")
_INLINE = [(re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"), (re.compile(r"`([^`]+)`"), r"<code>\1</code>")]


_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s:]+)\)")  # relative targets only: no scheme, so no javascript:


def inline(text: str) -> str:
    """One line of text: escaped, then bold and code spans and relative links (their markers hold no markup once
    escaped)."""
    out = html.escape(text, quote=True)
    for pattern, repl in _INLINE:
        out = pattern.sub(repl, out)
    return _LINK.sub(r'<a href="\2">\1</a>', out)


def image_uri(path: Path) -> str | None:
    """A PNG or SVG file as a data URI (the page must open with no other file beside it)."""
    kind = {".png": "image/png", ".svg": "image/svg+xml"}.get(path.suffix.lower())
    if kind is None or not path.is_file():
        return None
    return f"data:{kind};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


def _table(lines: list[str]) -> str:
    head, body = _cells(lines[0]), [_cells(x) for x in lines[2:]]
    rows = ["<tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr>"]
    rows += ["<tr>" + "".join(f"<td>{inline(c)}</td>" for c in cells) + "</tr>" for cells in body]
    return "<table class='md'>" + "".join(rows) + "</table>"


def to_html(markdown: str, images: Callable[[str], str | None] = lambda name: None) -> str:
    """HTML of a report's Markdown; images(name) gives an image's data URI (None: the alt text stays)."""
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            out.append("<pre>" + html.escape("\n".join(lines[i + 1:end])) + "</pre>")
            i = end + 1
            continue
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|?$", lines[i + 1]):
            end = next((j for j in range(i, len(lines)) if not lines[j].startswith("|")), len(lines))
            out.append(_table(lines[i:end]))
            i = end
            continue
        if line.startswith("- "):
            end = next((j for j in range(i, len(lines)) if not lines[j].startswith("- ")), len(lines))
            out.append("<ul>" + "".join(f"<li>{inline(x[2:])}</li>" for x in lines[i:end]) + "</ul>")
            i = end
            continue
        heading = re.match(r"^(#{1,4}) (.*)$", line)
        image = _IMAGE.match(line.strip())
        if heading:
            level = len(heading.group(1)) + 1  # the page's own title is the h1
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif image:
            uri = images(image.group(2))
            alt = html.escape(image.group(1), quote=True)
            out.append(f"<img class='figure' alt='{alt}' src='{uri}'>" if uri else f"<p>[{alt}]</p>")
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
        i += 1
    return "\n".join(out)
