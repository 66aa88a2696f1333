"""WB113 (host-torch-call): any torch call outside seed 003's whitelist (only ``torch.empty``),
under its own name, through an alias, as a decorator, a device guard or a torch object."""

from __future__ import annotations

from kb_tools.audit.findings import Report

CODE = "WB113"
_ONLY_EMPTY = "torch.empty is the only torch call a wrapper may make"


def torch_function(name: str, short: str) -> Report:
    """A torch function no other rule claims; ``device_module.``: torch reached through
    ``getattr(torch, device)``."""
    op = "device-alias" if name.startswith("device_module.") else short
    return Report(CODE, f"calls torch.{name}(); {_ONLY_EMPTY}", op)


def device_guard(text: str) -> Report:
    return Report(CODE, f"enters the device guard {text}(): a torch device call by another name; {_ONLY_EMPTY}",
                  "device-guard")


def autocast_decorator(name: str) -> Report:
    return Report(CODE, f"@torch.{name} reads the autocast state on every call (torch.is_autocast_enabled, "
                  "torch.get_autocast_dtype)", "autocast-state")


def decorator(name: str) -> Report:
    return Report(CODE, f"@torch.{name} runs torch code around every call; {_ONLY_EMPTY}", name.rsplit(".", 1)[-1])


def torch_object_method(attr: str) -> Report:
    """``prof.step()`` of a name bound by ``with torch....(...) as prof``."""
    return Report(CODE, f".{attr}() of a torch object; {_ONLY_EMPTY}", attr)


def module_call(text: str, name: str) -> Report:
    """``self.bn(x)`` where the class bound ``self.bn`` to a torch module (``nn.BatchNorm1d``)."""
    return Report(CODE, f"runs {text}, a {name} module, on the host; {_ONLY_EMPTY}", "module-call")
