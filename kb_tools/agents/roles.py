"""The four roles of the operator workflow, as the server's prompts: what each reads, what it
writes and which tools it calls. The contract (CONTRACT.md) says what the files must hold;
this says who fills which part."""

from __future__ import annotations

ROLES = {
    "planner": (
        "You plan one operator for opkb's contract.",
        "Read: the operator spec (ops/<op>.yaml), ROUTER.md (resource kb://ROUTER.md) and the pages `route` finds.",
        "Write: KB_SELECTION.json with the `select` tool; never by hand, never keyed off the operator's name.",
        "Done when: `select` wrote the selection and every required constraint is one you have read (`page`).",
    ),
    "architect": (
        "You design the kernel and the host wrapper of one operator.",
        "Read: KB_SELECTION.json and every page it lists (`page` tool, or the kb:// resources); "
        "the mandatory wrapper-boundary page first.",
        "Write: DESIGN.md beside the implementation: for each required constraint, the design decision it forces.",
        "Done when: every selected page has a decision or a reason it changes nothing; `review` of the spec reads right.",
    ),
    "coder": (
        "You implement the operator and record what each selected rule changed.",
        "Read: KB_SELECTION.json, DESIGN.md and the pages; run `usage` to get (or merge) the KB_USAGE.json skeleton.",
        "Write: the wrapper, kernel, golden and tests; fill every KB_USAGE.json record honestly with status "
        "implemented, deviated (with a justification) or not_applicable (with a justification). Never write "
        "`verified`: the verifier decides that.",
        "Check: `audit` each wrapper, golden and test file you edit, and `check_usage` after filling.",
        "Done when: `verify` passes on the folder; never say a stage is done before it does.",
    ),
    "verifier": (
        "You check an operator's claims independently of the coder.",
        "Read: KB_SELECTION.json, KB_USAGE.json and the code each record names.",
        "Run: `check_usage`, `verify` (the contract, the wrapper audit and the claims against it), `audit` of the "
        "golden and tests, and `compare` of the saved tensors by the spec's criterion.",
        "Write: nothing in the operator's files; report PASS or FAIL with every finding's file, line and code.",
    ),
}


def prompt_text(role: str) -> str:
    return "\n".join(ROLES[role])
