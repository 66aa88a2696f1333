"""The verdict every criterion returns: passed or not, why, and the criterion's own numbers."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Verdict:
    criterion: str  # the criterion applied (after TTK's routing)
    dtype: str
    passed: bool
    reasons: list[str] = field(default_factory=list)  # why it failed; empty when it passed
    notes: list[str] = field(default_factory=list)  # facts worth knowing either way
    metrics: dict = field(default_factory=dict)  # the criterion's own numbers, TTK's names
    ratios: dict = field(default_factory=dict)  # cross_check: DUT error / third-party error
    level: str | None = None
    requested: str | None = None  # the criterion asked for, when routing changed it

    def as_dict(self) -> dict:
        return {"criterion": self.criterion, "requested": self.requested, "dtype": self.dtype,
                "level": self.level, "verdict": "pass" if self.passed else "fail", "reasons": self.reasons,
                "notes": self.notes, "ratios": self.ratios, "metrics": self.metrics}


def dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def finish(v: Verdict) -> Verdict:
    v.passed = not v.reasons
    return v


def empty(criterion: str, dtype: str, notes: list[str]) -> Verdict:
    """TTK's _check_empty: two empty outputs pass (sizes are equal by now)."""
    return Verdict(criterion, dtype, True, notes=notes + ["no elements to compare"])
