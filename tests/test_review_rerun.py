"""A review notebook reads its inputs from its own folder, but the command it asks its reader
to copy (re-run ``kbt usage`` after adding ``wrapper:``) names the delivery folder from the
repository root, where the reader runs it (issue 28, item 4)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import REPO


def test_the_rerun_command_names_the_folder_from_the_repository_root(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "ops").mkdir(parents=True)
    spec = re.sub(r"(?m)^wrapper:.*\n", "", (REPO / "ops" / "bernoulli.yaml").read_text())
    (repo / "ops" / "bernoulli.yaml").write_text(spec)
    kbt = [sys.executable, "-m", "kb_tools"]  # this interpreter's kbt, wherever the venv lies
    for command in ("select", "usage"):
        subprocess.run([*kbt, command, "ops/bernoulli.yaml", "-o", "build/bernoulli"], cwd=repo, check=True,
                       capture_output=True, timeout=120, env={**os.environ, "OPKB_ROOT": str(REPO)})
    reviews = repo / "build" / "notebooks" / "reviews"
    reviews.mkdir(parents=True)
    monkeypatch.chdir(reviews)  # where the review notebook's kernel starts
    from kb_tools.outputs.review_checks import ReviewSession

    review = ReviewSession.open(spec="../../../ops/bernoulli.yaml", root="../../..",
                                usage="../../bernoulli/KB_USAGE.json", kb_root=str(REPO))
    check = review.claims()
    messages = " ".join(str(m) for m in (check.table["message"] if check.table is not None else [])) + check.summary
    assert "kbt usage ops/bernoulli.yaml -o build/bernoulli" in messages, messages
    assert "-o ../" not in messages
    assert os.getcwd() == str(reviews)
