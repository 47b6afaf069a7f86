"""Module backward hooks (``register_full_backward_hook``, ``register_full_backward_pre_hook``,
``register_backward_hook``, the module-wide ones), against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tidu

from ..test_torch_oracle import assert_same_error, errors_of
from . import copy_weights


def _arr(g):  # noqa: ANN001, ANN202
    return None if g is None else g.detach().numpy().round(5).tolist()


def _log_hooks(lib, module, log, name):  # noqa: ANN001, ANN202
    module.register_full_backward_pre_hook(lambda m, go: log.append((name, "pre", [_arr(g) for g in go])))
    return module.register_full_backward_hook(
        lambda m, gi, go: log.append((name, "hook", [_arr(g) for g in gi], [_arr(g) for g in go])))


def _mlp(lib):  # noqa: ANN001, ANN202
    """A three-layer MLP with logging hooks on every layer; returns the log, the gradients, and
    the log after one hook is removed."""
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    model = ref
    if lib is tidu:
        model = tidu.nn.Sequential(tidu.nn.Linear(3, 4), tidu.nn.Tanh(), tidu.nn.Linear(4, 2))
        copy_weights(ref, model)
    log = []
    handles = [_log_hooks(lib, m, log, i) for i, m in enumerate(model)]
    model[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,))  # replaces grad_input
    model[2].register_full_backward_pre_hook(lambda m, go: (go[0] * 2,), prepend=True)  # first pre-hook
    x = lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    out = model(x)
    (out * lib.tensor([1.0, -2.0])).sum().backward()
    grads = [x.grad.numpy().copy(), *(p.grad.numpy().copy() for p in model.parameters())]
    handles[0].remove()
    after = len(log)
    model(x).sum().backward()
    return log, grads, [entry[0:2] for entry in log[after:]]


def test_full_backward_hooks_match_torch() -> None:
    got, want = _mlp(tidu), _mlp(torch)
    assert got[0] == want[0]
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[2] == want[2]
    assert (0, "hook") not in got[2] and (0, "pre") in got[2]


class _Multi:
    """Several inputs (a tensor that requires grad, one that does not, a number) and outputs (a
    tuple, one output unused)."""

    @staticmethod
    def make(lib):  # noqa: ANN001, ANN205
        class Multi(lib.nn.Module):
            def forward(self, x, y, k):  # noqa: ANN001, ANN202
                return x * y * k, (x * y).sum(), y + 1

        return Multi()


def _multi(lib):  # noqa: ANN001, ANN202
    m = _Multi.make(lib)
    log = []
    _log_hooks(lib, m, log, "m")
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10, None, None))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0])
    a, b, c = m(x, y, 5)
    a.sum().backward()
    flags = [t.requires_grad for t in (a, b, c)]
    return log, x.grad.numpy(), flags


def test_several_inputs_and_outputs_match_torch() -> None:
    got, want = _multi(tidu), _multi(torch)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1])
    assert got[2] == want[2]


def _no_input_grad(lib):  # noqa: ANN001, ANN202
    layer = lib.nn.Linear(2, 2)
    log = []
    _log_hooks(lib, layer, log, "fc")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer(lib.ones(1, 2)).sum().backward()
    messages = [str(w.message) for w in caught]
    return [entry[:3] for entry in log], messages


def test_hook_fires_on_outputs_when_no_input_requires_grad() -> None:
    got, want = _no_input_grad(tidu), _no_input_grad(torch)
    assert got == want
    assert got[1] and "no inputs require gradients" in got[1][0]


@pytest.mark.parametrize("write", ["y.add_(1)", "L.relu_(y)", "y.__setitem__(0, 1.0)", "y[1].mul_(2)"])
def test_inplace_on_hooked_output_raises_as_torch(write: str) -> None:
    def scope(L):  # noqa: ANN001, ANN202, N803
        layer = L.nn.Linear(3, 2)
        layer.register_full_backward_hook(lambda *a: None)
        return {"y": layer(L.ones(4, 3, requires_grad=True))}

    if "[" in write or "setitem" in write:  # through a view: PyTorch names the view's op (Select)
        ref, ours = errors_of(write, scope)
        assert ours[0] is ref[0]
        assert ref[1].split(" is a view")[1] == ours[1].split(" is a view")[1]
    else:
        assert_same_error(write, scope)


def test_inplace_on_hooked_output_under_no_grad_runs() -> None:
    layer = tidu.nn.Linear(3, 2)
    layer.register_full_backward_hook(lambda *a: None)
    y = layer(tidu.ones(4, 3, requires_grad=True))
    with tidu.no_grad():
        y.add_(1)
    y2 = layer(tidu.ones(4, 3, requires_grad=True)).clone()
    y2.add_(1)  # a clone is an ordinary tensor


@pytest.mark.parametrize("case", ["hook_count", "pre_hook_count", "no_input_nonnull", "mix", "mix_reverse",
                                  "global_mix"])
def test_hook_errors_match_torch(case: str) -> None:
    def call(L):  # noqa: ANN001, ANN202, N803
        layer = L.nn.Linear(2, 2)
        if case == "hook_count":
            layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        elif case == "pre_hook_count":
            layer.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        elif case == "no_input_nonnull":
            layer.register_full_backward_hook(lambda m, gi, go: (L.ones(1, 2),))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                layer(L.ones(1, 2)).sum().backward()
        elif case == "mix":
            layer.register_backward_hook(lambda *a: None)
            layer.register_full_backward_hook(lambda *a: None)
        elif case == "mix_reverse":
            layer.register_full_backward_hook(lambda *a: None)
            layer.register_backward_hook(lambda *a: None)
        else:
            h = L.nn.modules.module.register_module_full_backward_hook(lambda *a: None)
            try:
                L.nn.modules.module.register_module_backward_hook(lambda *a: None)
            finally:
                h.remove()
                L.nn.modules.module._global_is_full_backward_hook = None
        layer(L.ones(1, 2, requires_grad=True)).sum().backward()

    assert_same_error(call)


def _global(lib):  # noqa: ANN001, ANN202
    log = []
    mod = lib.nn.modules.module
    h1 = mod.register_module_full_backward_hook(lambda m, gi, go: log.append(("global", type(m).__name__)))
    h2 = mod.register_module_full_backward_pre_hook(lambda m, go: log.append(("global pre", type(m).__name__)))
    try:
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sigmoid())
        net[1].register_full_backward_hook(lambda m, gi, go: log.append(("own", type(m).__name__)))
        net(lib.ones(1, 2, requires_grad=True)).sum().backward()
    finally:
        h1.remove()
        h2.remove()
        mod._global_is_full_backward_hook = None
    return log


def test_module_wide_hooks_match_torch() -> None:
    assert _global(tidu) == _global(torch)


def test_register_backward_hook_is_a_full_hook_for_one_op_modules() -> None:
    # for a module of one elementwise op, PyTorch's old hook sees the module's input gradient too
    def run(lib):  # noqa: ANN001, ANN202
        m = lib.nn.Tanh()
        seen = []
        m.register_backward_hook(lambda mod, gi, go: seen.append((_arr(gi[0]), _arr(go[0]))))
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        m(x).sum().backward()
        return seen

    assert run(tidu) == run(torch)


def test_hooks_do_not_run_under_no_grad_and_handles_remove() -> None:
    layer = tidu.nn.Linear(2, 2)
    seen = []
    h = layer.register_full_backward_hook(lambda m, gi, go: seen.append(1))
    with tidu.no_grad():
        y = layer(tidu.ones(1, 2, requires_grad=True))
    assert y.grad_fn is None and not seen
    h.remove()
    assert not layer._backward_hooks
    layer(tidu.ones(1, 2, requires_grad=True)).sum().backward()
    assert not seen
