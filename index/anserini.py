"""Anserini's IndexCollection, run on a Java thread with a progress bar."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

from frames_agent.index.errors import CorpusError


def run_anserini(collection: Path, index_dir: Path, total: int, threads: int, progress: bool,
                 fields: tuple[str, ...] = ()) -> int:
    """Run Anserini's IndexCollection on a Java thread while a progress bar polls its counters; `fields` are JSON
    fields indexed (and searchable) on their own besides contents."""
    from tqdm import tqdm

    from frames_agent.retrieval.lucene.jvm import start_jvm

    start_jvm()
    from jnius import autoclass

    args = autoclass("io.anserini.index.IndexCollection$Args")()
    # jnius cannot assign a String[] field (-fields), so every option goes through Anserini's own parser.
    argv = autoclass("java.util.ArrayList")()
    for arg in ("-input", str(collection), "-index", str(index_dir), "-collection", "JsonCollection",
                "-generator", "DefaultLuceneDocumentGenerator", "-threads", str(max(1, threads)), "-storePositions",
                "-storeRaw", "-optimize", "-quiet", *(("-fields", *fields) if fields else ())):
        argv.add(arg)
    autoclass("org.kohsuke.args4j.CmdLineParser")(args).parseArgument(argv)
    indexer = autoclass("io.anserini.index.IndexCollection")(args)
    counters = indexer.getCounters()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            indexer.run()
        except BaseException as exc:  # reported on the calling thread
            failure.append(exc)

    worker = threading.Thread(target=run, name="anserini-index", daemon=True)
    with tqdm(total=total, unit="doc", desc="indexing", disable=not progress, file=sys.stderr,
              mininterval=0.1 if sys.stderr.isatty() else 30.0) as bar:
        worker.start()
        while worker.is_alive():
            worker.join(0.25)
            bar.update(int(counters.indexed.get()) - bar.n)
            if bar.n >= total:  # Anserini then merges segments, which takes a while on big corpora
                bar.set_description("indexing (merging segments)", refresh=False)
    if failure:
        raise CorpusError(f"Anserini indexing failed: {str(failure[0]).strip().splitlines()[0]}")
    indexed = int(counters.indexed.get())
    if indexed != total:
        raise CorpusError(f"Anserini indexed {indexed} of {total} documents "
                          f"(errors {counters.errors.get()}, unindexable {counters.unindexable.get()})")
    return indexed
