"""The reporting stage of a wrapper's walk: each host operation a value of a known kind meets
(a torch function, a tensor method, a tensor in a condition) and the rule code it is reported
under (``tables`` sorts the names; seed 003's whitelist is what is left).
"""

from __future__ import annotations

import ast

from kb_tools.audit import tables as tb
from kb_tools.audit.evidence import torch_name
from kb_tools.audit.findings import RawFinding, method_pos
from kb_tools.audit.kinds import C, K, P, S, T, U, flat
from kb_tools.audit.names import qualname


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
        if torch_name(qualname(e.func, self.aliases)) is not None or not isinstance(root, ast.Name) or root.id in self.env:
            return  # a torch call is reported as one; a local value is not a device module
        self.emit(method_pos(e.func), "WB113", f"enters the device guard {ast.unparse(e.func)}(): a torch device "
                  "call by another name; torch.empty is the only torch call a wrapper may make", "device-guard")

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
            self.emit((dec.lineno, dec.col_offset), "WB113", f"@torch.{name} reads the autocast state on every call "
                      "(torch.is_autocast_enabled, torch.get_autocast_dtype)", "autocast-state")
            return
        self.emit((dec.lineno, dec.col_offset), "WB113", f"@torch.{name} runs torch code around every call; torch.empty "
                  "is the only torch call a wrapper may make", name.rsplit(".", 1)[-1])

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
                self.emit((node.lineno, node.col_offset), "WB106", "uses a tensor in a condition (reads its data on the host)")
            return
        kind = self.expr(node)
        if kind == T:
            self.emit((node.lineno, node.col_offset), "WB106", "uses a tensor in a condition (reads its data on the host)")

    def torch_call(self, e, name: str):
        pos = method_pos(e.func) if isinstance(e.func, ast.Attribute) else (e.lineno, e.col_offset)
        if name.startswith("Tensor."):  # torch.Tensor.to(x, ...) is x.to(...)
            kinds = self.args(e)
            return self.classify_method(e, name.split(".", 1)[1], flat(kinds[0]) if kinds else T, pos, e.args[1:])
        kinds = [flat(k) for k in self.args(e)]
        short = name.rsplit(".", 1)[-1]
        if name == "empty":
            return T
        if name.endswith("synchronize"):
            self.emit(pos, "WB108", f"torch.{name}() in the wrapper: synchronisation belongs to the caller", short)
            return P
        if name in tb.TORCH_ALLOC:
            self.emit(pos, "WB104", f"allocation torch.{name}(); only torch.empty for the declared outputs is allowed", short)
        elif name in tb.TORCH_CONCAT_PAD or short == "pad":
            self.emit(pos, "WB105", f"torch.{name}() concatenates or pads on the host", short)
        elif name in tb.TORCH_LAYOUT:
            self.emit(pos, "WB102", f"layout change torch.{name}() on the host", short)
        elif name in tb.TORCH_RESHAPE:
            self.emit(pos, "WB103", f"reshape or slice torch.{name}() on the host", short)
        else:
            via_alias = name.startswith("device_module.")  # getattr(torch, device).device(...): torch by another name
            self.emit(pos, "WB113", f"calls torch.{name}(); torch.empty is the only torch call a wrapper may make",
                      "device-alias" if via_alias else short)
        if short in tb.TORCH_METADATA_FUNCS:
            return P
        return T if T in kinds or name in tb.TORCH_ALLOC else U

    def method_call(self, e, func: ast.Attribute):
        attr = func.attr
        if attr in tb.SYNC_METHODS:
            receiver = func.value
            if isinstance(receiver, ast.Call) and torch_name(qualname(receiver.func, self.aliases)):
                self.args(receiver)  # torch.cuda.current_stream().synchronize(): one finding
            else:
                self.expr(receiver)
            self.args(e)
            self.emit(method_pos(func), "WB108", f".{attr}() in the wrapper: synchronisation belongs to the caller", attr)
            return P
        if isinstance(func.value, ast.Name) and func.value.id in self.frame.torch_objects:
            self.args(e)  # prof.step() of `with torch_npu.profiler.profile(...) as prof` is a torch call
            self.emit(method_pos(func), "WB113", f".{attr}() of a torch object; torch.empty is the only torch call a wrapper may make", attr)
            return U
        paired, self.pair_contiguous = self.pair_contiguous, False
        pairing = attr == "contiguous" and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Attribute) \
            and func.value.func.attr in tb.LAYOUT_METHODS - {"contiguous"}
        before = len(self.findings)
        self.pair_contiguous = pairing
        receiver = flat(self.expr(func.value))
        self.pair_contiguous = False
        if pairing and len(self.findings) > before and self.findings[-1].code == "WB102":
            self.args(e)  # x.movedim(...).contiguous() is one transpose-and-copy, reported once
            return T
        if receiver in (P, S, K, C):
            self.args(e)  # a container's .get / .pop gives back an element: of unknown kind
            return P if receiver in (P, S) else U
        if receiver == U and attr in tb.AMBIGUOUS_METHODS:
            self.args(e)
            if attr == "view" and self.is_dtype_view(e, e.args):  # a dtype argument settles it
                self.emit(method_pos(func), "WB112", ".view(dtype) reinterprets bits on the host", "view")
                return T
            if attr == "to" and self.names_device_or_dtype(e):  # `labels.to(device)`: only torch objects move
                self.emit(method_pos(func), "WB101", "host cast .to() (to a device or dtype)", "to")
                return T
            return U
        return self.classify_method(e, attr, receiver, method_pos(func), e.args, evaluate=True, paired=paired)

    def classify_method(self, e, attr: str, receiver: str, pos, args, evaluate: bool = False, paired: bool = False):
        if evaluate:
            self.args(e)
        if attr in tb.META_METHODS or (attr == "type" and not e.args and not e.keywords):
            return P if receiver in (T, U) else U
        if attr == "view" and self.is_dtype_view(e, args):
            self.emit(pos, "WB112", ".view(dtype) reinterprets bits on the host", "view")
            return T
        if attr in tb.CAST_METHODS:
            self.emit(pos, "WB101", f"host cast .{attr}()", attr)
            return T
        if attr in tb.LAYOUT_METHODS:
            tail = " + .contiguous() (transpose and copy)" if paired and attr != "contiguous" else ""
            self.emit(pos, "WB102", f"layout change .{attr}(){tail} on the host", attr)
            return T
        if attr in tb.RESHAPE_METHODS:
            self.emit(pos, "WB103", f"reshape or view .{attr}() on the host", attr)
            return T
        if attr in tb.ALLOC_METHODS:
            self.emit(pos, "WB104", f"allocation .{attr}() on the host; only torch.empty for the declared outputs is allowed",
                      attr)
            return T
        if attr in tb.DATA_METHODS:
            self.emit(pos, "WB106", f".{attr}() reads tensor data on the host", attr)
            return T if attr == "cpu" else P
        if receiver == T:
            self.emit(pos, "WB107", f"tensor operation .{attr}() on the host", attr)
            return T
        return U

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
