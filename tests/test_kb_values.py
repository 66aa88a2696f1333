"""Registered values (kb/values.yaml, `kbt lint` "registered values"): numbers read as numbers,
the places a value is stated, the verdict on each, the one-line errors, and the seed lines the
values are quoted from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO
from kb_tools.kb.numbers import numbers, parse_value
from kb_tools.kb.pages import load_kb
from kb_tools.kb.sources import seeds_dir
from kb_tools.kb.units import units
from kb_tools.kb.values import judge, load_values

VALUES = load_values(load_kb(REPO).kb_dir)
BY_ID = {v.id: v for v in VALUES}
HERE = seeds_dir(REPO)


@pytest.mark.parametrize("a, b", [
    ("50 %", "0.5"), ("192 KiB", "196,608"), ("192 * 1024", "192 KiB"), ("2^16", "65536"), ("2**8", "256"),
    ("four", "4"), ("1e-5", "0.00001"), ("13/13", "13/13"), ("8.5.2", "8.5.2"), ("1:4", "1:4"),
])
def test_equal_numbers_in_different_notations(a, b):
    assert numbers(a)[0].equals(numbers(b)[0])


@pytest.mark.parametrize("a, b", [("13/13", "12/13"), ("8.5.2", "8.5.20"), ("0.99999", "0.9999"), ("16/8/4/2", "16/8/4/1"), ("16/8", "16/8/4/2"), ("50 %", "50"), ("1:4", "4:1")])
def test_different_numbers_stay_different(a, b):
    assert not numbers(a)[0].equals(numbers(b)[0])


def test_digits_glued_to_a_word_are_not_numbers_but_chinese_ones_are():
    assert numbers("fp16, int8, C0 and v2") == []
    assert [n.text for n in numbers("C0为16，余弦是0.999，四次被测量")] == ["16", "0.999", "四"]
    with pytest.raises(ValueError):
        parse_value("16 and 32")


def test_units_are_sentences_list_items_table_rows_with_their_header_and_code_lines():
    text = ("First sentence here. Second one\nwraps a line.\n- an item\n\n| dtype | bound |\n|---|---|\n"
            "| fp16 | 0.999 |\n\n```python\nx = 1  # code\n```\n<!-- fact: a --> hidden -->\n")
    got = units(text)
    assert (0, "First sentence here.") in got and (0, "Second one wraps a line.") in got
    assert (2, "- an item") in got and (6, "| dtype | bound | | fp16 | 0.999 |") in got
    assert (9, "x = 1  # code") in got and not any("fact" in u for _, u in got)


@pytest.mark.parametrize("vid, unit, agrees", [
    ("cosine-floor-fp32", "fp32 operators need cosine similarity above 0.99999.", True),
    ("cosine-floor-fp32", "fp32 operators need cosine similarity above 0.9999.", False),
    ("cosine-floor-fp16", "余弦相似度：fp16 放宽到 0.99。", False),
    ("bandwidth-threshold", "below 0.5 of bandwidth utilisation, look at layout", True),
    ("ub-size-a2", "| chip | UB | | A2 | 256 KiB |", False),
    ("ub-size-a2", "A2's UB is 196,608 bytes", True),
    ("promote-fp16", "TTK promotes fp16 → fp64 for the golden", False),
    ("promote-fp32", "| dtype | promoted | | float32 | float64 |", True),
    ("wrapper-allowed-work", "The wrapper may only validate arguments, read shape and launch once.", True),
    ("wrapper-allowed-work", "The wrapper may only validate arguments, read shape and do the casting.", False),
])
def test_a_unit_that_states_a_value_is_judged(vid, unit, agrees):
    verdict = judge(BY_ID[vid], unit)
    assert verdict is not None and verdict[0] is agrees


def test_a_unit_without_every_term_states_nothing():
    assert judge(BY_ID["cosine-floor-fp32"], "cosine similarity of 0.5 is bad") is None
    assert judge(BY_ID["ub-size-a2"], "UB of 64 KiB on A5") is None


def test_kbt_lint_names_the_place_the_home_and_both_values_in_one_line(kbt, repo_copy):
    page = repo_copy / "kb" / "playbooks" / "troubleshooting.md"
    page.write_text(page.read_text("utf-8") + "\nOn A2 the UB holds 256 KiB.\n", "utf-8")
    result = kbt("lint", root=repo_copy)
    assert result.code != 0
    lines = [ln for ln in result.err.splitlines() if "ub-size-a2" in ln and "LN141" in ln]
    assert len(lines) == 1, result.err
    assert re.match(r"\S*kb/playbooks/troubleshooting\.md:\d+: LN141 ", lines[0])
    assert "ub-tiling-budget.md" in lines[0] and "256 KiB" in lines[0] and "192 KiB" in lines[0]
    assert "Traceback" not in result.out + result.err


def test_a_notebook_line_and_an_invariant_are_checked(kbt, repo_copy):
    nb = repo_copy / "notebooks" / "precision_metrics.py"
    nb.write_text(nb.read_text("utf-8").replace('"float32": 0.99999', '"float32": 0.9999'), "utf-8")
    result = kbt("lint", root=repo_copy)
    assert any("precision_metrics.py" in ln and "cosine-floor-fp32" in ln for ln in result.err.splitlines()), result.err


def test_a_page_that_states_a_value_links_its_home(kbt, repo_copy):
    page = repo_copy / "kb" / "patterns" / "non-contiguous-fallback.md"
    page.write_text(page.read_text("utf-8").replace("[multicore-tiling-balance](multicore-tiling-balance.md)", "multicore-tiling-balance"), "utf-8")
    err = kbt("lint", root=repo_copy).err
    assert re.search(r"non-contiguous-fallback\.md:\d+: LN143 states tilingkey-fp64 .* without linking its home \S*multicore-tiling-balance\.md", err), err


def test_a_home_that_stops_stating_its_value_and_a_missing_home_are_reported(kbt, repo_copy):
    values = repo_copy / "kb" / "values.yaml"
    values.write_text(values.read_text("utf-8").replace("home: exact-fast-paths", "home: no-such-page")
                      .replace("home: op-prototype", "home: golden-promote"), "utf-8")
    err = kbt("lint", root=repo_copy).err
    assert re.search(r"kb/values\.yaml:\d+: LN140 value 'offset-multiple': home page 'no-such-page'", err)
    assert re.search(r"golden-promote\.md:\d+: LN142 home page of value 'fusion-loss' never states it", err)


_FACTS_CODES = r"FA0\d\d"
_VALUES_CODES = r"(FA02\d|YA\d+)"


@pytest.mark.parametrize("name, codes, text", [
    ("facts.yaml", _FACTS_CODES, "facts: [1, 2]\n"),
    ("facts.yaml", _FACTS_CODES, "facts:\n  - {id: Bad Id, home: golden-promote, about: x}\n"),
    ("facts.yaml", _FACTS_CODES, "facts:\n  - {id: a, home: golden-promote, about: x, retired: [1]}\n  - {id: a, home: golden-promote, about: y}\n"),
    ("facts.yaml", _FACTS_CODES, "facts: !!python/object/apply:os.system ['true']\n"),
    ("facts.yaml", _FACTS_CODES, "[unclosed\n"),
    *[("values.yaml", _VALUES_CODES, text) for text in [
        "values:\n  - {id: a, home: layout-format, about: x, when: [C0], number: 16}\n  - {id: a, home: layout-format, about: y, when: [C0], number: 16}\n",
        "values:\n  - {id: a, home: layout-format, about: x, when: [C0], number: sixteen and more}\n",
        "values:\n  - {id: a, home: layout-format, about: x, when: C0, number: 16, id: b}\n",
        "values:\n  - {id: a, home: layout-format, about: x, when: [C0], same_as: b}\n  - {id: b, home: layout-format, about: y, when: [C0], same_as: a}\n",
        "values:\n  - {id: a, home: layout-format, about: x, when: [C0], is: fp64}\n",
        "values: {a: 1}\n",
        "[unclosed\n",
    ]],
])
def test_a_malformed_registry_file_is_one_clear_line_per_problem(kbt, repo_copy, name, codes, text):
    """facts.yaml and values.yaml share their frame (kb_tools/kb/registry_file.py) and its errors."""
    (repo_copy / "kb" / name).write_text(text, "utf-8")
    result = kbt("lint", root=repo_copy)
    assert result.code != 0
    lines = [ln for ln in result.err.splitlines() if name in ln]
    assert lines and all(re.match(rf"\S*kb/{re.escape(name)}:\d+: {codes} ", ln) for ln in lines), result.err
    assert "Traceback" not in result.out + result.err


def test_a_cycle_names_its_chain():
    from kb_tools.diagnostics import KbErrors
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        Path(d, "values.yaml").write_text(
            "values:\n  - {id: a, home: p, about: x, when: [C0], same_as: b}\n  - {id: b, home: p, about: y, when: [C0], same_as: a}\n", "utf-8")
        with pytest.raises(KbErrors) as exc:
            load_values(Path(d))
    assert any("a -> b -> a" in d.message and d.line == 2 for d in exc.value.diagnostics)


def test_same_as_takes_the_other_values_number_with_its_own_terms(tmp_path):
    (tmp_path / "values.yaml").write_text(
        "values:\n  - {id: a, home: p, about: x, when: [cosine], number: 0.999}\n"
        "  - {id: b, home: q, about: y, when: [COSINE_MIN], same_as: a}\n", "utf-8")
    b = {v.id: v for v in load_values(tmp_path)}["b"]
    assert b.home == "q" and judge(b, "COSINE_MIN = 0.999") == (True, "0.999")
    assert judge(b, "COSINE_MIN = 0.99")[0] is False and judge(b, "cosine = 0.99") is None


def _squash(text: str) -> str:
    return re.sub(r"[\s=:`'\"，。（）()]", "", text).lower()


def _seed_states(value, text: str) -> bool:
    """Whether seed text states the value: every term (punctuation aside, as the seeds lost
    theirs) within 150 characters of the first, and there the value's number, map entry or
    every item of its list."""
    low = text.lower()
    for first in {c for s in value.spellings[0] for c in (s.lower(), _squash(s))}:
        for m in re.finditer(re.escape(first), low):
            window = text[max(0, m.start() - 150): m.end() + 150]
            if not all(any(_squash(t) in _squash(window) for t in words) for words in value.spellings[1:]):
                continue
            if value.kind == "number" and any(n.equals(value.value) for n in numbers(_squash(window), strict=False)):
                return True
            if value.kind == "is" and (judge(value, window) or (False,))[0]:
                return True
            if value.kind == "members" and all(value.vocabulary[i].search(window) for i in value.value):
                return True
    return False


@pytest.mark.skipif(HERE is None, reason="the seed files (../shared/seeds) are not beside this checkout")
@pytest.mark.parametrize("value", [v for v in VALUES if v.seed], ids=lambda v: v.id)
def test_a_value_from_a_seed_equals_that_seed_line(value):
    number, lines = value.seed.split(":")
    first, _, last = lines.partition("-")
    seed = next(HERE.glob(f"{number}_*.txt")).read_text("utf-8").splitlines()
    assert int(last or first) <= len(seed), f"{value.id}: seed {number} has {len(seed)} lines"
    rows = seed[int(first) - 1:int(last or first)]
    # a number in a seed table is read in its row, under the first line (the table's header);
    # anything else in the lines together
    texts = [f"{rows[0]} {row}" for row in rows[1:]] if value.kind == "number" and len(rows) > 1 else ["\n".join(rows)]
    assert any(_seed_states(value, text) for text in texts), f"{value.id}: seed {number} lines {lines} do not state {value.shown}"


@pytest.mark.skipif(HERE is None, reason="the seed files (../shared/seeds) are not beside this checkout")
def test_a_changed_seed_value_is_caught():
    seed = next(HERE.glob("004_*.txt")).read_text("utf-8").splitlines()[0]
    value = BY_ID["cosine-floor-fp32"]
    assert _seed_states(value, seed) and not _seed_states(value, seed.replace("0.99999", "0.9999"))
