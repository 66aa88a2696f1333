"""CPU golden leg of bernoulli: the same Philox stream, drawn independently of the kernel.

bernoulli's outputs are judged ``binary_equal`` (two-party, ``ops/bernoulli.yaml``): with a
fixed seed and offset the output is reproducible, so the golden must give the very bits the
kernel gives (seed 001 §5.1). It follows the kernel's arithmetic, not a "safer" one: the
uniform of element i is word i % 4 of Philox4x32-10 (Salmon et al., SC'11; the constants
Triton's ``tl.randint4x`` uses) at counter offset/4 + i/4 with key = seed, mapped to [0, 1)
as Triton's ``uint_to_uniform_float`` does and compared with p in float32, the kernel's
accumulate type (widening: none). torch computes, with uint32 arithmetic carried in int64;
nothing here imports the kernel.
"""

MASK32 = 0xFFFFFFFF
ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57  # Philox4x32 multipliers
KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85  # Weyl key increments
ROUNDS = 10
UNIFORM_SCALE = 4.6566127342e-10  # 2**-31, as a float32 constant


def _mul_hi_lo(a: int, b):
    """(high, low) 32-bit halves of a * b for a constant a and a uint32 tensor b, in int64."""
    lo16 = b & 0xFFFF
    low_part = lo16 * a  # < 2**48
    mid = (b >> 16) * a + (low_part >> 16)  # < 2**49
    return mid >> 16, ((mid & 0xFFFF) << 16) | (low_part & 0xFFFF)


def philox4x32(counter, seed: int):
    """The four 32-bit words (int64 tensors) of Philox4x32-10 at 64-bit counters ``counter``."""
    import torch

    c0, c1 = counter & MASK32, (counter >> 32) & MASK32
    c2 = c3 = torch.zeros_like(counter)
    k0, k1 = seed & MASK32, (seed >> 32) & MASK32
    for _ in range(ROUNDS):
        hi_b, lo_b = _mul_hi_lo(ROUND_B, c2)
        hi_a, lo_a = _mul_hi_lo(ROUND_A, c0)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0, k1 = (k0 + KEY_A) & MASK32, (k1 + KEY_B) & MASK32
    return c0, c1, c2, c3


def uniforms(n: int, seed: int, offset: int):
    """float32 uniforms in [0, 1) for elements 0..n-1 (offset counted in 32-bit words)."""
    import torch

    idx = torch.arange(n, dtype=torch.int64)
    words = torch.stack(philox4x32((offset >> 2) + (idx >> 2), seed))  # (4, n)
    word = words.gather(0, (idx & 3)[None, :])[0]  # word i % 4
    signed = torch.where(word >= 2**31, word - 2**32, word)  # the word read as int32
    folded = torch.where(signed < 0, -signed - 1, signed)
    return folded.to(torch.float32) * torch.tensor(UNIFORM_SCALE, dtype=torch.float32)


def golden_bernoulli(x, p, seed: int, offset: int = 0):
    """Bernoulli(p) shaped and typed like ``x``: 1 where the element's uniform is below p."""
    import torch

    u = uniforms(x.numel(), seed, offset)
    ones = u < torch.tensor(float(p), dtype=torch.float32)
    return ones.reshape(x.shape).to(x.dtype)
