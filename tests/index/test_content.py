"""Content identity: indexes are known by what they were built from, and `default` gets one directory per corpus."""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from frames_agent.index import content
from frames_agent.index.build import (
    build_index,
    build_named,
    ensure_index,
    finished_manifest,
    make_spec,
    open_index,
)
from frames_agent.index.corpus import CorpusError
from frames_agent.retrieval.lucene.layout import MANIFEST_FILE
from frames_agent.retrieval.lucene.searcher import BM25Retriever
from tests.index.conftest import write_jsonl


def test_fingerprint_is_content_not_path_and_sees_a_same_size_edit(tmp_path, tiny_corpus):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_jsonl(tmp_path / "a" / "c.jsonl", tiny_corpus)
    copy = tmp_path / "b" / "c.jsonl"
    shutil.copy(first, copy)
    assert make_spec([first]).fingerprint() == make_spec([copy]).fingerprint()  # another checkout, same corpus
    data = bytearray(copy.read_bytes())
    middle = data.index(b"Brennick", len(data) // 2)
    data[middle:middle + 8] = b"Brennock"  # same size, edited in the middle
    copy.write_bytes(bytes(data))
    assert copy.stat().st_size == first.stat().st_size
    assert make_spec([first]).fingerprint() != make_spec([copy]).fingerprint()
    assert make_spec([first], unit="passage").fingerprint() != make_spec([first]).fingerprint()


def test_large_file_hashes_are_memoised_until_the_file_changes(tmp_path, index_home, monkeypatch):
    monkeypatch.setattr(content, "MEMO_MIN_BYTES", 0)
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"x" * 1000)
    assert content.file_sha256(path) == hashlib.sha256(b"x" * 1000).hexdigest()
    assert list(json.loads((index_home / content.MEMO_FILE).read_text()).values()) == [hashlib.sha256(b"x" * 1000).hexdigest()]
    expected = hashlib.sha256(b"x" * 1000).hexdigest()
    with monkeypatch.context() as patched:  # a memo hit does not hash the file again
        patched.setattr(hashlib, "sha256", lambda *a: pytest.fail("re-hashed a memoised file"))
        assert content.file_sha256(path) == expected
    stat = path.stat()
    path.write_bytes(b"y" * 1000)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert content.file_sha256(path) == hashlib.sha256(b"y" * 1000).hexdigest()


def test_manifest_content_id_is_the_retrievers_fingerprint(tmp_path, tiny_index, tiny_retriever, tiny_corpus):
    manifest = finished_manifest(tiny_index)
    assert tiny_retriever.fingerprint == manifest["content_id"] == content.short_id(manifest["fingerprint"])
    assert isinstance(tiny_retriever.fingerprint, str) and len(tiny_retriever.fingerprint) == 12
    other = build_index(make_spec([write_jsonl(tmp_path / "c.jsonl", tiny_corpus[:3])]), tmp_path / "ix",
                        threads=1, progress=False)
    assert other["content_id"] != tiny_retriever.fingerprint


def test_foreign_index_fingerprint_says_it_identifies_files(tmp_path, tiny_index):
    foreign = tmp_path / "foreign"
    shutil.copytree(tiny_index, foreign, ignore=shutil.ignore_patterns(MANIFEST_FILE))
    with BM25Retriever(foreign) as retriever:
        assert retriever.fingerprint.startswith("lucene:")


@pytest.mark.lucene
def test_default_keeps_one_directory_per_corpus(index_home, monkeypatch, tmp_path, tiny_corpus):
    corpus_a = write_jsonl(tmp_path / "a.jsonl", tiny_corpus[:4])
    corpus_b = write_jsonl(tmp_path / "b.jsonl", tiny_corpus)
    monkeypatch.setenv("FRAMES_AGENT_CORPUS", str(corpus_a))
    with open_index("default", progress=False) as a:  # a run holds checkout A's default open...
        dir_a, fingerprint_a, built_a = a.index_dir, a.fingerprint, finished_manifest(a.index_dir)["built_at"]
        monkeypatch.setenv("FRAMES_AGENT_CORPUS", str(corpus_b))  # ...while checkout B uses another corpus
        with open_index("default", progress=False) as b:
            assert b.index_dir != dir_a and b.num_docs == 12 and b.fingerprint != fingerprint_a
            assert a.num_docs == 4 and a.search("Brennick", 1)[0].id == "brennick"
    assert dir_a.name == f"default-{fingerprint_a}"
    monkeypatch.setenv("FRAMES_AGENT_CORPUS", str(corpus_a))
    assert ensure_index("default", progress=False) == dir_a  # back on A: reused, not rebuilt
    assert finished_manifest(dir_a)["built_at"] == built_a
    assert sorted(p.name for p in index_home.iterdir() if p.is_dir()) == sorted([dir_a.name, b.index_dir.name])


def test_default_name_with_another_corpus_is_refused(index_home, monkeypatch, tmp_path, tiny_corpus):
    monkeypatch.setenv("FRAMES_AGENT_CORPUS", str(write_jsonl(tmp_path / "a.jsonl", tiny_corpus[:4])))
    other = make_spec([write_jsonl(tmp_path / "b.jsonl", tiny_corpus)])
    with pytest.raises(CorpusError, match="'default' is the default corpus's index") as err:
        build_named(other, "default", progress=False)
    assert "\n" not in str(err.value) and not list(index_home.glob("default*"))


@pytest.mark.lucene
def test_rebuilding_an_index_that_is_open_is_refused(index_home, tmp_path, tiny_corpus):
    corpus = write_jsonl(tmp_path / "c.jsonl", tiny_corpus[:3])
    path = build_named(make_spec([corpus]), "mini", threads=1, progress=False)
    write_jsonl(corpus, tiny_corpus[:5])
    with open_index("mini") as running:
        with pytest.raises(CorpusError, match="open in another process"):
            build_named(make_spec([corpus]), "mini", threads=1, progress=False)
        assert running.num_docs == 3
    assert build_named(make_spec([corpus]), "mini", threads=1, progress=False) == path
    assert finished_manifest(path)["docs"] == 5
