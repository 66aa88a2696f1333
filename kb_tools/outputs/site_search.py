"""The site's search language: Sphinx indexes each page with kb_tools.search.tokens, the
tokens ``kbt route`` uses, and the search page splits a query with tokens.js, its browser
copy. So Chinese is found by character pairs (精度 inside 精度对不齐), an error code or API
name is one whole word (561103, vf.exp), and English is stemmed the same way on both sides.

Sphinx's search page drops a query word made only of digits, so a number is indexed and
asked as ``#561103``. Loaded as a Sphinx extension by the site's conf.py.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.search import SearchLanguage

from kb_tools.search.tokens import tokens

TOKENS_JS = Path(__file__).resolve().parent.parent / "search" / "tokens.js"


def _shown(token: str) -> str:
    return f"#{token}" if token.isdigit() else token


class SearchOpkb(SearchLanguage):
    lang = "opkb"
    language_name = "English and Chinese (opkb tokens)"
    stopwords: set[str] = set()  # tokens() has dropped them already
    js_stemmer_code = "function Stemmer() { this.stemWord = (w) => w; }"  # tokens are stemmed by the splitter

    def __init__(self, options: dict) -> None:
        super().__init__(options)
        self.js_splitter_code = TOKENS_JS.read_text(encoding="utf-8")

    def split(self, input: str) -> list[str]:
        return [_shown(t) for t in tokens(input)]

    def stem(self, word: str) -> str:
        return word

    def word_filter(self, word: str) -> bool:
        return bool(word)


def setup(app):
    from sphinx import search

    search.languages["opkb"] = SearchOpkb
    return {"parallel_read_safe": True, "parallel_write_safe": True}
