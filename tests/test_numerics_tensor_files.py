"""Every tensor file numpy or torch can write is either compared by ``kbt compare`` or refused with
one line and exit 2 — never a traceback; exit 1 means a FAIL verdict and nothing else."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kb_tools.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # complex32, qint8 and TypedStorage are deprecated in torch

CRITERIA = ("mix_tolerance", "close", "stat_rel_err", "binary_equal", "cross_check")

NUMPY_COMPARED = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "float16", "float32", "float64", ">f4", "<f8", ">i4")
NUMPY_REFUSED = ("complex64", "complex128", "datetime64[s]", "U3", "S2", "V4", [("a", "f4"), ("b", "i2")])
TORCH_COMPARED = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
                  "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
                  "float4_e2m1fn_x2")
TORCH_REFUSED = ("float8_e4m3fnuz", "float8_e5m2fnuz", "complex32", "complex64", "complex128")


def numpy_file(path, dtype, shape=(3, 4)):
    values = np.arange(int(np.prod(shape))).reshape(shape) % 7
    if isinstance(dtype, str) and dtype.startswith(("U", "S", "V", "datetime")):
        array = values.astype(dtype)
    else:
        array = np.zeros(shape, dtype=dtype) if isinstance(dtype, list) else values.astype(dtype)
    np.save(path, np.asfortranarray(array) if array.ndim == 2 else array)
    return path


def torch_file(path, name):
    dtype = getattr(torch, name)
    if name == "float4_e2m1fn_x2":
        tensor = torch.arange(12, dtype=torch.uint8).view(dtype)
    elif dtype.is_complex:
        tensor = torch.ones(12, dtype=torch.complex64).to(dtype) if name != "complex32" else torch.ones(12, dtype=dtype)
    else:
        tensor = (torch.arange(12) % 7).to(torch.float32).to(dtype)
    torch.save(tensor.reshape(3, 4), path)
    return path


def run(capsys, dut, golden, criterion):
    code = main(["compare", "--dut", str(dut), "--golden", str(golden), "--third-party", str(dut),
                 "--criterion", criterion])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    if code == 1:
        assert out.out.startswith("kbt compare: FAIL"), out.out
    if code == 2:
        assert len(out.err.strip().splitlines()) == 1, out.err
    return code, out


@pytest.mark.parametrize("dtype", NUMPY_COMPARED, ids=str)
def test_numpy_files_are_compared(tmp_path, capsys, dtype):
    a = numpy_file(tmp_path / "a.npy", dtype)
    for criterion in CRITERIA:
        code, out = run(capsys, a, a, criterion)
        refused_cross = criterion == "cross_check" and dtype.lstrip("<>") in ("float64", "f8")
        assert code == (2 if refused_cross else 0), (criterion, out)


@pytest.mark.parametrize("dtype", NUMPY_REFUSED, ids=str)
def test_other_numpy_files_are_refused_in_one_line(tmp_path, capsys, dtype):
    a = numpy_file(tmp_path / "a.npy", dtype)
    assert run(capsys, a, a, "mix_tolerance")[0] == 2


def test_pickled_numpy_objects_are_refused(tmp_path, capsys):
    np.save(tmp_path / "o.npy", np.array([{"a": 1}, None], dtype=object))
    code, out = run(capsys, tmp_path / "o.npy", tmp_path / "o.npy", "mix_tolerance")
    assert code == 2 and "not a readable .npy array" in out.err


@pytest.mark.parametrize("name", TORCH_COMPARED)
def test_torch_files_are_compared(tmp_path, capsys, name):
    a = torch_file(tmp_path / "a.pt", name)
    for criterion in CRITERIA:
        code, out = run(capsys, a, a, criterion)
        cross_refused = criterion == "cross_check" and name in ("float64", "float8_e4m3fn", "float8_e5m2")
        assert code == (2 if cross_refused else 0), (criterion, out)


@pytest.mark.parametrize("name", TORCH_COMPARED)
def test_a_changed_element_fails_with_exit_1(tmp_path, capsys, name):
    a = torch_file(tmp_path / "a.pt", name)
    tensor = torch.load(a)
    bits = tensor.view(torch.uint8) if tensor.element_size() == 1 else None
    if name == "bool":
        tensor = ~tensor
    elif bits is not None:
        bits[0, 1] ^= 0x40 if name != "float4_e2m1fn_x2" else 0x20  # an exponent bit: far outside any tolerance
    else:
        tensor[0, 1] = 100
    torch.save(tensor, tmp_path / "b.pt")
    code, out = run(capsys, tmp_path / "b.pt", a, "mix_tolerance")
    assert code == 1, out


@pytest.mark.parametrize("name", TORCH_REFUSED)
def test_torch_dtypes_ttk_cannot_judge_are_refused(tmp_path, capsys, name):
    a = torch_file(tmp_path / "a.pt", name)
    code, out = run(capsys, a, a, "mix_tolerance")
    assert code == 2 and name in out.err


@pytest.mark.parametrize("maker,message", [
    (lambda: torch.ones(3, 3).to_sparse(), "dense"),
    (lambda: torch.quantize_per_tensor(torch.ones(4), 0.1, 0, torch.qint8), "quantized"),
    (lambda: {"out": torch.ones(3)}, "expected one tensor"),
    (lambda: [torch.ones(3)], "expected one tensor"),
])
def test_torch_objects_that_are_not_one_dense_tensor_are_refused(tmp_path, capsys, maker, message):
    torch.save(maker(), tmp_path / "x.pt")
    code, out = run(capsys, tmp_path / "x.pt", tmp_path / "x.pt", "mix_tolerance")
    assert code == 2 and message in out.err


def test_a_requires_grad_tensor_and_a_zero_d_tensor_are_compared(tmp_path, capsys):
    torch.save(torch.ones(4, requires_grad=True), tmp_path / "g.pt")
    torch.save(torch.tensor(2.0), tmp_path / "s.pt")
    assert run(capsys, tmp_path / "g.pt", tmp_path / "g.pt", "close")[0] == 0
    assert run(capsys, tmp_path / "s.pt", tmp_path / "s.pt", "stat_rel_err")[0] == 0


# ---- what a file declares is checked before its data is read -------------------------------------

def test_a_fifo_or_device_is_refused_before_it_is_opened(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "dut.npy")  # opening it for reading would block for ever (hostile-3 repro 09)
    good = numpy_file(tmp_path / "g.npy", "float32")
    code, out = run(capsys, tmp_path / "dut.npy", good, "mix_tolerance")
    assert code == 2 and "is a FIFO, expected a regular" in out.err


def _npy_header_only(path, shape, data_bytes: int):
    """A .npy file whose header declares ``shape`` float32 but holds ``data_bytes`` bytes of data."""
    import io

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": shape})
    path.write_bytes(header.getvalue() + bytes(data_bytes))
    return path


def test_a_header_that_declares_more_than_its_bytes_is_refused_from_the_header(tmp_path, capsys, monkeypatch):
    good = numpy_file(tmp_path / "g.npy", "float32")
    short = _npy_header_only(tmp_path / "short.npy", (3, 4), 40)
    code, out = run(capsys, short, good, "mix_tolerance")
    assert code == 2 and "declares 12 elements of float32 (48 bytes) but holds only 40 bytes" in out.err
    huge = _npy_header_only(tmp_path / "huge.npy", (10**7, 10**6), 16)  # 40 TB declared
    calls = []
    monkeypatch.setattr(np, "load", lambda *a, **k: calls.append(a))
    code, out = run(capsys, huge, good, "mix_tolerance")
    assert code == 2 and "declares 10000000000000 elements" in out.err and calls == []  # no data read


def test_more_than_the_machine_holds_is_refused(tmp_path, capsys, monkeypatch):
    """One tensor may take a quarter of the machine's memory; OPKB_MAX_TENSOR_BYTES raises the
    limit, never past the machine's memory."""
    from kb_tools.numerics import tensors_io

    a = numpy_file(tmp_path / "a.npy", "float32")  # 12 float32: 48 bytes
    torch.save(torch.ones(3, 4), tmp_path / "a.pt")
    monkeypatch.setattr(tensors_io, "machine_memory", lambda: 40)
    for path in (a, tmp_path / "a.pt"):
        code, out = run(capsys, path, path, "mix_tolerance")
        assert code == 2 and "48 bytes" in out.err and "over the 10-byte limit of one tensor" in out.err, out.err
    monkeypatch.setenv("OPKB_MAX_TENSOR_BYTES", str(10**9))
    code, out = run(capsys, a, a, "mix_tolerance")
    assert code == 2 and "over the 40-byte limit" in out.err, out.err
    monkeypatch.setattr(tensors_io, "machine_memory", lambda: 1 << 30)
    assert run(capsys, a, a, "mix_tolerance")[0] == 0


def test_an_expanded_tensor_is_refused_when_huge_and_compared_when_small(tmp_path, capsys):
    torch.save(torch.zeros(1).expand(10**12), tmp_path / "huge.pt")  # 1 KB file (hostile-3 repro 10)
    code, out = run(capsys, tmp_path / "huge.pt", tmp_path / "huge.pt", "mix_tolerance")
    assert code == 2 and "declares 1000000000000 elements of float32" in out.err
    torch.save(torch.ones(1).expand(6, 2), tmp_path / "small.pt")
    torch.save(torch.ones(6, 2), tmp_path / "dense.pt")
    assert run(capsys, tmp_path / "small.pt", tmp_path / "dense.pt", "stat_rel_err")[0] == 0


def test_cross_check_refuses_a_third_party_of_another_dtype(tmp_path, capsys):
    r = np.random.default_rng(0).standard_normal(100)
    np.save(tmp_path / "dut.npy", r.astype(np.float16))
    np.save(tmp_path / "golden.npy", r.astype(np.float32))
    np.save(tmp_path / "tp.npy", np.zeros(100, np.int8))  # zeros made any DUT look good (hostile-3 repro 30)
    code = main(["compare", "--dut", str(tmp_path / "dut.npy"), "--golden", str(tmp_path / "golden.npy"),
                 "--third-party", str(tmp_path / "tp.npy"), "--criterion", "cross_check"])
    err = capsys.readouterr().err
    assert code == 2 and "the third-party leg holds int8, the DUT float16" in err
