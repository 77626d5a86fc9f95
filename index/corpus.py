"""Corpora: JSONL / JSONL.gz of {id, title, contents} and MediaWiki XML dumps, read as articles and cut into units."""
from __future__ import annotations

import bz2
import gzip
import io
import json
import multiprocessing
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO, cast
from xml.etree.ElementTree import ParseError, iterparse

from frames_agent.core.bounded import MAX_JSON_BYTES, OutOfBounds, regular_file
from frames_agent.core.bounded import loads as bounded_loads
from frames_agent.core.errors import FramesAgentError
from frames_agent.core.paths import shared_dir, shared_lookup
from frames_agent.index.wikitext import wikitext_to_text

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".jsonl.bz2")
XML_SUFFIXES = (".xml", ".xml.bz2", ".xml.gz", ".bz2")
_PASSAGE_TOKEN = re.compile(r"\S+\s*")

_REDIRECT_TARGET = re.compile(r"\[\[\s*([^\]|#]+)")

# An article line of a JSONL corpus or a redirects line; the longest Wikipedia article is ~1.5 MB of wikitext.
MAX_LINE_CHARS = MAX_JSON_BYTES


class CorpusError(FramesAgentError):
    """A corpus file or dump cannot be read as documents."""


Progress = Callable[[int], None]  # called with the number of input bytes consumed so far in the current file


@dataclass(frozen=True)
class Article:
    """One article from a corpus, before it is cut into index units."""

    id: str
    title: str
    text: str
    # A dump's redirect page: no text, only the title it points at (kept so the redirect's title finds the article).
    redirect_to: str = ""


REDIRECTS_FILE = "redirects.tsv"  # alias<TAB>target lines beside a corpus: titles that lead to another article


def _lines(text: TextIO, where: Path) -> Iterator[str]:
    """The lines of text, each read only up to MAX_LINE_CHARS (a file of zeros with no newline never ends)."""
    number = 0
    while line := text.readline(MAX_LINE_CHARS + 1):
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise CorpusError(f"{where}:{number}: a line over {MAX_LINE_CHARS:,} characters")
        yield line


def read_redirects(path: Path) -> Iterator[tuple[str, str]]:
    """(alias, target) pairs of a redirects TSV; blank and malformed lines are skipped."""
    with open(_regular(path), encoding="utf-8", errors="replace") as handle:
        for line in _lines(handle, path):
            alias, sep, target = line.rstrip("\n").partition("\t")
            if sep and alias.strip() and target.strip():
                yield alias.strip(), target.strip()


def redirect_files(corpus_files: list[Path]) -> list[Path]:
    """The redirects.tsv files that sit beside the given corpus files."""
    found = {p.parent / REDIRECTS_FILE for p in corpus_files}
    return sorted(p for p in found if p.is_file())


def default_corpus_paths() -> list[Path]:
    """The default corpus: FRAMES_AGENT_CORPUS (file or directory), else <shared>/data/wiki/*.jsonl.gz."""
    env = os.environ.get("FRAMES_AGENT_CORPUS")
    if env:
        return expand_corpus_paths([Path(env)])
    wiki = shared_dir() / "data" / "wiki"
    paths = sorted(wiki.glob("*.jsonl.gz"))
    if not paths:
        raise CorpusError(f"no default corpus: {wiki} has no *.jsonl.gz; set FRAMES_AGENT_CORPUS or pass --corpus, "
                          "build from a Wikipedia dump (index build --xml enwiki-latest-pages-articles.xml.bz2), "
                          f"or search a pyserini prebuilt index online (--index wikipedia-kilt-doc); {shared_lookup()}")
    return paths


def expand_corpus_paths(paths: list[Path]) -> list[Path]:
    """Input files, with directories replaced by the JSONL files inside them; missing paths are an error."""
    files: list[Path] = []
    for path in paths:
        path = Path(path).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(JSONL_SUFFIXES))
            if not found:
                raise CorpusError(f"corpus directory {path} has no .jsonl or .jsonl.gz files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            _regular(path)
        else:
            raise CorpusError(f"corpus file not found: {path}")
    return files


def check_xml_path(path: Path) -> Path:
    """path when it is an existing XML dump file."""
    path = Path(path).expanduser()
    if path.exists():
        _regular(path)
    if not path.is_file():
        raise CorpusError(f"XML dump not found: {path}")
    if not path.name.endswith(XML_SUFFIXES):
        raise CorpusError(f"{path} does not look like a MediaWiki dump (.xml or .xml.bz2)")
    return path


def _open_binary(path: Path, raw: BinaryIO) -> BinaryIO:
    # typeshed does not count GzipFile and BZ2File as BinaryIO, which they are at run time.
    if path.name.endswith(".gz"):
        return cast(BinaryIO, gzip.GzipFile(fileobj=raw))
    if path.name.endswith(".bz2"):
        return cast(BinaryIO, bz2.BZ2File(raw))
    return raw


def _regular(path: Path) -> Path:
    """path when it is a regular file: a FIFO would block its reader and a device never ends."""
    try:
        regular_file(path)
    except OutOfBounds:
        raise CorpusError(f"{path} is not a regular file (a FIFO or a device is never read)") from None
    return path


def read_jsonl(path: Path, progress: Progress | None = None) -> Iterator[Article]:
    """Articles of a JSONL file of {id, title, contents}; a bad line raises CorpusError naming file:line."""
    with open(_regular(path), "rb") as raw:
        # utf-8-sig: editors on Windows start files with a byte-order mark, which is not part of the first line.
        text = io.TextIOWrapper(_open_binary(path, raw), encoding="utf-8-sig", errors="replace")
        try:
            for number, line in enumerate(_lines(text, path), start=1):
                if not line.strip():  # blank lines (a trailing one above all) hold no document
                    continue
                yield _parse_line(line, f"{path}:{number}")
                if progress is not None and number % 256 == 0:
                    progress(raw.tell())
        except (OSError, EOFError) as exc:  # truncated or not actually gzip/bz2
            raise CorpusError(f"{path}: cannot read ({exc})") from exc
        if progress is not None:
            progress(raw.tell())


def _parse_line(line: str, where: str) -> Article:
    try:
        data = bounded_loads(line)  # nesting bounded: a 100,000-deep line is a bad line, not a RecursionError
    except OutOfBounds as exc:
        raise CorpusError(f"{where}: {exc}") from None
    except ValueError as exc:
        raise CorpusError(f"{where}: malformed JSON ({exc.args[0] if exc.args else exc})") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{where}: expected a JSON object, got {type(data).__name__}")
    doc_id, contents, title = data.get("id"), data.get("contents"), data.get("title", "")
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) or not str(doc_id).strip():
        raise CorpusError(f"{where}: missing or empty 'id'")
    if not isinstance(contents, str):
        raise CorpusError(f"{where}: missing 'contents' string")
    if not isinstance(title, str):
        raise CorpusError(f"{where}: 'title' must be a string")
    title = " ".join(title.split())
    # Some corpora already start contents with the title line; keep it once.
    if title and contents.startswith(title + "\n"):
        contents = contents[len(title) + 1:]
    return Article(id=str(doc_id).strip(), title=title, text=contents.strip())


def read_mediawiki_xml(path: Path, progress: Progress | None = None, workers: int = 1,
                       redirects: bool = False) -> Iterator[Article]:
    """Main-namespace pages of a MediaWiki XML dump as plain text (and, with redirects, redirect pages)."""
    with open(_regular(path), "rb") as raw:
        pages = _article_pages(_open_binary(path, raw), raw, progress, redirects)
        try:
            if workers > 1:  # full dumps: cleaning wikitext is the bottleneck, so spread it over processes
                # spawn, not fork: the parent may be running a JVM, which does not survive a fork.
                with multiprocessing.get_context("spawn").Pool(workers) as pool:
                    yield from pool.imap(_page_article, pages, chunksize=16)
            else:
                yield from map(_page_article, pages)
        except ParseError as exc:
            raise CorpusError(f"{path}: malformed XML ({exc})") from None
        except (OSError, EOFError) as exc:
            raise CorpusError(f"{path}: cannot read ({exc})") from exc
        if progress is not None:
            progress(raw.tell())


def _article_pages(stream: BinaryIO, raw: BinaryIO, progress: Progress | None,
                   redirects: bool) -> Iterator[tuple[str, str, str, str]]:
    for count, page in enumerate(_iter_pages(stream, getattr(raw, "name", "the dump")), start=1):
        if progress is not None and count % 64 == 0:
            progress(raw.tell())
        if page["ns"] != "0":
            continue
        if page["redirect"] is not None or page["text"].lstrip().lower().startswith("#redirect"):
            target = page["redirect"] or next(iter(_REDIRECT_TARGET.findall(page["text"])), "").strip()
            if redirects and target:
                yield page["id"], page["title"], "", target
            continue
        yield page["id"], page["title"], page["text"], ""


def _page_article(page: tuple[str, str, str, str]) -> Article:
    page_id, title, wikitext, target = page
    if target:
        return Article(id=page_id, title=title, text="", redirect_to=target)
    return Article(id=page_id, title=title, text=wikitext_to_text(wikitext))


def _iter_pages(stream: BinaryIO, where: object = "the dump") -> Iterator[dict]:
    """Raw page records of a dump, streamed; elements are cleared so memory stays flat on a full dump."""
    root = None
    for event, elem in _events(stream, where):
        if event == "start":
            root = root if root is not None else elem
            continue
        if _local(elem.tag) != "page":
            continue
        page = {"title": "", "ns": "0", "id": "", "redirect": None, "text": ""}
        for child in elem:
            tag = _local(child.tag)
            if tag in ("title", "ns", "id"):
                page[tag] = (child.text or "").strip()
            elif tag == "redirect":
                page["redirect"] = (child.get("title") or "").strip()
            elif tag == "revision":
                page["text"] = next((c.text or "" for c in child if _local(c.tag) == "text"), "")
        elem.clear()
        if root is not None:
            root.clear()
        yield page


def _events(stream: BinaryIO, where: object) -> Iterator[tuple[str, Any]]:
    """iterparse's events; a dump in an encoding expat cannot read (UTF-7, UTF-16, an unknown name) is a CorpusError."""
    try:
        yield from iterparse(stream, events=("start", "end"))
    except (ValueError, LookupError) as exc:  # "multi-byte encodings are not supported", "unknown encoding: x"
        raise CorpusError(f"{where}: cannot read the dump's text ({exc}); MediaWiki dumps are UTF-8") from None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def word_windows(text: str, words: int = 100) -> list[str]:
    """Text cut into passages of about `words` words; a short tail joins the previous passage."""
    tokens = _PASSAGE_TOKEN.findall(text.strip())
    if not tokens:
        return []
    chunks = [tokens[i:i + words] for i in range(0, len(tokens), words)]
    if len(chunks) > 1 and len(chunks[-1]) < words // 4:
        chunks[-2].extend(chunks.pop())
    return ["".join(chunk).strip() for chunk in chunks]


def article_units(article: Article, unit: str, words: int = 100) -> list[dict]:
    """The JsonCollection documents of one article: itself, or its passages with ids "<article id>#<n>"."""
    if unit == "article":
        return [_unit_json(article.id, article, article.text)]
    passages = word_windows(article.text, words)
    return [_unit_json(f"{article.id}#{n}", article, text) for n, text in enumerate(passages)]


def _unit_json(doc_id: str, article: Article, text: str) -> dict:
    # The title goes into the searchable contents too (BM25 on title + text), and every unit keeps its article id.
    contents = f"{article.title}\n{text}" if article.title else text
    return {"id": doc_id, "title": article.title, "contents": contents, "article_id": article.id}


class ShardWriter:
    """Writes JSON lines into numbered shard files of at most shard_docs docs."""

    def __init__(self, directory: Path, shard_docs: int):
        self.directory, self.shard_docs, self.count = directory, shard_docs, 0
        self.handle: TextIO | None = None

    def write(self, doc: dict) -> None:
        """Append one document, starting a new shard file when the current one is full."""
        if self.count % self.shard_docs == 0:
            self.close()
            shard = self.directory / f"docs{self.count // self.shard_docs:05d}.jsonl"
            self.handle = shard.open("w", encoding="utf-8")
        assert self.handle is not None, "open from the shard's first document on"
        self.handle.write(json.dumps(doc, ensure_ascii=False) + "\n")
        self.count += 1

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
