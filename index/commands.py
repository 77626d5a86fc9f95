"""CLI subcommands: `index build`, `index dense`, `index list` and `search`."""
from __future__ import annotations

import argparse
import json
import re
import sys

PREVIEW_CHARS = 300


def register(sub: argparse._SubParsersAction) -> None:
    """Add this package's subcommands to the CLI."""
    index = sub.add_parser("index", help="build and list BM25 indexes")
    index_sub = index.add_subparsers(dest="index_command", required=True)

    build = index_sub.add_parser("build", help="build a Lucene BM25 index (no arguments: the embedded default)")
    build.add_argument("--corpus", action="extend", nargs="+", default=[], metavar="PATH",
                       help="JSONL / JSONL.gz files of {id, title, contents}, or directories of them")
    build.add_argument("--xml", action="extend", nargs="+", default=[], metavar="DUMP",
                       help="MediaWiki XML dumps (.xml or .xml.bz2), e.g. enwiki-latest-pages-articles.xml.bz2")
    build.add_argument("--unit", choices=("article", "passage"), default="article",
                       help="one document per article, or ~100-word passages (default: article)")
    build.add_argument("--name", help="index name (default: 'default', or derived from the first input file)")
    build.add_argument("--threads", type=_positive_int, default=2, help="indexing threads (default: 2)")
    build.add_argument("--force", action="store_true", help="rebuild even if an up-to-date index exists")
    build.add_argument("--prefer", action="append", metavar="PATTERN",
                       help="copies of one article (same title after redirects) in several files: keep the one "
                            "from the file whose name matches the earliest --prefer pattern (fnmatch; repeatable; "
                            "unmatched files rank last; then the fullest text wins). Default: the embedded "
                            "corpus's order, frames_linked_pages, enwiki2018_newpages, enwiki2015, ovos summaries")
    build.add_argument("--keep-copies", action="store_true",
                       help="index every copy as a document of its own (searches still give one hit per article)")
    build.set_defaults(handler=run_build)

    dense = index_sub.add_parser("dense", help="build the dense (MiniLM) vectors that hybrid search fuses with BM25",
                                 description="Encodes each unit's title and lead with all-MiniLM-L6-v2 (shipped on "
                                             "PyPI) into the cache; resumes where an interrupted build stopped. Then "
                                             "--set dense_weight=1 makes frames/ask/compare search BM25 + dense.")
    dense.add_argument("--index", default="default", metavar="NAME_OR_DIR",
                       help="index name or directory (default: the embedded index)")
    dense.set_defaults(handler=run_dense)

    listing = index_sub.add_parser("list", help="list the indexes under the index directory")
    listing.set_defaults(handler=run_list)

    search = sub.add_parser("search", help="BM25 search of an index (builds the default index on first use)")
    search.add_argument("query", help="plain-text query (Lucene syntax characters are treated as text)")
    search.add_argument("--index", default="default", metavar="NAME_OR_DIR",
                        help="index name, directory, or pyserini prebuilt name (default: default)")
    search.add_argument("-k", type=_positive_int, default=10, help="number of hits (default: 10)")
    search.add_argument("--json", action="store_true", help='print a JSON list of {"id","title","score","text"}')
    search.set_defaults(handler=run_search)


def run_build(args: argparse.Namespace) -> int:
    """Build (or reuse) an index and print where it is."""
    from frames_agent.index.build import build_named, finished_manifest, make_spec

    spec = make_spec(args.corpus, args.xml, args.unit, prefer=args.prefer, keep_copies=args.keep_copies)
    name = args.name or default_index_name(args.corpus + args.xml, args.unit)
    path = build_named(spec, name, threads=args.threads, force=args.force, progress=True)
    manifest = finished_manifest(path) or {}
    print(f"index {name}: {manifest.get('docs')} {args.unit} docs from {manifest.get('articles')} articles at {path}")
    merged = manifest.get("merged") or {}
    if merged.get("copies"):
        done = "kept as documents of their own" if merged.get("kept_copies") else "merged into the article kept"
        by_file = ", ".join(f"{n} from {name}" for name, n in (merged.get("dropped_by_file") or {}).items())
        print(f"copies: {merged['copies']} of {merged['titles']} titles {done}" + (f" ({by_file})" if by_file else ""))
    empty, repeats = manifest.get("skipped_empty") or 0, manifest.get("skipped_duplicates") or 0
    if empty or repeats:
        print(f"note: skipped {empty} article(s) without text and {repeats} repeating an earlier id (first kept)",
              file=sys.stderr)
    return 0


def run_dense(args: argparse.Namespace) -> int:
    """Build (or resume, or reuse) an index's dense vectors and print where they are."""
    from frames_agent.index.build import open_index
    from frames_agent.retrieval.dense import build_for_index
    from frames_agent.retrieval.dense.store import finished

    with open_index(args.index, threads=1) as retriever:
        path = build_for_index(retriever)
    print(f"dense index of {args.index}: {(finished(path) or {}).get('docs')} units at {path}")
    return 0


def default_index_name(inputs: list[str], unit: str) -> str:
    """'default' for the embedded corpus, else the first input's file name without extensions."""
    suffix = "-passage" if unit == "passage" else ""
    if not inputs:
        return f"default{suffix}"
    stem = re.sub(r"(\.(gz|bz2|jsonl|json|xml))+$", "", str(inputs[0]).rstrip("/").rsplit("/", 1)[-1])
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._") or "corpus"
    return f"{stem}{suffix}"


def run_list(args: argparse.Namespace) -> int:
    """Print one line per index: name, unit, documents and content id (or why it cannot be used)."""
    from frames_agent.core.errors import RetrievalError
    from frames_agent.core.paths import indexes_dir
    from frames_agent.retrieval.lucene.layout import known_index_names, read_manifest

    names = known_index_names()
    if not names:
        print(f"no indexes in {indexes_dir()} (build one with: python cli.py index build)")
    for name in names:
        try:
            manifest = read_manifest(indexes_dir() / name)
            state = (f"{manifest['unit']:8} {manifest['docs']:>9} docs  content {manifest.get('content_id')}"
                     f"{_copies_note(manifest.get('merged') or {})}" if manifest else "not finished (rebuild with --force)")
        except RetrievalError as exc:
            state = str(exc)
        print(f"{name:30} {state}")
    return 0


def _copies_note(merged: dict) -> str:
    if not merged.get("copies"):
        return ""
    return f"  {merged['copies']} copies {'kept' if merged.get('kept_copies') else 'merged'}"


def run_search(args: argparse.Namespace) -> int:
    """Search one index and print the hits."""
    from frames_agent.core.terminal import plain
    from frames_agent.index.build import open_index
    from frames_agent.retrieval.lucene.searcher import check_query

    check_query(args.query)  # fail before building or opening anything
    with open_index(args.index, threads=1) as retriever:
        docs = retriever.search(args.query, args.k)
    if args.json:
        rows = [{"id": d.id, "title": d.title, "score": round(d.score, 4), "text": preview(d.text)} for d in docs]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not docs:
        print("no matching documents")
    for rank, d in enumerate(docs, start=1):
        print(plain(f"{rank:2}. {d.score:7.3f}  {d.id}  {d.title} | {preview(d.text, 100)}", lines=False))
    return 0


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """Text on one line, cut to about limit characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit].rsplit(" ", 1)[0] + " …"


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return number
