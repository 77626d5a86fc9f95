"""The Markdown our reports write as HTML, by markdown-it-py with raw HTML off, so every text is escaped."""
from __future__ import annotations

import base64
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict


class _Markdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        # Relative targets only (the page opens with no server): no scheme, so no javascript:, and no //host.
        return ":" not in url and not url.startswith("//")


def _heading(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].tag = f"h{min(int(tokens[idx].tag[1]) + 1, 6)}"  # the page's own title is the h1
    return self.renderToken(tokens, idx, options, env)


def _table(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("class", "md")  # page.css styles these tables, not the page's question table
    return self.renderToken(tokens, idx, options, env)


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    alt = escapeHtml(self.renderInlineAsText(tokens[idx].children or [], options, env))
    uri = env.get("images", lambda name: None)(str(tokens[idx].attrGet("src")))
    return f'<img class="figure" alt="{alt}" src="{escapeHtml(uri)}">' if uri else f"[{alt}]"


_MD = _Markdown("commonmark", {"html": False}).enable("table")
_MD.add_render_rule("heading_open", _heading)
_MD.add_render_rule("heading_close", _heading)
_MD.add_render_rule("table_open", _table)
_MD.add_render_rule("image", _image)


def inline(text: str) -> str:
    """One line of Markdown as HTML with no enclosing paragraph."""
    return _MD.renderInline(text)


def image_uri(path: Path) -> str | None:
    """A PNG or SVG file as a data URI (the page must open with no other file beside it)."""
    kind = {".png": "image/png", ".svg": "image/svg+xml"}.get(path.suffix.lower())
    if kind is None or not path.is_file():
        return None
    return f"data:{kind};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def figures(directory: Path | None, names: Collection[str]) -> Callable[[str], str | None]:
    """images() for to_html inlining only the named figures of directory; any other name stays its alt text."""
    return lambda name: image_uri(directory / name) if directory is not None and name in names else None


def to_html(markdown: str, images: Callable[[str], str | None] = lambda name: None) -> str:
    """HTML of a report's Markdown; images(name) gives an image's data URI (None: the alt text stays)."""
    return _MD.render(markdown, {"images": images})
