"""The CRAG mock API's 38 endpoints as one table: the client, the tools and the server are built from it."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from frames_agent.core.errors import FramesAgentError

DOMAINS = ("open", "movie", "finance", "music", "sports")
_MISSING = object()


class CRAGError(FramesAgentError):
    """A CRAG API call failed: server unreachable, bad arguments, server error, or a non-API reply."""


@dataclass(frozen=True)
class Param:
    """One argument of an endpoint: its Python name, type, body key and the hint the LLM sees."""

    name: str
    type: Any
    description: str
    key: str = "query"  # body key; single-argument endpoints post {"query": value}
    default: Any = _MISSING
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        """Whether a call must give this argument."""
        return self.default is _MISSING


@dataclass(frozen=True)
class Endpoint:
    """A POST route: official client method name, path, domain, arguments, tool description."""

    name: str
    path: str
    domain: str
    params: tuple[Param, ...]
    description: str

    def body(self, args: dict[str, Any]) -> dict[str, Any] | None:
        """The JSON body for these (already bound) arguments, as the official client sends it."""
        if not self.params:
            return None
        return {p.key: args.get(p.name, None if p.required else p.default) for p in self.params}


def _q(name: str, description: str, type_: Any = str) -> tuple[Param, ...]:
    return (Param(name, type_, description),)


_TICKER = "ticker symbol, e.g. META (get it with finance_get_ticker_by_name)"
_ARTIST = "exact artist name (find it with music_search_artist_entity_by_name)"
_SONG = "exact song name (find it with music_search_song_entity_by_name)"
_DATE = "date as YYYY-MM-DD, YYYY-MM or YYYY"
_GAMES = (Param("date", str, _DATE, key="date"), Param("team_name", str | None, "team name, or null for all teams",
                                                        key="team_name", default=None))

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("open_search_entity_by_name", "/open/search_entity_by_name", "open", _q("query", "entity name"),
             "Find open-domain (encyclopedia) entities by name; up to 10 names."),
    Endpoint("open_get_entity", "/open/get_entity", "open", _q("entity", "exact entity name from open_search_entity_by_name"),
             "An open-domain entity's summary and infobox fields."),
    Endpoint("movie_get_person_info", "/movie/get_person_info", "movie", _q("person_name", "person name"),
             "Movie people matching a name: birthday, movie ids acted/directed, Oscars."),
    Endpoint("movie_get_movie_info", "/movie/get_movie_info", "movie", _q("movie_name", "movie title"),
             "Movies matching a title: release date, language, budget, revenue, rating, cast, crew, Oscars."),
    Endpoint("movie_get_year_info", "/movie/get_year_info", "movie", _q("year", "year as a string, 1990-2021"),
             "Movie ids released in a year and that year's Oscar awards (1990-2021)."),
    Endpoint("movie_get_movie_info_by_id", "/movie/get_movie_info_by_id", "movie", _q("movie_id", "movie id", int),
             "A movie by its numeric id."),
    Endpoint("movie_get_person_info_by_id", "/movie/get_person_info_by_id", "movie", _q("person_id", "person id", int),
             "A movie person by numeric id."),
    Endpoint("finance_get_company_name", "/finance/get_company_name", "finance", _q("query", "company name or part of it"),
             "Listed company names matching a query (up to 10)."),
    Endpoint("finance_get_ticker_by_name", "/finance/get_ticker_by_name", "finance",
             _q("query", "exact company name from finance_get_company_name"), "Ticker symbol of a company name."),
    Endpoint("finance_get_price_history", "/finance/get_price_history", "finance", _q("ticker_name", _TICKER),
             "Daily open/high/low/close/volume of a stock over the last year."),
    Endpoint("finance_get_detailed_price_history", "/finance/get_detailed_price_history", "finance",
             _q("ticker_name", _TICKER), "Minute-by-minute prices of a stock over the last 5 trading days."),
    Endpoint("finance_get_dividends_history", "/finance/get_dividends_history", "finance", _q("ticker_name", _TICKER),
             "Dividend payments of a stock by date."),
    Endpoint("finance_get_market_capitalization", "/finance/get_market_capitalization", "finance",
             _q("ticker_name", _TICKER), "Market capitalization of a stock (USD)."),
    Endpoint("finance_get_eps", "/finance/get_eps", "finance", _q("ticker_name", _TICKER),
             "Earnings per share (forward EPS) of a stock."),
    Endpoint("finance_get_pe_ratio", "/finance/get_pe_ratio", "finance", _q("ticker_name", _TICKER),
             "Price-to-earnings ratio (forward P/E) of a stock."),
    Endpoint("finance_get_info", "/finance/get_info", "finance", _q("ticker_name", _TICKER),
             "Company profile and key statistics of a stock (sector, prices, dividend yield, ...)."),
    Endpoint("music_search_artist_entity_by_name", "/music/search_artist_entity_by_name", "music",
             _q("artist_name", "artist name"), "Artist names matching a query (up to 10)."),
    Endpoint("music_search_song_entity_by_name", "/music/search_song_entity_by_name", "music",
             _q("song_name", "song name"), "Song names matching a query (up to 10)."),
    Endpoint("music_get_billboard_rank_date", "/music/get_billboard_rank_date", "music",
             (Param("rank", int, "Billboard Hot 100 rank, 1-100", key="rank"),
              Param("date", str | None, "chart date YYYY-MM-DD, or null for all dates", key="date", default=None)),
             "Songs and artists at a Billboard Hot 100 rank on a date."),
    Endpoint("music_get_billboard_attributes", "/music/get_billboard_attributes", "music",
             (Param("date", str, "chart date YYYY-MM-DD", key="date"),
              Param("attribute", str, "which attribute", key="attribute",
                    choices=("rank_last_week", "weeks_in_chart", "top_position", "rank")),
              Param("song_name", str, _SONG, key="song_name")),
             "A song's Billboard Hot 100 attribute on a chart date."),
    Endpoint("music_grammy_get_best_artist_by_year", "/music/grammy_get_best_artist_by_year", "music",
             _q("year", "year, 1957-2019", int), "Grammy Best New Artist of a year."),
    Endpoint("music_grammy_get_award_count_by_artist", "/music/grammy_get_award_count_by_artist", "music",
             _q("artist_name", _ARTIST), "Number of Grammy awards of an artist."),
    Endpoint("music_grammy_get_award_count_by_song", "/music/grammy_get_award_count_by_song", "music",
             _q("song_name", _SONG), "Number of Grammy awards of a song."),
    Endpoint("music_grammy_get_best_song_by_year", "/music/grammy_get_best_song_by_year", "music",
             _q("year", "year, 1957-2019", int), "Grammy Song of the Year of a year."),
    Endpoint("music_grammy_get_award_date_by_artist", "/music/grammy_get_award_date_by_artist", "music",
             _q("artist_name", _ARTIST), "Years in which an artist won Grammy awards."),
    Endpoint("music_grammy_get_best_album_by_year", "/music/grammy_get_best_album_by_year", "music",
             _q("year", "year, 1957-2019", int), "Grammy Album of the Year of a year."),
    Endpoint("music_grammy_get_all_awarded_artists", "/music/grammy_get_all_awarded_artists", "music", (),
             "Every Grammy Best New Artist winner."),
    Endpoint("music_get_artist_birth_place", "/music/get_artist_birth_place", "music", _q("artist_name", _ARTIST),
             "Birth country (ISO code) of an artist."),
    Endpoint("music_get_artist_birth_date", "/music/get_artist_birth_date", "music", _q("artist_name", _ARTIST),
             "Birth date of an artist or founding date of a band."),
    Endpoint("music_get_members", "/music/get_members", "music", _q("band_name", "exact band name"),
             "Members of a band."),
    Endpoint("music_get_lifespan", "/music/get_lifespan", "music", _q("artist_name", _ARTIST),
             "Birth and death (or start and end) dates of an artist."),
    Endpoint("music_get_song_author", "/music/get_song_author", "music", _q("song_name", _SONG), "Author of a song."),
    Endpoint("music_get_song_release_country", "/music/get_song_release_country", "music", _q("song_name", _SONG),
             "Release country (ISO code) of a song."),
    Endpoint("music_get_song_release_date", "/music/get_song_release_date", "music", _q("song_name", _SONG),
             "Release date of a song."),
    Endpoint("music_get_artist_all_works", "/music/get_artist_all_works", "music", _q("artist_name", _ARTIST),
             "All works (songs, albums) of an artist."),
    Endpoint("sports_soccer_get_games_on_date", "/sports/soccer/get_games_on_date", "sports", _GAMES,
             "Soccer games (European leagues) on a date, optionally of one team: result, goals, opponent, xG."),
    Endpoint("sports_nba_get_games_on_date", "/sports/nba/get_games_on_date", "sports", _GAMES,
             "NBA games on a date, optionally of one team: teams, scores, win/loss, game ids."),
    Endpoint("sports_nba_get_play_by_play_data_by_game_ids", "/sports/nba/get_play_by_play_data_by_game_ids", "sports",
             (Param("game_ids", list[str], "NBA game ids from sports_nba_get_games_on_date", key="game_ids"),),
             "Play-by-play events of NBA games."),
)

BY_NAME: dict[str, Endpoint] = {e.name: e for e in ENDPOINTS}


def select_endpoints(domains: str | Sequence[str] | None = "all") -> list[Endpoint]:
    """Endpoints of the given domains and/or endpoint names ("all" = every one, None = none)."""
    if domains is None:
        return []
    if domains == "all":
        return list(ENDPOINTS)
    wanted = [domains] if isinstance(domains, str) else list(domains)
    unknown = [w for w in wanted if w not in DOMAINS and w not in BY_NAME]
    if unknown:
        raise CRAGError(f"unknown CRAG domain or endpoint {unknown[0]!r}; domains: {', '.join(DOMAINS)}")
    return [e for e in ENDPOINTS if e.domain in wanted or e.name in wanted]
