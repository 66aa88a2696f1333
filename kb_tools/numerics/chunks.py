"""The shared mechanics of one pass over flattened tensors: size check, working precision, chunk
slices, and whether the NaN/inf masks are needed at all.

Chunks keep every temporary small (cache-sized on a CPU), so a criterion's extra memory is a few
chunks, not a copy of its input; each chunk's partial results come to the host as it finishes.
"""

from __future__ import annotations

import math

CPU_CHUNK = 1 << 16  # elements: 256 KiB per float32 temporary of the torch passes (onepass has none)
DEVICE_CHUNK = 1 << 22  # accelerators pay per launch, not per cache miss


def flat_legs(first, *others):
    """Flattened legs on ``first``'s device, with a note when shapes differ but sizes agree.

    TTK compares flattened data (registry.py reshapes every leg to [-1]); different sizes are
    refused here (ValueError) instead of failing element by element.
    """
    notes = []
    flat = [first.reshape(-1)]
    for other in others:
        if other.numel() != first.numel():
            raise ValueError(f"{other.numel()} elements (shape {tuple(other.shape)}) against the DUT's "
                             f"{first.numel()} (shape {tuple(first.shape)})")
        if tuple(other.shape) != tuple(first.shape):
            notes.append(f"shapes {tuple(first.shape)} and {tuple(other.shape)} differ; compared flattened, "
                         f"as TTK does, {first.numel()} elements each")
        flat.append(other.to(first.device).reshape(-1))
    return flat, notes


def work_dtype(torch, *tensors):
    """TTK's working precision: numpy.promote_types(float32, every leg) — float64 if a leg is float64
    or a 32/64-bit integer (a float golden's leg may be), float32 otherwise (fp16, bf16, fp8,
    float32, bool and narrow integers)."""
    def wide(t):
        return t.dtype == torch.float64 or (not t.dtype.is_floating_point and t.element_size() >= 4)

    return torch.float64 if any(wide(t) for t in tensors) else torch.float32


def step(tensor) -> int:
    return CPU_CHUNK if tensor.device.type == "cpu" else DEVICE_CHUNK


def spans(n: int, size: int):
    return [(i, min(i + size, n)) for i in range(0, n, size)]


class Totals:
    """Per-chunk partial sums and maxima, brought to the host as each chunk finishes.

    Holding every chunk's small result tensors until the end would pin freed chunk temporaries
    inside the C heap (measured: +100 MiB RSS over 2^24 elements); host floats do not. A NaN
    anywhere makes the maximum NaN, as torch.amax would.
    """

    def __init__(self, n_sums: int, n_maxes: int):
        self.sums = [0.0] * n_sums
        self.maxes = [-math.inf] * n_maxes

    def add(self, sums=None, maxes=None) -> None:
        for i, value in enumerate([] if sums is None else sums.tolist()):
            self.sums[i] += value
        if maxes is not None:
            for i, value in enumerate(maxes.tolist()):
                if math.isnan(value) or math.isnan(self.maxes[i]):
                    self.maxes[i] = math.nan
                else:
                    self.maxes[i] = max(self.maxes[i], value)


def all_finite(torch, *tensors) -> bool:
    """Whether every element of every floating leg is finite, with one host sync.

    Chunked min/max: NaN propagates through them and ±inf shows as an extreme, so two finite
    extremes mean a finite chunk; a whole-tensor isfinite would allocate a copy.
    """
    extremes = []
    for t in tensors:
        if not t.dtype.is_floating_point:
            continue
        for lo, hi in spans(t.numel(), step(t)):
            part = t[lo:hi]
            if part.element_size() == 1:  # float8: no reductions in torch, widen the chunk
                part = part.float()
            extremes.append(torch.stack([*torch.aminmax(part)]).to(torch.float64))
    return not extremes or bool(torch.isfinite(torch.cat(extremes)).all())
