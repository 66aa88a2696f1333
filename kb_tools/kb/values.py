"""Registered values: a number, a choice or a list that several pages state, kept once in
``kb/values.yaml`` with its home page, so that a page restating it differently fails lint.

A value is recognised by its terms, not by its wording: a sentence, list item, table row (read
with its header) or code line that carries every one of the value's ``when`` terms (any
spelling, English or Chinese) states the value. It agrees when one of its numbers equals the
value (numbers compared as numbers, see numbers.py), or it names the registered choice, or it
names no list item outside the registered list. So a restatement in new words, in a table cell
or in Chinese is checked as well as the home's own sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from kb_tools.diagnostics import Diagnostic, KbErrors
from kb_tools.files.yamlio import LineDict
from kb_tools.kb.numbers import Number, numbers, parse_value
from kb_tools.kb.links import links_to
from kb_tools.kb.pages import shown_path
from kb_tools.kb.registry_file import read_registry
from kb_tools.kb.units import sentences, units

VALUES_FILE = "values.yaml"
_KEYS = {"id", "home", "about", "when", "number", "is", "members", "one_of", "key", "between", "same_as", "seed"}
_KINDS = ("number", "is", "members", "same_as")
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SEED = re.compile(r"^\d{3}:\d+(?:-\d+)?$")
# What joins a map's key to its entry: fp32 → fp64, | float32 | float64 |, fp16/bf16 -> fp32, 提升为.
_MAPS_TO = re.compile(r"\s*(?:/[\w.]+)*\s*`?\s*(?:→|->|=>|⇒|\||:|\bto\b|提升为|提升到|升为|=)\s*`?\s*(?:(?:is|becomes|是|为)\s*)?")
# What may stand between a term and the number it states: "C0 = 16", "余弦取0.999", "UB of 192 KiB".
_STATES = re.compile(r"[\s`*]*(?:=|:|\||\bis\b|\bof\b|\bat least\b|\bat most\b|\babove\b|\bbelow\b|\bunder\b|[<>≥≤]=?|为|是|取|大于|小于|低于|高于|不低于)?[\s`*]*")


@dataclass(frozen=True)
class Value:
    id: str
    home: str  # page id
    about: str
    when: tuple  # of compiled patterns; a unit states the value when every one matches
    spellings: tuple  # per when term, its spellings as registered
    lowered: tuple  # the same, lower-cased, for a quick substring test
    quick: re.Pattern  # any spelling of the first term, lower-cased and plain
    kind: str  # number, is, members
    value: object  # Number, a canonical name, or a frozenset of canonical names
    shown: str  # the value as written in values.yaml
    vocabulary: dict  # canonical name -> compiled pattern, for is / members
    key: str | None  # a map entry: the item the value is the entry of (is only)
    between: tuple | None  # (lo, hi): only numbers in this range can state the value
    seed: str | None  # "004:1" or "000:64-66": the seed file and the lines the value is quoted from
    line: int


def values_path(kb_dir: Path) -> Path:
    return Path(kb_dir) / VALUES_FILE


def _term(spellings) -> re.Pattern:
    """Any of the spellings, case aside; a Latin spelling must start a word (C0 is not in BC0)."""
    parts = [(r"(?<![A-Za-z0-9_])" if re.match(r"\w", s, re.A) else "") + re.escape(s) for s in spellings]
    return re.compile("|".join(parts), re.I)


def _word(spellings) -> re.Pattern:
    """A vocabulary item: a whole word, so fp16 is not found inside fp16x."""
    parts = [re.escape(s) + (r"(?![A-Za-z0-9_])" if re.search(r"\w$", s, re.A) else "") for s in spellings]
    return re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(parts) + ")", re.I)


def load_values(kb_dir: Path) -> list[Value]:
    """The values of ``kb/values.yaml``; ``[]`` when there is none. A malformed file raises
    KbErrors, one path:line line per problem (FA02x)."""
    path = values_path(kb_dir)
    if not path.exists():
        return []
    shown, data, diags = read_registry(path, "values", ("FA020", "FA021", "FA022"), also=("vocabularies",))
    vocab, problems = _vocabularies(data.get("vocabularies", LineDict()), data.line_of("vocabularies") if "vocabularies" in data else 1)
    diags += [Diagnostic(shown, line, "FA023", msg) for line, msg in problems]
    entries, seen = {}, {}
    for index, entry in enumerate(data["values"]):
        line = data["values"].line_of(index)
        problems = _entry_problems(entry, line, vocab)
        diags += [Diagnostic(shown, where, "FA023", msg) for where, msg in problems]
        if problems:
            continue
        if entry["id"] in seen:
            diags.append(Diagnostic(shown, line, "FA024", f"value {entry['id']!r} is already registered on line {seen[entry['id']]}"))
            continue
        seen[entry["id"]] = line
        entries[entry["id"]] = entry
    for vid, entry in entries.items():
        where = _resolve(vid, entries)
        if isinstance(where, str):
            diags.append(Diagnostic(shown, entry.line_of("same_as"), "FA025", where))
    if diags:
        raise KbErrors(diags)
    return [_value(entry, _resolve(vid, entries), vocab) for vid, entry in entries.items()]


def _vocabularies(data, line):
    if not isinstance(data, dict):
        return {}, [(line, "'vocabularies' must map a name to {item: [spellings]}")]
    vocab, problems = {}, []
    for name, items in data.items():
        if not isinstance(items, dict) or not all(isinstance(v, list) and v and all(isinstance(s, str) for s in v) for v in items.values()):
            problems.append((data.line_of(name), f"vocabulary {name!r} must map each item to a list of spellings"))
            continue
        vocab[name] = {item: _word([item, *spellings]) for item, spellings in items.items()}
    return vocab, problems


def _entry_problems(entry, line, vocab) -> list:
    if not isinstance(entry, LineDict):
        return [(line, "a value must be a mapping with id, home, about, when and one of number, is, members, same_as")]
    problems = [(entry.line_of(k), f"unknown key {k!r} (allowed: {', '.join(sorted(_KEYS))})") for k in entry if k not in _KEYS]
    for key in ("id", "home", "about"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            problems.append((entry.line_of(key) if key in entry else line, f"{key!r} must be a non-empty string"))
    if isinstance(entry.get("id"), str) and not _ID.match(entry["id"]):
        problems.append((entry.line_of("id"), f"id {entry['id']!r} must be lower-case words joined by '-'"))
    when = entry.get("when")
    if not isinstance(when, list) or not when or not all(isinstance(w, str) and w.strip() for w in when):
        problems.append((entry.line_of("when") if "when" in entry else line, "'when' must be a list of terms, each 'spelling|spelling'"))
    kinds = [k for k in _KINDS if k in entry]
    if len(kinds) != 1:
        problems.append((line, f"a value needs exactly one of {', '.join(_KINDS)} (has {', '.join(kinds) or 'none'})"))
    elif kinds[0] == "number":
        try:
            parse_value(entry["number"])
        except ValueError as exc:
            problems.append((entry.line_of("number"), f"'number': {exc}"))
    elif kinds[0] in ("is", "members"):
        named = [entry[kinds[0]]] if kinds[0] == "is" else entry[kinds[0]]
        voc = vocab.get(entry.get("one_of"))
        if voc is None:
            problems.append((entry.line_of(kinds[0]), f"'{kinds[0]}' needs 'one_of' naming a vocabulary"))
        elif not isinstance(named, list) or not all(isinstance(n, str) and n in voc for n in named):
            problems.append((entry.line_of(kinds[0]), f"'{kinds[0]}' must name items of vocabulary {entry['one_of']!r}"))
    if "key" in entry and not ("is" in entry and entry["key"] in vocab.get(entry.get("one_of"), {})):
        problems.append((entry.line_of("key"), "'key' goes with 'is' and names an item of the same vocabulary"))
    if kinds == ["same_as"] and not isinstance(entry["same_as"], str):
        problems.append((entry.line_of("same_as"), "'same_as' must name another value"))
    between = entry.get("between")
    if between is not None and not (isinstance(between, list) and len(between) == 2 and all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in between)):
        problems.append((entry.line_of("between"), "'between' must be [low, high]"))
    if "seed" in entry and not (isinstance(entry["seed"], str) and _SEED.match(entry["seed"])):
        problems.append((entry.line_of("seed"), "'seed' must be 'NNN:line' or 'NNN:first-last' (the seed file's number and its lines)"))
    return problems


def _resolve(vid: str, entries: dict):
    """The entry that holds ``vid``'s value, following same_as; a message for a cycle or a
    missing target."""
    chain = [vid]
    while "same_as" in entries[chain[-1]]:
        target = entries[chain[-1]]["same_as"]
        if target not in entries:
            return f"value {chain[-1]!r}: same_as names {target!r}, which is not registered"
        if target in chain:
            return f"value {vid!r}: same_as goes round in a cycle ({' -> '.join([*chain, target])})"
        chain.append(target)
    return entries[chain[-1]]


def _value(entry, source, vocab) -> Value:
    kind = next(k for k in ("number", "is", "members") if k in source)
    voc = vocab.get(source.get("one_of"), {})
    value = {"number": lambda v: parse_value(v), "is": lambda v: v, "members": frozenset}[kind](source[kind])
    shown = ", ".join(source[kind]) if kind == "members" else str(source[kind])
    between = entry.get("between", source.get("between"))
    spellings = tuple(tuple(s.strip() for s in w.split("|") if s.strip()) for w in entry["when"])
    return Value(entry["id"], entry["home"].strip(), " ".join(entry["about"].split()),
                 tuple(_term(words) for words in spellings), spellings,
                 tuple(tuple(w.lower() for w in words) for words in spellings),
                 re.compile("|".join(re.escape(w.lower()) for w in spellings[0])),
                 kind, value, shown, voc, source.get("key"), tuple(Fraction(str(b)) for b in between) if between else None,
                 entry.get("seed"), entry.line)


def judge(value: Value, unit: str, low: str | None = None):
    """None when ``unit`` does not state ``value``; else (agrees, what the unit says).
    ``low`` is ``unit.lower()``, passed by a caller that judges one unit many times."""
    low = unit.lower() if low is None else low
    if not value.quick.search(low) or not all(any(s in low for s in words) for words in value.lowered[1:]):
        return None  # substring tests first: the word-start patterns are slow on 5,000 units
    spans = []
    for pattern in value.when:
        found = [m.span() for m in pattern.finditer(unit)]
        if not found:
            return None
        spans += found

    def free(a, b):
        return not any(a < e and s < b for s, e in spans)

    if value.kind == "number":
        # a number right after a term states the value whatever its size; elsewhere only a
        # number in the value's range does (a sentence about cosine may count samples too)
        right_after = {_STATES.match(unit, e).end() for s, e in spans}
        cands = [n for n in numbers(unit) if free(n.start, n.end) and (n.start in right_after or _in_range(n, value))]
        if not cands:
            return None
        return any(n.equals(value.value) for n in cands), ", ".join(n.text for n in cands)
    if value.key is not None:
        return _entry(value, unit)
    named = {item for item, pattern in value.vocabulary.items() if any(free(*m.span()) for m in pattern.finditer(unit))}
    if not named:
        return None
    if value.kind == "is":
        return value.value in named, ", ".join(sorted(named))
    extra = named - value.value
    return not extra, ", ".join(sorted(extra or named))


def _entry(value: Value, unit: str):
    """A map entry: the item written right after the key and a joining arrow, bar or word."""
    said = []
    for m in value.vocabulary[value.key].finditer(unit):
        join = _MAPS_TO.match(unit, m.end())
        if join:
            said += [item for item, pattern in value.vocabulary.items() if pattern.match(unit, join.end())]
    if not said:
        return None
    return value.value in said, ", ".join(sorted(set(said)))


def _in_range(n: Number, value: Value) -> bool:
    """Whether ``n`` is of the value's sort (a plain number, version, count, ratio, sequence)
    and, for a plain number, within the value's range."""
    sorts = {k[0] for k in value.value.keys}
    if not any(k[0] in sorts for k in n.keys):
        return False
    if value.between is None or "n" not in sorts:
        return True
    return any(value.between[0] <= k[1] <= value.between[1] for k in n.keys if k[0] == "n")


def value_drift(pages: dict, values: list[Value], others: list[tuple[str, str]], unloadable=()) -> list[Diagnostic]:
    """Every place that states a registered value states it as its home does.

    ``pages``: page id -> loaded page (body, trigger, invariants); ``others``: (shown path,
    text) of notebooks and CONTRACT.md. The home page must state the value itself.
    """
    places = []  # (page id or None, shown path, line, unit)
    for pid, page in pages.items():
        shown = shown_path(page.path)
        places += [(pid, shown, page.body_line + off, unit) for off, unit in units(page.body)]
        front = page.lines.get("trigger")
        places += [(pid, shown, front, unit) for _, unit in sentences([(0, page.trigger)])]
        places += [(pid, shown, inv.line, unit) for inv in page.invariants for _, unit in sentences([(0, inv.text)])]
    for shown, text in others:
        places += [(None, shown, off + 1, unit) for off, unit in units(text, python=shown.endswith(".py"))]
    places = [(pid, shown, line, unit, unit.lower()) for pid, shown, line, unit in places]
    diags = []
    for value in values:
        home = pages.get(value.home)
        if home is None:
            if value.home not in unloadable:
                diags.append(Diagnostic("kb/values.yaml", value.line, "LN140", f"value {value.id!r}: home page {value.home!r} does not exist"))
            continue
        home_shown, home_states, unlinked = shown_path(home.path), False, {}
        for pid, shown, line, unit, low in places:
            verdict = judge(value, unit, low)
            if verdict is None:
                continue
            agrees, said = verdict
            home_states |= agrees and pid == value.home
            if pid not in (None, value.home) and pid not in unlinked and not links_to(pages[pid], home):
                unlinked[pid] = (shown, line)
            if not agrees:
                diags.append(Diagnostic(shown, line, "LN141",
                                        f"states {value.id} ({value.about}) as {said}; its home {home_shown} and kb/values.yaml:{value.line} say {value.shown}"))
        diags += [Diagnostic(shown, line, "LN143", f"states {value.id} ({value.about}) without linking its home {home_shown}")
                  for shown, line in unlinked.values()]
        if not home_states:
            diags.append(Diagnostic(home_shown, home.body_line, "LN142",
                                    f"home page of value {value.id!r} never states it ({value.about}: {value.shown}, registered at kb/values.yaml:{value.line})"))
    return diags
