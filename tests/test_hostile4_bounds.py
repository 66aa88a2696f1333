"""Round-4 hostile inputs that cost memory or time without bound (repros 01, 02, 06, 08, 25):
each is refused in one line, in time near a benign control's, within a memory bound, and the
benign control still works. Times are only compared with the control of the same run."""

from __future__ import annotations

import zipfile

import pytest

from conftest import REPO, copy_repo
from hostile4_support import run_kbt

torch = pytest.importorskip("torch")


def _pt(path, tensor):
    torch.save(tensor, path)
    return path


@pytest.mark.parametrize("elements", [10**9, 3 * 10**9])
def test_an_expanded_pt_declaring_more_than_the_tensor_limit_is_refused_before_it_is_materialised(tmp_path, elements):
    small = _pt(tmp_path / "small.pt", torch.arange(1000, dtype=torch.float32))
    control = run_kbt("compare", "--dut", small, "--golden", small)
    assert control.code == 0, control.err
    bomb = _pt(tmp_path / "expanded.pt", torch.zeros(1).expand(elements))
    assert bomb.stat().st_size < 4096
    run = run_kbt("compare", "--dut", bomb, "--golden", bomb)
    assert run.code == 2 and "Traceback" not in run.err, run.err[-800:]
    assert "CMP001" in run.err and f"declares {elements} elements" in run.err and "OPKB_MAX_TENSOR_BYTES" in run.err
    assert run.peak_mb < control.peak_mb + 200, (run.peak_mb, control.peak_mb)  # a 4 GB allocation before the fix
    assert run.seconds < 5 * control.seconds + 5


def test_the_tensor_limit_is_a_setting_that_a_user_can_lower_and_raise(tmp_path):
    t = _pt(tmp_path / "t.pt", torch.zeros(4096))
    assert run_kbt("compare", "--dut", t, "--golden", t, env={"OPKB_MAX_TENSOR_BYTES": "1024"}).code == 2
    assert run_kbt("compare", "--dut", t, "--golden", t, env={"OPKB_MAX_TENSOR_BYTES": str(1 << 20)}).code == 0


def test_a_deflated_pt_record_is_refused_unread(tmp_path):
    plain = _pt(tmp_path / "plain.pt", torch.zeros(1 << 22))
    with zipfile.ZipFile(plain) as z:
        items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(bomb, "w") as z:
        for name, data in items:
            z.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED if "/data/" in name else zipfile.ZIP_STORED)
    assert bomb.stat().st_size < plain.stat().st_size // 100
    control = run_kbt("compare", "--dut", plain, "--golden", plain)
    assert control.code == 0, control.err
    run = run_kbt("compare", "--dut", bomb, "--golden", bomb)
    assert run.code == 2 and "inflates from" in run.err and "Traceback" not in run.err, run.err[-800:]
    assert len(run.err.strip().splitlines()) == 1


WRAPPER = "import triton\n@triton.jit\ndef k(x):\n    pass\ndef w_wrapper(x):\n    k[(1,)](x)\n"


@pytest.mark.parametrize("jobs", ["0", "-3", "65", "1000", "9" * 30, "two", "1e3"])
def test_audit_jobs_out_of_range_is_one_argparse_line(tmp_path, jobs):
    (tmp_path / "w.py").write_text(WRAPPER)
    run = run_kbt("audit", tmp_path / "w.py", f"--jobs={jobs}")
    assert run.code == 2 and "Traceback" not in run.err
    assert run.err.strip().splitlines()[-1].startswith("kbt audit: error: argument --jobs: expected a whole number")


def test_audit_jobs_in_range_still_audits(tmp_path):
    (tmp_path / "w.py").write_text(WRAPPER)
    run = run_kbt("audit", tmp_path / "w.py", "--jobs", "2")
    assert run.code in (0, 1) and "Traceback" not in run.err and "error: argument" not in run.err


@pytest.mark.parametrize("option, value", [("--timeout", "-5"), ("--timeout", "0"), ("--timeout", "nan"),
                                           ("--timeout", "1.5"), ("-j", "9" * 25), ("-j", "0")])
def test_notebooks_numbers_are_checked_before_any_work(tmp_path, option, value):
    run = run_kbt("--kb-root", REPO, "notebooks", "wrapper_boundary", f"{option}={value}", "--no-html", "-o", tmp_path / "nb",
                  cwd=tmp_path)
    assert run.code == 2 and "Traceback" not in run.err
    assert "error: argument" in run.err.strip().splitlines()[-1]
    assert not (tmp_path / "nb").exists()


def test_a_long_run_of_brackets_in_a_page_lints_in_time_near_the_plain_page(tmp_path):
    root = copy_repo(tmp_path)
    page = root / "kb" / "constraints" / "accumulator-precision.md"
    text = page.read_text()
    page.write_text(text + "\n" + "x" * 200_000 + "\n")
    control = run_kbt("lint", cwd=root)
    page.write_text(text + "\n" + "[" * 200_000 + "\n")
    run = run_kbt("lint", cwd=root)
    assert "Traceback" not in run.err
    assert run.seconds < 3 * control.seconds + 2, (run.seconds, control.seconds)  # ~25 s against ~0.5 s before


def test_the_link_pattern_is_linear_in_a_run_of_brackets():
    import time

    from kb_tools.lint import _MD_LINK

    def took(text):
        start = time.perf_counter()
        _MD_LINK.findall(text)
        return time.perf_counter() - start

    assert _MD_LINK.findall("see [the page](../x.md) and [b](y.md#z)") == ["../x.md", "y.md#z"]
    plain, brackets = took("a" * 100_000), took("[" * 100_000)
    assert brackets < 20 * plain + 0.05, (brackets, plain)
