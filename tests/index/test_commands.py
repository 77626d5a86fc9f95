"""`cli.py index build|list` and `cli.py search`: output formats and one-line errors with non-zero exits."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from frames_agent import cli
from frames_agent.index.commands import default_index_name


@pytest.fixture
def tiny_named(index_home, tiny_index):
    """The tiny index installed under the name "tiny"."""
    shutil.copytree(tiny_index, index_home / "tiny")
    return index_home / "tiny"


def one_line_error(capsys, code: int) -> str:
    """The error line (a progress bar may precede it on stderr)."""
    err = capsys.readouterr().err
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert code == 2 and last.startswith("error: ") and "Traceback" not in err
    return last


@pytest.mark.lucene
def test_build_then_search_json(index_home, tiny_corpus_file, capsys):
    assert cli.main(["index", "build", "--corpus", str(tiny_corpus_file), "--name", "mini", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "index mini: 12 article docs from 12 articles" in out and (index_home / "mini").is_dir()
    assert cli.main(["search", "mayor of Brennick", "--index", "mini", "-k", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["ferrante", "brennick"]
    assert set(rows[0]) == {"id", "title", "score", "text"} and rows[0]["title"] == "Tomas Ferrante"
    assert len(rows[1]["text"]) <= 302 and rows[1]["text"].endswith("…")  # long text cut to a preview


@pytest.mark.lucene
def test_build_twice_reuses_the_index(index_home, tiny_corpus_file, capsys):
    args = ["index", "build", "--corpus", str(tiny_corpus_file), "--name", "mini", "--threads", "1"]
    assert cli.main(args) == 0 and cli.main(args) == 0
    assert "is up to date" in capsys.readouterr().err
    assert cli.main(args + ["--force"]) == 0
    assert "built " in capsys.readouterr().err


@pytest.mark.lucene
def test_passage_build_and_xml_build(index_home, tiny_corpus_file, capsys):
    assert cli.main(["index", "build", "--corpus", str(tiny_corpus_file), "--unit", "passage", "--threads", "1"]) == 0
    assert (index_home / "tiny-passage").is_dir()
    assert cli.main(["index", "build", "--xml", "tests/fixtures/tiny_dump.xml", "--threads", "1"]) == 0
    assert "index tiny_dump: 3 article docs" in capsys.readouterr().out
    assert cli.main(["index", "list"]) == 0
    listing = capsys.readouterr().out
    assert "tiny-passage" in listing and "passage" in listing and "tiny_dump" in listing
    assert re.search(r"tiny_dump .* docs  content [0-9a-f]{12}\n", listing)


def test_search_human_output_by_directory(tiny_index, capsys):
    assert cli.main(["search", "Punxsutawney Phil", "--index", str(tiny_index)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "phil  Punxsutawney Phil |" in lines[0] and "groundhog-day" in lines[1]


def test_lucene_syntax_in_a_query_is_searched_as_text(tiny_named, capsys):
    assert cli.main(["search", 'C++ AND (operators) OR "scope":', "--index", "tiny", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["id"] == "cpp"


def test_query_without_matches(tiny_named, capsys):
    assert cli.main(["search", "xylophone", "--index", "tiny"]) == 0
    assert capsys.readouterr().out.strip() == "no matching documents"
    assert cli.main(["search", "xylophone", "--index", "tiny", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


@pytest.mark.parametrize("query", ["", "   ", "?!*", '"()"'])
def test_empty_or_punctuation_query(tiny_named, capsys, query):
    assert "empty query" in one_line_error(capsys, cli.main(["search", query, "--index", "tiny"]))


@pytest.mark.lucene
def test_unknown_index_name(index_home, capsys):
    assert "unknown index 'nope'" in one_line_error(capsys, cli.main(["search", "x", "--index", "nope"]))


def test_corrupt_index_directory(tmp_path, tiny_index, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(tiny_index, broken)
    for segment in broken.glob("_*"):
        segment.write_bytes(b"garbage")
    assert "corrupt index" in one_line_error(capsys, cli.main(["search", "x", "--index", str(broken)]))
    half = tmp_path / "half"
    half.mkdir()
    assert "not a finished index" in one_line_error(capsys, cli.main(["search", "x", "--index", str(half)]))


def test_missing_corpus_file(index_home, tmp_path, capsys):
    code = cli.main(["index", "build", "--corpus", str(tmp_path / "nope.jsonl"), "--name", "x"])
    assert "corpus file not found" in one_line_error(capsys, code)
    code = cli.main(["index", "build", "--xml", str(tmp_path / "nope.xml.bz2")])
    assert "XML dump not found" in one_line_error(capsys, code)


@pytest.mark.parametrize("bad_line, message", [("{oops", "malformed JSON"), ('["a"]', "expected a JSON object")])
def test_bad_jsonl_line_names_file_and_line(index_home, tmp_path, capsys, bad_line, message):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "1", "title": "A", "contents": "a"}\n' + bad_line + "\n")
    code = cli.main(["index", "build", "--corpus", str(corpus), "--name", "x", "--threads", "1"])
    assert f"{corpus}:2: {message}" in one_line_error(capsys, code)
    assert not (index_home / "x").exists() and not list(index_home.glob(".x.partial-*"))


@pytest.mark.parametrize("argv", [["search", "x", "-k", "0"], ["index", "build", "--threads", "-2"],
                                  ["index", "build", "--unit", "sentence"]])
def test_bad_arguments_exit_2_with_one_line(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_default_index_names():
    assert default_index_name([], "article") == "default"
    assert default_index_name([], "passage") == "default-passage"
    assert default_index_name(["/d/enwiki-latest-pages-articles.xml.bz2"], "article") == "enwiki-latest-pages-articles"
    assert default_index_name(["data/my corpus.jsonl.gz"], "passage") == "my-corpus-passage"


@pytest.mark.lucene
def test_bom_blank_lines_duplicates_and_empty_articles_build_and_are_counted(index_home, tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    lines = ['{"id": "1", "title": "Alder", "contents": "alder trees"}', "",
             '{"id": "2", "title": "Birch", "contents": "birch bark"}',
             '{"id": "1", "title": "Alder again", "contents": "a repeat"}',
             '{"id": "3", "title": "Empty", "contents": "  "}', "", ""]
    corpus.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    code = cli.main(["index", "build", "--corpus", str(corpus), "--name", "x", "--threads", "1"])
    out, err = capsys.readouterr()
    assert code == 0 and "2 article docs from 2 articles" in out
    assert "skipped 1 article(s) without text and 1 repeating an earlier id" in err


@pytest.mark.slow
def test_index_dense_builds_the_vectors_that_dense_weight_searches(tiny_named, tmp_path, monkeypatch, capsys):
    from tests.agent.serve.conftest import write_script

    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FRAMES_AGENT_TEST_SCRIPT", str(write_script(tmp_path / "script.json")))
    ask = ["ask", "Who is the mayor of Brennick?", "--index", "tiny", "--k", "1", "--n", "1", "--json",
           "--set", "dense_weight=1"]
    assert "python cli.py index dense --index tiny" in one_line_error(capsys, cli.main(ask))
    assert cli.main(["index", "dense", "--index", "tiny"]) == 0
    assert re.match(r"dense index of tiny: 12 units at .*cache/dense/", capsys.readouterr().out)
    assert cli.main(ask) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["answer"] == "Tomas Ferrante"
    sources = {doc["source"] for doc in result["documents"]}
    assert sources == {"bm25:tiny", "bm25:tiny+dense"}  # BM25's hits, and units only the dense side found


@pytest.mark.lucene
def test_build_with_prefer_and_keep_copies_reports_the_copies(index_home, copies_corpus, tmp_path, capsys):
    corpus = [str(p) for p in copies_corpus]
    assert cli.main(["index", "build", "--corpus", *corpus, "--prefer", "crawl*", "--name", "one", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "index one: 6 article docs from 6 articles" in out
    assert "copies: 3 of 3 titles merged into the article kept (3 from archive.jsonl)" in out
    assert cli.main(["index", "build", "--corpus", *corpus, "--keep-copies", "--name", "all", "--threads", "1"]) == 0
    assert "copies: 3 of 3 titles kept as documents of their own" in capsys.readouterr().out
    legacy = index_home / "old"
    shutil.copytree(index_home / "all", legacy)
    manifest = json.loads((legacy / "frames-agent-index.json").read_text())
    (legacy / "frames-agent-index.json").write_text(json.dumps({**manifest, "format": 3, "merged": None}))
    assert cli.main(["index", "list"]) == 0
    listing = capsys.readouterr().out
    assert re.search(r"one .* 6 docs  content [0-9a-f]{12}  3 copies merged\n", listing)
    assert re.search(r"all .* 9 docs  content [0-9a-f]{12}  3 copies kept\n", listing)
    assert re.search(r"old +index .*old was built by an older release \(format 3\); rebuild it with `python cli.py "
                     r"index build --force`\n", listing)
    assert cli.main(["search", "Olse River Port Alder", "--index", "all", "-k", "6", "--json"]) == 0
    assert len({row["id"] for row in json.loads(capsys.readouterr().out)}) == 6
    assert cli.main(["search", "Olse River", "--index", "old"]) == 2
    assert "was built by an older release (format 3)" in capsys.readouterr().err
