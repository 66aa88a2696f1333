"""TTK's criteria and the descriptive metrics on hand-made vectors whose verdicts are known in advance;
the chunked and the unmasked fast paths give the same numbers as one whole, masked pass, and the
compiled one pass (onepass) the same as the torch passes."""

import math

import pytest
import torch

from kb_tools.numerics import chunks, criteria, metrics, onepass
from kb_tools.numerics import cross_check as cross_check_module
from kb_tools.numerics import tolerances as tol

NAN, INF = float("nan"), float("inf")


def t32(values):
    return torch.tensor(values, dtype=torch.float32)


# ---- metrics ---------------------------------------------------------------------------------

def test_metrics_known_values():
    m = metrics.compute(t32([1.0, 2.0, 3.0]), t32([1.0, 2.0, 4.0]))
    assert m.max_abs == 1.0
    assert m.rmse == pytest.approx(math.sqrt(1 / 3))
    assert m.cosine == pytest.approx(17 / math.sqrt(14 * 21))
    assert m.mere == pytest.approx((1 / (4 + tol.REL_EPS)) / 3)
    assert m.max_rel == pytest.approx(0.25, rel=1e-6)
    assert m.max_ulp == 0x40800000 - 0x40400000  # 4.0 and 3.0 are 2^22 float32 steps apart
    assert m.share_rel_1e3 == pytest.approx(2 / 3) and m.share_rel_5e3 == pytest.approx(2 / 3)


def test_ulp_counts_across_zero_and_in_half_precision():
    tiny = torch.tensor([2**-24, 1.0], dtype=torch.float16)
    other = torch.tensor([-(2**-24), 1.0009765625], dtype=torch.float16)  # next fp16 after 1.0
    m = metrics.compute(tiny[:1], other[:1])
    assert m.max_ulp == 2  # -min subnormal, (±0), +min subnormal
    assert metrics.compute(tiny[1:], other[1:]).max_ulp == 1
    assert metrics.compute(torch.tensor([0.0]), torch.tensor([-0.0])).max_ulp == 0


def test_zero_denominators_are_undefined_not_zero():
    zeros = torch.zeros(5)
    m = metrics.compute(zeros, zeros)
    assert m.cosine is None  # 0/0
    assert m.max_abs == 0 and m.rmse == 0 and m.mere == 0
    assert metrics.compute(t32([1.0, 2.0]), torch.zeros(2)).cosine is None
    empty = metrics.compute(torch.zeros(0), torch.zeros(0))
    assert empty.n == 0 and empty.mere is None and empty.max_abs is None and empty.cosine is None


def test_special_values_match_by_position_and_sign():
    m = metrics.compute(t32([NAN, INF, -INF, 1.0]), t32([NAN, INF, -INF, 1.0]))
    assert (m.special_match, m.special_mismatch, m.finite) == (3, 0, 1)
    m = metrics.compute(t32([NAN, INF, 1.0, 2.0]), t32([1.0, -INF, NAN, 2.0]))
    assert (m.special_match, m.special_mismatch, m.finite) == (0, 3, 1)


def test_chunked_pass_equals_single_pass(monkeypatch):
    gen = torch.Generator().manual_seed(1)
    g = torch.randn(1000, generator=gen)
    a = g + 1e-3 * torch.randn(1000, generator=gen)
    a[7] = NAN
    whole = metrics.compute(a, g)
    monkeypatch.setattr(chunks, "CPU_CHUNK", 37)
    chunked = metrics.compute(a, g)
    for key, value in whole.as_dict().items():
        other = chunked.as_dict()[key]
        assert other == pytest.approx(value, rel=1e-12) if isinstance(value, float) else other == value, key


def test_finite_fast_path_equals_masked_path(monkeypatch):
    gen = torch.Generator().manual_seed(2)
    g = torch.randn(5000, generator=gen) * torch.logspace(-6, 2, 5000)
    a = (g + 1e-3 * torch.randn(5000, generator=gen)).half()
    fast = metrics.compute(a, g).as_dict()
    monkeypatch.setattr(chunks, "all_finite", lambda *args: False)
    masked = metrics.compute(a, g).as_dict()
    for key, value in fast.items():
        assert masked[key] == pytest.approx(value, rel=1e-12) if isinstance(value, float) else masked[key] == value, key


@pytest.mark.parametrize("noise", [1e-5, 2e-2])
@pytest.mark.parametrize("golden_dtype", ["int16", "int32", "int64", "uint8"])
def test_integer_golden_for_a_float_output_follows_numpy_promotion(golden_dtype, noise):
    """A float DUT against an integer golden: TTK's numpy arithmetic widens to float64 for 32/64-bit
    integers and stays float32 below; the verdicts match the restatement's."""
    import ttk_reference as ref

    gen = torch.Generator().manual_seed(5)
    golden = torch.randint(0, 100, (500,), generator=gen).to(getattr(torch, golden_dtype))
    dut = golden.float() * (1 + noise * torch.randn(500, generator=gen))
    names = ("float32", golden_dtype)
    for name, rule in (("mix_tolerance", ref.mix_tolerance), ("stat_rel_err", ref.stat_rel_err), ("close", ref.close)):
        assert criteria.judge(name, dut, golden).passed == rule(dut.numpy(), golden.numpy(), names), name


def test_size_mismatch_is_an_error():
    with pytest.raises(ValueError, match="elements"):
        metrics.compute(torch.zeros(3), torch.zeros(4))


def _verdicts(a, g, tp):
    return {name: criteria.judge(name, a, g, tp).as_dict()
            for name in ("mix_tolerance", "close", "stat_rel_err", "cross_check")}


def _always_masked(monkeypatch, module, name):
    """Make a criterion's pass take TTK's NaN/inf masks even on finite data."""
    fast_or_masked = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args, masked: fast_or_masked(*args, masked=True))


@pytest.mark.parametrize("with_specials", [False, True])
def test_criteria_chunked_and_masked_paths_equal_one_pass(monkeypatch, with_specials):
    gen = torch.Generator().manual_seed(4)
    g = torch.randn(3000, generator=gen, dtype=torch.float64) * torch.logspace(-7, 1, 3000, dtype=torch.float64)
    a = (g * (1 + 1e-3 * torch.randn(3000, generator=gen, dtype=torch.float64))).half()
    tp = (g * (1 + 1e-3 * torch.randn(3000, generator=gen, dtype=torch.float64))).half()
    if with_specials:
        a[5], tp[5], a[9] = NAN, NAN, INF
    compiled = _verdicts(a, g.float(), tp)
    monkeypatch.setattr(onepass, "supports", lambda *legs: False)  # the torch passes from here on
    whole = _verdicts(a, g.float(), tp)
    monkeypatch.setattr(chunks, "CPU_CHUNK", 37)
    chunked = _verdicts(a, g.float(), tp)
    for module, name in ((criteria, "_mix_pass"), (criteria, "_close_pass"), (criteria, "_stat_pass"),
                         (cross_check_module, "_cross_pass")):
        _always_masked(monkeypatch, module, name)
    masked = _verdicts(a, g.float(), tp)
    for name, verdict in whole.items():
        for other in (chunked[name], masked[name], compiled[name]):
            assert other["verdict"] == verdict["verdict"] and other["reasons"] == verdict["reasons"], name
            for key, value in verdict["metrics"].items():
                if isinstance(value, float):
                    assert other["metrics"][key] == pytest.approx(value, rel=1e-5), (name, key)


# ---- binary_equal --------------------------------------------------------------------------

def test_binary_equal():
    a = torch.arange(10, dtype=torch.int32)
    assert criteria.binary_equal(a, a.clone()).passed
    b = a.clone()
    b[4] = 99
    v = criteria.binary_equal(a, b)
    assert not v.passed and "1 of 10" in v.reasons[0] and "(4,)" in v.reasons[0]
    assert criteria.binary_equal(a.to(torch.int8), a).passed  # integers compare by value across widths
    assert criteria.binary_equal(t32([NAN, 1.0]), t32([NAN, 1.0])).passed
    assert not criteria.binary_equal(t32([0.0]), t32([-0.0])).passed  # bits differ
    assert criteria.binary_equal(torch.zeros(0), torch.zeros(0)).passed
    assert criteria.binary_equal(torch.tensor(3), torch.tensor(3)).passed
    assert not criteria.binary_equal(torch.tensor(3), torch.tensor(4)).passed
    v = criteria.binary_equal(t32([1.0]), torch.tensor([1.0], dtype=torch.float64))  # TTK: a FAIL, not an error
    assert not v.passed and "not bitwise comparable" in v.reasons[0]


# ---- mix_tolerance ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad,passed", [(10, True), (11, False)])
def test_mix_tolerance_matched_ratio(bad, passed):
    g = torch.ones(1000)
    a = g.clone()
    a[:bad] += 0.01  # over atol + rtol*|g| = 2^-8 for fp16, under the 0.1 hard cap
    v = criteria.mix_tolerance(a, g, "float16")
    assert v.passed is passed
    if not passed:
        assert "matched ratio 0.989000 < 0.99" in v.reasons[0]


def test_mix_tolerance_hard_cap_catches_one_outlier():
    g = torch.ones(1000)
    a = g.clone()
    a[3] = 1.5
    v = criteria.mix_tolerance(a, g, "float16")
    assert not v.passed and "cap 0.1" in v.reasons[0]


def test_mix_tolerance_special_cases():
    assert criteria.mix_tolerance(torch.zeros(8), torch.zeros(8)).passed
    assert criteria.mix_tolerance(t32([NAN, INF, 1.0]), t32([NAN, INF, 1.0])).passed
    v = criteria.mix_tolerance(t32([NAN] + [1.0] * 199), t32([1.0] * 200))
    assert not v.passed and "NaN/inf mismatch at 1" in v.reasons[0]
    assert not criteria.mix_tolerance(t32([INF] + [1.0] * 199), t32([-INF] + [1.0] * 199)).passed
    assert criteria.mix_tolerance(torch.zeros(0), torch.zeros(0)).passed
    assert criteria.mix_tolerance(torch.tensor(1.0), torch.tensor(1.0)).passed
    assert not criteria.mix_tolerance(torch.tensor(1.0), torch.tensor(2.0)).passed


# ---- close -----------------------------------------------------------------------------------

@pytest.mark.parametrize("n,bad,passed", [(10000, 1, True), (10000, 2, False), (20000, 2, True), (20000, 3, False)])
def test_close_allows_a_share_of_rtol(n, bad, passed):
    g = torch.ones(n)
    a = g.clone()
    a[:bad] = 1.001  # fp32's rtol is 1e-4, and so is ptol: (1 - precision) > ptol
    v = criteria.close(a, g)
    assert v.passed is passed
    if not passed:
        assert f"{bad} of {n}" in v.reasons[0]


def test_close_special_and_degenerate():
    assert criteria.close(torch.zeros(4), torch.zeros(4)).passed
    assert not criteria.close(t32([NAN]), t32([1.0])).passed
    assert criteria.close(torch.zeros(0), torch.zeros(0)).passed


# ---- stat_rel_err ----------------------------------------------------------------------------

@pytest.mark.parametrize("r,passed", [(0.0009, True), (0.001, False)])  # fp16 threshold 2^-10 ≈ 9.77e-4
def test_stat_rel_err_mere(r, passed):
    g = torch.linspace(1, 2, 100, dtype=torch.float64)
    v = criteria.stat_rel_err(g * (1 + r), g, "float16")
    assert v.passed is passed
    if not passed:
        assert v.reasons[0].startswith("MERE")


def test_stat_rel_err_mare_catches_what_the_mean_hides():
    g = torch.ones(1000, dtype=torch.float64)
    a = g.clone()
    a[0] = 1.01  # MERE 1e-5, MARE 1e-2 >= 10 * 2^-10
    v = criteria.stat_rel_err(a, g, "float16")
    assert not v.passed and len(v.reasons) == 1 and v.reasons[0].startswith("MARE")


def test_stat_rel_err_special_and_degenerate():
    assert criteria.stat_rel_err(torch.zeros(5), torch.zeros(5)).passed
    v = criteria.stat_rel_err(t32([NAN, NAN]), t32([NAN, NAN]))
    assert v.passed and v.metrics["mere"] is None
    assert not criteria.stat_rel_err(t32([INF, 1.0]), t32([1.0, 1.0])).passed
    assert criteria.stat_rel_err(torch.zeros(0), torch.zeros(0)).passed
    assert not criteria.stat_rel_err(torch.tensor(1.5), torch.tensor(1.0)).passed


# ---- cross_check -----------------------------------------------------------------------------

G = torch.linspace(1, 2, 500, dtype=torch.float64)


@pytest.mark.parametrize("dut_err,level,passed", [
    (1.4e-3, "L1", True), (1.4e-3, "L2", False), (1.6e-3, "L1", False), (1.6e-3, "L0", True)])
def test_cross_check_ratio_levels(dut_err, level, passed):
    tp = G * (1 + 1e-3)
    v = criteria.cross_check(G * (1 + dut_err), G, tp, "float32", level)
    assert v.passed is passed
    assert v.ratios["mere"] == pytest.approx(dut_err / 1e-3, rel=1e-6)
    if not passed:
        assert any(r.startswith("mere ratio") for r in v.reasons)


def test_cross_check_floors_a_zero_denominator_at_the_small_value():
    v = criteria.cross_check((G * (1 + 1e-6)).float(), G, G.float(), "float32")
    assert v.passed
    assert v.ratios["mere"] == pytest.approx(v.metrics["mere_dut"] / 2**-14)
    v = criteria.cross_check(G.float(), G.float().double(), G.float(), "float32")  # 0 over 0: consistent
    assert v.passed and v.ratios["mere"] == 1.0
    v = criteria.cross_check((G * 1.01).float(), G, G.float(), "float32")  # 1 % off: 0.01 / 2^-14 > 5
    assert not v.passed and "floored at the small value" in v.reasons[0]


@pytest.mark.parametrize("dut_errors,passed", [(4, True), (5, False)])
def test_cross_check_small_value_region_by_error_counts(dut_errors, passed):
    g = torch.full((100,), 1e-6, dtype=torch.float64)  # all below fp32's 2^-14
    tp, dut = g.clone(), g.clone()
    tp[:2] += 1e-8  # errors above 2^-30
    dut[:dut_errors] += 1e-8
    v = criteria.cross_check(dut, g, tp, "float32")
    assert v.passed is passed
    assert v.ratios["small_err"] == pytest.approx(dut_errors / 2)
    assert "no element in the large-value region" in v.notes
    if not passed:
        assert "small-value region" in v.reasons[0]


def test_cross_check_rejects_what_it_cannot_judge():
    with pytest.raises(ValueError, match="third-party"):
        criteria.cross_check(G, G, None, "float32")
    with pytest.raises(ValueError, match="supports"):
        criteria.cross_check(G, G, G, "float64")
    assert criteria.judge("cross_check", torch.arange(3), torch.arange(3), None).criterion == "binary_equal"


def test_cross_check_special_and_degenerate():
    v = criteria.cross_check(t32([NAN, 1.0]), t32([1.0, 1.0]), t32([1.0, 1.0]))
    assert not v.passed and "NaN/inf" in v.reasons[0]
    assert criteria.cross_check(torch.zeros(0), torch.zeros(0), torch.zeros(0)).passed
    assert criteria.cross_check(torch.zeros(4), torch.zeros(4), torch.zeros(4)).passed


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_metrics_on_cuda_match_cpu():
    gen = torch.Generator().manual_seed(3)
    g = torch.randn(4096, generator=gen)
    a = (g + 1e-3 * torch.randn(4096, generator=gen)).half()
    cpu = metrics.compute(a, g).as_dict()
    gpu = metrics.compute(a.cuda(), g.cuda()).as_dict()
    for key, value in cpu.items():
        assert gpu[key] == pytest.approx(value, rel=1e-9) if isinstance(value, float) else gpu[key] == value


# ---- the compiled one pass against the torch passes ------------------------------------------------

PAIRS = [("float32", "float32"), ("float16", "float32"), ("bfloat16", "float32"), ("float16", "float16"),
         ("bfloat16", "bfloat16"), ("float32", "float64"), ("float64", "float64"), ("float16", "float64"),
         ("float8_e4m3fn", "float32"), ("float8_e5m2", "float8_e5m2")]


def _legs(dut_dtype, golden_dtype, specials, seed=6, n=2999):
    gen = torch.Generator().manual_seed(seed)
    g = torch.randn(n, generator=gen, dtype=torch.float64) * torch.logspace(-6, 3, n, dtype=torch.float64)
    a = g * (1 + 2e-3 * torch.randn(n, generator=gen, dtype=torch.float64))
    tp = g * (1 + 2e-3 * torch.randn(n, generator=gen, dtype=torch.float64))
    g[::97] = 0.0
    if specials:
        a[3], g[3], tp[3] = NAN, NAN, NAN  # matching NaN
        a[8], g[8] = INF, INF  # matching inf
        a[11], tp[11] = -INF, -INF  # DUT agrees with the third party only
        a[20] = NAN  # a mismatch
    return a.to(getattr(torch, dut_dtype)), g.to(getattr(torch, golden_dtype)), tp.to(getattr(torch, dut_dtype))


def _what_failed(verdict):
    """(passed, the first word of each reason): the reasons' figures differ in their last digits."""
    return verdict.passed, [reason.split()[0] for reason in verdict.reasons]


def _numbers(verdict) -> dict:
    return {key: value for key, value in verdict.as_dict().items() if key not in ("reasons", "notes")}


def _both_paths(monkeypatch, call):
    compiled = call()
    with monkeypatch.context() as m:
        m.setattr(onepass, "supports", lambda *legs: False)
        torch_passes = call()
    return compiled, torch_passes


def _assert_same(compiled: dict, torch_passes: dict, rel: float):
    assert compiled.keys() == torch_passes.keys()
    for key, value in torch_passes.items():
        if isinstance(value, float) and math.isfinite(value):
            assert compiled[key] == pytest.approx(value, rel=rel), key
        elif isinstance(value, dict):
            _assert_same(compiled[key], value, rel)
        else:
            assert compiled[key] == value, key


@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("dut_dtype,golden_dtype", PAIRS)
def test_compiled_pass_equals_the_torch_passes(monkeypatch, dut_dtype, golden_dtype, specials):
    """Verdicts, reasons and every number agree (sums to rounding: the order of addition differs)."""
    a, g, tp = _legs(dut_dtype, golden_dtype, specials)
    names = ["mix_tolerance", "stat_rel_err"] + (["cross_check"] if dut_dtype in tol.SMALL_VALUE else [])
    for name in names:
        compiled, torch_passes = _both_paths(monkeypatch, lambda: criteria.compare(name, a, g, tp))
        assert _what_failed(compiled[0]) == _what_failed(torch_passes[0]), name
        _assert_same(_numbers(compiled[0]), _numbers(torch_passes[0]), rel=1e-5)
        for leg in torch_passes[1]:
            _assert_same(compiled[1][leg].as_dict(), torch_passes[1][leg].as_dict(), rel=1e-9)


@pytest.mark.parametrize("name", ["stat_rel_err", "cross_check"])
def test_a_verdict_whose_float32_sums_overflow_is_redone_in_float64(monkeypatch, name):
    """A verdict alone adds in float32 over short runs; where a run's sum overflows (squares of
    differences near 1e20, relative errors near 1e37), the block is redone with float64 sums, as
    TTK and the torch pass redo an overflowing sum of squares: the figures stay finite and agree
    with the float64 sums of a comparison with metrics. (stat_rel_err's torch pass keeps its float32
    sum, inf, as TTK's np.mean does: the same verdict, another figure.)"""
    a, g, tp = _legs("float32", "float32", specials=False)
    g[:600] = 1.0
    a[:600] = 1e20  # |a-g|^2 = 1e40 overflows float32; 1e20 / (1 + eps) does not
    g[700:1000], a[700:1000] = 0.0, 1e30  # relative error 1e30 / 1e-7 = 1e37: 300 of them overflow a float32 sum
    tp[:1000] = g[:1000]
    compiled, torch_passes = _both_paths(monkeypatch, lambda: criteria.judge(name, a, g, tp))
    assert _what_failed(compiled) == _what_failed(torch_passes)
    if name == "cross_check":  # its torch pass redoes overflowing squares in float64 too
        _assert_same(_numbers(compiled), _numbers(torch_passes), rel=1e-5)
    wide = criteria.compare(name, a, g, tp)[0]  # with the metrics every sum is float64 from the start
    _assert_same(_numbers(compiled), _numbers(wide), rel=1e-6)


@pytest.mark.parametrize("name", ["stat_rel_err", "cross_check"])
def test_a_verdicts_float32_runs_stay_within_their_bound(name):
    """A verdict alone adds in float32 runs (onepass.RUN elements, at most 64 terms a lane): its
    means stay within 70 float32 units in the last place of the float64 sums a comparison with
    metrics makes, and its maxima are the same bits."""
    gen = torch.Generator().manual_seed(11)
    g = torch.randn(1 << 17, generator=gen) * torch.logspace(-3, 3, 1 << 17)
    a, tp = (g * (1 + 1e-3 * torch.randn(1 << 17, generator=gen)) for _ in range(2))
    alone, wide = criteria.judge(name, a, g, tp).metrics, criteria.compare(name, a, g, tp)[0].metrics
    for key, value in wide.items():
        if key.startswith(("mere", "rmse")):
            assert alone[key] == pytest.approx(value, rel=70 * 2.0**-24) and alone[key] != value, key
        elif key.startswith("mare"):
            assert alone[key] == value, key


def test_compare_reads_the_legs_once(monkeypatch):
    """criteria.compare: the verdict and every leg's metrics from one compiled pass (counted)."""
    passes = []
    run = onepass._run
    monkeypatch.setattr(onepass, "_run", lambda *args: passes.append(args[0].__name__) or run(*args))
    a, g, tp = _legs("float16", "float32", specials=True)
    for name, expected in (("mix_tolerance", ["_pair_part"]), ("stat_rel_err", ["_pair_part"]),
                           ("cross_check", ["_cross_part"])):
        passes.clear()
        verdict, legs = criteria.compare(name, a, g, tp)
        assert passes == expected and set(legs) == ({"dut", "third_party"} if name == "cross_check" else {"dut"})


@pytest.mark.parametrize("dtype,golden_dtype", [("float16", "float32"), ("bfloat16", "float32"), ("float16", "float64"),
                                                ("bfloat16", "float64"), ("float32", "float64")])
def test_ulps_round_the_golden_as_torch_does(dtype, golden_dtype):
    """The DUT is torch's own rounding of the golden, so every element is 0 ULP away: ties, the
    subnormals, the overflow edge and float64 goldens (rounded through float32) included."""
    gen = torch.Generator().manual_seed(7)
    wide = getattr(torch, golden_dtype)
    g = torch.randn(20000, generator=gen, dtype=torch.float64) * torch.logspace(-9, 5, 20000, dtype=torch.float64)
    steps = torch.arange(-300, 300, dtype=torch.float64)
    ties = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23}[dtype] * (steps + 0.5) + 1.0
    edge = torch.tensor([65504.0, 65519.0, 65520.0, 65536.0, 2**-24, 2**-25, 3 * 2**-26, 2**-14 - 2**-25,
                         3.3895e38, 1e-40, -1e-45], dtype=torch.float64)
    g = torch.cat([g, ties, -ties, edge, edge.neg()]).to(wide)
    dut = g.to(getattr(torch, dtype))
    finite = torch.isfinite(dut.double()) & torch.isfinite(g.double())
    m = metrics.compute(dut[finite], g[finite])
    assert m.max_ulp == 0, m
    assert metrics.compute(dut[finite][:1] * 0 + 1, torch.ones(1, dtype=wide)).max_ulp == 0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_criteria_on_cuda_match_cpu():
    a, g, tp = _legs("float16", "float32", specials=True)
    for name in ("mix_tolerance", "stat_rel_err", "cross_check"):
        cpu_verdict, cpu_legs = criteria.compare(name, a, g, tp)
        gpu_verdict, gpu_legs = criteria.compare(name, a.cuda(), g.cuda(), tp.cuda())
        assert _what_failed(gpu_verdict) == _what_failed(cpu_verdict)
        _assert_same(_numbers(gpu_verdict), _numbers(cpu_verdict), rel=1e-5)
        for leg in cpu_legs:
            _assert_same(gpu_legs[leg].as_dict(), cpu_legs[leg].as_dict(), rel=1e-9)


def test_compiled_pass_figures_do_not_depend_on_the_thread_count():
    """The parts' rows are added in order, whoever ran them: 1 and 2 threads give the same bits."""
    a, g, tp = _legs("float32", "float32", specials=True, n=max(onepass.POOL_MIN_ELEMENTS.values()) + 4099)
    threads = torch.get_num_threads()
    try:
        runs = []
        for count in (1, 2):
            torch.set_num_threads(count)
            judged = [criteria.compare(name, a, g, tp) for name in ("mix_tolerance", "cross_check")]
            runs.append([(v.as_dict(), {leg: m.as_dict() for leg, m in legs.items()}) for v, legs in judged])
    finally:
        torch.set_num_threads(threads)
    assert runs[0] == runs[1]
