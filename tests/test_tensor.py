"""The Tensor: repr as PyTorch prints it, numpy interop, metadata, seeding, default dtype."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

import tidu


@pytest.fixture
def default_float64() -> Iterator[None]:
    """Set the default dtype to float64 in both libraries, restoring it afterwards."""
    old, old_torch = tidu.get_default_dtype(), torch.get_default_dtype()
    tidu.set_default_dtype(tidu.float64)
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        tidu.set_default_dtype(old)
        torch.set_default_dtype(old_torch)


# --- repr ------------------------------------------------------------------------------------
REPRS = [
    "L.zeros(2, 0, dtype=L.int64)",
    "L.zeros(0, dtype=L.bool)",
    "L.tensor([-0.0, 1.0])",
    "L.tensor([1.0, 2.718281828], requires_grad=True)",
    "L.tensor([1, 2, 3])",
    "L.tensor([100, -3])",
    "L.tensor([True, False])",
    "L.tensor([[True], [False]])",
    "L.tensor(3.5)",
    "L.tensor(3)",
    "L.tensor(True)",
    "L.tensor(2.0, requires_grad=True)",
    "L.tensor([[1.0, 2.5], [3.0, -4.0]])",
    "L.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])",
    "L.arange(12).reshape(3, 4)",
    "L.tensor([1.0, 2.0], dtype=L.float64)",
    "L.tensor([0.1, 0.25], dtype=L.float64, requires_grad=True)",
    "L.zeros(1, 1, dtype=L.float64)",
    "L.tensor([1, 2], dtype=L.int32)",
    "L.tensor([])",
    "L.zeros(0, 3)",
    "L.tensor([1e10, 1.0])",
    "L.tensor([1e-5, 1.0])",
    "L.tensor(1e-8)",
    "L.tensor([1e20])",
    "L.tensor([float('nan'), float('inf'), -float('inf'), 1.5])",
    "L.tensor([-1.0, 0.0, 100.0])",
    "L.tensor([1.123456, 22.5, -333.25])",
    "L.tensor([123456.789, 0.001])",
    "L.arange(30.0)",
    "L.tensor([[1.0, 2.0]], dtype=L.float64).t()",
    "L.arange(2000.0)",
]


def _repr_pair(expr: str) -> tuple[str, str]:
    return repr(eval(expr, {"L": tidu})), repr(eval(expr, {"L": torch})).replace("torch.", "tidu.")


@pytest.mark.smoke
@pytest.mark.parametrize("expr", REPRS)
def test_repr_matches_torch(expr: str) -> None:
    ours, theirs = _repr_pair(expr)
    assert ours == theirs


def test_repr_of_results_names_the_grad_fn() -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * x) == "tensor([1., 4.], grad_fn=<mul>)"
    assert repr(tidu.tensor([1.0]).requires_grad_().sum()) == "tensor(1., grad_fn=<reduce_sum>)"


def test_repr_follows_default_dtype(default_float64: None) -> None:
    for expr in ("L.tensor([1.5, 2.0])", "L.tensor([1.5], dtype=L.float32)", "L.tensor(2.0)"):
        ours, theirs = _repr_pair(expr)
        assert ours == theirs


def test_size_repr() -> None:
    assert repr(tidu.zeros(2, 3).shape) == "tidu.Size([2, 3])"
    assert repr(tidu.tensor(1.0).shape) == "tidu.Size([])"


# --- numpy interop ---------------------------------------------------------------------------
@pytest.mark.smoke
def test_item() -> None:
    for lib in (tidu, torch):
        f, i, b = lib.tensor(2.5).item(), lib.tensor([[7]]).item(), lib.tensor(True).item()
        assert (f, i, b) == (2.5, 7, True)
        assert (type(f), type(i), type(b)) == (float, int, bool)
    assert float(tidu.tensor(2.5)) == 2.5 and int(tidu.tensor(3)) == 3
    assert tidu.tensor([1.0, 2.0], requires_grad=True).sum().item() == 3.0


def test_tolist() -> None:
    for expr in (
        "L.tensor([[1.5, 2.0], [3.0, 4.0]])",
        "L.tensor([1, 2])",
        "L.tensor(2.5)",
        "L.tensor([True])",
        "L.zeros(0, 2)",
    ):
        ours, theirs = (eval(expr, {"L": lib}).tolist() for lib in (tidu, torch))
        assert ours == theirs and type(ours) is type(theirs)
    assert type(tidu.tensor([1, 2]).tolist()[0]) is int


def test_from_numpy_shares_memory_both_ways() -> None:
    a = np.zeros(3)
    t = tidu.from_numpy(a)
    assert t.dtype is tidu.float64
    a[0] = 5.0
    assert t.tolist() == [5.0, 0.0, 0.0]
    t.add_(1)
    assert a.tolist() == [6.0, 1.0, 1.0]
    assert np.shares_memory(t.numpy(), a)


def test_numpy_shares_memory_with_the_tensor() -> None:
    t = tidu.tensor([1.0, 2.0])
    n = t.numpy()
    n[1] = 10.0
    assert t.tolist() == [1.0, 10.0]
    assert t.detach().numpy() is not None and np.shares_memory(t.detach().numpy(), n)


def test_tensor_copies_its_data() -> None:
    a = np.zeros(2)
    t = tidu.tensor(a)
    a[0] = 1.0
    assert t.tolist() == [0.0, 0.0]
    u = tidu.tensor(t)
    t.add_(1)
    assert u.tolist() == [0.0, 0.0]


def test_numpy_of_tensor_requiring_grad_raises() -> None:
    with pytest.raises(RuntimeError, match="detach"):
        tidu.tensor([1.0], requires_grad=True).numpy()


def test_np_asarray_of_a_tensor() -> None:
    assert np.asarray(tidu.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert np.asarray(tidu.tensor([1, 2]), dtype=np.float64).dtype == np.float64


# --- metadata --------------------------------------------------------------------------------
@pytest.mark.smoke
def test_shape_size_dim_numel() -> None:
    for lib in (tidu, torch):
        t = lib.zeros(2, 3, 4)
        assert tuple(t.shape) == (2, 3, 4) and isinstance(t.shape, tuple)
        assert tuple(t.size()) == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
        assert t.dim() == 3 and t.ndim == 3 and t.numel() == 24 and len(t) == 2
        assert t.shape.numel() == 24
        s = lib.tensor(1.0)
        assert tuple(s.shape) == () and s.dim() == 0 and s.numel() == 1
        e = lib.zeros(0, 3)
        assert e.numel() == 0 and len(e) == 0
    assert tidu.zeros(2, 3).shape == (2, 3)
    assert str(tidu.zeros(1).device) == "cpu"


def test_dtype_objects() -> None:
    assert tidu.float is tidu.float32 and tidu.double is tidu.float64
    assert tidu.long is tidu.int64 and tidu.int is tidu.int32
    assert tidu.float32.is_floating_point and not tidu.int64.is_floating_point
    assert repr(tidu.float64) == "tidu.float64" and repr(tidu.bool) == "tidu.bool"
    assert tidu.tensor([1.0], dtype="float64").dtype is tidu.float64
    assert tidu.tensor([1], dtype=np.int32).dtype is tidu.int32
    assert tidu.promote_types(tidu.int32, tidu.float32) is tidu.float32
    assert tidu.promote_types(tidu.bool, tidu.int64) is tidu.int64


def test_len() -> None:
    assert len(tidu.tensor([[1, 2], [3, 4]])) == 2
    with pytest.raises(TypeError):
        len(tidu.tensor(1.0))


def test_iteration() -> None:
    t = tidu.tensor([[1, 2], [3, 4]])
    assert [row.tolist() for row in t] == [[1, 2], [3, 4]]


# --- seeding ---------------------------------------------------------------------------------
@pytest.mark.smoke
def test_manual_seed_reproducibility() -> None:
    tidu.manual_seed(42)
    a, b = tidu.randn(3, 4), tidu.rand(5, dtype=tidu.float64)
    tidu.manual_seed(42)
    assert tidu.randn(3, 4).tolist() == a.tolist()
    assert tidu.rand(5, dtype=tidu.float64).tolist() == b.tolist()
    tidu.manual_seed(43)
    assert tidu.randn(3, 4).tolist() != a.tolist()
    r = tidu.rand(1000).numpy()
    assert r.min() >= 0 and r.max() < 1
    n = tidu.randn(10_000, dtype=tidu.float64).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05


# --- default dtype ---------------------------------------------------------------------------
def test_default_dtype_is_float32() -> None:
    assert tidu.get_default_dtype() is tidu.float32
    assert tidu.tensor([1.0]).dtype is tidu.float32 and tidu.zeros(2).dtype is tidu.float32


def test_set_default_dtype(default_float64: None) -> None:
    assert tidu.get_default_dtype() is tidu.float64
    for expr in (
        "L.tensor([1.0])",
        "L.tensor(2.5)",
        "L.zeros(2)",
        "L.ones(1)",
        "L.randn(2)",
        "L.rand(2)",
        "L.arange(0.5, 2)",
        "L.full((2,), 1.5)",
        "L.tensor([1, 2])",
        "L.tensor([1, 2]) / 2",
        "L.tensor([1, 2]).exp()",
        "L.tensor([1], dtype=L.int32) * 1.5",
        "L.tensor([1.0], dtype=L.float32) + 1.5",
    ):
        ours, theirs = (eval(expr, {"L": lib}) for lib in (tidu, torch))
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), expr


def test_set_default_dtype_rejects_integers() -> None:
    with pytest.raises(TypeError):
        torch.set_default_dtype(torch.int64)
    with pytest.raises(TypeError, match="floating"):
        tidu.set_default_dtype(tidu.int64)
    assert tidu.get_default_dtype() is tidu.float32


def test_default_dtype_fixture_restores() -> None:
    """Runs after ``test_set_default_dtype`` in file order: the default is back to float32."""
    assert tidu.get_default_dtype() is tidu.float32 and torch.get_default_dtype() == torch.float32


# --- detach / data ---------------------------------------------------------------------------
def test_detach_shares_storage_and_version() -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.add_(1)
    assert x.detach().tolist() == [2.0, 3.0]
    assert x._version.value == d._version.value == 1


def test_deepcopy_copies_leaves_and_parameters_like_torch():
    import copy

    for lib in (tidu, torch):
        x = lib.ones(2, requires_grad=True)
        (x * x).sum().backward()
        y = copy.deepcopy(x)
        assert y is not x and y.requires_grad and y.is_leaf
        np.testing.assert_array_equal(y.detach().numpy(), [1.0, 1.0])
        np.testing.assert_array_equal(y.grad.numpy(), [2.0, 2.0])
        p = copy.deepcopy(lib.nn.Parameter(lib.ones(3)))
        assert type(p).__name__ == "Parameter" and p.requires_grad
        with pytest.raises(RuntimeError, match="graph leaves"):
            copy.deepcopy(x * 2)
    layer = tidu.nn.Linear(2, 3)
    twin = copy.deepcopy(layer)
    assert twin.weight is not layer.weight
    np.testing.assert_array_equal(twin(tidu.ones(1, 2)).detach().numpy(), layer(tidu.ones(1, 2)).detach().numpy())
    pending = (tidu.tensor([1.0, 2.0]) * 3).exp()  # deferred work: the copy holds its computed values
    np.testing.assert_allclose(copy.deepcopy(pending).numpy(), np.exp([3.0, 6.0]))


def test_pickle_round_trips_values_dtype_device_and_requires_grad():
    import pickle

    for lib in (tidu, torch):
        x = lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True)
        for t in (x, x * 2):  # a computed tensor unpickles as a leaf
            back = pickle.loads(pickle.dumps(t))
            assert back.dtype == t.dtype and back.requires_grad and back.is_leaf
            np.testing.assert_array_equal(back.detach().numpy(), t.detach().numpy())
    assert pickle.loads(pickle.dumps(tidu.tensor(1.0).device)) is tidu.tensor(1.0).device
    pending = (tidu.tensor([1.0, 2.0]) * 2).exp()
    np.testing.assert_allclose(pickle.loads(pickle.dumps(pending)).numpy(), np.exp([2.0, 4.0]))


def test_legacy_type_names_pinning_and_sharing_as_torch() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.zeros(2)
        assert x.type() == "torch.FloatTensor"
        assert L.zeros(2, dtype=L.int64).type() == "torch.LongTensor"
        assert x.type(L.float64).dtype is L.float64
        assert x.type("torch.IntTensor").dtype is L.int32
        assert x.is_pinned() is False
        assert x.share_memory_() is x
    assert tidu.zeros(2).pin_memory().is_pinned() is False  # PyTorch's needs a GPU; tidu's is a no-op
    with pytest.raises(ValueError, match="invalid type"):
        tidu.zeros(2).type("torch.NoSuchTensor")
    assert tidu.zeros(2).type("torch.HalfTensor").dtype is tidu.float16


def test_index_put_in_place_matches_torch() -> None:
    outs = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor([1.0, 2.0], requires_grad=True)
        x = L.zeros(4) * 1
        assert x.index_put_((L.tensor([0, 2]),), w * 3) is x
        x.index_put_((L.tensor([0, 0]),), w, accumulate=True)
        (x * L.arange(4.0)).sum().backward()
        outs.append((x.detach().numpy(), w.grad.numpy()))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    np.testing.assert_array_equal(outs[1][1], outs[0][1])


def test_post_accumulate_grad_hook_matches_torch() -> None:
    """Runs once per backward after ``.grad`` holds the accumulated sum, with the tensor itself;
    an in-backward optimizer step works; ``remove`` stops it; errors on non-leaves."""
    seen = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([0.5], requires_grad=True)
        log: list = []
        handle = w.register_post_accumulate_grad_hook(lambda p, log=log: log.append((p.grad.tolist(), p.is_leaf)))

        def step(p: Any, L: Any = L) -> None:  # noqa: N803 - the library
            with L.no_grad():
                p.sub_(0.1 * p.grad)
        b.register_post_accumulate_grad_hook(step)
        (w * w + b).sum().backward()
        (w * 3 + b).sum().backward()
        handle.remove()
        (w * 3).sum().backward()
        seen.append((log, w.grad.tolist(), b.detach().tolist(), b.grad.tolist()))
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
            (w * 2).register_post_accumulate_grad_hook(lambda p: None)
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
            L.ones(2).register_post_accumulate_grad_hook(lambda p: None)
    assert seen[1] == seen[0]
    assert len(seen[1][0]) == 2


def test_numpy_force_detaches_and_copies_like_torch() -> None:
    for lib in (torch, tidu):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            x.numpy()
        array = (x * 2).numpy(force=True)
        np.testing.assert_array_equal(array, [2.0, 4.0])
        plain = lib.tensor([3.0])
        assert np.shares_memory(plain.numpy(), plain.numpy()) and plain.numpy(force=True)[0] == 3.0


def _apply_cases(lib):  # noqa: ANN001, ANN202
    x = lib.tensor([[1.0, -2.0], [3.0, 4.0]])
    view = x[:, 1]
    view.apply_(lambda v: v * 10)  # through a view: the base changes
    ints = lib.tensor([1, 2]).apply_(lambda v: v * 1.7)  # the result is cast to the tensor's dtype
    mapped = lib.tensor([[1.0, 2.0], [3.0, 4.0]]).map_(lib.tensor([10.0, 20.0]), lambda a, b: a * b + 1)
    return [x.tolist(), ints.tolist(), mapped.tolist()]


def test_apply_and_map_match_pytorch() -> None:
    import torch

    assert _apply_cases(tidu) == _apply_cases(torch)


def test_apply_and_map_errors_match_pytorch() -> None:
    import torch

    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match=r"Can't call apply_\(\) on Variable that requires grad"):
            lib.tensor([1.0], requires_grad=True).apply_(lambda v: v)
        with pytest.raises(RuntimeError, match=r"Can't call map_\(\) on Variable that requires grad"):
            lib.tensor([1.0], requires_grad=True).map_(lib.tensor([1.0]), lambda a, b: a)
        with pytest.raises(RuntimeError, match="expanded size of the tensor"):
            lib.tensor([1.0, 2.0]).map_(lib.tensor([3.0, 4.0, 5.0]), lambda a, b: a)


def test_apply_bumps_the_version() -> None:
    x = tidu.tensor([1.0, 2.0])
    before = x._version.value
    x.apply_(lambda v: v + 1)
    assert x._version.value == before + 1


def test_vmap_is_func_vmap() -> None:
    assert tidu.vmap is tidu.func.vmap
    assert tidu.vmap(lambda r: r.sum())(tidu.ones(3, 2)).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("call", ["float(L.ones(2))", "int(L.ones(0))", "complex(L.ones(3))", "L.ones(2).item()",
                                  "L.ones(2).__index__()", "bool(L.ones(0))", "bool(L.ones(2))"])
def test_python_conversions_of_more_than_one_element_raise_like_torch(call: str) -> None:
    from tests.test_torch_oracle import assert_same_error

    assert_same_error(call)


def test_format_contains_and_comparison_with_other_objects_match_torch() -> None:
    """``f"{loss:.4f}"`` formats a 0-d tensor as its number; ``in`` looks for the element anywhere;
    ``==`` with ``None`` or a string is False (Python's fallback), ``<`` a ``TypeError``."""
    for lib in (tidu, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        assert f"{lib.tensor(1.5):.2f}" == "1.50" and f"{lib.tensor(3)}" == "3"
        with pytest.raises(TypeError, match="unsupported format string"):
            f"{x:.2f}"
        assert 3.0 in x and 5 not in x and lib.tensor(4.0) in x
        with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
            "a" in x  # noqa: B015
        assert (x == None) is False and (x != None) is True and (x == "a") is False  # noqa: E711
        assert (x == [1.0, 2.0]) is False
        with pytest.raises(TypeError):
            x < None  # noqa: B015
        assert (x == 2).tolist() == [[False, True], [False, False]]


def test_slices_sums_and_repeats_of_a_size_are_sizes() -> None:
    s, t = tidu.ones(2, 3, 4).shape, torch.ones(2, 3, 4).shape
    for ours, theirs in [(s[1:], t[1:]), (s[::-1], t[::-1]), (s + (5,), t + (5,)), ((1,) + s, (1,) + t),
                         (s * 2, t * 2), (2 * s, 2 * t), (s + s, t + t)]:
        assert type(ours) is tidu.Size and type(theirs) is torch.Size and tuple(ours) == tuple(theirs)
    assert type(s[0]) is int and s == (2, 3, 4)
