"""The browser's tokenizer (kb_tools/search/tokens.js) gives the same tokens as
kb_tools/search/tokens.py for every KB page and for mixed questions, and a contraction is one
word: "doesn't" matches nothing by its ending."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import REPO
from kb_tools.search.tokens import WORD, tokens

QUESTIONS = ("aclnnInplaceCopy failed, error code is 561103", "host侧做了reshape", "精度对不齐 非连续",
             "vf.exp doesn't sync; it’s torch.npu.synchronize", "x² overflow in fp16 casts")


def test_a_contraction_is_one_word_without_its_ending():
    assert WORD.findall("it doesn't work") == ["it", "doesn't", "work"]
    assert tokens("it doesn't work, the user's tile isn’t aligned") == ["work", "user", "tile", "align"]


def test_the_browser_tokenizer_agrees_with_the_index():
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed: the browser test (test_site_browser) runs tokens.js in Chromium instead")
    texts = [p.read_text("utf-8") for p in sorted((REPO / "kb").rglob("*.md"))] + [*QUESTIONS]
    script = ("const t = require(process.argv[1]); const xs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "process.stdout.write(JSON.stringify(xs.map(t.opkbTokens)))")
    run = subprocess.run([node, "-e", script, str(REPO / "kb_tools" / "search" / "tokens.js")],
                         input=json.dumps(texts), capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(run.stdout)
    differ = [i for i, (text, js) in enumerate(zip(texts, got)) if tokens(text) != js]
    assert len(got) == len(texts) and not differ, [texts[i][:60] for i in differ]
