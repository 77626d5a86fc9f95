"""Hybrid search (BM25 + dense, RRF) against BM25 alone on the default index, and the dense build's encoding rate
against raw sentence-transformers. Needs `python cli.py index dense`."""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.retrieval import BATCH, QUERIES  # noqa: E402

HYBRID_TARGET, ENCODE_TARGET = 10.0, 1.2


def p50_batch(retriever, k: int, rounds: int) -> float:
    """Median seconds of one batch_search of BATCH queries."""
    times = []
    for _ in range(rounds):
        for i in range(0, len(QUERIES), BATCH):
            start = time.perf_counter()
            retriever.batch_search(QUERIES[i:i + BATCH], k)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def encode_rates(retriever, encoder, units: int) -> tuple[float, float]:
    """(ours, raw) units/s encoding the same unit texts."""
    from frames_agent.retrieval.dense import unit_text

    docs = [d for _, d in zip(range(units), retriever.iter_documents())]
    texts = [unit_text(d.title, d.text, encoder.max_tokens) for d in docs]
    encoder.encode(texts[:8])  # load the model outside the timing
    start = time.perf_counter()
    encoder.encode(texts)
    ours = len(texts) / (time.perf_counter() - start)
    model = encoder._load()
    start = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True)
    raw = len(texts) / (time.perf_counter() - start)
    return ours, raw


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="default")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--weight", type=float, default=0.5)
    parser.add_argument("--units", type=int, default=1024)
    args = parser.parse_args(argv)
    from frames_agent.index.build import open_index
    from frames_agent.retrieval.dense import open_hybrid

    bm25 = open_index(args.index)
    hybrid = open_hybrid(bm25, args.weight)
    hybrid.batch_search(QUERIES[:BATCH], args.k)  # warm both sides (model load, page cache)
    bm25.batch_search(QUERIES[:BATCH], args.k)
    lexical, fused = p50_batch(bm25, args.k, args.rounds), p50_batch(hybrid, args.k, args.rounds)
    ratio = fused / lexical
    print(f"batch of {BATCH}, k={args.k}: BM25 p50 {lexical * 1000:.1f} ms | hybrid p50 {fused * 1000:.1f} ms | "
          f"ratio {ratio:.2f} (target <= {HYBRID_TARGET}) {'OK' if ratio <= HYBRID_TARGET else 'MISSED'}")
    ours, raw = encode_rates(bm25, hybrid.encoder, args.units)
    slower = raw / ours
    print(f"encoding {args.units} units: ours {ours:.1f}/s | sentence-transformers {raw:.1f}/s | ratio {slower:.2f} "
          f"(target <= {ENCODE_TARGET}) {'OK' if slower <= ENCODE_TARGET else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
