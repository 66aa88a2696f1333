"""kb_tools.kernels.page_code: a page's blocks run as printed, each after the blocks it builds on,
and an error names the page's own file and line."""

import traceback

import pytest

from kb_tools.kernels import page_code

PAGE = '''---
id: two-steps
---

## Do / Don't

```python
# tested: do rows
def rows(x):
    return x.shape[0]
```

Do, building on the block above:

```python
# tested: do twice_rows
def twice_rows(x):
    return 2 * rows(x)
```

```python
# tested: dont broken; fails: wrong result
def broken(x):
    raise ValueError("from the page")
```
'''


@pytest.fixture
def kb_dir(tmp_path):
    (tmp_path / "constraints").mkdir()
    (tmp_path / "constraints" / "two-steps.md").write_text(PAGE, encoding="utf-8")
    return tmp_path


def test_a_second_do_block_runs_after_the_first_of_its_page(kb_dir):
    import torch

    namespace = page_code.load(kb_dir, "two-steps", "twice_rows")
    assert namespace["twice_rows"](torch.zeros(3, 2)) == 6


def test_an_error_in_a_block_names_the_pages_line(kb_dir):
    broken = page_code.load(kb_dir, "two-steps", "broken", role="dont")["broken"]
    with pytest.raises(ValueError) as caught:
        broken(None)
    last = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert last.filename.endswith("two-steps.md") and PAGE.splitlines()[last.lineno - 1].strip() == \
        'raise ValueError("from the page")'
