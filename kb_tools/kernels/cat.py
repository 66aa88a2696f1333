"""Concatenation in one Triton kernel (kb/patterns/cat-lowering.md): the inputs arrive as fixed
pointer slots, the copy plan (input, source offset, destination offset, length, in elements) as
a small table; program b moves block b as words of the element's width, so one copy path
serves every dtype. The plan itself is the page's ``cat_copy_plan``."""

from __future__ import annotations

import math

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch

B_MAX = 4
CHUNK = 64
WORDS = {1: tl.uint8, 2: tl.uint16, 4: tl.uint32, 8: tl.uint64}


@triton.jit
def cat_kernel(x0, x1, x2, x3, out_ptr, plan_ptr, WORD: tl.constexpr, CHUNK: tl.constexpr):
    b = tl.program_id(0)
    slot = tl.load(plan_ptr + 4 * b)
    src = tl.load(plan_ptr + 4 * b + 1)
    dst = tl.load(plan_ptr + 4 * b + 2)
    length = tl.load(plan_ptr + 4 * b + 3)
    if slot == 0:
        base = x0.to(tl.pointer_type(WORD))
    elif slot == 1:
        base = x1.to(tl.pointer_type(WORD))
    elif slot == 2:
        base = x2.to(tl.pointer_type(WORD))
    else:
        base = x3.to(tl.pointer_type(WORD))
    out = out_ptr.to(tl.pointer_type(WORD))
    for c in range(0, tl.cdiv(length, CHUNK)):
        i = c * CHUNK + tl.arange(0, CHUNK)
        live = i < length
        tl.store(out + dst + i, tl.load(base + src + i, mask=live), mask=live)


def cat(tensors, plan, out_shape, *, backend: str, fill=None):
    """Run ``plan`` (the page's blocks) over up to B_MAX contiguous inputs in one launch, after
    checking that every block lies inside its input and the output. ``fill``: a value the output
    starts as, so that an element a wrong plan never writes shows (an empty output may by chance
    hold the right bytes, freed by an earlier tensor of the same size)."""
    import torch

    if not 1 <= len(tensors) <= B_MAX:
        raise ValueError(f"need 1..{B_MAX} inputs, got {len(tensors)}")
    first = tensors[0]
    out = (torch.empty(out_shape, dtype=first.dtype, device=first.device) if fill is None
           else torch.full(out_shape, fill, dtype=first.dtype, device=first.device))
    for i, src, dst, n in plan:  # the kernel does not check addresses: a bad plan stops here
        if not (0 <= i < len(tensors) and 0 <= src and src + n <= tensors[i].numel() and 0 <= dst and dst + n <= out.numel()):
            raise ValueError(f"plan block ({i}, {src}, {dst}, {n}) reaches outside input {i} or the output")
    slots = list(tensors) + [first] * (B_MAX - len(tensors))
    if plan:
        table = torch.tensor(plan, dtype=torch.int64, device=first.device)  # the tiling data: offsets, never addresses
        launch(cat_kernel, (len(plan),), *slots, out, table, backend=backend,
               WORD=WORDS[first.element_size()], CHUNK=CHUNK)
    return out


def seed_plan(shapes, dim):
    """Seed 004 §3.2's ``lower_cat`` as printed, the counter-example: outer from the axes after
    dim, inner from the first input for all, each row written at the input's own stride."""
    dim %= len(shapes[0])
    outer = math.prod(shapes[0][dim + 1:])
    inner = shapes[0][dim]
    plan, base = [], 0
    for i, s in enumerate(shapes):
        plan.extend((i, o * inner, base + o * inner, inner) for o in range(outer))
        base += math.prod(s)
    return plan
