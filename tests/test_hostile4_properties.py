"""Property tests beyond the round-4 reproductions, one generator per class of hostile input:
control characters (escaping), numeric spellings (numbers kept exact), nestings (bounded
parsing), link layouts and option-shaped names (confinement), file sizes (bounded reading) and
trailing newlines (validation). Examples are capped so the whole module runs in seconds."""

from __future__ import annotations

import os
import re
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kb_tools.diagnostics import Diagnostic, KbError, one_line_safe, terminal_safe  # noqa: E402
from kb_tools.files.confine import OutsideRoot, as_argument, resolve_inside  # noqa: E402
from kb_tools.files.jsonio import parse_json  # noqa: E402
from kb_tools.files.text import read_bytes, read_head  # noqa: E402
from kb_tools.files.yamlio import MAX_NESTING  # noqa: E402

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@FAST
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_escaped_text_holds_no_control_character(text):
    shown = terminal_safe(text)
    assert not CONTROL.search(shown)
    assert shown.count("\n") == text.count("\n")  # multi-line output keeps its lines
    line = one_line_safe(text)
    assert not CONTROL.search(line) and "\n" not in line and "\u2028" not in line
    assert "\n" not in str(Diagnostic(text, 3, "XX001", text))
    if not CONTROL.search(text) and "\n" not in text and "\u2028" not in text and "\u2029" not in text:
        assert line == text  # printable text is shown as written


NUMBERS = st.builds(lambda sign, whole, frac, exp: f"{sign}{whole}{'.' + frac if frac else ''}{'e' + str(exp) if exp is not None else ''}",
                    st.sampled_from(["", "-"]), st.from_regex(r"\A(0|[1-9][0-9]{0,25})\Z"),
                    st.from_regex(r"\A[0-9]{0,30}\Z"), st.one_of(st.none(), st.integers(-500, 500)))


@FAST
@given(NUMBERS)
def test_a_number_is_read_exactly_or_refused_in_one_line(spelled):
    try:
        value = parse_json(f'{{"x": {spelled}}}', "n.json")["x"]
    except KbError as exc:
        assert exc.diagnostic.code == "JS016" and "\n" not in str(exc.diagnostic)
        return
    assert Decimal(repr(value)) == Decimal(spelled)  # what a merge writes back is the number written


@FAST
@given(st.integers(1, 3 * MAX_NESTING), st.sampled_from(["[", '{"a": ']))
def test_nesting_is_parsed_up_to_its_cap_and_refused_past_it(depth, opener):
    closer = "]" if opener == "[" else "}"
    text = '{"k": ' + opener * depth + "1" + closer * depth + "}"
    try:
        parse_json(text, "deep.json")
        assert depth < MAX_NESTING
    except KbError as exc:
        assert exc.diagnostic.code == "JS013" and depth >= MAX_NESTING - 1


@FAST
@given(st.lists(st.tuples(st.sampled_from(["in", "out", "up", "abs"]), st.booleans()), min_size=1, max_size=6),
       st.text(alphabet="-=abc./", min_size=1, max_size=12))
def test_confinement_agrees_with_the_real_path_for_any_link_layout(hops, tail):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "root"
        (base / "d").mkdir(parents=True)
        (Path(tmp) / "outside").mkdir()
        for i, (where, to_dir) in enumerate(hops):
            target = {"in": f"d{'' if to_dir else '/f'}", "out": "../outside", "up": "..",
                      "abs": str(Path(tmp) / "outside")}[where]
            os.symlink(target, base / f"l{i}")
        for name in [f"l{i}" for i in range(len(hops))] + [f"l0/{tail}", tail, f"./{tail}", f"d/../../{tail}"]:
            real = Path(os.path.realpath(base / name))
            inside = real == base.resolve() or base.resolve() in real.parents
            try:
                got = resolve_inside(base, name)
                assert inside and got == real
                assert not as_argument(base, name).startswith("-")  # never read as an option
            except OutsideRoot:
                assert not inside


@FAST
@given(st.integers(0, 5000), st.integers(1, 5000))
def test_a_file_is_read_only_within_its_limit(size, limit):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.txt"
        path.write_bytes(b"a" * size)
        try:
            assert len(read_bytes(path, limit=limit)) == size <= limit
        except KbError as exc:
            assert size > limit and exc.diagnostic.code == "IO003"
        assert read_head(path, limit) == "a" * min(size, limit)


@FAST
@given(st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,12}\Z"), st.sampled_from(["", "\n", "\r\n", " ", "\n\n", "\t"]))
def test_an_operator_name_is_valid_only_without_a_trailing_character(name, suffix):
    from kb_tools.contract.specs import SPEC_SCHEMA
    from kb_tools.files.schema_check import schema_diagnostics

    spec = {"op": name + suffix, "topologies": ["row-reduction"], "properties": {"dtypes": ["float16"]},
            "criteria": {"float16": "cross_check"}}
    found = [d for d in schema_diagnostics(spec, SPEC_SCHEMA, "s.yaml", "SP020") if "op" in d.message.split(":")[0]]
    assert bool(found) == bool(suffix), (name, suffix, found)
