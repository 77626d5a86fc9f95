"""One article, one document: copies across input files merged at build time by the stated rule, their ids and titles
kept as aliases, counts in the manifest; --keep-copies keeps them; dump pages after JSONL inputs are copies too."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from frames_agent.core.errors import RetrievalError
from frames_agent.index.build import build_index, finished_manifest, make_spec
from frames_agent.index.corpus import Article, CorpusError
from frames_agent.index.merge import COPY, REPEATED, WRITE, MergePlan, file_rank
from frames_agent.retrieval.lucene.searcher import BM25Retriever
from frames_agent.retrieval.lucene.titles import ALIASES_FILE, TITLES_FILE
from tests.index.conftest import write_jsonl

DUMP = Path(__file__).parents[1] / "fixtures" / "tiny_dump.xml"
KEPT = {"olse-2025", "gannet-arena", "port-alder-full", "red-kite-band", "red-kite-bird", "kestrel"}


def test_merge_keeps_one_document_per_canonical_title(copies_index):
    manifest = finished_manifest(copies_index)
    assert (manifest["format"], manifest["docs"], manifest["articles"]) == (4, 6, 6)
    merged = manifest["merged"]
    assert (merged["copies"], merged["titles"], merged["dropped_by_file"]) == (3, 3, {"archive.jsonl": 3})
    assert merged["kept_copies"] is False and "fullest text" in merged["rule"] and manifest["one_doc_per_article"]
    assert manifest["fingerprint"]["merge"] == {"prefer": ["crawl*"], "keep_copies": False}
    with BM25Retriever(copies_index) as retriever:
        assert {d.id for d in retriever.iter_documents()} == KEPT
        # The preferred file wins over a fuller copy; within one file the fuller text beats the summary.
        assert retriever.doc("olse-2025").text.startswith("The Olse River flows 410")
        assert retriever.by_title("port alder").id == "port-alder-full"
        assert {retriever.by_title(t).id for t in ("Red Kite", "Red kite")} <= {"red-kite-band", "red-kite-bird"}


def test_copies_ids_titles_and_redirects_lead_to_the_kept_article(copies_index):
    assert (copies_index / ALIASES_FILE).read_text(encoding="utf-8").splitlines() == [
        "gannet-park-2015\tgannet-arena", "olse-2015\tolse-2025", "port-alder-lead\tport-alder-full"]
    with BM25Retriever(copies_index) as retriever:
        for copy_id, kept in [("olse-2015", "olse-2025"), ("gannet-park-2015", "gannet-arena"),
                              ("port-alder-lead", "port-alder-full")]:
            doc = retriever.doc(copy_id)
            assert (doc.id, doc.article_id) == (kept, kept)
        for title in ("Olse_River", "olse river", "Gannet Park", "gannet_arena", "port Alder"):
            assert retriever.by_title(title).id in KEPT and retriever.has_title(title)
        assert retriever.by_title("Gannet Park").id == "gannet-arena"
        assert retriever.doc("no-such-id") is None


@pytest.mark.lucene
def test_without_prefer_the_fullest_text_wins(tmp_path, copies_corpus):
    spec = make_spec(copies_corpus)  # the embedded corpus's patterns name none of these files
    manifest = build_index(spec, tmp_path / "ix", threads=1, progress=False)
    assert manifest["docs"] == 6 and manifest["merged"]["dropped_by_file"] == {"archive.jsonl": 2, "crawl.jsonl": 1}
    with BM25Retriever(tmp_path / "ix") as retriever:
        assert retriever.by_title("Olse River").id == "olse-2015" and retriever.doc("olse-2025").id == "olse-2015"
        assert retriever.by_title("Gannet Park").id == "gannet-arena"


def test_rule_inputs_are_part_of_the_fingerprint(copies_corpus):
    ids = {json.dumps(make_spec(copies_corpus, **rule).fingerprint(), sort_keys=True)
           for rule in ({}, {"prefer": ["crawl*"]}, {"prefer": ["archive*"]}, {"keep_copies": True})}
    assert len(ids) == 4
    with pytest.raises(CorpusError, match="--prefer needs non-empty"):
        make_spec(copies_corpus, prefer=[""])


def test_keep_copies_indexes_every_copy(copies_kept_index):
    manifest = finished_manifest(copies_kept_index)
    assert manifest["docs"] == 9 and not manifest["one_doc_per_article"]
    assert manifest["merged"] | {"rule": ""} == {"copies": 3, "titles": 3, "dropped_by_file": {}, "kept_copies": True,
                                                 "rule": ""}
    with BM25Retriever(copies_kept_index) as retriever:
        assert retriever.doc("olse-2015").id == "olse-2015", "a kept copy is a document of its own"
        assert retriever.by_title("Olse_River").id == "olse-2025", "its title names the preferred one"


@pytest.mark.lucene
def test_dump_pages_whose_title_a_jsonl_input_wrote_are_copies(tmp_path):
    corpus = write_jsonl(tmp_path / "crawl.jsonl", [
        {"id": "velmora-2025", "title": "Velmora", "contents": "Velmora is a lake town; its mayor is Ines Tarvo."}])
    manifest = build_index(make_spec([corpus], xml=[DUMP]), tmp_path / "ix", threads=1, progress=False)
    assert manifest["docs"] == 3 and manifest["merged"]["dropped_by_file"] == {"tiny_dump.xml": 1}
    with BM25Retriever(tmp_path / "ix") as retriever:
        assert retriever.doc("101").id == "velmora-2025" and retriever.by_title("Velmora Town").id == "velmora-2025"
        assert retriever.by_title("Ines Tarvo").id == "104"


def test_merge_plan_rule_in_order():
    plan = MergePlan(["new.jsonl", "old.jsonl"], ["new*"], {"Old Name": "Name"})
    docs = [(1, Article("a", "Name", "long text " * 9)), (0, Article("b", "name", "short")),
            (0, Article("c", "Old_Name", "short")), (1, Article("a", "Other", "repeated id")),
            (0, Article("d", "Solo", "x")), (1, Article("e", "", "untitled"))]
    for seq, (file_no, article) in enumerate(docs):
        plan.offer(seq, file_no, article)
    assert plan.aliases() == {"a": "b", "c": "b"}, "same rank: input order breaks the tie"
    assert [plan.judge(article, n, seq) for seq, (n, article) in enumerate(docs)] == [
        COPY, WRITE, COPY, REPEATED, WRITE, WRITE]
    assert plan.judge(Article("p1", "NAME", "dump page"), 1) == WRITE, "not the same canonical title"
    assert plan.judge(Article("p2", "solo", "dump page"), 1) == COPY
    assert plan.summary()["dropped_by_file"] == {"new.jsonl": 1, "old.jsonl": 2}
    assert (file_rank("new.jsonl", ["new*"]), file_rank("old.jsonl", ["new*"])) == (0, 1)


@pytest.mark.parametrize("name, content", [
    (TITLES_FILE, b"olse river\tolse-2025\t1\n\xff\xfe broken\n"),
    (TITLES_FILE, b"this line has no tabs\n"),
    (TITLES_FILE, b"olse river\tolse-2025\tmany\n"),
    (ALIASES_FILE, b"olse-2015\tolse-2025\textra\n"),
    (ALIASES_FILE, b"\x80olse-2015\tolse-2025\n"),
])
def test_a_corrupt_title_table_or_alias_file_is_a_one_line_error(tmp_path, copies_index, name, content):
    broken = tmp_path / "broken"
    shutil.copytree(copies_index, broken)
    (broken / name).write_bytes(content)
    with BM25Retriever(broken) as retriever:
        with pytest.raises(RetrievalError) as err:
            retriever.by_title("Olse River")
    message = str(err.value)
    assert message.startswith(f"corrupt index {broken}: {name}") and message.endswith("rebuild it with --force")
    assert "\n" not in message
