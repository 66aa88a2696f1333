"""kbt compare end to end: exit 0 pass, 1 fail with the reason, 2 unusable input; json output."""

import json

import numpy as np
import pytest
import torch

from kb_tools.cli import main


@pytest.fixture(scope="module")
def legs(tmp_path_factory):
    """An fp16 softmax kernel with fp32 accumulation, its third-party leg and two goldens."""
    d = tmp_path_factory.mktemp("legs")
    gen = torch.Generator().manual_seed(0)
    x = (2 * torch.randn(32, 256, generator=gen)).half().float()
    e = torch.exp(x - x.amax(-1, keepdim=True))
    dut = (e * (1.0 / e.reshape(32, 16, 16).sum(-1).sum(-1, keepdim=True))).half()
    golden = torch.softmax(x, -1)  # Promote: fp32 in, fp32 out
    np.save(d / "dut.npy", dut.numpy())
    torch.save(golden, d / "golden.pt")
    torch.save(golden.half(), d / "golden_astype.pt")  # the golden that casts back
    torch.save(torch.softmax(x, -1).half(), d / "tp.pt")
    np.save(d / "short.npy", dut.numpy()[:4])
    (d / "junk.pt").write_bytes(b"not a tensor")
    return d


def _run(capsys, *argv):
    code = main(["compare", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_promote_golden_passes(legs, capsys):
    code, out, _ = _run(capsys, "--dut", legs / "dut.npy", "--golden", legs / "golden.pt",
                        "--third-party", legs / "tp.pt", "--dtype", "float16", "--criterion", "cross_check")
    assert code == 0
    assert out.startswith("kbt compare: PASS cross_check (float16, level L1)")
    assert "rmse" in out and "cosine" in out


def test_collapsed_golden_passes_because_ttk_floors_the_denominator(legs, capsys):
    """The golden cast back to fp16 equals the third-party leg; TTK's safe_div floors the zero
    third-party error at 2^-11, so the collapse goes unnoticed (three-leg-comparison page)."""
    code, out, _ = _run(capsys, "--dut", legs / "dut.npy", "--golden", legs / "golden_astype.pt",
                        "--third-party", legs / "tp.pt", "--criterion", "cross_check", "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["verdict"] == "pass" and report["level"] == "L1"
    assert report["metrics"]["rmse_third"] == 0 and report["metrics"]["mare_third"] == 0
    assert report["ratios"]["mare"] == report["metrics"]["mare_dut"] / 2**-11
    assert set(report["legs"]) == {"dut", "third_party"} and report["legs"]["third_party"]["rmse"] == 0


def test_close_with_a_third_party_leg_warns_that_promote_is_off(legs, capsys):
    code, out, _ = _run(capsys, "--dut", legs / "dut.npy", "--golden", legs / "golden.pt",
                        "--third-party", legs / "tp.pt", "--criterion", "close")
    assert "warning: --compare close overrides cross_check" in out
    assert code in (0, 1)


@pytest.mark.parametrize("args,message", [
    (["--golden", "short.npy", "--criterion", "close"], "against the DUT's 8192"),
    (["--golden", "golden.pt", "--criterion", "cross_check"], "needs --third-party"),
    (["--golden", "junk.pt"], "not a readable tensor file"),
    (["--golden", "missing.npy"], "no such file"),
    (["--golden", "golden.pt", "--dtype", "float32"], "holds float16"),
    (["--golden", "golden.pt", "--dtype", "float17"], "--dtype: CMP001 unknown dtype 'float17'"),
    (["--golden", "golden.pt", "--criterion", "quant"], "int4/int8"),
])
def test_unusable_input_is_one_line_and_exit_2(legs, capsys, args, message):
    argv = ["--dut", legs / "dut.npy"] + [legs / a if a.endswith((".npy", ".pt")) else a for a in args]
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_integer_outputs_use_binary_equal(tmp_path, capsys):
    a = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    torch.save(a, tmp_path / "a.pt")
    b = a.clone()
    b[1, 2] = -1
    torch.save(b, tmp_path / "b.pt")
    code, out, _ = _run(capsys, "--dut", tmp_path / "a.pt", "--golden", tmp_path / "b.pt", "--criterion", "binary_equal")
    assert code == 1 and "first at index (1, 2)" in out
    code, out, _ = _run(capsys, "--dut", tmp_path / "a.pt", "--golden", tmp_path / "b.pt", "--criterion", "close")
    assert code == 1 and out.startswith("kbt compare: FAIL binary_equal (int32, asked for close)")
    assert "TTK judges int32 outputs bit for bit" in out


def test_bfloat16_from_pt(tmp_path, capsys):
    g = torch.linspace(1, 2, 64)
    torch.save(g.bfloat16(), tmp_path / "d.pt")
    torch.save(g, tmp_path / "g.pt")
    code, out, _ = _run(capsys, "--dut", tmp_path / "d.pt", "--golden", tmp_path / "g.pt",
                        "--dtype", "bf16", "--criterion", "mix_tolerance")
    assert code == 0 and "mix_tolerance (bfloat16)" in out


def test_mixed_alias_and_0d_files(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.float32(1.0))
    np.save(tmp_path / "b.npy", np.float32(1.0))
    code, out, _ = _run(capsys, "--dut", tmp_path / "a.npy", "--golden", tmp_path / "b.npy", "--criterion", "mixed")
    assert code == 0 and out.startswith("kbt compare: PASS mix_tolerance (float32)")


def test_arguments_are_checked_before_torch_is_imported(tmp_path):
    """An unknown --dtype or a missing file is reported without paying for torch."""
    import subprocess
    import sys

    np.save(tmp_path / "g.npy", np.zeros(3, dtype=np.float32))
    probe = ("import sys; from kb_tools.cli import main; "
             f"code = main(['compare', '--dut', {str(tmp_path / 'missing.npy')!r}, '--golden', {str(tmp_path / 'g.npy')!r}]); "
             f"code2 = main(['compare', '--dut', {str(tmp_path / 'g.npy')!r}, '--golden', {str(tmp_path / 'g.npy')!r}, "
             "'--dtype', 'float17']); print(code, code2, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["2", "2", "False"], out.stderr
    assert "--dtype: CMP001 unknown dtype" in out.stderr


def test_gpu_check_compare_step_runs_on_cuda_or_skips_with_the_reason(tmp_path):
    """`make gpu-check`'s compare-cuda step: the criteria against a device-to-device copy, or a
    visible skip naming why there is no device."""
    import subprocess
    import sys

    from conftest import REPO

    out = tmp_path / "gc"
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_check.py"), "-o", str(out), "--steps",
                             "compare-cuda", "--log2n", "16", "--repeats", "1"], cwd=REPO, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    step = json.loads((out / "summary.json").read_text())["steps"][0]
    if torch.cuda.is_available():
        rows = json.loads((out / "bench_compare_cuda.json").read_text())["rows"]
        assert step["status"] == "ran" and {r["contender"] for r in rows if r["aim"]} == {
            "mix_tolerance", "stat_rel_err", "cross_check"}
    else:
        assert step["status"] == "skipped" and "cuda" in step["detail"].lower()
        assert not (out / "bench_compare_cuda.json").exists()
