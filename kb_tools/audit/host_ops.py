"""The reporting stage of a wrapper's walk: each host operation a value of a known kind meets
(a torch function, a tensor method, a tensor in a condition), handed to the rules in
``kb_tools.audit.rules`` in the order seed 003 ranks them; the first that claims it reports it
(seed 003's whitelist is what none claims).
"""

from __future__ import annotations

import ast

from kb_tools.audit import tables as tb
from kb_tools.audit.evidence import torch_name
from kb_tools.audit.findings import RawFinding, method_pos
from kb_tools.audit.kinds import C, K, O, P, S, T, U, flat
from kb_tools.audit.names import qualname
from kb_tools.audit.rules import (
    wb101_host_cast as wb101,
    wb102_host_layout_change as wb102,
    wb103_host_reshape_or_slice as wb103,
    wb104_host_allocation as wb104,
    wb105_host_concat_or_pad as wb105,
    wb106_host_data_read as wb106,
    wb107_host_tensor_arithmetic as wb107,
    wb108_host_synchronize as wb108,
    wb112_host_bit_reinterpretation as wb112,
    wb113_host_torch_call as wb113,
)

# Who claims a tensor method, in rank order (a cast before a layout change, ...); a method of
# a tensor none claims is tensor arithmetic.
METHOD_RULES = (wb101, wb102, wb103, wb104, wb106)
# Who claims a torch function, in rank order; one none claims is any other torch call.
TORCH_RULES = (wb104, wb105, wb102, wb103)


class HostOperations:
    """Findings on host operations (mixed into ``WrapperAudit``)."""

    def emit(self, pos: tuple[int, int], code: str, message: str, op: str = "", at=None) -> None:
        """A finding at ``pos`` in the current frame, or in frame ``at`` below it (a call site)."""
        frame = at or self.frame
        helper = frame.name if frame is not self.frames[0] else None
        if helper:
            message += f" (in {frame.kind} `{helper}`)"
        self.findings.append(RawFinding(pos[0], pos[1], code, message, helper, frame.path, op))

    def device_guard(self, item: ast.withitem) -> None:
        """``with M.device(d):`` is a device guard whatever ``M`` is bound to: torch.npu, torch.cuda,
        or a module object made at run time that no import names (FlagGems' ``torch_device_fn``
        is generated code ``torch.<device>``). The seed forbids it like any torch call."""
        e = item.context_expr
        if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "device"):
            return
        root = e.func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Call) and self.returns_torch_module(root):  # get_device_module().device(d)
            self.emit(method_pos(e.func), *wb113.device_guard(ast.unparse(e.func)))
            return
        if torch_name(qualname(e.func, self.aliases)) is not None or not isinstance(root, ast.Name) or root.id in self.env:
            return  # a torch call is reported as one; a local value is not a device module
        self.emit(method_pos(e.func), *wb113.device_guard(ast.unparse(e.func)))

    def returns_torch_module(self, call: ast.Call) -> bool:
        """Is ``call`` a call of a function of the audited tree whose every ``return`` hands
        back torch or a part of it (``torch.cuda`` on one branch, ``torch.npu`` on another,
        ``getattr(torch, name)``)? Its result is then torch by another name."""
        func = call.func
        found = self.defined(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
        if found is None:
            return False
        owner, fn = found
        aliases = owner.info.aliases if owner is not None else self.module.aliases
        values = [n.value for n in self.module.index.walk(fn) if isinstance(n, ast.Return)] if owner is None \
            else [n.value for n in owner.info.index.walk(fn) if isinstance(n, ast.Return)]
        return bool(values) and all(v is not None and _names_torch(v, aliases) for v in values)

    def torch_decorator(self, dec) -> None:
        """A torch decorator of the wrapper (``@torch.no_grad``, ``@torch.compiler.disable``,
        ``@custom_bwd``, ...) wraps every call in torch host code: a torch call at the decorator's
        line. ``@custom_fwd`` only reads the autocast state into ``ctx`` (a metadata query, which
        the lenient readings let pass); one that only registers the function and hands it back
        unchanged (``@torch.compiler.allow_in_graph``) runs nothing per call."""
        target = dec.func if isinstance(dec, ast.Call) else dec
        q = qualname(target, self.aliases)
        name = torch_name(q) or torch_name(self.imported_torch(target))
        if name is None or name in tb.TORCH_REGISTERING_DECORATORS:
            return
        if name.rsplit(".", 1)[-1] == "custom_fwd":
            self.emit((dec.lineno, dec.col_offset), *wb113.autocast_decorator(name))
            return
        self.emit((dec.lineno, dec.col_offset), *wb113.decorator(name))

    def test(self, node) -> None:
        """A condition: a tensor here reads its data on the host."""
        if isinstance(node, ast.BoolOp):
            for v in node.values:
                self.test(v)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.test(node.operand)
            return
        if isinstance(node, ast.Compare):
            kinds = [flat(self.expr(x)) for x in (node.left, *node.comparators)]
            identity = all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
            if T in kinds and not identity:
                self.emit((node.lineno, node.col_offset), *wb106.condition())
            return
        kind = self.expr(node)
        if kind == T:
            self.emit((node.lineno, node.col_offset), *wb106.condition())

    def torch_call(self, e, name: str):
        pos = method_pos(e.func) if isinstance(e.func, ast.Attribute) else (e.lineno, e.col_offset)
        if name.startswith("Tensor."):  # torch.Tensor.to(x, ...) is x.to(...)
            kinds = self.args(e)
            return self.classify_method(e, name.split(".", 1)[1], flat(kinds[0]) if kinds else T, pos, e.args[1:],
                                        spelled=self.spelled(e))
        kinds = [flat(k) for k in self.args(e)]
        short = name.rsplit(".", 1)[-1]
        if name == "empty":
            return T
        synchronises = wb108.torch_function(name, short)
        if synchronises is not None:
            self.emit(pos, *_as_written(synchronises, self.spelled(e)))
            return P
        claimed = next((r for r in (rule.torch_function(name, short) for rule in TORCH_RULES) if r is not None), None)
        self.emit(pos, *_as_written(claimed or wb113.torch_function(name, short), self.spelled(e)))
        if short in tb.TORCH_OBJECT_MAKERS:
            return O
        if short in tb.TORCH_METADATA_FUNCS:
            return P
        return T if T in kinds or name in tb.TORCH_ALLOC else U

    def spelled(self, e) -> str | None:
        """How a call of another framework read as torch's is written (``mint.zeros``), for its
        report to name; None for torch's own."""
        q = qualname(e.func, self.aliases) or ""
        if q.split(".", 1)[0] in tb.TORCH_ROOTS or not isinstance(e.func, (ast.Name, ast.Attribute)):
            return None
        return ast.unparse(e.func)

    def method_call(self, e, func: ast.Attribute):
        attr = func.attr
        synchronises = wb108.method(attr)
        if synchronises is not None:
            receiver = func.value
            if isinstance(receiver, ast.Call) and torch_name(qualname(receiver.func, self.aliases)):
                self.args(receiver)  # torch.cuda.current_stream().synchronize(): one finding
            else:
                self.expr(receiver)
            self.args(e)
            self.emit(method_pos(func), *synchronises)
            return P
        if isinstance(func.value, ast.Name) and func.value.id in self.frame.torch_objects:
            self.args(e)  # prof.step() of `with torch_npu.profiler.profile(...) as prof` is a torch call
            self.emit(method_pos(func), *wb113.torch_object_method(attr))
            return U
        paired, self.pair_contiguous = self.pair_contiguous, False
        pairing = attr == "contiguous" and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Attribute) \
            and func.value.func.attr in tb.LAYOUT_METHODS - {"contiguous"}
        before = len(self.findings)
        self.pair_contiguous = pairing
        receiver = flat(self.expr(func.value))
        self.pair_contiguous = False
        if pairing and len(self.findings) > before and wb102.is_layout_change(self.findings[-1]):
            self.args(e)  # x.movedim(...).contiguous() is one transpose-and-copy, reported once
            return T
        if receiver == O:  # gen.get_state() of a torch generator runs torch on the host
            self.args(e)
            self.emit(method_pos(func), *wb113.torch_object_method(attr))
            return tb.TORCH_OBJECT_METHOD_KINDS.get(attr, U)
        if receiver in (P, S, K, C):
            self.args(e)  # a container's .get / .pop gives back an element: of unknown kind
            return P if receiver in (P, S) else U
        if receiver == U and attr in tb.AMBIGUOUS_METHODS:
            self.args(e)
            if attr == "view" and self.is_dtype_view(e, e.args):  # a dtype argument settles it
                self.emit(method_pos(func), *wb112.dtype_view())
                return T
            if attr == "to" and self.names_device_or_dtype(e):  # `labels.to(device)`: only torch objects move
                self.emit(method_pos(func), *wb101.to_device_or_dtype())
                return T
            return U
        return self.classify_method(e, attr, receiver, method_pos(func), e.args, evaluate=True, paired=paired)

    def classify_method(self, e, attr: str, receiver: str, pos, args, evaluate: bool = False, paired: bool = False,
                        spelled: str | None = None):
        if evaluate:
            self.args(e)
        if receiver == T and attr in tb.FRAMEWORK_METHODS:  # MindSpore's x.asnumpy() is x.numpy()
            spelled, attr = f".{attr}", tb.FRAMEWORK_METHODS[attr]
        if attr in tb.META_METHODS or (attr == "type" and not e.args and not e.keywords):
            return P if receiver in (T, U) else U
        if attr in tb.STORAGE_METHODS and not e.args and not e.keywords:
            return U  # x.untyped_storage().nbytes(): the storage's size, no data
        if attr == "view" and self.is_dtype_view(e, args):
            self.emit(pos, *wb112.dtype_view())
            return T
        claim = next((c for c in (rule.method(attr, paired) for rule in METHOD_RULES) if c is not None), None)
        if claim is None and receiver == T:
            claim = wb107.tensor_method(attr)
        if claim is None:
            return U
        self.emit(pos, *_as_written(claim.report, spelled))
        return claim.kind

    def names_device_or_dtype(self, e) -> bool:
        """Does a ``.to(...)`` call name a device or a dtype (``x.device``, a name holding one,
        ``device=``, ``torch.float16``)? No plain Python object has such a method."""
        if any(kw.arg in ("device", "dtype") for kw in e.keywords):
            return True
        for a in e.args:
            if isinstance(a, ast.Attribute) and a.attr in ("device", "dtype") or self.is_dtype_view(e, [a]):
                return True
            if isinstance(a, ast.Name) and a.id.lower().endswith(("device", "dtype")):
                return True
        return False

    def is_dtype_view(self, e, args) -> bool:
        candidates = list(args) + [kw.value for kw in e.keywords if kw.arg == "dtype"]
        if len(candidates) != 1:
            return False
        a = candidates[0]
        q = qualname(a, self.aliases) or ""
        if q.startswith("torch.") and q[len("torch."):] in tb.TORCH_DTYPES:
            return True
        return isinstance(a, ast.Attribute) and a.attr == "dtype"


def _as_written(report, spelled: str | None):
    """A report on another framework's call read as torch's names the call as written too."""
    return report if spelled is None else report._replace(message=f"{report.message} (`{spelled}`, read as torch's)")


def _names_torch(value, aliases: dict[str, str]) -> bool:
    """``torch``, ``torch.cuda``, ``torch_npu``, or ``getattr(torch, name)``."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr" and value.args:
        value = value.args[0]
    q = qualname(value, aliases)
    return q in tb.TORCH_ROOTS or torch_name(q) is not None
