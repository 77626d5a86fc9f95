"""BM25Retriever on the tiny real Lucene index: ranking, batches, lookups, query text safety, threads."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from frames_agent.core.errors import RetrievalError
from frames_agent.retrieval.lucene.searcher import MAX_TERMS, BM25Retriever
from frames_agent.retrieval.lucene.titles import normalize_title
from frames_agent.retrieval.types import Retriever


def ids(docs):
    return [d.id for d in docs]


def test_is_a_retriever(tiny_retriever):
    assert isinstance(tiny_retriever, Retriever)
    assert tiny_retriever.name == "tiny" and tiny_retriever.unit == "article" and tiny_retriever.num_docs == 12


@pytest.mark.parametrize("query, expected", [
    ("mayor of Brennick", ["ferrante", "brennick", "observatory", "olse", "kowalczyk"]),
    ("Punxsutawney Phil", ["phil", "groundhog-day"]),
    ("football stadium Port Alder", ["gannet-park", "port-alder", "kestrel-valley"]),
    ("Halvorsen Prize chemistry", ["halvorsen-prize", "kowalczyk"]),
])
def test_search_returns_exact_ids_in_order(tiny_index, query, expected):
    with BM25Retriever(tiny_index, title_boost=0, exact_title=False) as body_only:
        assert ids(body_only.search(query, k=len(expected))) == expected


def test_title_boost_ranks_the_titled_article_first(tiny_index):
    # In the body, "mayor" and "Brennick" both fit the mayor's own article best; the title field tips it.
    with BM25Retriever(tiny_index, title_boost=0, exact_title=False) as body_only, \
            BM25Retriever(tiny_index, title_boost=2.0, exact_title=False) as titled:
        assert body_only._fields is None and titled._fields is not None
        assert ids(body_only.search("mayor of Brennick", 2)) == ["ferrante", "brennick"]
        assert ids(titled.search("mayor of Brennick", 1)) == ["brennick"]
        assert [ids(h) for h in titled.batch_search(["mayor of Brennick", "Olse"], 1)] == [["brennick"], ["olse"]]
    with pytest.raises(RetrievalError, match="title_boost"):
        BM25Retriever(tiny_index, title_boost=-1)


def test_exact_title_query_brings_that_article_first_through_redirects(tiny_index):
    with BM25Retriever(tiny_index, title_boost=2.0, exact_title=False) as plain, \
            BM25Retriever(tiny_index, title_boost=2.0, exact_title=True) as exact:
        assert ids(plain.search("mayor of Brennick", 1)) == ["brennick"]
        # "Mayor of Brennick" redirects to Tomas Ferrante (tiny corpus redirects.tsv).
        assert ids(exact.search("mayor of Brennick", 2)) == ["ferrante", "brennick"]
        assert ids(exact.search("Mayor_of_Brennick", 1)) == ["ferrante"]
        hits = exact.batch_search(["mayor of Brennick", "Olse"], 3)
        assert [h[0].id for h in hits] == ["ferrante", "olse"] and len(set(ids(hits[0]))) == len(hits[0]) == 3
        assert exact.by_title("phil the groundhog").id == "phil" and exact.has_title("Phil_the_Groundhog")
        assert exact.search("mayor", 3)[0].id == plain.search("mayor", 3)[0].id, "not a title: BM25 order stays"


def test_search_documents_carry_text_title_source_and_scores(tiny_retriever, tiny_corpus):
    docs = tiny_retriever.search("Punxsutawney Phil", k=10)
    phil = next(d for d in tiny_corpus if d["id"] == "phil")
    assert docs[0].title == "Punxsutawney Phil" and docs[0].text == phil["contents"]
    assert all(d.source == "bm25:tiny" and d.article_id == d.id for d in docs)
    assert docs[0].score > docs[1].score > 0


def test_batch_search_matches_single_searches_in_query_order(tiny_retriever):
    queries = ["Punxsutawney Phil", "mayor of Brennick", "Punxsutawney Phil", "Lindqvist refractor telescope"]
    batch = tiny_retriever.batch_search(queries, k=3)
    assert [ids(r) for r in batch] == [ids(tiny_retriever.search(q, 3)) for q in queries]
    assert ids(batch[3])[0] == "observatory"
    assert tiny_retriever.batch_search([], k=3) == []


@pytest.mark.parametrize("query", [
    'C++ AND OR', '"C++" (programming) language:', "operators AND (OR) NOT", "scope operator*? \\ ~2 ^3 [a TO z] {x}",
    "title:Brennick", "AND",
])
def test_lucene_syntax_is_plain_text(tiny_retriever, query):
    docs = tiny_retriever.search(query, k=3)  # must not raise a parse error
    if any(word in query for word in ("C++", "operator")):
        assert ids(docs)[0] == "cpp"


def test_field_syntax_does_not_restrict_to_a_field(tiny_retriever):
    assert ids(tiny_retriever.search("title:Brennick", 1)) == ids(tiny_retriever.search("title Brennick", 1))


@pytest.mark.parametrize("query", ["", "   ", "?!", '"" ()', "*:*", "&& || !"])
def test_empty_or_punctuation_query_is_one_line_error(tiny_retriever, query):
    with pytest.raises(RetrievalError) as err:
        tiny_retriever.search(query)
    assert "\n" not in str(err.value) and "empty query" in str(err.value)
    with pytest.raises(RetrievalError):
        tiny_retriever.batch_search(["mayor", query])


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_k_is_an_error(tiny_retriever, k):
    with pytest.raises(RetrievalError):
        tiny_retriever.search("mayor", k=k)


def test_doc_by_id(tiny_retriever):
    doc = tiny_retriever.doc("gannet-park")
    assert doc.title == "Gannet Park" and "1962" in doc.text and doc.score == 0.0 and doc.article_id == "gannet-park"
    assert tiny_retriever.doc("no-such-id") is None


@pytest.mark.parametrize("title", [
    "Tomas Ferrante", "tomas ferrante", "Tomas_Ferrante", "  TOMAS   ferrante ", "Tomas%20Ferrante",
    "https://en.wikipedia.org/wiki/Tomas_Ferrante", "https://en.wikipedia.org/wiki/Tomas_Ferrante#Career",
])
def test_by_title_normalises(tiny_retriever, title):
    assert tiny_retriever.by_title(title).id == "ferrante"


def test_by_title_with_syntax_characters_and_url_escapes(tiny_retriever):
    assert tiny_retriever.by_title("C%2B%2B_%28programming_language%29").id == "cpp"
    assert tiny_retriever.by_title("c++ (Programming language)").id == "cpp"


def test_by_title_missing(tiny_retriever):
    assert tiny_retriever.by_title("Atlantis") is None
    assert tiny_retriever.by_title("") is None
    assert tiny_retriever.by_title("Brennick Observ") is None  # exact titles only, no fuzzy match


def test_normalize_title():
    assert normalize_title("Caf%C3%A9_de_Flore") == normalize_title("café de flore") == "café de flore"


def test_concurrent_callers_get_consistent_results(tiny_retriever):
    queries = ["mayor of Brennick", "Punxsutawney Phil", "football stadium Port Alder", "Halvorsen Prize"] * 25
    expected = {q: ids(tiny_retriever.search(q, 3)) for q in set(queries)}
    with ThreadPoolExecutor(max_workers=8) as pool:
        singles = list(pool.map(lambda q: ids(tiny_retriever.search(q, 3)), queries))
        batches = list(pool.map(lambda i: [ids(r) for r in tiny_retriever.batch_search(queries[i:i + 4], 3)],
                                range(0, len(queries), 4)))
        titles = list(pool.map(tiny_retriever.by_title, ["Brennick"] * 20))
    assert singles == [expected[q] for q in queries]
    assert [r for b in batches for r in b] == [expected[q] for q in queries]
    assert {t.id for t in titles} == {"brennick"}


# -- passage unit ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def passages(tiny_passage_index):
    retriever = BM25Retriever(tiny_passage_index, name="tiny-passage")
    yield retriever
    retriever.close()


def test_passage_hits_carry_article_ids_one_per_article(passages):
    assert passages.unit == "passage" and passages.num_docs == 13
    (only,) = passages.search("glass art festival opera", 2)  # brennick#0 matches too: folded into #1, the best
    assert (only.id, only.article_id, only.key, only.title) == ("brennick#1", "brennick", "brennick", "Brennick")
    assert only.source == "bm25:tiny-passage"
    docs = passages.search("Brennick climate valley river", 3)
    assert ids(docs)[0] == "brennick#1" and len({d.key for d in docs}) == 3
    assert all(d.article_id == d.id.split("#")[0] for d in docs)


def test_passage_lookups_rebuild_the_whole_article(passages, tiny_corpus):
    original = next(d for d in tiny_corpus if d["id"] == "brennick")["contents"]
    whole = passages.by_title("brennick")
    assert whole.id == "brennick" and whole.article_id == "brennick"
    assert whole.text.split() == original.split()
    assert passages.doc("brennick") == whole
    assert passages.doc("ferrante#0").text.startswith("Tomas Ferrante (born 1968)")
    assert passages.doc("ferrante#1") is None and passages.doc("nothing") is None


def test_two_indexes_searched_from_many_threads_do_not_mix(tiny_retriever, passages):
    # jnius shares method state between instances of a Java class; the retriever must not let calls cross.
    jobs = [(tiny_retriever, "glass art festival opera"), (passages, "glass art festival opera")] * 50
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda job: ids(job[0].search(job[1], 2)), jobs))
    assert results == [["brennick"], ["brennick#1"]] * 50


def test_a_query_of_thousands_of_distinct_terms_is_capped_not_refused(tiny_retriever, caplog):
    words = " ".join(f"zq{i}x" for i in range(3000))
    with caplog.at_level("WARNING", logger="frames_agent.retrieval.lucene.searcher"):
        hits = tiny_retriever.search("Gannet Park stadium " + words, k=1)
        batch = tiny_retriever.batch_search(["Gannet Park " + words, "Brennick"], k=1)
    assert hits[0].id == "gannet-park" and batch[0][0].id == "gannet-park"
    assert f"dropped {3003 - MAX_TERMS}" in caplog.text  # every term is a clause in the body and the title


def test_undecodable_bytes_in_a_query_are_ignored(tiny_retriever):
    assert tiny_retriever.search("Gannet \udcff\udcfe Park", k=1)[0].id == "gannet-park"


def test_an_endless_or_huge_index_file_is_a_corrupt_index_not_unbounded_memory(tmp_path, tiny_index):
    import os
    import shutil

    from frames_agent.core.errors import RetrievalError
    from frames_agent.retrieval.lucene.layout import read_manifest
    from frames_agent.retrieval.lucene.titles import TITLES_FILE, read_title_table

    copy = tmp_path / "copy"
    shutil.copytree(tiny_index, copy)
    (copy / TITLES_FILE).unlink()
    os.symlink("/dev/zero", copy / TITLES_FILE)
    with pytest.raises(RetrievalError, match="titles.tsv is not a regular file"):
        read_title_table(copy)
    (copy / TITLES_FILE).unlink()
    (copy / TITLES_FILE).write_text("x" * 200_000)  # one line that never ends
    with pytest.raises(RetrievalError, match="titles.tsv:1: a line over 65,536 characters"):
        read_title_table(copy)
    (copy / TITLES_FILE).write_text("a\tb\t" + "9" * 5000 + "\n")
    with pytest.raises(RetrievalError, match="is not a number"):
        read_title_table(copy)
    manifest = next(copy.glob("*.json"))
    manifest.unlink()
    os.symlink("/dev/zero", manifest)
    with pytest.raises(RetrievalError):
        read_manifest(copy)
