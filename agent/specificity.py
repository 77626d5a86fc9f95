"""How specific a title is: how many of the index's units hold it as a phrase in their text (a Lucene phrase count).

"United States" is in 12,804 of the embedded index's 74,467 articles, "Census" in 2,248, "Treaty of Versailles" in 178,
"Punxsutawney Phil" in 1: the proposer's specificity ranking (AgentConfig.proposer_rank) prefers the rare ones and
never proposes hubs. A count is one Lucene `count` of a phrase query on the body field (~1-40 ms), memoised.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

BODY_FIELD = "contents"
_MEMO_LIMIT = 200_000


class PhraseCounts:
    """Units of a Lucene index whose body holds a phrase, analysed as the index was (Anserini's default English
    analyzer: stop words dropped, Porter stems)."""

    def __init__(self, index_dir: str | Path) -> None:
        from frames_agent.retrieval.lucene.jvm import java_lock, start_jvm

        start_jvm()
        from jnius import autoclass, cast

        self._lock = java_lock()
        with self._lock:
            path = autoclass("java.io.File")(str(index_dir)).toPath()
            directory = autoclass("org.apache.lucene.store.FSDirectory").open(path)
            self._reader = autoclass("org.apache.lucene.index.DirectoryReader").open(directory)
            self._searcher = autoclass("org.apache.lucene.search.IndexSearcher")(
                cast("org.apache.lucene.index.IndexReader", self._reader))
            self._parser_class = autoclass("org.apache.lucene.queryparser.classic.QueryParser")
            analyzer = autoclass("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()
            self._parser = self._parser_class(BODY_FIELD, analyzer)
            self.total = int(self._reader.numDocs())
        self._memo: dict[str, int | None] = {}
        self._memo_lock = threading.Lock()

    def __call__(self, phrase: str) -> int | None:
        """Units holding the phrase; None when it has no indexed word (stop words, punctuation)."""
        key = " ".join(phrase.split())
        with self._memo_lock:
            if key in self._memo:
                return self._memo[key]
        count = self._count(key)
        with self._memo_lock:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = count
        return count

    def _count(self, phrase: str) -> int | None:
        if not any(c.isalnum() for c in phrase):
            return None
        from jnius import JavaException

        with self._lock:
            try:
                query = self._parser.parse('"' + self._parser_class.escape(phrase) + '"')
                return int(self._searcher.count(query)) if query.toString().strip() else None
            except JavaException:  # nothing the parser can read: not countable, so never preferred
                return None

    def close(self) -> None:
        """Release the Lucene reader."""
        with self._lock:
            self._reader.close()


def phrase_counts(retriever: Any) -> PhraseCounts | None:
    """Phrase counts over a retriever's Lucene index (a BM25Retriever, or a hybrid one around it); None for a
    retriever without one (a LangChain retriever, a test fake)."""
    inner = getattr(retriever, "bm25", retriever)
    index_dir = getattr(inner, "index_dir", None)
    if index_dir is None or not Path(index_dir).is_dir():
        return None
    return PhraseCounts(index_dir)
