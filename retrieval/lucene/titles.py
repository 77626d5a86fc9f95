"""Titles: the comparable and the canonical form of a title, and an index's title table and copy aliases on disk."""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from frames_agent.core.bounded import OutOfBounds, regular_file
from frames_agent.core.errors import RetrievalError

TITLES_FILE = "titles.tsv"  # normalised title \t article id \t units; a title's first row is its article
ALIASES_FILE = "aliases.tsv"  # copy id \t kept id: documents merged into another article at build time
_MAX_LINE = 64 * 1024  # a title, an id and a count; longer is a damaged (or endless) file
_MAX_HOPS = 8  # redirect chains longer than this are cut (and cycles end) rather than followed forever


def title_text(title: str) -> str:
    """A title or wiki URL as text: URL-decoded, no link prefix or #fragment, underscores as spaces, NFC; case kept."""
    text = unquote(str(title)).strip()
    if "/wiki/" in text:  # a full https://en.wikipedia.org/wiki/... link
        text = text.rsplit("/wiki/", 1)[1]
    text = text.split("#", 1)[0].replace("_", " ")
    return " ".join(unicodedata.normalize("NFC", text).split())


def normalize_title(title: str) -> str:
    """Comparable form of a title or wiki URL: URL-decoded, underscores as spaces, case-folded."""
    return title_text(title).casefold()


def canonical_title(title: str, redirects: Mapping[str, str] | None = None) -> str:
    """An article's identity: title_text with MediaWiki's upper-case first letter, followed through redirects."""
    text = title_text(title)
    text = text[:1].upper() + text[1:]
    for _ in range(_MAX_HOPS):
        target = (redirects or {}).get(text)
        if not target or target == text:
            break
        text = target
    return text


def canonical_redirects(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """alias -> target pairs (e.g. from redirects.tsv) keyed and valued by canonical_title, for canonical_title."""
    found = {canonical_title(alias): canonical_title(target) for alias, target in pairs}
    return {alias: target for alias, target in found.items() if alias and target and alias != target}


@dataclass
class TitleTable:
    """An index's title table: normalised title -> article id, units per article id, copy id -> kept id."""

    titles: dict[str, str] = field(default_factory=dict)
    units: dict[str, int] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)


def write_title_table(index_dir: Path, rows: Iterable[tuple[str, str, int]], aliases: Mapping[str, str]) -> None:
    """Write titles.tsv from (normalised title, article id, units) rows and aliases.tsv (copy id -> kept id)."""
    index_dir.mkdir(parents=True, exist_ok=True)
    # For a repeated title the first row wins; aliases are sorted for stable bytes.
    with (index_dir / TITLES_FILE).open("w", encoding="utf-8") as titles, \
            (index_dir / ALIASES_FILE).open("w", encoding="utf-8") as copies:
        titles.writelines(f"{key}\t{article_id}\t{count}\n" for key, article_id, count in rows)
        copies.writelines(f"{copy}\t{kept}\n" for copy, kept in sorted(aliases.items()))


def read_title_table(index_dir: Path) -> TitleTable | None:
    """The title table of one of our indexes (None without titles.tsv); a damaged file is a RetrievalError."""
    if not (index_dir / TITLES_FILE).exists():
        return None
    table = TitleTable()
    for where, (key, article_id, count) in _rows(index_dir, TITLES_FILE, 3):
        if not (count.isascii() and count.isdigit() and len(count) < 16):
            raise _corrupt(index_dir, f"{where}: units {count!r} is not a number")
        table.titles.setdefault(key, article_id)
        table.units[article_id] = int(count)
    if (index_dir / ALIASES_FILE).exists():
        table.aliases = {copy: kept for _, (copy, kept) in _rows(index_dir, ALIASES_FILE, 2)}
    return table


def _rows(index_dir: Path, name: str, width: int) -> Iterable[tuple[str, list[str]]]:
    try:
        regular_file(index_dir / name)
        with (index_dir / name).open(encoding="utf-8") as handle:
            # Lines read at most _MAX_LINE characters at a time: a file with no line end costs that, not all memory.
            for number, line in enumerate(iter(lambda: handle.readline(_MAX_LINE + 1), ""), start=1):
                if len(line) > _MAX_LINE:
                    raise _corrupt(index_dir, f"{name}:{number}: a line over {_MAX_LINE:,} characters")
                row = line.rstrip("\n").split("\t")
                if len(row) != width or not all(row[1:]):
                    raise _corrupt(index_dir, f"{name}:{number}: expected {width} tab-separated fields")
                yield f"{name}:{number}", row
    except OutOfBounds as exc:
        raise _corrupt(index_dir, str(exc)) from None
    except UnicodeDecodeError as exc:
        raise _corrupt(index_dir, f"{name} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise _corrupt(index_dir, f"unreadable {name} ({exc.strerror or exc})") from None


def _corrupt(index_dir: Path, detail: str) -> RetrievalError:
    return RetrievalError(f"corrupt index {index_dir}: {detail}; rebuild it with --force")
