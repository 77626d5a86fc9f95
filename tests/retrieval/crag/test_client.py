"""CRAG client against the compatible server run as a real process, and against misbehaving local servers."""
from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from frames_agent import cli
from frames_agent.retrieval.crag import CRAGClient, CRAGError, build_tools, select_endpoints
from frames_agent.retrieval.crag.endpoints import BY_NAME, ENDPOINTS
from frames_agent.retrieval.crag.server import CompanyTable, free_port, load_recorded
from tests.shared_data import CRAG_DATA, RECORDINGS, needs_crag

RECORDED = json.loads(RECORDINGS.read_text())["calls"] if RECORDINGS.is_file() else []


@pytest.fixture()
def client(crag_server):
    with CRAGClient(crag_server, timeout=30, retries=0) as c:
        yield c


@needs_crag
def test_the_table_has_the_38_official_endpoints():
    assert len(ENDPOINTS) == 38 and len(BY_NAME) == 38
    assert {c["client_method"] for c in RECORDED} == set(BY_NAME)
    assert all(callable(getattr(CRAGClient, e.name)) for e in ENDPOINTS)


@needs_crag
def test_every_endpoint_answers_its_recorded_reply(client):
    parsed = {(ep.name, json.dumps(body, sort_keys=True)): reply for ep, body, reply in load_recorded(
        CRAG_DATA / "example_call_responses.json")}
    seen = set()
    for call in RECORDED:
        name, args = call["client_method"], call["args"]
        seen.add(name)
        if call.get("truncated"):
            continue  # refused: see test_truncated_recordings_are_refused_not_served_as_complete
        reply = getattr(client, name)(*args)
        body = BY_NAME[name].body(dict(zip([p.name for p in BY_NAME[name].params], args)))
        expected = call["response"] if call["format"] == "parsed" else parsed[(name, json.dumps(body, sort_keys=True))]
        assert reply == expected, name
    assert len(seen) == 38


@needs_crag
def test_truncated_recordings_are_refused_not_served_as_complete(client):
    """The recording kept only the start of these replies; the real server would answer in full."""
    truncated = [c for c in RECORDED if c.get("truncated")]
    assert {c["client_method"] for c in truncated} == {"movie_get_year_info", "finance_get_detailed_price_history"}
    for call in truncated:
        with pytest.raises(CRAGError, match=r"HTTP 501.*recorded reply truncated, not served as complete"):
            getattr(client, call["client_method"])(*call["args"])


@needs_crag
@pytest.mark.parametrize("name,query,recorded", [
    ("open_search_entity_by_name", "FLORIDA!", "florida"),
    ("open_search_entity_by_name", "  Florida ", "florida"),
    ("movie_get_person_info", "jackson", "Jackson"),
    ("music_search_artist_entity_by_name", "Lady Gaga", "lady gaga"),
    ("music_search_artist_entity_by_name", "LADY_GAGA.", "lady gaga"),
    ("music_search_song_entity_by_name", "i can feel it", "I can feel IT"),
    ("movie_get_movie_info", "lord of the rings", "Lord of the Rings"),
])
def test_searches_normalise_the_query_like_the_official_server(client, name, query, recorded):
    """The official KGs lower-case the query and strip punctuation before BM25, so these get the recorded reply."""
    expected = next(c["response"] for c in RECORDED if c["client_method"] == name and c["args"] == [recorded])
    assert getattr(client, name)(query) == expected and expected["result"]


def test_keyword_calls_and_official_signatures(client):
    assert client.music_get_billboard_rank_date(rank=1, date="2024-02-28") == {"result": [["Texas Hold 'Em"], ["Beyonce"]]}
    assert client.finance_get_ticker_by_name(query="Inflection Point Acquisition Corp. II Unit") == {"result": "IPXXU"}
    assert client.sports_nba_get_games_on_date(date="2022-10-11", team_name="Chicago Bulls")["result"]["wl_home"] == {"0": "W"}


def test_company_search_and_tickers_use_the_real_table(client):
    assert client.finance_get_company_name("tesla")["result"][0] == "Tesla Inc. Common Stock"
    assert client.finance_get_ticker_by_name("Tesla Inc. Common Stock") == {"result": "TSLA"}
    assert client.finance_get_ticker_by_name("No Such Company") == {"result": None}
    assert client.finance_get_company_name("!!!") == {"result": []}
    assert len(client.finance_get_company_name("bank")["result"]) == 10


@needs_crag
def test_company_search_matches_the_official_bm25_ranking():
    table = CompanyTable.load(CRAG_DATA / "company_name.dict")
    assert table.search("Apple") == ["Apple Inc. Common Stock", "Apple Hospitality REIT Inc. Common Shares"]
    assert table.ticker("Inflection Point Acquisition Corp. II Unit") == "IPXXU"
    assert len(table.tickers) == 7306  # repeated names keep one ticker, as dict(df.values) does


def test_unknown_arguments_get_the_official_no_match_shapes(client):
    assert client.open_get_entity("No Such Entity") == {"result": None}
    assert client.open_search_entity_by_name("qqqq") == {"result": []}
    assert client.movie_get_person_info("Nobody Atall") == {"result": []}
    assert client.movie_get_year_info("2000") == {"result": None}
    assert client.finance_get_eps("ZZZZ") == {"result": None}
    assert client.music_get_billboard_rank_date(5, "1999-01-01") == {"result": [[], []]}
    assert client.music_get_billboard_rank_date(101) == {"result": [None, None]}
    assert client.music_grammy_get_best_song_by_year(1900) == {"result": None}
    assert client.music_grammy_get_best_song_by_year(2000) == {"result": []}
    assert client.music_grammy_get_award_count_by_artist("Nobody") == {"result": 0}
    assert client.music_get_lifespan("Nobody") == {"result": [None, None]}
    assert client.sports_nba_get_play_by_play_data_by_game_ids(["1"]) == {"result": None}


def test_year_outside_range_is_an_http_500_error(client):
    with pytest.raises(CRAGError, match=r"movie_get_year_info: server error HTTP 500"):
        client.movie_get_year_info("1980")


def test_malformed_body_is_an_http_422_error(client):
    with pytest.raises(CRAGError, match=r"bad arguments .*HTTP 422: query: Input should be a valid integer"):
        client.movie_get_movie_info_by_id("abc")
    with pytest.raises(CRAGError, match="HTTP 422"):
        client.open_get_entity(None)


def test_wrong_call_signature_is_a_crag_error(client):
    with pytest.raises(CRAGError, match="finance_get_eps: missing a required argument"):
        client.finance_get_eps()


def test_connection_refused_is_one_clear_line():
    port = free_port()
    with CRAGClient(f"http://127.0.0.1:{port}", retries=1, backoff=0.01) as c:
        with pytest.raises(CRAGError) as err:
            c.finance_get_eps("META")
    message = str(err.value)
    assert "connection refused" in message and "crag-server" in message and "\n" not in message
    assert not CRAGClient(f"http://127.0.0.1:{port}").ping()


def test_server_from_env_or_default(monkeypatch):
    monkeypatch.setenv("CRAG_SERVER", "http://10.1.2.3:9000/")
    assert CRAGClient().server == "http://10.1.2.3:9000"
    monkeypatch.delenv("CRAG_SERVER")
    assert CRAGClient().server == "http://127.0.0.1:8000"
    assert CRAGClient("http://h:1").server == "http://h:1"


class _Scripted(BaseHTTPRequestHandler):
    """Answers POSTs from a script of (status, content type, body, delay) and counts them."""

    script: list = []
    count = 0

    def do_POST(self):  # noqa: N802
        type(self).count += 1
        status, ctype, body, delay = self.script[min(self.count, len(self.script)) - 1]
        if delay:
            threading.Event().wait(delay)
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:
            pass

    def log_message(self, *args):
        pass


@pytest.fixture()
def scripted_server():
    def start(script):
        handler = type("H", (_Scripted,), {"script": script, "count": 0})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}", handler

    servers: list = []
    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def test_html_reply_is_a_clear_error(scripted_server):
    url, _ = scripted_server([(200, "text/html", "<html><body>Welcome to nginx</body></html>", 0)])
    with pytest.raises(CRAGError, match=r"reply is not JSON \(text/html: '<html><body>Welcome"):
        CRAGClient(url, retries=0).finance_get_eps("META")


def test_json_without_result_is_a_clear_error(scripted_server):
    url, _ = scripted_server([(200, "application/json", '{"detail": "Not Found"}', 0)])
    with pytest.raises(CRAGError, match="no 'result' field"):
        CRAGClient(url, retries=0).finance_get_eps("META")


def test_transient_503_is_retried_then_answered(scripted_server):
    url, handler = scripted_server([(503, "text/plain", "busy", 0), (503, "text/plain", "busy", 0),
                                    (200, "application/json", '{"result": 22.95}', 0)])
    assert CRAGClient(url, retries=2, backoff=0.01).finance_get_eps("META") == {"result": 22.95}
    assert handler.count == 3


def test_retries_are_bounded_and_500_is_not_retried(scripted_server):
    url, handler = scripted_server([(503, "text/plain", "busy", 0)])
    with pytest.raises(CRAGError, match="HTTP 503"):
        CRAGClient(url, retries=2, backoff=0.01).finance_get_eps("META")
    assert handler.count == 3
    url, handler = scripted_server([(500, "text/plain", "Internal Server Error", 0)])
    with pytest.raises(CRAGError, match="HTTP 500"):
        CRAGClient(url, retries=2, backoff=0.01).finance_get_eps("META")
    assert handler.count == 1


def test_timeout_is_a_clear_error(scripted_server):
    url, _ = scripted_server([(200, "application/json", '{"result": 1}', 1.0)])
    with pytest.raises(CRAGError, match=r"no reply from .* within 0.2s"):
        CRAGClient(url, timeout=0.2, retries=0).finance_get_eps("META")


def test_the_tools_a_spec_selects():
    def spec(text):
        use_wiki, tools = build_tools(text, CRAGClient("http://127.0.0.1:9"))  # no call is made
        return use_wiki, sorted({t.metadata["domain"] for t in tools}), len(tools)

    assert spec("wiki") == (True, [], 0) and spec("none") == (False, [], 0)
    assert spec("wiki,crag") == (True, ["finance", "movie", "music", "open", "sports"], 38)
    assert spec("crag:finance,crag:music") == (False, ["finance", "music"], 9 + 19)
    assert spec("crag:finance,crag") == (False, ["finance", "movie", "music", "open", "sports"], 38)
    assert spec("wiki, crag:finance_get_eps") == (True, ["finance"], 1)
    for bad in ("", "crag:cooking", "web"):
        with pytest.raises(CRAGError, match="--tools"):
            build_tools(bad)


def test_select_endpoints_by_domain_and_name():
    assert len(select_endpoints("all")) == 38 and select_endpoints(None) == []
    assert {e.domain for e in select_endpoints(["finance"])} == {"finance"}
    assert len(select_endpoints(["sports"])) == 3
    assert [e.name for e in select_endpoints(["finance_get_eps"])] == ["finance_get_eps"]
    with pytest.raises(CRAGError, match="unknown CRAG domain"):
        select_endpoints(["cooking"])


def test_crag_server_cli_refuses_a_busy_port_in_one_line(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        code = cli.main(["crag-server", "--port", str(busy.getsockname()[1])])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: cannot listen on 127.0.0.1:") and err.count("\n") == 1


def test_crag_server_cli_rejects_a_data_dir_without_files(tmp_path, capsys):
    assert cli.main(["crag-server", "--data", str(tmp_path)]) == 2
    assert "has no company_name.dict" in capsys.readouterr().err


@pytest.mark.slow  # waits out a timeout against a live server
@pytest.mark.parametrize("case, words", [("deep", "nested deeper than 64 levels"), ("drip", "no reply from")])
def test_a_hostile_crag_server_is_one_line_within_the_timeout(case, words):
    import time

    from tests.agent.llm.fake_openai import HOSTILE, FakeOpenAI

    fake = FakeOpenAI().always(*HOSTILE[case])
    client = CRAGClient(server=fake.url.removesuffix("/v1"), timeout=2, retries=0)
    started = time.monotonic()
    try:
        with pytest.raises(CRAGError, match=words):
            client.open_search_entity_by_name("x")
    finally:
        fake.close()
    assert time.monotonic() - started < 4  # the timeout bounds the whole request, not each byte
