"""Pooling, normalisation, dropout, embedding-bag layers and their functionals against PyTorch:
values, indices, parameter and input gradients in float32 and float64, reprs, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu

from . import check_module

FLOATS = ["float32", "float64"]


def _lib(x):  # noqa: ANN001, ANN202
    return tidu if isinstance(x, tidu.Tensor | tidu.nn.Module) else torch


def _unpool(dims, kernel, stride=None, padding=0, output_size=None):  # noqa: ANN001, ANN202
    """Max pooling with indices, then the module (a ``MaxUnpool``) on its output."""
    def call(mod, args):  # noqa: ANN001, ANN202
        pool = getattr(_lib(mod).nn.functional, f"max_pool{dims}d")
        out, idx = pool(args[0], kernel, stride, padding, return_indices=True)
        return mod(out, idx, output_size=output_size)

    return call


# name: (constructor taking the library, input shapes, optional call)
MODULES = {
    "adaptive-max-pool2d": (lambda L: L.nn.AdaptiveMaxPool2d((3, 2)), [(2, 3, 7, 5)]),
    "adaptive-max-pool2d-indices": (lambda L: L.nn.AdaptiveMaxPool2d((4, None), return_indices=True), [(3, 7, 5)]),
    "adaptive-max-pool2d-upsample": (lambda L: L.nn.AdaptiveMaxPool2d(6, True), [(1, 2, 4, 5)]),
    "adaptive-max-pool2d-global": (lambda L: L.nn.AdaptiveMaxPool2d(1, True), [(2, 3, 4, 5)]),
    "adaptive-max-pool1d": (lambda L: L.nn.AdaptiveMaxPool1d(3, return_indices=True), [(2, 3, 8)]),
    "adaptive-max-pool1d-unbatched": (lambda L: L.nn.AdaptiveMaxPool1d(4), [(3, 7)]),
    "max-unpool2d": (lambda L: L.nn.MaxUnpool2d(2), [(2, 3, 4, 6)], _unpool(2, 2)),
    "max-unpool2d-stride-pad": (lambda L: L.nn.MaxUnpool2d((3, 2), (2, 1), (1, 0)), [(1, 2, 7, 5)],
                                _unpool(2, (3, 2), (2, 1), (1, 0))),
    "max-unpool2d-output-size": (lambda L: L.nn.MaxUnpool2d(2), [(2, 5, 5)], _unpool(2, 2, output_size=(5, 5))),
    "max-unpool2d-full-output-size": (lambda L: L.nn.MaxUnpool2d(2), [(2, 1, 5, 7)],
                                      _unpool(2, 2, output_size=(2, 1, 5, 7))),
    "max-unpool1d": (lambda L: L.nn.MaxUnpool1d(3, 2, 1), [(2, 3, 9)], _unpool(1, 3, 2, 1)),
    "max-unpool1d-unbatched": (lambda L: L.nn.MaxUnpool1d(2), [(3, 7)], _unpool(1, 2, output_size=[7])),
    "lp-pool2d": (lambda L: L.nn.LPPool2d(2, 2), [(2, 3, 4, 6)]),
    "lp-pool2d-ceil-stride": (lambda L: L.nn.LPPool2d(3, (3, 2), stride=(2, 1), ceil_mode=True), [(1, 2, 6, 5)]),
    "lp-pool2d-p1-unbatched": (lambda L: L.nn.LPPool2d(1, 2), [(2, 4, 4)]),
    "lp-pool1d": (lambda L: L.nn.LPPool1d(2, 3), [(2, 3, 9)]),
    "lp-pool1d-fractional-ceil": (lambda L: L.nn.LPPool1d(1.5, 2, stride=3, ceil_mode=True), [(3, 8)]),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(MODULES))
def test_module_matches_torch(name, dtype):
    make, inputs, *call = MODULES[name]
    if name.startswith("lp-pool") and "p1" not in name:  # non-integer powers of negatives are NaN in both
        inputs = [np.random.default_rng(1).uniform(0.2, 2.0, size=s).astype(dtype) for s in inputs]
        ours, ref = check_module(lambda: make(torch), lambda: make(tidu), [], dtype,
                                 call=lambda m, _: m(_lib(m).tensor(inputs[0], requires_grad=True)))
    else:
        ours, ref = check_module(lambda: make(torch), lambda: make(tidu), inputs, dtype,
                                 call=call[0] if call else None)
    assert repr(ours) == repr(ref)


@pytest.mark.parametrize("call", [
    "F.adaptive_max_pool2d(L.ones(5), 2)", "F.adaptive_max_pool1d(L.ones(5), 2)",
    "F.adaptive_max_pool1d(L.ones(1, 1, 1, 5), 2)", "F.adaptive_max_pool2d(L.ones(1, 1, 5, 5, dtype=L.long), 2)",
    "F.max_unpool2d(L.ones(1, 1, 2, 2), L.tensor([[[[0, 1], [2, 99]]]]), 2)",
    "F.max_unpool1d(L.ones(1, 1, 2), L.tensor([[[0, -1]]]), 2)",
    "F.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.long), 2, output_size=(7, 7))",
    "F.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.long), 2, output_size=(2, 4))",
])
def test_errors_match_torch(call: str) -> None:
    errors = []
    for L in (torch, tidu):  # noqa: N806 - the library
        F = L.nn.functional  # noqa: N806, F841 - read by the call
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class is compared with PyTorch's
            eval(call)  # noqa: S307 - the calls above
        errors.append((type(info.value), str(info.value)))
    assert errors[1] == errors[0]


def test_unpool_inverts_max_pool_like_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 4))
    outs = []
    for L in (torch, tidu):  # noqa: N806
        F = L.nn.functional  # noqa: N806
        y, i = F.max_pool2d(L.tensor(x), 2, return_indices=True)
        back = F.max_unpool2d(y, i, 2)
        assert (back != 0).sum() == y.numel()
        outs.append(back.numpy())
    np.testing.assert_array_equal(outs[1], outs[0])
