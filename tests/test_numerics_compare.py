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


def test_collapsed_golden_fails_with_the_reason_in_json(legs, capsys):
    code, out, _ = _run(capsys, "--dut", legs / "dut.npy", "--golden", legs / "golden_astype.pt",
                        "--third-party", legs / "tp.pt", "--criterion", "cross_check", "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["verdict"] == "fail" and report["level"] == "L1"
    assert report["ratios"]["rmse"] is None  # zero denominator: reported, not divided
    assert any("third-party leg's error is 0" in r for r in report["reasons"])
    assert report["metrics"]["third_party"]["rmse"] == 0
    assert set(report["metrics"]) == {"dut", "third_party"}


def test_close_with_a_third_party_leg_warns_that_promote_is_off(legs, capsys):
    code, out, _ = _run(capsys, "--dut", legs / "dut.npy", "--golden", legs / "golden.pt",
                        "--third-party", legs / "tp.pt", "--criterion", "close")
    assert "warning: --compare close overrides cross_check" in out
    assert code in (0, 1)


@pytest.mark.parametrize("args,message", [
    (["--golden", "short.npy", "--criterion", "close"], "does not match the DUT's"),
    (["--golden", "golden.pt", "--criterion", "cross_check"], "needs --third-party"),
    (["--golden", "junk.pt"], "not a readable tensor file"),
    (["--golden", "missing.npy"], "no such file"),
    (["--golden", "golden.pt", "--dtype", "float32"], "holds float16"),
    (["--golden", "golden.pt", "--dtype", "float17"], "unknown --dtype"),
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
    code, _, err = _run(capsys, "--dut", tmp_path / "a.pt", "--golden", tmp_path / "b.pt", "--criterion", "close")
    assert code == 2 and "binary_equal" in err


def test_bfloat16_from_pt(tmp_path, capsys):
    g = torch.linspace(1, 2, 64)
    torch.save(g.bfloat16(), tmp_path / "d.pt")
    torch.save(g, tmp_path / "g.pt")
    code, out, _ = _run(capsys, "--dut", tmp_path / "d.pt", "--golden", tmp_path / "g.pt",
                        "--dtype", "bf16", "--criterion", "mix_tolerance")
    assert code == 0 and "mix_tolerance (bfloat16)" in out
