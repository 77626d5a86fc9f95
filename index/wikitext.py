"""A page's wikitext as plain prose (links keep their label, tags their text), in time linear in its length: each
construct is matched once on a stack, never retried at every nesting level (quadratic on a hostile page)."""
from __future__ import annotations

import html
import re
from bisect import bisect_left
from dataclasses import dataclass

# Tags dropped with everything inside them: notes, tables, galleries, formulas, code, and what no reader sees.
DROP_TAGS = frozenset({"ref", "references", "table", "gallery", "timeline", "math", "score", "syntaxhighlight",
                       "imagemap", "includeonly", "templatestyles", "chem", "ce", "hiero", "graph", "mapframe"})
# Tags whose text is shown as written: markup inside them is not markup.
_LITERAL_TAGS = frozenset({"nowiki", "pre"})
# Tags removed with their text kept (other "<name>" is text, as "a <b> c" in prose is).
_KEEP_TAGS = frozenset({
    "b", "i", "u", "s", "strike", "big", "small", "sup", "sub", "span", "div", "center", "font", "br", "hr", "p",
    "blockquote", "cite", "code", "em", "strong", "tt", "var", "abbr", "del", "ins", "dfn", "kbd", "samp", "q",
    "ruby", "rb", "rt", "rp", "mark", "wbr", "bdi", "bdo", "ol", "ul", "li", "dl", "dt", "dd", "poem", "onlyinclude",
    "noinclude", "section", "h1", "h2", "h3", "h4", "h5", "h6", "caption", "tr", "td", "th", "tbody", "thead",
    "tfoot", "categorytree", "indicator", "translate", "tvar", "languages", "inputbox", "charinsert", "maplink"})
_KNOWN_TAGS = DROP_TAGS | _LITERAL_TAGS | _KEEP_TAGS
# Links that are not prose (media, categories, [[de:Paris]]), checked on the target's first characters only.
_DROP_LINK = re.compile(r"\s*:?\s*(file|image|media|category|[a-z]{2,3}(-[a-z]+)?)\s*:", re.IGNORECASE)
_DROP_LINK_SPAN = 80
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)(?=[\s/>])([^<>]*+)>")
# Groups: 1 a table's "{|", 2 the "|" of a line's "|}" (its "}" is read with the braces after it), 3 "{{"..., 4 "}}"...,
# 5 "[[", 6 "]]", 7 any other "|".
_TOKEN = re.compile(r"^[ \t]*(\{\|)|^[ \t]*(\|)(?=\})|(\{{2,})|(\}{2,})|(\[\[)|(\]\])|(\|)", re.MULTILINE)
# [url label] and [url]: the label stays, a bare bracketed address goes; neither part may hold a bracket.
_EXTERNAL = re.compile(r"\[(?:https?:|ftp:|//|mailto:)[^\s\[\]]*+(?:[ \t]++([^\[\]\n]*+))?\]", re.IGNORECASE)
_QUOTES = re.compile(r"'{2,}")
_MAGIC_WORD = re.compile(r"__[A-Z]+__")
_LIST_MARK = re.compile(r"^[*#:;]+[ \t]*")
_RULE = re.compile(r"^-{4,}")
# Escapes that keep a literal tag's text out of later passes; html.unescape turns them back at the end.
_INERT = str.maketrans({c: f"&#{ord(c)};" for c in "[]{}|<>'=*#:;_-"})


def wikitext_to_text(wikitext: str) -> str:
    """Plain prose of a page's wikitext: templates, refs, tables, media and category links removed."""
    text = _tags(_comments(wikitext))
    text = _EXTERNAL.sub(lambda m: m.group(1) or "", _brackets(text))
    text = _MAGIC_WORD.sub("", _QUOTES.sub("", text))
    lines = (_line(line) for line in html.unescape(text).splitlines())
    return "\n".join(line for line in lines if line)


def _line(line: str) -> str:
    line = " ".join(line.split())
    if _RULE.match(line):
        return ""
    if len(line) > 1 and line[0] == line[-1] == "=":  # a heading: its title stays
        return line.strip("=").strip()
    return _LIST_MARK.sub("", line)


def _comments(text: str) -> str:
    """Text without <!-- ... --> (an unclosed comment runs to the end, as MediaWiki reads it)."""
    out, at = [], 0
    while (start := text.find("<!--", at)) >= 0:
        out.append(text[at:start])
        end = text.find("-->", start + 4)
        at = len(text) if end < 0 else end + 3
    out.append(text[at:])
    return "".join(out)


def _tags(text: str) -> str:
    """Dropped tags removed with their content, literal tags' content made inert, other known tags removed."""
    tags = list(_TAG.finditer(text))
    # Each name's closing tags in order: an opener finds its closer by bisection, never by scanning ahead.
    closers: dict[str, list[int]] = {}
    for i, tag in enumerate(tags):
        if tag.group(1):
            closers.setdefault(tag.group(2).lower(), []).append(i)
    out, at, i = [], 0, 0
    while i < len(tags):
        tag = tags[i]
        name, closing, self_closing = tag.group(2).lower(), bool(tag.group(1)), tag.group(3).rstrip().endswith("/")
        if tag.start() < at or name not in _KNOWN_TAGS:
            i += 1
            continue
        out.append(text[at:tag.start()])
        at, i = tag.end(), i + 1
        if closing or self_closing or name in _KEEP_TAGS:
            continue
        found = closers.get(name, [])
        k = bisect_left(found, i)
        if k == len(found):  # never closed: only the opening tag goes
            continue
        close = tags[found[k]]
        if name in _LITERAL_TAGS:
            out.append(text[at:close.start()].translate(_INERT))
        at, i = close.end(), found[k] + 1
    out.append(text[at:])
    return "".join(out)


@dataclass(slots=True)
class _Frame:
    """An open construct: kind ("{" braces, "[" link, "t" table), its opener's span, braces still open, first "|"."""

    kind: str
    start: int
    end: int
    braces: int = 0
    pipe: int = -1


def _brackets(text: str) -> str:
    """Templates, arguments and tables removed, links replaced by their label, in one pass on a stack of constructs."""
    stack: list[_Frame] = []
    spans: dict[int, tuple[int, int, int]] = {}  # opener start -> (keep from, keep to, resume at)
    eaten = -1  # where a "}" was taken by the "|}" that closed a table
    for token in _TOKEN.finditer(text):
        group, top = token.lastindex, (stack[-1] if stack else None)
        if group == 1:
            stack.append(_Frame("t", token.start(1), token.end()))
        elif group == 2 and top is not None and top.kind == "t":
            stack.pop()
            eaten = token.end()
            spans[top.start] = (eaten + 1,) * 3
        elif group in (2, 7):
            if top is not None and top.kind == "[" and top.pipe < 0:
                top.pipe = token.start(group)
        elif group == 3:
            stack.append(_Frame("{", token.start(), token.end(), braces=token.end() - token.start()))
        elif group == 4:
            count = token.end() - token.start() - (token.start() == eaten)
            _close_braces(stack, spans, token.end(), count)
        elif group == 5:
            stack.append(_Frame("[", token.start(), token.end()))
        elif top is not None and top.kind == "[":  # "]]" closing the innermost link
            stack.pop()
            spans[top.start] = _link(text, top, token.start(), token.end())
    return _render(text, spans)


def _close_braces(stack: list[_Frame], spans: dict[int, tuple[int, int, int]], end: int, count: int) -> None:
    """A run of count "}" ending at end closes the innermost open braces it can (extra "}" are text)."""
    while count >= 2 and stack and stack[-1].kind == "{":
        frame = stack[-1]
        used = min(count, frame.braces)
        frame.braces -= used
        count -= used
        if frame.braces < 2:
            stack.pop()
            spans[frame.start] = (end - count,) * 3


def _link(text: str, link: _Frame, close: int, after: int) -> tuple[int, int, int]:
    """What a closed link keeps: nothing for media, category and interlanguage links, else its label (or target)."""
    target_end = link.pipe if link.pipe >= 0 else close
    if _DROP_LINK.match(text, link.end, min(target_end, link.end + _DROP_LINK_SPAN)):
        return after, after, after
    return (link.pipe + 1 if link.pipe >= 0 else link.end), close, after


def _render(text: str, spans: dict[int, tuple[int, int, int]]) -> str:
    """text with each matched construct replaced by the part it keeps (a link's label, rendered in turn)."""
    out: list[str] = []
    resume: list[tuple[int, int]] = []  # per open link label: where it ends, where the text resumes after its "]]"
    starts = sorted(spans)
    at, i = 0, 0
    while True:
        stop = resume[-1][0] if resume else len(text)
        if i == len(starts) or starts[i] >= stop:  # the innermost label (or the text) ends before the next construct
            out.append(text[at:stop])
            if not resume:
                return "".join(out)
            at = resume.pop()[1]
        else:
            out.append(text[at:starts[i]])
            keep, until, after = spans[starts[i]]
            if keep < until:
                resume.append((until, after))
            at = keep if keep < until else after
        i = bisect_left(starts, at, i)  # constructs inside what was skipped are skipped with it
