"""The repository index: languages, chunker, summarizer, embedder, indexer."""
