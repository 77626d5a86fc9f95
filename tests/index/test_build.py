"""Corpus reading (JSONL, MediaWiki XML), passage splitting, and idempotent, atomic index builds."""
from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from frames_agent.core.errors import RetrievalError
from frames_agent.index.build import (
    build_index,
    build_named,
    ensure_index,
    finished_manifest,
    make_spec,
    open_index,
)
from frames_agent.index.corpus import (
    CorpusError,
    default_corpus_paths,
    read_jsonl,
    read_mediawiki_xml,
    read_redirects,
    wikitext_to_text,
    word_windows,
)
from frames_agent.retrieval.lucene.layout import MANIFEST_FILE, resolve_index
from frames_agent.retrieval.lucene.searcher import BM25Retriever
from tests.index.conftest import write_jsonl

FIXTURES = Path(__file__).parents[1] / "fixtures"
DUMP = FIXTURES / "tiny_dump.xml"




# -- passages ---------------------------------------------------------------------------------------------------
def test_split_passages_counts_words_and_merges_a_short_tail():
    words = [f"w{i}" for i in range(230)]
    passages = word_windows(" ".join(words), words=100)
    assert [len(p.split()) for p in passages] == [100, 100, 30]
    assert [len(p.split()) for p in word_windows(" ".join(words[:210]), words=100)] == [100, 110]
    assert " ".join(passages).split() == words
    assert word_windows("  ") == [] and word_windows("one two") == ["one two"]


def test_split_passages_keeps_line_breaks_inside_a_passage():
    assert word_windows("a b\nc d", words=100) == ["a b\nc d"]


# -- JSONL ------------------------------------------------------------------------------------------------------
def test_read_jsonl_plain_and_gzip(tmp_path, tiny_corpus):
    plain = write_jsonl(tmp_path / "c.jsonl", tiny_corpus)
    packed = tmp_path / "c.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (plain, packed):
        articles = list(read_jsonl(path))
        assert [a.id for a in articles] == [d["id"] for d in tiny_corpus]
        assert articles[0].title == "Marta Kowalczyk" and articles[0].text.startswith("Marta Kowalczyk (1931")


def test_read_jsonl_drops_a_leading_title_line(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": 7, "title": "Oslund", "contents": "Oslund\nOslund is a city."}])
    (article,) = read_jsonl(path)
    assert (article.id, article.title, article.text) == ("7", "Oslund", "Oslund is a city.")


@pytest.mark.parametrize("line, message", [
    ("{not json", "malformed JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"title": "x", "contents": "y"}', "missing or empty 'id'"),
    ('{"id": "", "contents": "y"}', "missing or empty 'id'"),
    ('{"id": "a", "title": "x"}', "missing 'contents'"),
    ('{"id": "a", "title": 3, "contents": "y"}', "'title' must be a string"),
])
def test_read_jsonl_reports_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "ok", "title": "T", "contents": "fine"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        list(read_jsonl(path))
    assert str(err.value).startswith(f"{path}:2: {message}") and "\n" not in str(err.value)


def test_read_jsonl_truncated_gzip_is_a_corpus_error(tmp_path, tiny_corpus):
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(gzip.compress(write_jsonl(tmp_path / "c.jsonl", tiny_corpus).read_bytes())[:200])
    with pytest.raises(CorpusError, match="cannot read"):
        list(read_jsonl(path))


def test_default_corpus_is_the_shared_wiki_files_unless_overridden(tmp_path, monkeypatch, tiny_corpus_file):
    monkeypatch.delenv("FRAMES_AGENT_CORPUS", raising=False)
    monkeypatch.setenv("FRAMES_AGENT_SHARED", str(tmp_path / "shared"))
    wiki = tmp_path / "shared" / "data" / "wiki"
    wiki.mkdir(parents=True)
    with pytest.raises(CorpusError, match="no default corpus.*--corpus.*--xml .*--index wikipedia-kilt-doc"):
        default_corpus_paths()
    for name in ("b.jsonl.gz", "a.jsonl.gz"):
        (wiki / name).write_bytes(b"")
    assert [p.name for p in default_corpus_paths()] == ["a.jsonl.gz", "b.jsonl.gz"]
    monkeypatch.setenv("FRAMES_AGENT_CORPUS", str(tiny_corpus_file))
    assert default_corpus_paths() == [tiny_corpus_file]
    monkeypatch.setenv("FRAMES_AGENT_CORPUS", str(tmp_path / "missing.jsonl"))
    with pytest.raises(CorpusError, match="corpus file not found"):
        default_corpus_paths()


# -- MediaWiki XML ----------------------------------------------------------------------------------------------
@pytest.mark.lucene
def test_xml_dump_keeps_articles_and_redirects_and_skips_other_namespaces():
    articles = list(read_mediawiki_xml(DUMP))
    assert [(a.id, a.title) for a in articles] == [("101", "Velmora"), ("104", "Ines Tarvo"), ("106", "Kallis")]
    with_redirects = list(read_mediawiki_xml(DUMP, redirects=True))
    assert [(a.id, a.redirect_to, a.text) for a in with_redirects if a.redirect_to] == [("102", "Velmora", "")]


@pytest.mark.lucene
def test_xml_dump_text_is_plain_prose():
    velmora = next(iter(read_mediawiki_xml(DUMP)))
    assert velmora.text.splitlines()[0] == ("Velmora is a town in the Northern Marches on the shore of Lake Suvi. "
                                            "Its mayor is Ines Tarvo.")
    assert "Velmora was founded in 1204 as a fishing village. The amber trade made it rich." in velmora.text
    for junk in ("{{", "}}", "[[", "<ref", "cite", "Census", "Smith 1999", "thumb", "harbour.jpg", "Category",
                 "wikitable", "45,000", "__NOTOC__", "editors", "de:", "'''", "population ="):
        assert junk not in velmora.text


@pytest.mark.lucene
def test_wikitext_to_text_keeps_link_labels_and_drops_media():
    text = wikitext_to_text("A [[Lake Suvi|lake]] and [[Image:x.png|thumb|cap]] {{convert|3|km}} ''b''.")
    assert text == "A lake and b."


@pytest.mark.lucene
def test_xml_bz2_dump_builds_a_searchable_index(tmp_path):
    dump = tmp_path / "tiny-pages-articles.xml.bz2"
    dump.write_bytes(bz2.compress(DUMP.read_bytes()))
    manifest = build_index(make_spec(xml=[dump]), tmp_path / "wiki", threads=1, progress=False)
    assert (manifest["docs"], manifest["articles"]) == (3, 3)
    with BM25Retriever(tmp_path / "wiki") as retriever:
        assert [d.id for d in retriever.search("mayor of Velmora", 2)] == ["101", "104"]
        assert retriever.by_title("ines_tarvo").text.startswith("Ines Tarvo (born 12 May 1975)")
        assert retriever.by_title("Velmora Town").id == "101" and manifest["redirects"] == 1  # kept as a title
        assert retriever.search("amber template discussion", 5)[0].id in {"101", "104", "106"}
        # The dump's redirect page leads title lookups (and exact-title searches) to its target.
        assert retriever.by_title("Velmora_Town").id == "101" and retriever.has_title("velmora town")
        assert retriever.search("Velmora Town", 1)[0].id == "101" and manifest["redirects"] == 1


def test_malformed_xml_is_a_corpus_error(tmp_path):
    dump = tmp_path / "broken.xml"
    dump.write_text(DUMP.read_text()[:1500])
    with pytest.raises(CorpusError, match="malformed XML"):
        list(read_mediawiki_xml(dump))


# -- building ---------------------------------------------------------------------------------------------------
@pytest.mark.lucene
def test_title_is_searchable_with_the_body(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"id": "q", "title": "Zanzibar Quokka", "contents": "A marsupial."},
                                                {"id": "r", "title": "Other", "contents": "Nothing here."}])
    build_index(make_spec([corpus]), tmp_path / "ix", threads=1, progress=False)
    with BM25Retriever(tmp_path / "ix") as retriever:
        (hit,) = retriever.search("quokka", 5)
        assert (hit.id, hit.title, hit.text) == ("q", "Zanzibar Quokka", "A marsupial.")


@pytest.mark.lucene
def test_empty_docs_and_duplicate_ids_are_skipped_and_counted(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", [
        {"id": "a", "title": "A", "contents": "first apple"}, {"id": "b", "title": "B", "contents": "  "},
        {"id": "a", "title": "A2", "contents": "second apple"}])
    manifest = build_index(make_spec([corpus]), tmp_path / "ix", threads=1, progress=False)
    assert (manifest["docs"], manifest["skipped_empty"], manifest["skipped_duplicates"]) == (1, 1, 1)
    with BM25Retriever(tmp_path / "ix") as retriever:
        assert retriever.doc("a").text == "first apple"


def test_corpus_without_documents_is_an_error(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"id": "b", "title": "B", "contents": ""}])
    with pytest.raises(CorpusError, match="no documents"):
        build_index(make_spec([corpus]), tmp_path / "ix", threads=1, progress=False)
    assert not (tmp_path / "ix").exists() and sorted(p.name for p in tmp_path.iterdir()) == [".ix.lock", "c.jsonl"]


def test_manifest_records_inputs_unit_counts_and_versions(tiny_index, tiny_corpus_file):
    manifest = finished_manifest(tiny_index)
    assert manifest["complete"] is True and manifest["unit"] == "article" and manifest["docs"] == 12
    assert manifest["inputs"] == [str(tiny_corpus_file.resolve())] and manifest["format"] == 4
    assert manifest["fields"] == ["contents", "title"] and manifest["redirects"] == 2
    assert manifest["fingerprint"]["inputs"][0] == {
        "name": "tiny.jsonl", "kind": "jsonl", "size": tiny_corpus_file.stat().st_size,
        "sha256": hashlib.sha256(tiny_corpus_file.read_bytes()).hexdigest()}
    assert manifest["versions"]["anserini_jar"].startswith("anserini-")


@pytest.mark.lucene
def test_pyserini_without_package_metadata_is_recorded_as_unknown(monkeypatch):
    import importlib.metadata

    from frames_agent.index import build

    def version(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)  # pyserini imported from a checkout

    monkeypatch.setattr(importlib.metadata, "version", version)
    versions = build._versions()
    assert versions["pyserini"] is None and versions["anserini_jar"].startswith("anserini-")


@pytest.mark.lucene
def test_rebuild_is_idempotent_force_rebuilds_and_changed_inputs_rebuild(tmp_path, tiny_corpus):
    corpus = write_jsonl(tmp_path / "c.jsonl", tiny_corpus[:3])
    out = tmp_path / "ix"
    first = build_index(make_spec([corpus]), out, threads=1, progress=False)
    again = build_index(make_spec([corpus]), out, threads=1, progress=False)
    assert again == first  # reused, not rebuilt
    forced = build_index(make_spec([corpus]), out, threads=1, force=True, progress=False)
    assert forced["built_at"] >= first["built_at"] and forced is not first and forced["docs"] == 3
    write_jsonl(corpus, tiny_corpus[:5])
    changed = build_index(make_spec([corpus]), out, threads=1, progress=False)
    assert changed["docs"] == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ix.lock", "c.jsonl", "ix"]  # no partial dirs left


def test_half_built_and_corrupt_directories_are_detected(tmp_path, tiny_index):
    half = tmp_path / "half"
    half.mkdir()
    (half / "docs00000.jsonl").write_text("{}")
    with pytest.raises(RetrievalError, match="not a finished index"):
        BM25Retriever(half)
    unfinished = tmp_path / "unfinished"
    shutil.copytree(tiny_index, unfinished)
    manifest = json.loads((unfinished / MANIFEST_FILE).read_text())
    (unfinished / MANIFEST_FILE).write_text(json.dumps({**manifest, "complete": False}))
    with pytest.raises(RetrievalError, match="half-built"):
        resolve_index(unfinished)
    (unfinished / MANIFEST_FILE).write_text("{trunc")
    with pytest.raises(RetrievalError, match="corrupt index"):
        resolve_index(unfinished)
    broken = tmp_path / "broken"
    shutil.copytree(tiny_index, broken)
    for segment in broken.glob("_*"):
        segment.write_bytes(b"garbage")
    with pytest.raises(RetrievalError, match="corrupt index") as err:
        BM25Retriever(broken)
    assert "\n" not in str(err.value)
    with pytest.raises(RetrievalError, match="no index directory"):
        resolve_index(tmp_path / "nothing")


@pytest.mark.lucene
def test_stale_partial_build_is_ignored_and_removed(tmp_path, tiny_corpus):
    corpus = write_jsonl(tmp_path / "c.jsonl", tiny_corpus[:2])
    stale = tmp_path / ".ix.partial-999999999"
    stale.mkdir()
    (stale / "junk").write_text("x")
    build_index(make_spec([corpus]), tmp_path / "ix", threads=1, progress=False)
    assert not stale.exists() and finished_manifest(tmp_path / "ix")["docs"] == 2


def test_foreign_lucene_index_without_our_files_still_works(tmp_path, tiny_index):
    foreign = tmp_path / "foreign"
    shutil.copytree(tiny_index, foreign, ignore=shutil.ignore_patterns(MANIFEST_FILE, "titles.tsv"))
    with BM25Retriever(foreign) as retriever:
        assert retriever.name == "foreign" and retriever.unit == "article"
        assert retriever.by_title("gannet_park").id == "gannet-park"  # found by searching the title


# -- names ------------------------------------------------------------------------------------------------------
@pytest.mark.lucene
def test_named_index_resolves_under_the_index_home(index_home, tiny_corpus_file):
    path = build_named(make_spec([tiny_corpus_file]), "mini", threads=1, progress=False)
    assert path == index_home / "mini" and resolve_index("mini") == path
    with pytest.raises(CorpusError, match="bad index name"):
        build_named(make_spec([tiny_corpus_file]), "../escape", progress=False)


@pytest.mark.lucene
def test_unknown_and_bad_names_are_one_line_errors(index_home):
    with pytest.raises(RetrievalError, match="unknown index 'nope'") as err:
        resolve_index("nope")
    assert "\n" not in str(err.value)
    with pytest.raises(RetrievalError, match="bad index name"):
        resolve_index("bad name!")


def test_prebuilt_names_are_fetched_through_pyserini(index_home, tiny_index):
    fetched = []
    path = resolve_index("wikipedia-kilt-doc", fetch=lambda name: fetched.append(name) or tiny_index)
    assert path == tiny_index and fetched == ["wikipedia-kilt-doc"]


@pytest.mark.lucene
def test_ensure_index_builds_the_default_once(index_home, monkeypatch, tiny_corpus_file):
    monkeypatch.setenv("FRAMES_AGENT_CORPUS", str(tiny_corpus_file))
    path = ensure_index("default", progress=False, threads=1)
    built_at = finished_manifest(path)["built_at"]
    with open_index("default", progress=False) as retriever:
        assert retriever.source == "bm25:default" and retriever.num_docs == 12
    assert finished_manifest(ensure_index("default", progress=False))["built_at"] == built_at
    passage = ensure_index("default-passage", progress=False, threads=1)
    assert finished_manifest(passage)["unit"] == "passage" and finished_manifest(passage)["docs"] == 13


@pytest.mark.lucene
def test_xml_dump_parsed_on_worker_processes_gives_the_same_articles():
    assert list(read_mediawiki_xml(DUMP, workers=2)) == list(read_mediawiki_xml(DUMP))


def test_xml_dump_given_as_corpus_is_routed_to_the_xml_reader(tmp_path):
    spec = make_spec([DUMP])
    assert (spec.jsonl, spec.xml) == ([], [DUMP])


@pytest.mark.lucene
def test_redirects_file_beside_the_corpus_feeds_the_title_table(tmp_path, tiny_corpus_file):
    corpus = tmp_path / "wiki.jsonl"
    corpus.write_bytes(tiny_corpus_file.read_bytes())
    (tmp_path / "redirects.tsv").write_text("Ferrante\tTomas Ferrante\nbad line\nNowhere Town\tNo Such Article\n"
                                            "Brennick\tPort Alder\n", encoding="utf-8")
    assert list(read_redirects(tmp_path / "redirects.tsv"))[0] == ("Ferrante", "Tomas Ferrante")
    spec = make_spec([corpus])
    assert spec.redirects == [tmp_path / "redirects.tsv"]
    manifest = build_index(spec, tmp_path / "idx", threads=1, progress=False)
    assert manifest["redirects"] == 1, "targets outside the corpus lead nowhere; a real title is never shadowed"
    with BM25Retriever(tmp_path / "idx") as retriever:
        assert retriever.by_title("ferrante").id == "ferrante"
        assert retriever.by_title("Brennick").id == "brennick"
        assert not retriever.has_title("Nowhere Town")
