"""Corpora are read within bounds: regular files only, lines of bounded length and nesting, dumps in UTF-8 only."""
from __future__ import annotations

import gzip
import os

import pytest

from frames_agent.index import corpus
from frames_agent.index.corpus import CorpusError, expand_corpus_paths, read_jsonl, read_mediawiki_xml, read_redirects
from frames_agent.index.wikitext import wikitext_to_text

PAGE = ('<mediawiki><page><title>A</title><ns>0</ns><id>1</id><revision><text>[[b|Prose]] here.</text></revision>'
        '</page></mediawiki>\n')


def test_a_100000_deep_corpus_line_is_a_corpus_error_naming_the_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "1", "contents": "x"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: JSON nested deeper than 64"):
        list(read_jsonl(path))


def test_a_line_past_the_bound_is_a_corpus_error_and_never_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "MAX_LINE_CHARS", 1000)
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(gzip.compress(b"\0" * 100_000))  # zeros and no newline, as a link to /dev/zero gives
    with pytest.raises(CorpusError, match=r"c\.jsonl\.gz:1: a line over 1,000 characters"):
        list(read_jsonl(path))
    redirects = tmp_path / "redirects.tsv"
    redirects.write_text("a\tb\n" + "x" * 5000 + "\n")
    with pytest.raises(CorpusError, match=r"redirects\.tsv:2: a line over"):
        list(read_redirects(redirects))


@pytest.mark.parametrize("name", ["c.jsonl", "d.xml"])
def test_a_fifo_or_a_device_is_never_opened_as_a_corpus(tmp_path, name):
    os.mkfifo(tmp_path / name)  # opening it would wait for a writer forever
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    with pytest.raises(CorpusError, match="not a regular file"):
        expand_corpus_paths([tmp_path / name]) if name.endswith("jsonl") else list(read_mediawiki_xml(tmp_path / name))
    with pytest.raises(CorpusError, match="not a regular file"):
        expand_corpus_paths([tmp_path / "zero.jsonl"])


@pytest.mark.parametrize("encoding", ["UTF-7", "UTF-32", "GB18030", "EBCDIC-X"])
def test_a_dump_not_in_utf8_is_a_corpus_error(tmp_path, encoding):
    path = tmp_path / "d.xml"
    path.write_text(f'<?xml version="1.0" encoding="{encoding}"?>\n' + PAGE)
    with pytest.raises(CorpusError, match=r"d\.xml: cannot read the dump's text .*MediaWiki dumps are UTF-8"):
        list(read_mediawiki_xml(path))


def test_a_utf8_dump_reads_as_before(tmp_path):
    path = tmp_path / "d.xml"
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n' + PAGE)
    assert [(a.title, a.text) for a in read_mediawiki_xml(path)] == [("A", "Prose here.")]
    assert wikitext_to_text("[[b|Prose]] here.") == "Prose here."
