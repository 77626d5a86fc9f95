"""Index building: corpus readers (JSONL of {id, title, contents}, MediaWiki XML dumps) and BM25 Lucene builds with
an atomic swap and a manifest."""
from frames_agent.core.version import __version__
from frames_agent.index.build import build_named, ensure_index, open_index

__all__ = ["__version__", "build_named", "ensure_index", "open_index"]
