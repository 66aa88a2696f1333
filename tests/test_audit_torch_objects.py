"""Blind batch 12's two general causes (issue 37). An object torch hands back that is not a
tensor (a generator, a stream, an event) has a kind of its own: each method called on it runs
torch on the host (WB113, WB108 for a synchronisation), and a method torch documents as
returning a tensor (``Generator.get_state()``, a ByteTensor) makes one, so what the wrapper then
does with it is host tensor work. Triton's host tensor descriptors (``TensorDescriptor`` and its
``from_tensor``) read a tensor's pointer, shape and strides only: metadata, not reported."""

from __future__ import annotations

from audit_cases import codes


def test_a_generator_state_read_and_advanced_is_torch_and_tensor_work():
    found = codes("""\
        def op(x):
            gen = torch.cuda.default_generators[x.device.index]
            state = gen.get_state()
            lo, hi = state.view(torch.int64)
            seed = int(lo)
            hi += 4
            gen.set_state(state)
            k[(1,)](x, x, seed, 0)
            return x
        """)
    assert found == [(3, "WB113"), (4, "WB112"), (5, "WB106"), (6, "WB107"), (7, "WB113")]


def test_the_default_generator_unread_is_not_a_finding():
    # reading the attribute and indexing it runs no torch code: only calling a method does
    assert codes("""\
        def op(x, seed: int):
            gen = torch.default_generator
            gens = torch.cuda.default_generators
            k[(1,)](x, x, seed, 0)
            return x
        """) == []


def test_what_a_method_returns_follows_torch_documented_types():
    # initial_seed() is an int: Python arithmetic on it is allowed; the method call is not
    found = codes("""\
        def op(x):
            gen = torch.Generator(device=x.device)
            seed = gen.initial_seed() + 1
            same = gen.manual_seed(seed)
            again = same.get_state()
            k[(1,)](x, x, seed, again.sum())
            return x
        """)
    assert found == [(2, "WB113"), (3, "WB113"), (4, "WB113"), (5, "WB113"), (6, "WB107")]


def test_a_stream_or_event_of_any_device_namespace_is_a_torch_object():
    found = codes("""\
        import torch_npu
        def op(x):
            stream = torch.npu.current_stream()
            event = stream.record_event()
            event.wait(stream)
            if event.query():
                stream.synchronize()
            k[(1,)](x, x, 1, 0)
            return x
        """)
    assert found == [(3, "WB113"), (4, "WB113"), (5, "WB113"), (6, "WB113"), (7, "WB108")]


def test_a_generator_on_either_branch_stays_a_torch_object():
    found = codes("""\
        def op(x, gen=None):
            if gen is None:
                gen = torch.cuda.default_generators[0]
            else:
                gen = torch.Generator()
            state = gen.get_state()
            k[(1,)](x, x, 1, 0)
            return x
        """)
    assert found == [(5, "WB113"), (6, "WB113")]


def test_same_named_methods_of_other_objects_are_not_torch_calls():
    assert codes("""\
        def op(x, rng, seed: int):
            state = rng.get_state()
            rng.set_state(state)
            k[(1,)](x, x, seed, 0)
            return x
        """) == []


def test_tensor_descriptors_of_either_triton_api_are_metadata():
    assert codes("""\
        from triton.tools.tensor_descriptor import TensorDescriptor
        from triton.experimental.gluon.nvidia.hopper import TensorDescriptor as GluonDescriptor
        def op(x):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            a = TensorDescriptor.from_tensor(x, [64, 64])
            b = TensorDescriptor(y, y.shape, y.stride(), [64, 64])
            c = GluonDescriptor.from_tensor(y, [64, 64], None)
            k[(1,)](a, b, c, 0)
            return y
        """) == []


def test_other_triton_host_calls_of_a_tensor_stay_findings():
    found = codes("""\
        from triton.tools.tensor_descriptor import TensorDescriptor
        def op(x: torch.Tensor, lens: torch.Tensor):
            a = TensorDescriptor.from_tensor(x, [64, 64])
            n = triton.cdiv(lens, 64)
            r = triton.reinterpret(x, tl.float8e5)
            k[(1,)](a, r, n, 0)
            return x
        """)
    assert found == [(4, "WB107"), (5, "WB112")]


def test_a_generator_the_caller_may_pass_else_the_default_is_a_torch_object():
    # FlagGems' philox helper: the caller's generator or the device's default one
    found = codes("""\
        def op(x, generator=None):
            if generator is None:
                generator = torch.cuda.default_generators[0]
            state = generator.get_state()
            k[(1,)](x, x, int(state[0]), 0)
            return x
        """)
    assert found == [(4, "WB113"), (5, "WB103"), (5, "WB106")]


def test_default_generators_of_a_device_module_made_at_run_time_are_torch_objects():
    # `torch_device_fn` is generated code (`torch.<device>`) that no import names
    found = codes("""\
        from runtime import torch_device_fn
        def op(x):
            gen = torch_device_fn.default_generators[x.device.index]
            gen.set_state(gen.get_state())
            k[(1,)](x, x, 1, 0)
            return x
        """)
    assert found == [(4, "WB113"), (4, "WB113")]
