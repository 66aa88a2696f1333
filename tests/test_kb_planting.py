"""Issue 39 item 4: plant contradictions in a copy of the KB and require lint to catch them.

A seeded generator draws each plant from the registered values and facts and from random
pages: it changes a number, a version or a map entry where a page states it (sentence or table
row), writes a new sentence, table row, list item or Chinese sentence stating a value wrongly
into a random page or invariant, puts a forbidden item into the wrapper's list, rewords a
quoted fact, or routes a glossary term to a page that does not treat it. A plant counts as
caught when `kbt lint` reports an error in the file it changed that the unplanted copy does
not have. The rate is printed and must be at least 90 %, and every kind must be caught at least
once. Measured on seeds the test does not use (200-209, 300-309, 400-409, 30 plants each):
896/900; the misses are numbers perturbed out of the value's range where no term binds them
(``UB_BYTES = 192 * 3024``).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from kb_tools.kb.facts import load_facts, statements
from kb_tools.kb.numbers import numbers
from kb_tools.kb.pages import load_kb
from kb_tools.kb.units import units
from kb_tools.kb.values import judge, load_values
from kb_tools.lint import run_lint
from conftest import copy_repo

SEEDS = (3, 17, 2026)
PLANTS_PER_SEED = 30
KINDS = ("number", "version", "table cell", "map entry", "list item", "new sentence", "chinese",
         "invariant", "paraphrase", "glossary route")
_ZH_DIGITS = "一二三四五六七八九"
_WORD_SWAP = {"two": "three", "three": "five", "four": "six", "five": "seven", "six": "four", "eight": "nine", "ten": "twelve"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("plant") / "repo"
    root.mkdir()
    return copy_repo(root)


def _errors(root: Path) -> set:
    return {(Path(d.path).as_posix(), d.code, d.message) for r in run_lint(root) for d in r.diagnostics if d.severity == "error"}


def _new_errors_in(root: Path, rel: str, before: set) -> list:
    """Errors in ``rel`` that the unplanted copy does not have (a copy has no tests/, so the
    evidence check fails there before any plant)."""
    return [e for e in _errors(root) - before if e[0].endswith(rel)]


def _perturb_number(text: str, rng: random.Random) -> str:
    """The same number written the same way, one digit (or word) changed."""
    low = text.lower()
    if low in _WORD_SWAP:
        return _WORD_SWAP[low]
    if text in _ZH_DIGITS:
        return _ZH_DIGITS[(_ZH_DIGITS.index(text) + rng.randint(1, 8)) % 9]
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    i = rng.choice(digits)
    new = rng.choice([d for d in "123456789" if d != text[i]])
    return text[:i] + new + text[i + 1:]


class Planter:
    """One repository copy, the registry, and the places each value is stated today."""

    def __init__(self, root: Path):
        self.root = root
        self.kb = load_kb(root)
        self.values = load_values(self.kb.kb_dir)
        self.facts = load_facts(self.kb.kb_dir)
        self.pages = sorted(self.kb.pages.values(), key=lambda p: p.id)

    def rel(self, path: Path) -> str:
        return Path(path).resolve().relative_to(self.root.resolve()).as_posix()

    def stated(self, predicate) -> list:
        """(page, line offset, unit, value) where a value is stated today and agrees."""
        out = []
        for page in self.pages:
            for off, unit in units(page.body):
                for value in self.values:
                    verdict = judge(value, unit)
                    if verdict and verdict[0] and predicate(value, unit):
                        out.append((page, off, unit, value))
        return out

    def _wrong(self, value, rng):
        if value.kind == "number":
            return _perturb_number(value.shown, rng)
        pool = [v for v in value.vocabulary if v != value.value and v not in (value.value if value.kind == "members" else ())]
        item = rng.choice(sorted(pool))
        return item

    def _terms(self, value, rng, chinese=False):
        picks = []
        for words in value.spellings:
            zh = [w for w in words if re.search(r"[\u4e00-\u9fff]", w)]
            picks.append(rng.choice(zh if chinese and zh else list(words)))
        rng.shuffle(picks)
        return picks

    def sentence(self, value, rng, chinese=False):
        terms, wrong = self._terms(value, rng, chinese), self._wrong(value, rng)
        if value.key is not None:
            joined = rng.choice(["{k} → {v}", "{k} -> {v}", "{k} to {v}", "{k} 提升为 {v}"]).format(k=value.key, v=wrong)
            return rng.choice(["Under {t}, {m}.", "Keep in mind: {t} maps {m}.", "按种子，{t}：{m}。"]).format(t=" ".join(terms), m=joined)
        if chinese:
            return rng.choice(["注意：{t}为{v}。", "{t}是{v}，这一点不能改。", "按种子，{t}取{v}。"]).format(t="的".join(terms), v=wrong)
        return rng.choice(["In practice {t} {v}.", "Keep in mind: {t} comes to {v} here.",
                           "As measured, {t} is {v} in every run.", "We use {t} = {v} throughout."]).format(t=" ".join(terms), v=wrong)

    def in_place(self, rng, want):
        """Change the agreeing number, version or map entry of one unit where it is stated."""
        def fits(value, unit):
            if want == "map entry":
                return value.key is not None
            if value.kind != "number":
                return False
            is_version = any(k[0] == "v" for k in value.value.keys)
            if want == "version":
                return is_version
            return not is_version and (unit.startswith("|") if want == "table cell" else not unit.startswith("|"))
        places = self.stated(fits)
        if not places:
            return None
        page, off, unit, value = rng.choice(places)
        lines = page.path.read_text(encoding="utf-8").splitlines(keepends=True)
        index = page.body_line - 1 + off
        for line_no in range(index, min(index + 4, len(lines))):  # the unit starts on `off`; its value may sit lower
            line = lines[line_no]
            if value.kind == "number":
                hits = [n for n in numbers(line) if n.equals(value.value)]
                if hits:
                    n = rng.choice(hits)
                    lines[line_no] = line[:n.start] + _perturb_number(n.text, rng) + line[n.end:]
                    return page.path, "".join(lines)
            else:
                m = value.vocabulary[value.value].search(line)
                if m and value.vocabulary[value.key].search(line):
                    wrong = self._wrong(value, rng)
                    lines[line_no] = line[:m.start()] + wrong + line[m.end():]
                    return page.path, "".join(lines)
        return None

    def insert(self, rng, kind):
        """A new statement of a value with a wrong value, in a random page's body or invariant."""
        value = rng.choice([v for v in self.values if kind != "list item" or v.kind == "members"])
        page = rng.choice(self.pages)
        text = page.path.read_text(encoding="utf-8")
        if kind == "invariant":
            lines = text.splitlines(keepends=True)
            at = [i for i, l in enumerate(lines[:page.body_line]) if l.lstrip().startswith("text:")]
            i = rng.choice(at)
            lines[i] = lines[i].rstrip("\n") + " " + self.sentence(value, rng).replace(":", " -") + "\n"
            return page.path, "".join(lines)
        if kind == "table cell":
            terms = self._terms(value, rng)
            stmt = f"| case | value |\n|---|---|\n| {' '.join(terms)}{' ' + value.key if value.key else ''} | {self._wrong(value, rng)} |"
        elif kind == "list item":
            kept = rng.sample(sorted(value.value), k=min(2, len(value.value)))
            stmt = f"- {' '.join(self._terms(value, rng))}: {', '.join(kept)} and {self._wrong(value, rng)}"
        else:
            stmt = self.sentence(value, rng, chinese=(kind == "chinese"))
        body = text.splitlines(keepends=True)
        blanks = [i for i in range(page.body_line, len(body)) if not body[i].strip() and not _in_fence(body, i)]
        i = rng.choice(blanks)
        body.insert(i + 1, stmt + "\n\n")
        return page.path, "".join(body)

    def paraphrase(self, rng):
        """Reword a quoted fact on a page that is not its home."""
        homes = {f.id: f.home for f in self.facts}
        places = [(p, s) for p in self.pages for s in statements(p.body)[0] if homes.get(s.fact_id) not in (None, p.id)]
        page, stmt = rng.choice(places)
        text = page.path.read_text(encoding="utf-8")
        start = text.index(f"fact: {stmt.fact_id}")
        end = text.index("<!-- /fact", start)
        words = list(re.finditer(r"\b[a-z]{4,}\b", text[start:end]))
        w = rng.choice(words[1:])
        a, b = start + w.start(), start + w.end()
        return page.path, text[:a] + rng.choice(["usually", "mostly", "roughly", "sometimes"]) + " " + text[a:b] + text[b:]

    def glossary_route(self, rng):
        path = self.root / "kb" / "glossary.yaml"
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        at = [i for i, l in enumerate(lines) if l.strip().startswith("pages: [")]
        i = rng.choice(at)
        current = re.findall(r"[\w-]+", lines[i].split("[", 1)[1])
        other = rng.choice([p.id for p in self.pages if p.id not in current])
        lines[i] = re.sub(r"\[[^\]]*\]", f"[{other}]", lines[i])
        return path, "".join(lines)

    def plant(self, kind, rng):
        if kind in ("number", "version", "map entry") or (kind == "table cell" and rng.random() < 0.5):
            return self.in_place(rng, kind) or self.insert(rng, "table cell" if kind == "table cell" else "new sentence")
        if kind == "paraphrase":
            return self.paraphrase(rng)
        if kind == "glossary route":
            return self.glossary_route(rng)
        return self.insert(rng, kind)


def _in_fence(lines, i) -> bool:
    return sum(1 for l in lines[:i] if l.lstrip().startswith("```")) % 2 == 1


def _run(repo, seed, n):
    planter, rng, before = Planter(repo), random.Random(seed), _errors(repo)
    caught, total, missed = Counter(), Counter(), []
    for k in range(n):
        kind = KINDS[k % len(KINDS)]
        path, new = planter.plant(kind, rng)
        old = path.read_text(encoding="utf-8")
        path.write_text(new, encoding="utf-8")
        try:
            found = _new_errors_in(repo, planter.rel(path), before)
        finally:
            path.write_text(old, encoding="utf-8")
        total[kind] += 1
        caught[kind] += bool(found)
        if not found:
            missed.append((kind, planter.rel(path), [l for l in new.splitlines() if l not in old.splitlines()][:2]))
    return caught, total, missed


def test_the_copy_has_no_value_or_fact_error_before_planting(repo):
    assert [e for e in _errors(repo) if e[1].startswith(("LN12", "LN14", "LN11"))] == []


@pytest.mark.parametrize("seed", SEEDS)
def test_planted_contradictions_are_caught(repo, seed):
    caught, total, missed = _run(repo, seed, PLANTS_PER_SEED)
    rate = sum(caught.values()) / sum(total.values())
    print(f"seed {seed}: caught {sum(caught.values())}/{sum(total.values())} ({rate:.0%}); "
          + ", ".join(f"{k} {caught[k]}/{total[k]}" for k in KINDS))
    for kind, where, lines in missed:
        print("  missed", kind, where, lines)
    assert rate >= 0.9, f"caught {rate:.0%} of planted contradictions; missed: {missed}"
    assert all(caught[k] for k in KINDS), f"a kind was never caught: {[k for k in KINDS if not caught[k]]}"
