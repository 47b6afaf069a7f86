"""numpy's ``axis=``/``keepdims=`` for ``dim=``/``keepdim=`` (tidu/ops/aliases.py), against torch."""

import inspect

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error
from tidu.ops import aliases

X = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5

CALLS = [
    "x.sum(axis=0)", "L.sum(x, axis=1, keepdims=True)", "L.mean(x, axis=1, keepdims=True)",
    "x.mean(axis=-1, keepdims=True)", "x.max(axis=0).values", "x.max(axis=0).indices", "L.min(x, axis=1)[0]",
    "L.cat([x, x], axis=0)", "L.stack([x, x], axis=1)", "x.amax(axis=1, keepdims=True)", "x.argmax(axis=1)",
    "L.std(x, axis=0, keepdims=True)", "L.var(x, axis=1)", "L.softmax(x, axis=0)", "x.log_softmax(axis=1)",
    "L.cumsum(x, axis=0)", "x.unsqueeze(axis=0)", "L.squeeze(x[None], axis=0)", "x.logsumexp(axis=1)",
    "L.all(x > 0, axis=0)", "x.any(axis=1, keepdims=True)", "L.sort(x, axis=0).values", "L.topk(x, 2, axis=0)[0]",
    "L.diff(x, axis=0)", "x.nansum(axis=0)", "L.var_mean(x, axis=0)[1]", "L.unbind(x, axis=1)[2]",
    "L.count_nonzero(x, axis=0)", "L.linalg.vector_norm(x, axis=0)", "L.special.logsumexp(x, axis=0)",
    "L.gather(x, axis=1, index=L.zeros(3, 1, dtype=L.int64))", "x.prod(axis=1)", "L.median(x, axis=0).values",
    "L.quantile(x, 0.5, axis=0)", "x.cumprod(axis=1)", "L.narrow(x, axis=1, start=1, length=2)",
    "L.index_select(x, axis=0, index=L.tensor([2, 0]))", "x.sum(axis=(0, 1))", "x.size(axis=1)",
    "L.sum(x, 0, keepdims=True)",
]
ERRORS = [
    "x.sum(axis=0, dim=1)", "L.sum(x, 0, axis=1)", "L.split(x, 1, axis=0)", "L.nn.functional.softmax(x, axis=0)",
    "x.norm(axis=0)", "L.sum(x, axis=0, keepdim=True, keepdims=False)",
]


def _eval(call: str, lib: object) -> object:
    return eval(call, {"L": lib, "x": lib.tensor(X)})  # noqa: S307 - the tests' own calls


@pytest.mark.parametrize("call", CALLS)
def test_numpy_names_match_pytorch(call: str) -> None:
    out, ref = _eval(call, tidu), _eval(call, torch)
    if isinstance(ref, int):
        assert out == ref
        return
    assert str(out.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call", ERRORS)
def test_refusals_match_pytorch(call: str) -> None:
    assert_same_error(call, lambda lib: {"x": lib.tensor(X)}, same_message=False)


def test_gradient_through_an_aliased_call() -> None:
    grads = []
    for lib in (tidu, torch):
        x = lib.tensor(X, requires_grad=True)
        (lib.softmax(x, axis=0) * lib.tensor(X)).sum(axis=1).pow(2).mean(axis=0).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-7)


def _wrapped(namespace: object, names: set[str]) -> list[str]:
    return sorted(n for n in dir(namespace) if getattr(getattr(namespace, n), "__numpy_names__", False) and n in names)


@pytest.mark.parametrize(("ours", "theirs"), [(tidu, torch), (tidu.Tensor, torch.Tensor), (tidu.linalg, torch.linalg),
                                              (tidu.special, torch.special)], ids=["top", "Tensor", "linalg", "special"])
def test_every_function_with_dim_takes_axis_where_pytorch_does(ours: object, theirs: object) -> None:
    """A public function or method with ``dim`` or ``keepdim`` takes the numpy names exactly where
    PyTorch's counterpart goes through its argument parser (a builtin, not a Python function)."""
    names = {n for n in dir(ours) if not n.startswith("_") and hasattr(theirs, n)}
    for name in names:
        fn = getattr(ours, name)
        unwrapped = inspect.unwrap(fn) if callable(fn) else None
        if not inspect.isfunction(unwrapped):
            continue
        params = inspect.signature(unwrapped).parameters
        if "dim" not in params and "keepdim" not in params:
            continue
        native = not inspect.isfunction(getattr(theirs, name))
        assert getattr(fn, "__numpy_names__", False) == native, name
    assert len(_wrapped(ours, names)) >= 3


def test_elementwise_ops_stay_unwrapped() -> None:
    """The hot paths pay nothing: ops without ``dim`` are the functions themselves."""
    for name in ("add", "mul", "exp", "where", "relu"):
        assert not getattr(getattr(tidu, name), "__numpy_names__", False)
        assert not getattr(getattr(tidu.Tensor, name), "__numpy_names__", False)


def test_numpy_names_keep_other_keywords() -> None:
    fn = aliases.numpy_names(lambda x, dim=None, keepdim=False, *, dtype=None: (x, dim, keepdim, dtype))
    assert fn(1, axis=2, keepdims=True, dtype="d") == (1, 2, True, "d")
    assert fn(1, 2) == (1, 2, False, None)


@pytest.mark.parametrize("call", [
    lambda L, a, b: L.cdist(x1=a, x2=b),
    lambda L, a, b: L.cdist(a, x2=b, p=1.0),
    lambda L, a, b: L.nn.functional.cosine_similarity(x1=a, x2=b),
    lambda L, a, b: L.cosine_similarity(x1=a, x2=b, dim=0),
    lambda L, a, b: L.nn.functional.pairwise_distance(x1=a, x2=b),
    lambda L, a, b: L.pairwise_distance(x1=a, x2=b, keepdim=True),
])
def test_x1_x2_keywords_match_torch(call) -> None:  # noqa: ANN001
    """PyTorch names these operands ``x1`` and ``x2``; so does tidu."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    if "cdist" not in call.__code__.co_names:
        b = rng.standard_normal((3, 4))
    ours, ref = call(tidu, tidu.tensor(a), tidu.tensor(b)), call(torch, torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)
