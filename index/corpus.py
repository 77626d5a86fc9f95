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
from typing import BinaryIO, TextIO, cast
from xml.etree.ElementTree import ParseError, iterparse

from frames_agent.index.errors import CorpusError
from frames_agent.retrieval.paths import shared_dir, shared_lookup

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".jsonl.bz2")
XML_SUFFIXES = (".xml", ".xml.bz2", ".xml.gz", ".bz2")
# Links that are not prose: media, categories, and interlanguage links such as [[de:Paris]].
_DROP_LINK = re.compile(r"^\s*:?\s*(file|image|media|category|[a-z]{2,3}(-[a-z]+)?)\s*:", re.IGNORECASE)
_DROP_TAGS = {"ref", "references", "table", "gallery", "timeline", "math", "score", "syntaxhighlight", "imagemap"}
_MAGIC_WORD = re.compile(r"__[A-Z]+__")
_PASSAGE_TOKEN = re.compile(r"\S+\s*")

_REDIRECT_TARGET = re.compile(r"\[\[\s*([^\]|#]+)")

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


def read_redirects(path: Path) -> Iterator[tuple[str, str]]:
    """(alias, target) pairs of a redirects TSV; blank and malformed lines are skipped."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
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
        else:
            raise CorpusError(f"corpus file not found: {path}")
    return files


def check_xml_path(path: Path) -> Path:
    """path when it is an existing XML dump file."""
    path = Path(path).expanduser()
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


def read_jsonl(path: Path, progress: Progress | None = None) -> Iterator[Article]:
    """Articles of a JSONL file of {id, title, contents}; a bad line raises CorpusError naming file:line."""
    with open(path, "rb") as raw:
        # utf-8-sig: editors on Windows start files with a byte-order mark, which is not part of the first line.
        text = io.TextIOWrapper(_open_binary(path, raw), encoding="utf-8-sig", errors="replace")
        try:
            for number, line in enumerate(text, start=1):
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
    if not line.strip():
        raise CorpusError(f"{where}: empty line (expected a JSON object with id, title, contents)")
    try:
        data = json.loads(line)
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
    """Main-namespace pages of a MediaWiki XML dump as plain text (wikitext parsed on `workers`); redirect pages
    too, as text-less Articles with redirect_to, when redirects=True."""
    with open(path, "rb") as raw:
        pages = _article_pages(_open_binary(path, raw), raw, progress, redirects)
        try:
            if workers > 1:  # full dumps: mwparserfromhell is the bottleneck, so spread it over processes
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
    for count, page in enumerate(_iter_pages(stream), start=1):
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


def _iter_pages(stream: BinaryIO) -> Iterator[dict]:
    """Raw page records of a dump, streamed; elements are cleared so memory stays flat on a full dump."""
    root = None
    for event, elem in iterparse(stream, events=("start", "end")):
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


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def wikitext_to_text(wikitext: str) -> str:
    """Plain prose of a page's wikitext: templates, refs, tables, media and category links removed."""
    import mwparserfromhell

    code = mwparserfromhell.parse(wikitext)
    for node in code.filter_tags(recursive=True):
        if str(node.tag).strip().lower() in _DROP_TAGS:
            _remove(code, node)
    for link in code.filter_wikilinks(recursive=True):
        if _DROP_LINK.match(str(link.title)):
            _remove(code, link)
    text = code.strip_code(normalize=True, collapse=True)
    text = _MAGIC_WORD.sub("", text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _remove(code, node) -> None:
    try:
        code.remove(node)
    except ValueError:  # already gone with an enclosing node
        pass


def split_passages(text: str, words: int = 100) -> list[str]:
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
    passages = split_passages(article.text, words)
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
