"""Words to index tokens, the same way for a page and for a question.

Chinese is written without spaces, so a run of Chinese (or other CJK) characters becomes
its overlapping character pairs: 精度对不齐 -> 精度 度对 对不 不齐, and a question that
contains any part of a phrase finds it, whatever the question's own segmentation (no
dictionary, nothing to load). An identifier — an error code, an API or file name, anything with a digit, a dot, an
underscore or an inner capital — stays one whole token (``561103``, ``vf.exp``,
``torch.npu.synchronize``), so it matches only itself; its pieces are added as words too,
so that ``exp`` or ``synchronize`` still finds it. English words are lower-cased, stripped
of a few inflections and of words that carry no topic.
"""

from __future__ import annotations

import re

# A run of letters outside ASCII, or an ASCII word or dotted identifier. (A class spelled
# with the Han ranges would cost a millisecond to compile on every start-up; \W does not.)
# An English contraction is one word (doesn't, it's), so its ending is never a word of its own.
WORD = re.compile(r"[^\W\d_A-Za-z]+|[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*(?:['\u2019][A-Za-z]+)?")
_APOSTROPHE = re.compile(r"['\u2019]")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

STOP_WORDS = frozenset(
    "a an and are as at be been but by can could do does did for from had has have how i if in into is it its "
    "me my no not of on or our should so than that the their them then there these they this those to too us "
    "was we were what when where which while who why will with would you your also any each may must only "
    "get got use used using just".split()
    # what a contraction leaves before its apostrophe: doesn't, isn't, can't, won't ...
    + "doesn isn aren wasn weren don didn won couldn shouldn wouldn hasn haven hadn".split()
)
# Pairs made of question words and particles; they say nothing about the topic.
STOP_PAIRS = frozenset("怎么 什么 为什么 如何 是否 可以 吗 呢 的 了 一个 哪个 哪些 应该 需要 是不 不是 怎样 么办".split())


def stem(word: str) -> str:
    """A light English stemmer: plural and -ing/-ed endings, enough that 'casts', 'casting'
    and 'cast' meet. Page and question go through the same function, so it need only be
    consistent, not linguistically right."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "ses", "xes", "ches", "shes")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "as")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    return word


def is_identifier(word: str) -> bool:
    return any(c.isdigit() or c in "._" for c in word) or any(c.isupper() for c in word[1:])


def is_cjk(char: str) -> bool:
    """Han (with its extension A and compatibility ideographs), kana or Hangul: scripts
    written without spaces between words."""
    return "\u3040" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff" or "\uac00" <= char <= "\ud7af"


def _pairs(run: str) -> list[str]:
    if len(run) == 1:
        return [] if run in STOP_PAIRS else [run]
    return [p for p in (run[i:i + 2] for i in range(len(run) - 1)) if p not in STOP_PAIRS]


def word_tokens(word: str) -> list[str]:
    """The index tokens of one word as WORD finds it."""
    if "'" in word or "\u2019" in word:  # a contraction: its stem, without the ending (doesn't -> doesn)
        word = _APOSTROPHE.split(word, 1)[0]
    if not word.isascii():  # letters outside ASCII: pairs of each CJK stretch, other letters whole
        out, start = [], 0
        for i in range(1, len(word) + 1):
            if i == len(word) or is_cjk(word[i]) != is_cjk(word[start]):
                stretch = word[start:i]
                out.extend(_pairs(stretch) if is_cjk(stretch[0]) else [stretch.lower()])
                start = i
        return out
    lower = word.lower()
    if not is_identifier(word):
        return [] if lower in STOP_WORDS else [stem(lower)]
    out = [lower]
    for part in re.split(r"[._]", word):
        for piece in _CAMEL.findall(part) if part else ():
            piece = piece.lower()
            if len(piece) > 1 and not piece.isdigit() and piece not in STOP_WORDS and stem(piece) != lower:
                out.append(stem(piece))
    return out


def key_tokens(word: str) -> list[str]:
    """The tokens that stand for the word itself: an identifier's whole token, not its
    pieces (a glossary entry is named by ``aclnnInplaceCopy``, not by its ``inplace``)."""
    toks = word_tokens(word)
    return toks[:1] if is_identifier(word) else toks


def key_tokens_of(text: str) -> list[str]:
    """The key tokens of every word of ``text``: how a glossary name is recognised in a question."""
    return [t for w in WORD.findall(text) for t in key_tokens(w)]


def tokens(text: str) -> list[str]:
    """Every index token of ``text``, in order, repeats kept (term frequency counts)."""
    return [t for w in WORD.findall(text) for t in word_tokens(w)]
