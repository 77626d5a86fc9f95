"""FRAMES data loading: the original TSV layout's edge cases, JSONL, the hf: route, and bad input."""
from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from frames_agent.eval.frames.datasets import (
    DataError,
    load_questions,
    normalize_title,
    split_urls,
    title_from_url,
)

FIXTURES = Path(__file__).parents[2] / "fixtures"


@pytest.fixture(scope="module")
def edge():
    return load_questions(FIXTURES / "frames_edge.tsv")


def test_quoted_fields_keep_tabs_and_newlines_inside_one_question(edge):
    first, second = edge.questions[0], edge.questions[1]
    assert first.id == "0" and first.prompt == 'Who is the mayor of the city where Marta Kowalczyk was born? Ask "twice".'
    assert first.answer == "Tomas Ferrante"
    assert second.prompt == "A prompt on two lines"


def test_comma_joined_cells_split_but_titles_with_commas_stay_whole(edge):
    q = edge.questions[1]
    assert q.gold_titles == ("Gannet Park", "Port Alder", "Lincoln, Nebraska")
    assert q.reasoning_types == ("Numerical reasoning", "Temporal reasoning")


def test_encoded_titles_fragments_mobile_and_index_php_links(edge):
    q = edge.questions[2]
    assert q.gold_titles == ("Jiří Brožek", "McDonald's", "Key West", "Bronco")
    assert q.reasoning_types == ("Tabular reasoning", "Post processing")  # case-normalised to the FRAMES names


def test_empty_answer_skipped_and_odd_rows_warned(edge):
    assert [q.id for q in edge.questions] == ["0", "1", "2", "4"]
    text = "\n".join(edge.warnings)
    assert "question 3 (line 6): empty answer; skipped" in text
    assert "unknown reasoning type 'Telepathic reasoning'" in text
    assert "question 4: wiki_links is not a list literal" in text
    assert edge.questions[3].gold_titles == ()


def test_fingerprint_and_limit(edge):
    limited = load_questions(FIXTURES / "frames_edge.tsv", limit=2)
    assert [q.id for q in limited.questions] == ["0", "1"]
    assert limited.fingerprint == edge.fingerprint and edge.fingerprint.startswith("sha256:")


@pytest.mark.parametrize("url,title", [
    ("https://en.wikipedia.org/wiki/Thirteen_Years%27_War_(1454%E2%80%931466)", "Thirteen Years' War (1454–1466)"),
    ("https://en.wikipedia.org/wiki/Boston_Marathon#Rosie_Ruiz,_the_impostor", "Boston Marathon"),
    ("https://en.wikipedia.org/wiki/Superman_%26_Bugs_Bunny", "Superman & Bugs Bunny"),
    ("https://en.wikipedia.org/wiki/MacArthur_Fellows_Program#", "MacArthur Fellows Program"),
    ("https://w.wiki/ASFv", None),
])
def test_title_from_url(url, title):
    assert title_from_url(url) == title


def test_split_urls_only_at_link_boundaries():
    cell = "https://en.wikipedia.org/wiki/Summer_Magic_(film), https://en.wikipedia.org/wiki/Dr._Quinn,_Medicine_Woman"
    assert split_urls(cell) == ["https://en.wikipedia.org/wiki/Summer_Magic_(film)",
                                "https://en.wikipedia.org/wiki/Dr._Quinn,_Medicine_Woman"]


def test_normalized_titles_compare_case_and_space_insensitively():
    assert normalize_title("James_A._Garfield") == normalize_title("james  a. garfield")


def test_unresolvable_link_counts_as_gold_and_warns(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"Prompt": "Q?", "Answer": "A", "wiki_links": ["https://w.wiki/ASFv"],
                                "reasoning_types": "Multiple constraints"}) + "\n", encoding="utf-8")
    data = load_questions(path)
    assert data.questions[0].gold_titles == ("https://w.wiki/ASFv",)
    assert "cannot tell the article" in data.warnings[0]


def test_jsonl_with_lists_and_ids(tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [{"id": "a", "Prompt": "Q1?", "Answer": "A1", "reasoning_types": ["Temporal reasoning"],
             "wiki_links": ["https://en.wikipedia.org/wiki/Brennick"]},
            {"id": "b", "Prompt": "Q2?", "Answer": "A2", "reasoning_types": "Numerical reasoning",
             "wiki_links": "['https://en.wikipedia.org/wiki/Port_Alder']"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    data = load_questions(path)
    assert [(q.id, q.gold_titles, q.reasoning_types) for q in data.questions] == [
        ("a", ("Brennick",), ("Temporal reasoning",)), ("b", ("Port Alder",), ("Numerical reasoning",))]


def test_wiki_links_is_never_evaluated_as_code(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("Prompt\tAnswer\twiki_links\nQ?\tA\t__import__('os').system('false')\n", encoding="utf-8")
    data = load_questions(path)
    assert data.questions[0].gold_titles == () and "not a list literal" in data.warnings[0]


def test_csv_layout(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('Prompt,Answer,wiki_links\n"Q, with comma?",A,"[\'https://en.wikipedia.org/wiki/Olse_River\']"\n',
                    encoding="utf-8")
    q = load_questions(path).questions[0]
    assert q.prompt == "Q, with comma?" and q.gold_titles == ("Olse River",)


def _file(name: str, content: str | bytes):
    def make(directory: Path) -> Path:
        path = directory / name
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
        return path
    return make


@pytest.mark.parametrize("make,message", [
    (lambda p: p / "missing.tsv", "no data file at"),
    (lambda p: p, "is a directory"),
    (_file("e.tsv", ""), "is empty"),
    (_file("b.tsv", b"Prompt\tAnswer\n\xff\xfe\x00bad\tx\n"), "not UTF-8"),
    (lambda p: FIXTURES / "frames_badcols.tsv", "lacks column(s) Prompt, Answer (found: Query, Gold"),
    (_file("j.jsonl", '{"Prompt": "Q", "Answer": "A"}\n{oops\n'), "line 2 is not JSON"),
    (_file("a.tsv", "Prompt\tAnswer\nQ?\t \n"), "no usable questions"),
])
def test_bad_input_is_one_line_error(tmp_path, make, message):
    with pytest.raises(DataError) as err:
        load_questions(make(tmp_path))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_bad_limit(edge):
    with pytest.raises(DataError, match="--limit must be at least 1"):
        load_questions(FIXTURES / "frames_edge.tsv", limit=0)


def test_default_data_from_env(monkeypatch):
    monkeypatch.setenv("FRAMES_DATA", str(FIXTURES / "frames_edge.tsv"))
    assert load_questions().source.endswith("frames_edge.tsv")


def test_hf_route_uses_the_datasets_package(monkeypatch):
    calls = []

    def load_dataset(name, split):
        calls.append((name, split))
        return [{"Unnamed: 0": 7, "Prompt": "Q?", "Answer": "A", "reasoning_types": "Multiple constraints",
                 "wiki_links": "['https://en.wikipedia.org/wiki/Brennick']"}]

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    data = load_questions("hf:google/frames-benchmark")
    assert calls == [("google/frames-benchmark", "test")]
    assert data.questions[0].id == "7" and data.fingerprint == "hf:google/frames-benchmark"


def test_hf_route_offline_is_one_line(monkeypatch):
    def load_dataset(name, split):
        raise ConnectionError("Couldn't reach 'google/frames-benchmark' on the Hub\n(more lines)")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    monkeypatch.setattr("frames_agent.eval.frames.datasets.hub_reachable", lambda: True)
    with pytest.raises(DataError, match="needs internet.*Couldn't reach") as err:
        load_questions("hf:google/frames-benchmark")
    assert "\n" not in str(err.value)


def test_real_dev_split_loads_cleanly():
    from frames_agent.eval.frames.datasets import default_data

    if not Path(default_data()).exists():
        pytest.skip("shared dev split not present")
    data = load_questions(default_data())
    assert len(data.questions) == 327
    assert {t for q in data.questions for t in q.reasoning_types} == {
        "Numerical reasoning", "Tabular reasoning", "Multiple constraints", "Temporal reasoning", "Post processing"}
    assert len(data.warnings) == 1 and "w.wiki" in data.warnings[0]


def test_hf_without_the_datasets_package_is_an_install_error(monkeypatch):
    from frames_agent.core.errors import InstallError
    from frames_agent.eval.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'frames-agent\[hf\]'$") as err:
        load_questions("hf:google/frames-benchmark")
    assert isinstance(err.value, InstallError)


def test_a_stray_quote_never_swallows_the_rows_after_it(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("Unnamed: 0\tPrompt\tAnswer\twiki_links\n"
                    "0\tFirst?\tA\t\n"
                    '1\t"Stray quote in this prompt?\tB\t\n'
                    "2\tThird?\tC\t\n"
                    "3\tFourth?\tD\t\n", encoding="utf-8")
    data = load_questions(path)
    assert [(q.id, q.answer) for q in data.questions] == [("0", "A"), ("1", "B"), ("2", "C"), ("3", "D")]
    assert data.questions[1].prompt == '"Stray quote in this prompt?'
    assert any(w.startswith("line 3: unbalanced quote") for w in data.warnings)


def test_a_row_with_too_few_fields_is_named_by_line(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("Prompt\tAnswer\twiki_links\nQ1?\tA\t\nQ2 only\n\nQ3?\tC\t\n", encoding="utf-8")
    data = load_questions(path)
    assert [q.answer for q in data.questions] == ["A", "C"]
    text = "\n".join(data.warnings)
    assert "line 3: 1 fields where the header has 3" in text and "(line 3): empty answer" in text


@pytest.mark.parametrize("cell, problem", [
    ("-" * 200000 + "1", "holds 200,001 characters"),
    ("[" + ", ".join(["'https://en.wikipedia.org/wiki/X'"] * 200000) + "]", "characters (limit"),
    ("[" * 50000, "not a list literal"),
    ("['https://en.wikipedia.org/wiki/A', 1 + 2]", "not a list literal"),
], ids=["dashes", "six-megabyte-list", "unclosed-brackets", "expression"])
def test_hostile_wiki_links_cells_are_bounded(tmp_path, cell, problem):
    path = tmp_path / "q.tsv"
    path.write_text(f"Prompt\tAnswer\twiki_links\nQ?\tA\t{cell}\n", encoding="utf-8")
    data = load_questions(path)
    assert data.questions[0].gold_titles == ()
    assert problem in data.warnings[0] and len(data.warnings[0]) < 200


def test_wiki_links_single_string_and_escaped_quotes(tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [{"Prompt": "Q?", "Answer": "A", "wiki_links": "'https://en.wikipedia.org/wiki/Olse_River'"},
            {"Prompt": "Q2?", "Answer": "B", "wiki_links": "['https://en.wikipedia.org/wiki/McDonald\\'s']"}]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    data = load_questions(path)
    assert data.questions[0].gold_titles == ("Olse River",) and data.questions[1].gold_titles == ("McDonald's",)


_CELL_PIECES = ["\t", ",", "\n", '"', "'", "[", "]", "{", "}", "\\", "Prompt", "Answer", "id", "wiki_links",
                "https://en.wikipedia.org/wiki/", "%", "\x00", "\r", "é", "9" * 50, "x" * 300, '{"Prompt": ']


def _property_file(tmp_path_factory, suffix: str, content: bytes) -> Path:
    path = tmp_path_factory.mktemp("prop") / f"q{suffix}"
    path.write_bytes(content)
    return path


def test_random_and_adversarial_data_files_are_questions_or_one_data_error(tmp_path_factory):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from frames_agent.eval.errors import DataError

    headers = st.sampled_from([b"", b"Prompt\tAnswer\n", b"id,Prompt,Answer,wikipedia_link_1\n",
                               b"Unnamed: 0\tPrompt\tAnswer\treasoning_types\twiki_links\n"])
    texts = st.lists(st.tuples(st.sampled_from(_CELL_PIECES), st.integers(1, 50)), max_size=30).map(
        lambda parts: "".join(piece * times for piece, times in parts).encode("utf-8", "surrogatepass"))
    rows = st.one_of(st.binary(max_size=800), texts,
                     st.lists(st.dictionaries(st.sampled_from(["Prompt", "Answer", "id", "wiki_links"]),
                                              st.one_of(st.text(max_size=30), st.integers(), st.none(),
                                                        st.lists(st.text(max_size=5), max_size=3))),
                              max_size=4).map(lambda items: "\n".join(json.dumps(i) for i in items).encode()))

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(headers, rows, st.sampled_from([".tsv", ".csv", ".jsonl"]))
    def check(header, body, suffix):
        path = _property_file(tmp_path_factory, suffix, header + body)
        try:
            dataset = load_questions(path)
        except DataError as exc:
            assert str(exc) and "\n" not in str(exc).strip()
            return
        assert all(0 < len(q.prompt) <= 4000 and len(q.id) <= 200 for q in dataset.questions)

    check()


def test_a_data_file_that_never_ends_is_one_data_error(tmp_path):
    import os

    from frames_agent.eval.errors import DataError

    endless = tmp_path / "endless.tsv"
    os.symlink("/dev/zero", endless)
    with pytest.raises(DataError, match="endless.tsv is not a regular file"):
        load_questions(endless)


def test_renamed_repeated_ids_never_take_an_id_another_row_holds(tmp_path):
    data = tmp_path / "ids.jsonl"
    rows = [{"id": i, "Prompt": f"question {n}?", "Answer": "x"} for n, i in enumerate(["a", "a-2", "a", "a-2", "a"])]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ids = [q.id for q in load_questions(data).questions]
    assert len(set(ids)) == len(ids) == 5 and ids[:2] == ["a", "a-2"]


def test_limit_stops_parsing_once_it_has_enough_rows(tmp_path):
    data = tmp_path / "long.tsv"
    good = "".join(f"{n}\tquestion {n}?\tanswer\n" for n in range(5))
    short = "".join(f"{n}\tonly two fields\n" for n in range(5, 20_005))  # each row would be warned about if parsed
    data.write_text("id\tPrompt\tAnswer\n" + good + short)
    limited = load_questions(data, limit=5)
    assert [q.id for q in limited.questions] == ["0", "1", "2", "3", "4"]
    assert not any("fields where the header has" in w for w in limited.warnings)
    assert len(load_questions(data).warnings) >= 20_000  # without a limit every row is read and warned about
