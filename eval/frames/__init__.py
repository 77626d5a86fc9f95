"""FRAMES evaluation: datasets, the paper's systems (multistep, naive, BM25-R, oracle), the autorater, runs and reports."""
