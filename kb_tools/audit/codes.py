"""The registry of the audit's rule codes: one code per kind of violation (as ruff and
TorchFix do). WB: the wrapper boundary; GD: goldens and third-party legs; TS: tests; KN:
kernels. Each code's detection lives in one module, ``kb_tools/audit/rules/<code>_<name>.py``;
this registry holds what is said about it: its name, level, summary, fix, the kb pages whose
``static`` invariants state it, and the operations the lenient policies let pass.

Pages name these codes in their ``static`` invariants; ``kbt lint`` refuses a code that is
not listed here, and the audit reports findings under them. The numbers and meanings are
fixed: pages, KB_USAGE files and SARIF uploads refer to them. ``fix`` says where the work
goes instead (seed 003, the host-op -> in-kernel migration table). ``docs/audit-rules.md``
and ``kbt explain CODE`` are generated from here (``explain``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The policies (``policies.POLICIES``) that read seed 003 more leniently than ``strict``.
LENIENT_READINGS = ("lenient", "pypto-op-lint", "agent-verifier")


@dataclass(frozen=True)
class RuleCode:
    code: str
    name: str  # short kebab-case name, stable (SARIF rule name); the rule's module is <code>_<name>
    summary: str  # one line: what the wrapper did
    fix: str = ""  # one line: what to do instead
    level: str = "error"  # SARIF level; a "warning" does not fail the run
    pages: tuple[str, ...] = ()  # kb pages (id under kb/) whose static invariants state the rule (`rule: CODE`)
    passes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # operation ("*": all) -> policies letting it pass

    @property
    def module(self) -> str:
        """The module under ``kb_tools.audit.rules`` that decides when the code is reported."""
        return f"{self.code.lower()}_{self.name.replace('-', '_')}"


RULES = {
    r.code: r
    for r in (
        RuleCode("WB101", "host-cast", "casts a tensor on the host (.to, .float(), .half(), .double(), .type, ...)",
                 "load the native dtype in the kernel and convert per tile (pl.cast / vf.astype, platform-gated)",
                 pages=("constraints/platform-gated-conversion", "constraints/wrapper-boundary"),
                 passes={"*": ("pypto-op-lint",), "to": ("agent-verifier",)}),
        RuleCode("WB102", "host-layout-change", "changes layout on the host (.contiguous, .permute, .movedim, .transpose, .t(), .T, .mT)",
                 "index the axis through its stride and offset in the kernel's tile loop; use a strided copy instead of .contiguous()",
                 pages=("constraints/wrapper-boundary", "patterns/non-contiguous-fallback"),
                 passes={"contiguous": ("agent-verifier",)}),
        RuleCode("WB103", "host-reshape-or-slice", "reshapes, views or slices a tensor on the host (.reshape, .view, .flatten, .squeeze, .unsqueeze, .expand, .narrow, .split, subscripts)",
                 "pass the real shape (or a base address plus an offset) and compute flat offsets in the kernel",
                 pages=("constraints/wrapper-boundary",),
                 passes={"reshape": ("pypto-op-lint", "agent-verifier"), "view": ("pypto-op-lint",), "flatten": ("pypto-op-lint",),
                         "squeeze": ("pypto-op-lint",), "unsqueeze": ("pypto-op-lint",)}),
        RuleCode("WB104", "host-allocation", "allocates other than torch.empty for a declared output (zeros, ones, full, arange, empty_like, clone, ...)",
                 "allocate declared outputs with torch.empty and write every element (or initialise) in the kernel; compute indices arithmetically",
                 pages=("constraints/wrapper-boundary", "patterns/exact-fast-paths"),
                 passes={"scratch-empty": LENIENT_READINGS, "zeros": ("pypto-op-lint",), "zeros_like": ("pypto-op-lint",),
                         "clone": ("agent-verifier",)}),
        RuleCode("WB105", "host-concat-or-pad", "concatenates or pads on the host (torch.cat, torch.stack, F.pad)",
                 "pass every operand to the kernel and choose inside the loop; handle tails with pl.set_validshape",
                 pages=("constraints/wrapper-boundary", "patterns/cat-lowering")),
        RuleCode("WB106", "host-data-read", "reads tensor data on the host (.item(), .tolist(), .numpy(), .cpu(), a tensor in a condition)",
                 "read only metadata on the host; decisions that depend on values belong in the kernel",
                 pages=("constraints/wrapper-boundary", "patterns/dynamic-shape-versions")),
        RuleCode("WB107", "host-tensor-arithmetic", "does tensor arithmetic on the host (the operator's math belongs in the kernel)",
                 "move the computation into the kernel; the wrapper may only do Python integer arithmetic on metadata",
                 pages=("constraints/wrapper-boundary",)),
        RuleCode("WB108", "host-synchronize", "synchronises a device or stream inside the wrapper (synchronisation belongs to the caller)",
                 "delete it: the caller owns synchronisation",
                 pages=("constraints/wrapper-boundary",)),
        RuleCode("WB109", "launch-count", "launches the kernel other than exactly once",
                 "launch the one kernel exactly once; flatten lists into fixed slots",
                 pages=("constraints/tensorlist-fixed-slots", "constraints/wrapper-boundary"),
                 passes={"kernel-choice": LENIENT_READINGS}),
        RuleCode("WB110", "launch-in-loop", "launches the kernel inside a loop or comprehension",
                 "flatten the TensorList into a fixed set of pointer slots and launch once",
                 pages=("constraints/tensorlist-fixed-slots", "constraints/wrapper-boundary")),
        RuleCode("WB111", "multiple-jit-kernels", "defines more than one @pl.jit kernel in one file",
                 "deliver exactly one @pl.jit kernel; fuse the phases into it",
                 pages=("constraints/wrapper-boundary", "patterns/dynamic-shape-versions")),
        RuleCode("WB112", "host-bit-reinterpretation", "reinterprets bits on the host (.view(dtype), triton.reinterpret); do it in the kernel",
                 "pass the tensor as a pl.Ptr and read it in the kernel as the type it needs",
                 pages=("constraints/kernel-bit-reinterpretation", "constraints/wrapper-boundary", "patterns/non-contiguous-fallback")),
        RuleCode("WB113", "host-torch-call", "calls a torch function outside the whitelist (only torch.empty is allowed)",
                 "only torch.empty, for the declared outputs; everything else belongs in the kernel",
                 pages=("constraints/scalar-operand-promotion", "constraints/wrapper-boundary"),
                 passes={"device-alias": LENIENT_READINGS, "autocast-state": LENIENT_READINGS}),
        # Beyond the wrapper (kb_tools/audit/families.py): the golden, the test and the kernel.
        RuleCode("GD101", "golden-imports-implementation", "the golden imports the kernel framework or the implementation it judges",
                 "compute the golden with torch (or tf) alone; never import the kernel, its wrapper or its framework",
                 pages=("constraints/golden-framework",)),
        RuleCode("GD102", "golden-casts-floats", "the golden of a three-party case casts a floating tensor (Promote already raised it)",
                 "delete the cast: compute in the dtype TTK hands the golden and return that dtype",
                 pages=("constraints/golden-promote", "playbooks/bring-your-own-cann-operator")),
        RuleCode("GD103", "golden-narrower-than-dut", "the golden casts to a dtype narrower than the DUT's widening and not declared",
                 "cast the inputs to the spec's widening dtype, compute there, narrow only to the declared dtype at exit",
                 pages=("constraints/golden-follows-dut-widening",)),
        RuleCode("GD104", "golden-unguarded-division", "the golden divides integers (//, %, floor_divide, div rounding) without zero and -1 guards",
                 "guard zero divisors explicitly and compute INT_MIN / -1 as a wrapping negation",
                 pages=("constraints/integer-narrowing",)),
        RuleCode("GD105", "third-party-narrows-floats-only", "the third-party leg casts back to the declared dtype only for floating outputs",
                 "narrow every output at exit, integers included (an int8 output never leaves the leg as int32)",
                 pages=("constraints/third-party-narrowing",)),
        RuleCode("GD106", "golden-cast-back-unjudged", "the golden casts its result back at exit and no spec tells the case mode",
                 "add ops/<op>.yaml with the criteria (or pass --spec): a three-party golden never casts, a two-party one "
                 "narrows only to the declared dtype", "warning",
                 pages=("constraints/golden-promote",)),
        # On a CANN golden (tests/assets/golden.py beside op_host/), judged with its own folder's facts.
        RuleCode("GD107", "golden-casts-back-at-exit", "a three-party golden casts its result back to a named dtype at exit, undoing Promote",
                 "return the result in the dtype it was computed in, or cast to the handed output_dtypes[i]",
                 pages=("playbooks/bring-your-own-cann-operator",)),
        RuleCode("GD108", "golden-wider-than-kernel", "a two-party golden computes in a dtype wider than the kernel's own widening",
                 "widen only where and as far as the kernel does (its Cast / accumulate type) and narrow at the same points",
                 pages=("playbooks/bring-your-own-cann-operator",)),
        RuleCode("GD109", "third-party-not-torch", "the GPU third-party leg is written in a framework other than torch",
                 "write the third-party leg in torch: it also gives the performance data",
                 pages=("playbooks/bring-your-own-cann-operator",)),
        RuleCode("GD110", "third-party-never-narrows", "the third-party leg widens and never narrows its outputs back at exit",
                 "cast every output of the leg back to its declared (input) dtype before returning",
                 pages=("playbooks/bring-your-own-cann-operator",)),
        RuleCode("GD111", "golden-rule-uncertain", "a golden rule would apply but the case mode or the kernel's widening cannot be read",
                 "declare the tolerance as a literal dict (or a module constant) and keep the kernel's Cast plain", "warning",
                 pages=("playbooks/bring-your-own-cann-operator",)),
        RuleCode("TS101", "test-misses-wrapper", "no test in the file reaches the delivered wrapper or a kernel launch",
                 "call the delivered wrapper (the file the spec names) from the tests, not a driver or the golden",
                 pages=("playbooks/sample-driver-vs-delivery",)),
        RuleCode("TS102", "test-compares-without-criterion", "compares with a bare allclose/isclose/assert_allclose (default tolerances)",
                 "judge with the spec's criterion for the dtype, or pass rtol and atol taken from it",
                 pages=("constraints/tolerance-coverage",)),
        RuleCode("TS103", "test-tolerance-too-loose", "passes a tolerance looser than the spec's criterion allows for the dtype it runs under",
                 "take rtol/atol from the spec's criterion for the dtype under test",
                 pages=("constraints/tolerance-coverage",)),
        RuleCode("TS104", "test-dtype-untested", "leaves a dtype the spec declares untested",
                 "parametrise the tests over the spec's dtypes (read them from the spec or the prototype)",
                 pages=("constraints/tolerance-coverage",)),
        RuleCode("TS105", "test-unseeded-random", "draws random inputs without a fixed seed",
                 "seed once (torch.manual_seed / np.random.default_rng(seed)) so a failure reproduces", "warning",
                 pages=("playbooks/numerical-error-localisation",)),
        RuleCode("TS106", "test-compares-floats-exactly", "compares floating outputs bit for bit (==, torch.equal, .all() of ==)",
                 "judge floats by the criterion for their dtype (assert_close with its rtol/atol); compare exactly only "
                 "integers, bool, and dtypes whose spec criterion is binary_equal",
                 pages=("constraints/tolerance-coverage",)),
        RuleCode("KN101", "kernel-narrow-exp", "feeds a bf16/fp16 value to an exponential that was not widened to fp32",
                 "widen to fp32 first (vf.astype / pl.cast / .to(tl.float32)) and narrow only at the store",
                 pages=("constraints/accumulator-precision", "constraints/platform-gated-conversion")),
        RuleCode("KN102", "kernel-output-never-stored", "the kernel never stores to an output the wrapper allocated for it",
                 "store every element of each declared output in the kernel (torch.empty leaves it uninitialised)",
                 pages=("patterns/exact-fast-paths",)),
        RuleCode("KN103", "kernel-absent-api", "calls an API name the target's inventory does not have (kb/api_inventory.yaml)",
                 "use the name the inventory gives instead (e.g. vf.astype for vf.cast)",
                 pages=("constraints/platform-gated-conversion",)),
    )
}


def code_named(name: str) -> str:
    """A rule's code from its stable name: a module that must mention another rule names it by
    name, so the code itself stays in the rule's module and here (one home per code)."""
    return next(code for code, rule in RULES.items() if rule.name == name)


# What --select takes, shown in its help and errors: a code and a prefix of the registry (WB101,WB11).
SELECT_EXAMPLE = f"{next(iter(RULES))},{list(RULES)[10][:4]}"
