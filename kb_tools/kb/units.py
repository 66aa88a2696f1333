"""The places a page states something: each sentence, list item, table row (with its header
row in front, so a cell is read under its column name) and code line, with its line. Registered
values are judged one place at a time, so that a number in one sentence never vouches for a
term in the next."""

from __future__ import annotations

import re

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(*`\[\u4e00-\u9fff])|(?<=[。；！？])")


def units(text: str, *, python: bool = False) -> list[tuple[int, str]]:
    """(line offset, text) of each sentence, list item, table row (with its header row
    prefixed) and code line of ``text``; HTML comments blanked."""
    text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out: list[tuple[int, str]] = []
    para: list[tuple[int, str]] = []
    header, fenced = None, False

    def flush():
        if para:
            out.extend(sentences(para))
            para.clear()

    for i, raw in enumerate(text.splitlines()):
        line = raw.strip()
        if python:
            if not line.startswith("#"):
                flush()
                if line:
                    out.append((i, line))
                continue
            line = line.lstrip("#").strip()
            if line.startswith("%%"):
                flush()
                continue
        if line.startswith("```"):
            flush()
            fenced = not fenced
            continue
        if fenced:
            if line:
                out.append((i, line))
            continue
        if line.startswith("|"):
            flush()
            if set(line) <= set("|-: "):
                continue
            out.append((i, line if header is None else f"{header} {line}"))
            header = header or line
            continue
        header = None
        if not line or line.startswith(("- ", "* ", "#", ">")) or re.match(r"\d+[.)] ", line):
            flush()
        if line:
            para.append((i, line))
    flush()
    return out


def sentences(para: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """(line, sentence) of a paragraph given as (line, text) pairs; a sentence is reported on
    the line where it starts."""
    joined, starts = "", []
    for i, line in para:
        starts.append((len(joined), i))
        joined += line + " "
    cuts = [0, *(m.end() for m in _SENTENCE_END.finditer(joined)), len(joined)]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        piece = joined[a:b]
        if piece.strip():
            begin = a + len(piece) - len(piece.lstrip())
            out.append((max(i for offset, i in starts if offset <= begin), piece.strip()))
    return out
