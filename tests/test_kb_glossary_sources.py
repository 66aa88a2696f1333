"""The glossary's Chinese side is the seeds' own wording: a gloss the KB invented would send a
developer who pastes the seed's words nowhere (review 4, T1). Checked when the seeds are beside
the checkout; skipped, and said so, otherwise."""

from pathlib import Path

import pytest

from kb_tools.kb.glossary import load_glossary

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO.parent / "shared" / "seeds"


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seeds not beside the checkout ({SEEDS}): glossary sources not checked")
def test_every_chinese_gloss_is_written_in_a_seed():
    seeds = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt")))
    invented = [t.zh for t in load_glossary(REPO) if t.zh not in seeds]
    assert not invented, f"glossary terms no seed writes: {invented}"
