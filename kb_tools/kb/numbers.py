"""Numbers read as numbers, so that a registered value and a page's restatement compare by
value and not as substrings: ``50 %`` equals ``0.5``, ``192 KiB`` equals ``196,608 B``,
``2^16`` equals ``65536``, ``8 * 1024`` equals ``8192``, ``four`` equals ``4``, ``四次`` equals ``4``, ``8.5.2`` is a version,
``13/13`` a count and ``16/8/4/2`` a sequence.

Each number is a set of keys; two numbers are equal when their sets meet (``192 KiB`` carries
both 192 and its bytes, so ``UB of 192 KiB`` agrees with ``UB = 196,608 B``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "forty": 40, "fifty": 50, "hundred": 100,
          "twice": 2, "quarter": Fraction(1, 4)}  # not half or double: they are also C type names
_ZH = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_SCALE = {"kib": 1024, "kb": 1024, "k": 1024, "mib": 1024 ** 2, "mb": 1024 ** 2, "gib": 1024 ** 3, "gb": 1024 ** 3}
_DEC = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_TOKEN = re.compile(
    r"(?P<pow>2\s*(?:\^|\*\*)\s*(?P<exp>\d+))"
    r"|(?P<prod>(?P<a>\d+)\s*\*\s*(?P<b>\d+)(?!\s*\*))"
    r"|(?P<ver>\d+(?:\.\d+){2,}(?:\.?rc\d+)?|\d+\.\d+\.?rc\d+)"
    r"|(?P<seq>\d+(?:/\d+){2,})"
    r"|(?P<count>(?P<num>\d+)\s*/\s*(?P<den>\d+))"
    r"|(?P<ratio>(?P<left>\d+):(?P<right>\d+))"
    rf"|(?P<dec>(?:{_DEC})(?:e[-+]?\d+)?)(?P<pct>\s*%)?(?:\s*(?P<unit>kib|mib|gib|kb|mb|gb)\b)?"
    r"|(?P<word>\b(?:" + "|".join(_WORDS) + r")\b)"
    r"|(?P<zh>[一二两三四五六七八九十]+)(?=[个次种条项步级位倍核])",
    re.I,
)
_STRICT_BEFORE = re.compile(r"[A-Za-z0-9_.]")  # ASCII only: 为16 and 是0.5 are numbers
_STRICT_AFTER = re.compile(r"[A-Za-z0-9_]")


@dataclass(frozen=True)
class Number:
    start: int
    end: int
    text: str
    keys: frozenset

    def equals(self, other: "Number") -> bool:
        return bool(self.keys & other.keys)


def numbers(text: str, *, strict: bool = True) -> list[Number]:
    """The numbers of ``text``, in order. ``strict`` skips digits glued to a word (fp16, C0,
    int8, v2); the seeds' text, which lost its punctuation (``C016``), is read with it off."""
    found = []
    for m in _TOKEN.finditer(text):
        if m.group("word") is None and m.group("zh") is None and strict:
            before = text[m.start() - 1:m.start()]
            after = text[m.end():m.end() + 1]
            if (before and _STRICT_BEFORE.match(before)) or (after and _STRICT_AFTER.match(after) and not m.group("unit")):
                continue
        keys = _keys(m)
        if keys:
            found.append(Number(m.start(), m.end(), m.group(0), frozenset(keys)))
    return found


def parse_value(text) -> Number:
    """The one number a registered value holds; ValueError when it holds none or several."""
    found = numbers(str(text))
    if len(found) != 1 or found[0].text.strip() != str(text).strip():
        raise ValueError(f"{text!r} is not one number")
    return found[0]


def _keys(m: re.Match) -> set:
    if m.group("pow"):
        return {("n", Fraction(2) ** int(m.group("exp")))}
    if m.group("prod"):
        a, b = int(m.group("a")), int(m.group("b"))
        return {("n", Fraction(a * b))} | ({("n", Fraction(a))} if b == 1024 else set())  # 192 * 1024 is 192 KiB
    if m.group("ver"):
        return {("v", m.group("ver").lower().replace(".rc", "rc"))}
    if m.group("seq"):
        return {("s", tuple(int(x) for x in m.group("seq").split("/")))}
    if m.group("count"):
        return {("c", int(m.group("num")), int(m.group("den")))}
    if m.group("ratio"):
        return {("r", int(m.group("left")), int(m.group("right")))}
    if m.group("word"):
        return {("n", Fraction(_WORDS[m.group("word").lower()]))}
    if m.group("zh"):
        return {("n", Fraction(_zh(m.group("zh"))))} if _zh(m.group("zh")) else set()
    value = Fraction(m.group("dec").replace(",", ""))
    if m.group("pct"):
        return {("n", value / 100)}
    keys = {("n", value)}
    if m.group("unit"):
        keys.add(("n", value * _SCALE[m.group("unit").lower()]))
    return keys


def _zh(text: str) -> int:
    """十 = 10, 十六 = 16, 二十 = 20, 四 = 4; anything longer is not a count we read."""
    if len(text) == 1:
        return _ZH[text]
    if len(text) == 2 and text[0] == "十":
        return 10 + _ZH[text[1]]
    if len(text) == 2 and text[1] == "十":
        return _ZH[text[0]] * 10
    if len(text) == 3 and text[1] == "十":
        return _ZH[text[0]] * 10 + _ZH[text[2]]
    return 0
