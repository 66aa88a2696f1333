"""Free-text search of the KB: ask in English, Chinese, both, or paste an error message.

tokens: words to index tokens; index: the cached SQLite FTS5 index of pages, tasks and
glossary; rank: BM25 with glossary expansion; answer: what ``kbt route`` asks of them.
"""
