"""Memory parity: percentages undefined on a zero denominator, medians, and the CPU measure
seeing an allocation it should and none where there is none."""

import pytest

from kb_tools.memory import cases, parity
from kb_tools.memory.parity import ParityResult, compare, format_percent, percent_gap


def test_percent_gap_undefined_when_reference_is_zero():
    assert percent_gap(1536, 0) is None
    assert format_percent(percent_gap(1536, 0)) == "undefined"
    assert format_percent(percent_gap(0, 0)) == "undefined"
    assert percent_gap(None, 5) is None
    # seed 001 §3.5.3, B011 fp32 allocated: 268,437,504 vs 268,435,456 B
    assert format_percent(percent_gap(268_437_504, 268_435_456), 3) == "0.000763%"


def test_compare_keeps_bytes_and_marks_undefined():
    npu = ParityResult("npu", "x", (), {"total_allocated": 268_437_504, "total_reserved": 272_629_760,
                                        "incremental_allocated": 1536, "incremental_reserved": 2_097_152})
    gpu = ParityResult("cuda", "x", (), {"total_allocated": 268_435_456, "total_reserved": 268_435_456,
                                         "incremental_allocated": 0, "incremental_reserved": 0})
    gaps = compare(npu, gpu)
    assert gaps["incremental_allocated"] == (1536, 0, None)
    assert format_percent(gaps["total_reserved"][2], 5) == "1.5625%"


def test_medians_over_samples(monkeypatch):
    assert parity._median([3, 1, 2]) == 2 and parity._median([None, None]) is None
    with pytest.raises(ValueError):
        parity.measure(*cases.case("aliased", 16, "float32"), runs=0)


def test_cpu_measure_sees_the_separate_mask_and_not_the_alias():
    n = 1 << 22  # 16 MiB of float32; separate mask M = 512 KiB
    alias = parity.measure(*cases.case("aliased", n, "float32"), runs=2)
    separate = parity.measure(*cases.case("separate mask", n, "float32"), runs=2)
    assert alias.runs == 2 and alias.method.startswith("cpu:")
    assert alias.medians["total_allocated"] >= 4 * n - parity.CPU_SHORT_BYTES  # the output itself
    assert separate.medians["incremental_allocated"] >= 400 * 1024
    assert alias.medians["incremental_allocated"] < separate.medians["incremental_allocated"] / 4
    assert alias.medians["incremental_reserved"] is None  # not measured on CPU, not 0


def test_failing_case_is_reported():
    with pytest.raises(RuntimeError, match="failed"):
        parity.measure(*cases.case("aliased", 16, "complex64"), runs=1)


def test_cpu_probe_reads_proc_status_in_place():
    """The probe's in-place read gives /proc's own figures, and names a key it cannot find."""
    probe = parity._Rss()
    with open("/proc/self/status") as fh:
        text = dict(line.split(":", 1) for line in fh)
    assert abs(probe._status(b"VmHWM") - int(text["VmHWM"].split()[0]) * 1024) < 1 << 20
    assert abs(probe.current() - int(text["VmRSS"].split()[0]) * 1024) < 1 << 20
    with pytest.raises(OSError, match="NoSuchKey missing"):
        probe._status(b"NoSuchKey")


def test_cpu_probe_leaves_no_freed_buffer_behind():
    """A reading allocates no buffer of its own (Python's allocations traced): an ``open()`` read
    of /proc mallocs and frees 8 KiB, pages the measured allocation could reuse uncounted."""
    import tracemalloc

    probe = parity._Rss()
    tracemalloc.start()
    try:
        probe.current(), probe.peak(), probe.start_peak()
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        probe.current(), probe.peak(), probe.start_peak()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak - held < 1024, peak - held
