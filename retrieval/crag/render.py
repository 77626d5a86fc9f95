"""Compact text renderings of CRAG API results: the raw JSON can be huge (price histories, play-by-play)."""
from __future__ import annotations

from typing import Any

CAP = 1500
_LIST_ITEMS = 10
_STR_CHARS = 200
# Columns that answer most questions come first; pandas tables otherwise list dozens of box-score stats.
_TABLE_FIRST = ("game", "game_id", "game_date", "matchup_home", "team_name_home", "team_name_away", "wl_home",
                "wl_away", "pts_home", "pts_away", "date", "time", "round", "venue", "result", "GF", "GA", "opponent")
_TABLE_SKIP = {"match_report"}
_PLAY_COLUMNS = ("period", "pctimestring", "homedescription", "neutraldescription", "visitordescription", "score")
_INFO_FIRST = ("longName", "symbol", "exchange", "quoteType", "sector", "industry", "currency", "currentPrice",
               "previousClose", "open", "dayHigh", "dayLow", "fiftyTwoWeekHigh", "fiftyTwoWeekLow", "marketCap",
               "volume", "averageVolume", "dividendRate", "dividendYield", "exDividendDate", "payoutRatio",
               "forwardEps", "trailingEps", "forwardPE", "trailingPE", "beta", "sharesOutstanding",
               "fullTimeEmployees", "city", "state", "country", "website")
_INFO_LAST = ("longBusinessSummary", "companyOfficers")


def number(x: float) -> str:
    """Short but faithful: 2 decimals for ordinary values, 4 significant digits for tiny ones."""
    if isinstance(x, (bool, int)) or x != x:
        return str(x)
    if x.is_integer():
        return str(int(x))
    return f"{x:.2f}".rstrip("0") if abs(x) >= 1 else f"{x:.4g}"


def compact(value: Any, depth: int = 0) -> str:
    """Sorted keys, nulls dropped, lists cut to 10 items and strings to 200 characters."""
    if isinstance(value, dict):
        items = [f"{k}: {compact(v, depth + 1)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
                 if v not in (None, "", [], {})]
        return "{" + "; ".join(items) + "}" if depth else "; ".join(items)
    if isinstance(value, list):
        shown = [compact(v, depth + 1) for v in value[:_LIST_ITEMS]]
        more = f", … (+{len(value) - _LIST_ITEMS} more)" if len(value) > _LIST_ITEMS else ""
        return "[" + ", ".join(shown) + more + "]"
    if isinstance(value, float):
        return number(value)
    if isinstance(value, str):
        return value if len(value) <= _STR_CHARS else value[:_STR_CHARS] + "…"
    return "null" if value is None else str(value)


def _prices(result: dict[str, dict], detailed: bool) -> str:
    rows = sorted(result.items())
    if detailed:  # minute bars: one line per trading day, then the last minutes
        days: dict[str, list] = {}
        for stamp, bar in rows:
            days.setdefault(stamp[:10], []).append((stamp, bar))
        lines = [f"{d}: open {number(b[0][1]['Open'])} high {number(max(x['High'] for _, x in b))} "
                 f"low {number(min(x['Low'] for _, x in b))} close {number(b[-1][1]['Close'])} "
                 f"volume {sum(x['Volume'] for _, x in b)} ({len(b)} minutes)" for d, b in days.items()]
        head = f"{len(rows)} one-minute bars over {len(days)} days (EST); per day:"
        tail = ["last minutes:"] + [_bar(s, b) for s, b in rows[-5:]]
        return "\n".join([head, *lines, *tail])
    head = f"{len(rows)} daily bars {rows[0][0][:10]}..{rows[-1][0][:10]}; latest last (date: open/high/low/close volume):"
    return "\n".join([head, *[_bar(s[:10], b) for s, b in rows[-15:]]])


def _bar(stamp: str, bar: dict) -> str:
    return (f"{stamp}: {number(bar.get('Open', 0))}/{number(bar.get('High', 0))}/{number(bar.get('Low', 0))}/"
            f"{number(bar.get('Close', 0))} {bar.get('Volume', '')}")


def _dividends(result: dict[str, float]) -> str:
    rows = sorted(result.items())
    shown = rows[-12:]
    head = f"{len(rows)} dividends {rows[0][0][:10]}..{rows[-1][0][:10]}" + (", latest 12" if len(rows) > 12 else "")
    return head + ": " + "; ".join(f"{d[:10]}: {number(v)}" for d, v in shown)


def _columns_to_rows(result: dict[str, dict]) -> list[dict[str, Any]]:
    """pandas column-oriented JSON -> rows; a non-numeric row key (soccer: league, season, team, game) is kept."""
    keys: list[str] = []
    for column in result.values():
        keys += [k for k in column if k not in keys]
    rows = []
    for k in keys:
        row = {c: result[c].get(k) for c in result}
        if not str(k).isdigit():
            row = {"game": str(k).strip("()").replace("'", ""), **row}
        rows.append(row)
    return rows


def _row_text(row: dict[str, Any]) -> str:
    first = [c for c in _TABLE_FIRST if c in row]
    ordered = first + sorted(c for c in row if c not in first)
    return "; ".join(f"{c}: {compact(row[c], 1)}" for c in ordered if row[c] not in (None, "") and c not in _TABLE_SKIP)


def _table(result: dict[str, dict], columns: tuple[str, ...] | None, cap: int) -> str:
    rows = _columns_to_rows(result)
    if columns:
        rows = [{c: r.get(c) for c in columns if c in r} for r in rows]
    lines = [_row_text(r) for r in rows]
    head = f"{len(rows)} rows:"
    if sum(len(line) + 1 for line in lines) <= cap or len(lines) <= 6:
        return "\n".join([head, *lines])
    first, last, budget = [], lines[-3:], cap - sum(len(x) + 1 for x in lines[-3:]) - 60
    for line in lines[:-3]:
        if budget - len(line) - 1 < 0:
            break
        first.append(line)
        budget -= len(line) + 1
    return "\n".join([head, *first, f"… ({len(lines) - len(first) - 3} rows not shown) …", *last])


def _entity(value: dict[str, Any]) -> dict[str, Any]:
    """A movie/person entity with its long lists reduced to what answers questions."""
    out = dict(value)
    if isinstance(out.get("cast"), list):
        out["cast"] = [f"{c.get('name')} as {c.get('character')}" for c in out["cast"][:8]]
    if isinstance(out.get("crew"), list):
        keep = [c for c in out["crew"] if c.get("job") in ("Director", "Screenplay", "Writer", "Producer", "Novel")]
        out["crew"] = [f"{c.get('name')} ({c.get('job')})" for c in keep[:6]]
    if isinstance(out.get("oscar_awards"), list):
        out["oscar_awards"] = [f"{a.get('year_ceremony')} {a.get('category')}: {a.get('name')}"
                               f"{' for ' + a['film'] if a.get('film') else ''} ({'won' if a.get('winner') else 'nominated'})"
                               for a in out["oscar_awards"]]
    out.pop("raw_mediawiki", None)
    return out


def _info(result: dict[str, Any]) -> str:
    first = [f"{k}: {compact(result[k], 1)}" for k in _INFO_FIRST if result.get(k) not in (None, "")]
    rest = [f"{k}: {compact(v, 1)}" for k, v in sorted(result.items())
            if k not in _INFO_FIRST and k not in _INFO_LAST and v not in (None, "", [], {})]
    return "; ".join(first + rest + [f"{k}: {compact(result[k], 1)}" for k in _INFO_LAST if result.get(k)])


def _body(endpoint: str, result: Any, cap: int) -> str:
    if result is None:
        return "no result (null)"
    if isinstance(result, list) and all(v in (None, []) for v in result):
        return "no match " + compact(result)
    if endpoint in ("finance_get_price_history", "finance_get_detailed_price_history") and isinstance(result, dict):
        return _prices(result, endpoint.endswith("detailed_price_history"))
    if endpoint == "finance_get_dividends_history" and isinstance(result, dict):
        return _dividends(result)
    if endpoint == "finance_get_info" and isinstance(result, dict):
        return _info(result)
    if endpoint == "open_get_entity" and isinstance(result, dict):
        text = str(result.get("summary_text") or "")[:800]
        return (text + "\n" + compact(result.get("summary_structured") or {})).strip()
    # A pandas table as {column: {row: value}}: named columns of one length (keys like dates hold rows instead).
    if (isinstance(result, dict) and result and all(isinstance(v, dict) for v in result.values())
            and len({len(v) for v in result.values()}) == 1 and not any(k[:2].isdigit() for k in result)):
        columns = _PLAY_COLUMNS if endpoint.endswith("play_by_play_data_by_game_ids") else None
        return _table(result, columns, cap)
    if isinstance(result, dict):
        return compact(_entity(result))
    if isinstance(result, list) and result and all(isinstance(v, dict) for v in result):
        return "\n".join(compact(_entity(v)) for v in result)
    return compact(result)


def render(endpoint: str, result: Any, cap: int = CAP) -> str:
    """A compact text of one endpoint's `result`, at most cap characters."""
    text = _body(endpoint, result, cap)
    return text if len(text) <= cap else text[: cap - 12].rstrip() + " …[cut]"
