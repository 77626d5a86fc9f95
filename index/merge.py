"""One article, one document: copies of an article across input files (same canonical title after redirects) are
merged at build time into the one a stated rule prefers (docs/indexes.md); the others' ids and titles lead to it."""
from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from frames_agent.index.corpus import Article
from frames_agent.retrieval.lucene.titles import canonical_title, normalize_title

# The embedded corpus's files, newest source first (Vital summaries, the shortest copies, last).
DEFAULT_PREFER = ("frames_linked_pages*", "enwiki2018_newpages*", "enwiki2015*", "ovos_vital_summaries*")
RULE = ("one document per canonical title (MediaWiki case, redirects followed): the file earliest in the --prefer "
        "order wins (files matching no pattern after those matching one), then the fullest text, then input order; "
        "XML dump pages come after JSONL inputs")

WRITE, EMPTY, REPEATED, COPY = "write", "empty", "repeated", "copy"


def file_rank(name: str, prefer: Sequence[str]) -> int:
    """Position of the first --prefer pattern (fnmatch) that names this file; len(prefer) when none does."""
    return next((n for n, pattern in enumerate(prefer) if fnmatch.fnmatchcase(name, pattern)), len(prefer))


class MergePlan:
    """Which document stands for each article (pass 1), and what pass 2 does with each document."""

    def __init__(self, files: Sequence[str], prefer: Sequence[str], redirects: Mapping[str, str],
                 keep_copies: bool = False) -> None:
        """files: input file names by number (JSONL first, then dumps); redirects: canonical alias -> target."""
        self.files, self.redirects, self.keep_copies = list(files), redirects, keep_copies
        self.ranks = [file_rank(name, prefer) for name in files]
        # canonical title -> (rank, -length, seq, id, title, file number) of the best document so far
        self.kept: dict[str, tuple[int, int, int, str, str, int]] = {}
        self.copies: list[tuple[str, str, str, int, int]] = []  # (canonical title, id, title, file number, seq)
        self.seen_ids: set[str] = set()
        self.repeated: set[int] = set()  # seqs of JSONL documents whose id repeats an earlier one (first kept)
        self._dropped: set[int] | None = None

    def offer(self, seq: int, file_no: int, article: Article) -> None:
        """Pass 1: the seq-th JSONL document (input order) of file file_no competes for its title."""
        if not article.text.strip() or article.redirect_to:
            return
        if article.id in self.seen_ids:
            self.repeated.add(seq)
            return
        self.seen_ids.add(article.id)
        key = canonical_title(article.title, self.redirects)
        if not key:  # no title, nothing to merge by: an article of its own
            return
        entry = (self.ranks[file_no], -len(article.text), seq, article.id, article.title, file_no)
        best = self.kept.setdefault(key, entry)
        if best is not entry:
            loser = max(best, entry)
            self.kept[key] = min(best, entry)
            self.copies.append((key, loser[3], loser[4], loser[5], loser[2]))

    def judge(self, article: Article, file_no: int, seq: int | None = None) -> str:
        """Pass 2's verdict (WRITE, EMPTY, REPEATED, COPY) on a JSONL document (its pass-1 seq) or a dump page."""
        if not article.text.strip():
            return EMPTY
        if seq is not None:
            if self._dropped is None:
                self._dropped = set() if self.keep_copies else {copy[4] for copy in self.copies}
            return REPEATED if seq in self.repeated else COPY if seq in self._dropped else WRITE
        if article.id in self.seen_ids:
            return REPEATED
        self.seen_ids.add(article.id)
        key = canonical_title(article.title, self.redirects)
        if key and key in self.kept:
            self.copies.append((key, article.id, article.title, file_no, -1))
            return WRITE if self.keep_copies else COPY
        if key:
            self.kept[key] = (self.ranks[file_no], 0, -1, article.id, "", file_no)
        return WRITE

    def aliases(self) -> dict[str, str]:
        """Copy id -> the id of the document kept for its article."""
        return {copy_id: self.kept[key][3] for key, copy_id, _, _, _ in self.copies if copy_id != self.kept[key][3]}

    def copy_titles(self) -> list[tuple[str, str]]:
        """(a copy's title, the id of the document kept for its article), for the title table."""
        return [(title, self.kept[key][3]) for key, _, title, _, _ in self.copies if title]

    def summary(self) -> dict:
        """The manifest's record of the merge: copies, titles with copies, copies per input file, the rule."""
        by_file = Counter(self.files[file_no] for _, _, _, file_no, _ in self.copies)
        return {"copies": len(self.copies), "titles": len({copy[0] for copy in self.copies}),
                "dropped_by_file": {} if self.keep_copies else dict(sorted(by_file.items())),
                "kept_copies": self.keep_copies, "rule": RULE}


def title_rows(articles: Iterable[tuple[str, str, int, int, bool]], copy_titles: Iterable[tuple[str, str]],
               redirects: Mapping[str, str]) -> tuple[list[tuple[str, str, int]], int]:
    """Title-table rows and how many redirects joined it; articles: (title, id, units, length, is a kept copy)."""
    # A title's first row is the article it names (a preferred document before a kept copy, then the fullest); a
    # copy's title and a redirect join their article's row unless an article has that title.
    keyed = ((normalize_title(title), is_copy, -length, article_id, units)
             for title, article_id, units, length, is_copy in articles)
    ranked = sorted(row for row in keyed if row[0])
    rows = [(key, article_id, units) for key, _, _, article_id, units in ranked]
    first: dict[str, tuple[str, int]] = {}
    for key, article_id, units in rows:
        first.setdefault(key, (article_id, units))
    units_of = {article_id: units for _, article_id, units in rows}
    extra = {normalize_title(title): (kept, units_of[kept]) for title, kept in copy_titles if kept in units_of}
    extra = {key: value for key, value in extra.items() if key and key not in first}
    joined = {key: first[target] for key, target in redirects.items()
              if key and key not in first and key not in extra and target in first}
    rows += [(key, *value) for key, value in sorted({**extra, **joined}.items())]
    return rows, len(joined)
