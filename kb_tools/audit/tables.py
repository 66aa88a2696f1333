"""What each tensor method and torch function counts as under seed 003's whitelist.

The whitelist (seed 003, "boundary rule"): validate and raise, read metadata, derive Python
integers, ``torch.empty`` for declared outputs, one kernel launch. Everything below is a way
to leave it, sorted by the rule code it is reported under.
"""

from __future__ import annotations

from kb_tools.numerics.dtypes import TORCH_NAMES

# Metadata the wrapper may read: attributes and methods that return Python values.
META_ATTRS = frozenset({"shape", "ndim", "dtype", "device", "layout", "is_cuda", "requires_grad", "itemsize", "nbytes"})
META_METHODS = frozenset({"size", "stride", "dim", "numel", "storage_offset", "is_contiguous", "element_size",
                          "nelement", "ndimension", "get_device", "is_floating_point", "is_complex", "data_ptr",
                          # predicates on flags and metadata: no data is read
                          "is_neg", "is_conj", "is_inference", "is_pinned", "is_shared", "is_sparse", "is_quantized",
                          "is_meta", "is_nested", "is_signed", "is_set_to"})

# Methods only a tensor has: calling one on a name is evidence that it holds a tensor.
TENSOR_ONLY_METHODS = META_METHODS | frozenset({
    "contiguous", "permute", "movedim", "moveaxis", "transpose", "half", "bfloat16", "double", "cuda", "npu",
    "type_as", "view_as", "reshape_as", "expand_as", "unsqueeze", "squeeze", "flatten", "masked_fill",
    "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "zero_", "fill_", "numpy", "cpu",
    "untyped_storage", "float", "long", "sum", "mean", "amax", "amin", "abs", "exp",
    "clone", "narrow", "unbind", "tolist", "item", "softmax", "masked_select", "nonzero",
})

# Methods only Python numbers have: evidence that a name is not a tensor.
INT_METHODS = frozenset({"bit_length", "bit_count", "is_integer", "as_integer_ratio"})

CAST_METHODS = frozenset({"to", "float", "half", "double", "bfloat16", "int", "long", "short", "char", "byte",
                          "bool", "type", "type_as", "cfloat", "cdouble", "cuda", "npu"})
LAYOUT_METHODS = frozenset({"contiguous", "permute", "movedim", "moveaxis", "transpose", "swapaxes", "swapdims",
                            "t", "adjoint"})
LAYOUT_ATTRS = frozenset({"T", "mT", "H", "mH"})
RESHAPE_METHODS = frozenset({"reshape", "view", "flatten", "unflatten", "ravel", "squeeze", "unsqueeze", "expand",
                             "expand_as", "broadcast_to", "narrow", "chunk", "split", "tensor_split", "unbind",
                             "select", "index_select", "view_as", "reshape_as", "as_strided", "unfold", "detach"})
VIEW_ATTRS = frozenset({"real", "imag"})
ALLOC_METHODS = frozenset({"clone", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "zero_", "fill_"})
DATA_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
SYNC_METHODS = frozenset({"synchronize", "wait_stream", "wait_event"})

# Methods whose result is a tensor made from the receiver (a view, a copy, a cast).
TENSOR_TO_TENSOR = RESHAPE_METHODS | LAYOUT_METHODS | CAST_METHODS | {"clone"}

# Method names that plain Python objects also have: on a value of unknown type they are not
# evidence of a tensor (``s.split(",")``, ``lst.copy()``, ``obj.type()``).
AMBIGUOUS_METHODS = frozenset({"split", "copy", "index", "count", "type", "sort", "t", "view", "float", "int",
                               "bool", "to", "expand", "select", "unfold", "item", "detach"})

# torch.* functions by category; any other torch.* call is a host torch call (rules.wb113_host_torch_call).
TORCH_ALLOC = frozenset({"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "arange", "range",
                         "linspace", "logspace", "empty_like", "empty_strided", "tensor", "as_tensor",
                         "from_numpy", "rand", "rand_like", "randn", "randn_like", "randint", "eye", "clone",
                         "scalar_tensor"})
TORCH_CONCAT_PAD = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
                              "column_stack", "constant_pad_nd", "nn.functional.pad"})
TORCH_LAYOUT = frozenset({"permute", "movedim", "moveaxis", "transpose", "swapaxes", "swapdims", "t", "adjoint"})
TORCH_RESHAPE = frozenset({"reshape", "flatten", "unflatten", "ravel", "squeeze", "unsqueeze", "narrow", "chunk",
                           "split", "tensor_split", "unbind", "select", "index_select", "broadcast_to",
                           "as_strided", "view_as_real", "view_as_complex"})

# Tensor frameworks read as torch (seed 003's boundary is host work, whatever framework does it):
# each namespace whose functions mean what torch's of the same names mean -> where those names
# sit in torch ("" for torch's top level). Device extensions of torch (Ascend's torch_npu,
# Cambricon's torch_mlu) add their own functions to torch's; MindSpore's ``mint`` is its
# torch-compatible API (``mint.zeros``, ``mint.empty``, ``mint.nn.functional.pad``: same names,
# same arguments, same meaning).
FRAMEWORK_NAMESPACES = {"torch": "", "torch_npu": "", "torch_mlu": "", "mindspore.mint": ""}
# Tensor methods other frameworks spell differently from torch, by what torch calls them:
# MindSpore's (and MXNet's) ``asnumpy`` is ``numpy``, its ``astype`` is ``to``. Read so on a value
# known to be a tensor only: numpy arrays have ``astype`` too. MindSpore's other tensor methods
# share torch's names (``reshape``, ``contiguous``, ``transpose``: its ``transpose(*axes)`` is torch's
# ``permute``, a layout change either way).
FRAMEWORK_METHODS = {"asnumpy": "numpy", "astype": "to"}
# torch and its device extensions: modules whose every attribute is torch's.
TORCH_ROOTS = frozenset({"torch", "torch_npu", "torch_mlu"})
# Functions of other namespaces whose meaning is a torch function's, one by one: MindSpore's
# functional ``ops`` share most names with torch but not all meanings (``ops.transpose`` takes a
# permutation: torch's ``permute``; ``ops.fill(type, shape, value)`` is ``full``; ``ops.cast(x, t)``
# is ``x.to(t)``). Left out: graph-mode operations with no torch counterpart (``ops.depend``),
# MindSpore's private names (``ops._ms_pyfunc``), and the ``ops`` names whose meaning differs from
# torch's under the same name (``ops.gather`` takes along an axis, torch's ``index_select``;
# ``ops.flatten`` keeps the first axis by default; ``ops.max`` has returned an index first).
FRAMEWORK_FUNCTIONS = {
    **{f"mindspore.ops.{n}": n for n in (
        "zeros", "ones", "zeros_like", "ones_like", "full", "full_like", "arange", "eye", "cat", "concat", "stack",
        "reshape", "squeeze", "unsqueeze", "permute", "broadcast_to", "narrow", "sum", "mean", "where", "sort",
        "topk", "index_select", "masked_fill", "clamp", "abs", "exp", "sqrt")},
    "mindspore.ops.expand_dims": "unsqueeze", "mindspore.ops.transpose": "permute", "mindspore.ops.fill": "full",
    "mindspore.ops.gather_d": "gather", "mindspore.ops.pad": "nn.functional.pad", "mindspore.ops.cast": "Tensor.to",
    "mindspore.Tensor": "Tensor", "mindspore.tensor": "tensor", "mindspore.runtime.synchronize": "accelerator.synchronize",
}

# torch functions that build a tensor from shapes or Python data: their arguments are not
# evidence of a tensor (``torch.empty(n, m)``).
TORCH_CONSTRUCTORS = frozenset({"empty", "zeros", "ones", "full", "arange", "range", "linspace", "logspace", "rand",
                                "randn", "randint", "eye", "tensor", "as_tensor", "from_numpy", "scalar_tensor",
                                "device", "dtype", "Size", "finfo", "iinfo", "manual_seed", "Generator"})
# torch functions that return metadata (a bool, a dtype, a device), never a tensor.
TORCH_METADATA_FUNCS = frozenset({"is_floating_point", "is_complex", "is_tensor", "is_storage", "numel",
                                  "get_default_dtype", "promote_types", "result_type", "can_cast", "finfo", "iinfo",
                                  "is_grad_enabled", "current_device", "device_count", "is_available", "device",
                                  "get_device_properties", "get_device_name", "current_stream", "Size"})
# Torch objects that are not tensors, by the last part of their torch name, whatever the device
# namespace (torch.cuda, torch.npu, torch.xpu share the API): the classes and functions torch
# documents as returning a Generator, Stream, Event or graph (``torch.Generator(...)``,
# ``torch.cuda.current_stream()``), and the module attributes holding generators
# (``torch.cuda.default_generators[i]``, read with no call). ``torch.manual_seed`` is left out:
# it returns a Generator, but ``torch.cuda.manual_seed`` of the same last name returns None.
TORCH_OBJECT_MAKERS = frozenset({"Generator", "Stream", "ExternalStream", "Event", "current_stream",
                                 "default_stream", "CUDAGraph", "NPUGraph", "XPUGraph"})
TORCH_OBJECT_ATTRS = frozenset({"default_generator", "default_generators"})
# What a method of such an object hands back, by torch's documented return type: a tensor
# (``Generator.get_state()``, a ByteTensor), another torch object, or a Python value (an int
# seed, a bool, a float of milliseconds). A method not listed (``Event.ipc_handle``, a graph's
# ``pool()``) has an unknown result.
TORCH_OBJECT_METHOD_KINDS = {
    "get_state": "T",
    "set_state": "O", "manual_seed": "O", "clone_state": "O", "graphsafe_get_state": "O", "record_event": "O",
    "seed": "P", "initial_seed": "P", "query": "P", "elapsed_time": "P",
}
# Triton's host-side tensor descriptor: built from a tensor's pointer, shape and strides
# (metadata, like ``triton.cdiv`` of sizes), never from its data; matched on the qualified
# name's ending under ``triton`` (``triton.tools.tensor_descriptor``, Gluon's per-architecture copies).
TRITON_METADATA_CALLS = (".TensorDescriptor", ".TensorDescriptor.from_tensor")

# Torch decorators that register a function and hand it back unchanged: nothing runs per call.
# ``torch.library.impl`` (``impl(lib, name, key)``, its older form, and ``impl("ns::op", types)``),
# the older ``define(lib, schema)`` and ``register_torch_dispatch`` register the function itself
# for a dispatch key and wrap nothing (torch 2.13's torch/library.py); ``custom_op`` and
# ``register_kernel`` are not among them: the one replaces the function by an operator whose every
# call goes through the dispatcher, the other registers it inside a ``torch._disable_dynamo`` wrapper.
TORCH_REGISTERING_DECORATORS = frozenset({"compiler.allow_in_graph", "_dynamo.allow_in_graph", "fx.wrap", "jit.ignore",
                                          "jit.unused", "jit.export", "library.register_fake", "library.impl_abstract",
                                          "library.impl", "library.define", "library.register_torch_dispatch"})
# Keywords a Triton launch takes as compile or launch options (Python values, never tensors).
LAUNCH_OPTIONS = frozenset({"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "grid", "warmup",
                            "enable_warp_specialization", "launch_cooperative_grid", "debug"})
# Functions that hand a kernel a tensor's bits as another dtype: nothing is computed, the
# reinterpretation happens on the host (kb/constraints/kernel-bit-reinterpretation.md).
BIT_REINTERPRETERS = frozenset({"triton.reinterpret", "triton.runtime.jit.reinterpret", "triton.runtime.reinterpret"})
# Modules whose functions compute Python values from Python values (``triton.cdiv``).
PYTHON_VALUE_MODULES = frozenset({"math", "triton", "numpy", "operator", "functools", "itertools", "os", "sys"})
# Libraries whose calls the audit reads by name (torch, the kernel frameworks) or that are not
# operator code: a call into them is not "code outside the audited tree that was not followed".
KNOWN_LIBRARIES = PYTHON_VALUE_MODULES | frozenset({
    "torch", "torch_npu", "torch_mlu", "mindspore", "pypto", "pypto_pro", "tilelang", "typing", "collections", "contextlib", "dataclasses",
    "logging", "warnings", "re", "json", "pathlib", "time", "inspect", "copy", "random", "importlib", "abc", "enum",
    "pytest", "packaging", "einops", "__future__"})

# torch dtype names, so that ``.view(torch.int32)`` reads as a bit reinterpretation: every
# dtype torch has (float8 variants, unsigned and sub-byte integers, complex32), one table.
TORCH_DTYPES = TORCH_NAMES

# Builtins that turn a tensor into Python data (``float(x)``, ``bool(x)``, ``print(x)``).
DATA_BUILTINS = frozenset({"int", "float", "bool", "str", "repr", "print", "format", "list", "tuple", "max", "min",
                           "sum", "abs", "round", "complex", "any", "all", "sorted", "set"})
# Tensor methods that hand back its storage object, not a tensor: what is read from it is metadata.
STORAGE_METHODS = frozenset({"untyped_storage", "storage", "_typed_storage"})
# Builtins whose result is a Python value the wrapper may compute with.
PY_BUILTINS = frozenset({"len", "range", "enumerate", "zip", "isinstance", "issubclass", "hasattr", "getattr",
                         "divmod", "reversed", "map", "filter", "callable", "id", "hash", "type", "dict",
                         "ValueError", "TypeError", "RuntimeError", "NotImplementedError", "AssertionError",
                         "IndexError", "KeyError"}) | DATA_BUILTINS

# Decorators that make a function a kernel, by the dotted name they resolve to (or are
# spelled as when the file does not import them), and the framework they belong to.
JIT_DECORATORS = {
    "pypto_pro.language.jit": "pl", "pypto_pro.jit": "pl", "pypto.language.jit": "pl", "pl.jit": "pl",
    "pypto.frontend.jit": "pypto", "pypto.jit": "pypto", "frontend.jit": "pypto",
    "triton.jit": "triton", "triton.language.jit": "triton", "triton.runtime.jit.jit": "triton", "tl.jit": "triton",
}

# Functions that launch kernels but are harness, not delivery (seed 003, "scope"): test
# drivers and a sample's entry point.
DRIVER_NAMES = ("test*", "main", "bench*", "benchmark*")
