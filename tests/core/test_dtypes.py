"""The small integer dtypes (tidu/core/dtypes.py): uint8, int8 and int16 against PyTorch.

Promotion among every pair of dtypes, then a table of calls run in both libraries on operands
whose values wrap (uint8 250 + 10, int8 -128, int16 products past 32767): values, shapes and
dtypes must agree exactly. Then the errors PyTorch raises for these dtypes, with its classes and
messages, and the places dtypes travel (numpy, ``save``/``load``, ``iinfo``, reprs).
"""

from __future__ import annotations

import io
import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import _name, assert_same_error, errors_of
from tidu.core import dtypes

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"]
SMALL = ["uint8", "int8", "int16"]


def _both(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's and tidu's deprecation of uint8 masks
        return fn(tidu), fn(torch)


def _same(out: Any, ref: Any) -> None:
    """Tensors (or tuples of them, or plain values) equal in shape, dtype and every value (floating
    point ones to a float32 rounding: PyTorch's vectorized sqrt is not always correctly rounded)."""
    if isinstance(ref, tuple | list) and not isinstance(ref, torch.Size):
        assert len(out) == len(ref)
        for o, r in zip(out, ref):
            _same(o, r)
        return
    if not isinstance(ref, torch.Tensor):
        assert out == ref and type(out) is type(ref), (out, ref)
        return
    assert isinstance(out, tidu.Tensor), type(out)
    assert _name(out.dtype) == _name(ref.dtype), (out.dtype, ref.dtype)
    assert tuple(out.shape) == tuple(ref.shape)
    if ref.dtype.is_floating_point:
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=2e-7, atol=0)
    else:
        np.testing.assert_array_equal(out.numpy(), ref.numpy())


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_promote_types_is_pytorchs_table(a: str, b: str) -> None:
    assert _name(tidu.promote_types(getattr(tidu, a), getattr(tidu, b))) == _name(
        torch.promote_types(getattr(torch, a), getattr(torch, b)))


def _u8(L: Any) -> Any:
    return L.tensor([250, 3, 0, 128, 255], dtype=L.uint8)


def _i8(L: Any) -> Any:
    return L.tensor([-128, 3, 127, -1, 100], dtype=L.int8)


def _i16(L: Any) -> Any:
    return L.tensor([1000, -3, 32767, -32768, 300], dtype=L.int16)


SOURCES = {"uint8": _u8, "int8": _i8, "int16": _i16}
# calls of one small-integer tensor ``x`` (each source above)
UNARY: dict[str, Callable[[Any, Any], Any]] = {
    "add-scalar-wraps": lambda x, L: x + 10,
    "add-big-scalar-wraps": lambda x, L: x + 300,
    "sub-negative-scalar": lambda x, L: x - 1,
    "rsub": lambda x, L: 300 - x,
    "mul": lambda x, L: x * 3,
    "mul-self": lambda x, L: x * x,
    "neg": lambda x, L: -x,
    "abs": lambda x, L: x.abs(),
    "sign": lambda x, L: x.sign(),
    "square": lambda x, L: x.square(),
    "pow": lambda x, L: x**3,
    "floor_divide": lambda x, L: x // 7,
    "floor_divide-negative": lambda x, L: x // -3,
    "remainder": lambda x, L: x % 7,
    "remainder-negative": lambda x, L: x % -3,
    "fmod": lambda x, L: x.fmod(7),
    "div-true": lambda x, L: x / 2,
    "div-trunc": lambda x, L: x.div(3, rounding_mode="trunc"),
    "div-floor": lambda x, L: x.div(3, rounding_mode="floor"),
    "mul-float": lambda x, L: x * 1.5,
    "add-float-0d-float64": lambda x, L: x + L.tensor(1.5, dtype=L.float64),
    "add-int64-0d": lambda x, L: x + L.tensor(300),
    "add-int64-1d": lambda x, L: x + L.tensor([300]),
    "add-bool": lambda x, L: x + True,
    "eq-wrapped-scalar": lambda x, L: x == 256 + 3,
    "lt-negative-scalar": lambda x, L: x < -1,
    "ge-float": lambda x, L: x >= 2.5,
    "and": lambda x, L: x & 6,
    "or": lambda x, L: x | 6,
    "xor": lambda x, L: x ^ 6,
    "invert": lambda x, L: ~x,
    "maximum-self": lambda x, L: L.maximum(x, x.flip(0)),
    "clamp": lambda x, L: x.clamp(2, 100),
    "clamp-float": lambda x, L: x.clamp(max=2.5),
    "relu": lambda x, L: x.relu(),
    "exp-is-float": lambda x, L: x.exp(),
    "sqrt-of-abs": lambda x, L: x.abs().sqrt(),
    "floor": lambda x, L: x.floor(),
    "sum": lambda x, L: x.sum(),
    "sum-dim-keepdim": lambda x, L: x.reshape(1, 5).sum(1, keepdim=True),
    "sum-own-dtype": lambda x, L: x.sum(dtype=x.dtype),
    "prod": lambda x, L: x.prod(),
    "cumsum": lambda x, L: x.cumsum(0),
    "cumprod": lambda x, L: x.cumprod(0),
    "max": lambda x, L: x.max(),
    "min": lambda x, L: x.min(),
    "max-dim": lambda x, L: tuple(x.reshape(1, 5).max(1)),
    "min-dim": lambda x, L: tuple(x.reshape(1, 5).min(1)),
    "amin": lambda x, L: x.amin(0),
    "argmax": lambda x, L: x.argmax(),
    "argmin": lambda x, L: x.argmin(),
    "cummax": lambda x, L: tuple(x.cummax(0)),
    "cummin": lambda x, L: tuple(x.cummin(0)),
    "any": lambda x, L: x.any(),
    "all": lambda x, L: x.all(),
    "all-dim": lambda x, L: x.reshape(1, 5).all(1),
    "sort": lambda x, L: tuple(x.sort()),
    "sort-descending": lambda x, L: tuple(x.sort(descending=True)),
    "topk": lambda x, L: tuple(x.topk(2)),
    "unique": lambda x, L: x.unique(),
    "median": lambda x, L: x.median(),
    "where-uint8-condition": lambda x, L: L.where(L.tensor([1, 0, 2, 0, 1], dtype=L.uint8, device=x.device), x, 5),
    "where-promotes": lambda x, L: L.where(x > 0, x, L.tensor([1], dtype=L.uint8)),
    "cat-with-uint8": lambda x, L: L.cat([x, L.tensor([7], dtype=L.uint8, device=x.device)]),
    "stack-with-int8": lambda x, L: L.stack([x, L.zeros(5, dtype=L.int8)]),
    "cat-with-float": lambda x, L: L.cat([x, L.tensor([0.5])]),
    "mask-uint8": lambda x, L: x[L.tensor([1, 0, 1, 0, 1], dtype=L.uint8)],
    "mask-bool": lambda x, L: x[x > 1],
    "index-int64": lambda x, L: x[L.tensor([4, 0])],
    "gather": lambda x, L: x.gather(0, L.tensor([3, 3, 0], device=x.device)),
    "masked_fill": lambda x, L: x.masked_fill(x > 1, 7),
    "matmul-wraps": lambda x, L: x.reshape(5, 1) @ x.reshape(1, 5),
    "dot": lambda x, L: x.dot(x),
    "to-float": lambda x, L: x.float(),
    "to-bool": lambda x, L: x.bool(),
    "to-other-small": lambda x, L: (x.byte(), x.char(), x.short()),
    "scatter_add-wraps": lambda x, L: L.zeros(2, dtype=x.dtype, device=x.device).scatter_add(
        0, L.tensor([1, 1, 0, 1, 0], device=x.device), x),
    "add_-in-place": lambda x, L: x.clone().add_(200),
    "fill_": lambda x, L: x.clone().fill_(7),
    "setitem": lambda x, L: _setitem(x.clone(), L),
    "bincount": lambda x, L: L.bincount(x % 10),
    "one_hot-of-long": lambda x, L: L.nn.functional.one_hot((x % 4).long(), 4),
    "tolist": lambda x, L: x.tolist(),
    "item": lambda x, L: x[2].item(),
}


def _setitem(x: Any, L: Any) -> Any:
    x[1:3] = -1  # uint8 takes it as 255
    x[x == 0] = L.tensor([9], dtype=x.dtype, device=x.device)
    return x


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("src", SMALL)
def test_small_integer_ops_match_torch(src: str, name: str) -> None:
    fn = UNARY[name]
    _same(*_both(lambda L: fn(SOURCES[src](L), L)))


ON_CUDA = ["add-big-scalar-wraps", "rsub", "mul-self", "neg", "abs", "pow", "floor_divide-negative", "remainder", "fmod",
           "div-true", "and", "invert", "lt-negative-scalar", "sum", "sum-own-dtype", "prod", "cumsum", "max", "min",
           "argmin", "sort-descending", "where-uint8-condition", "cat-with-uint8", "mask-uint8", "gather",
           "masked_fill", "matmul-wraps", "to-other-small", "scatter_add-wraps", "setitem"]


@pytest.mark.parametrize("name", ON_CUDA)
@pytest.mark.parametrize("src", SMALL)
def test_small_integer_ops_on_cuda(src: str, name: str) -> None:
    """The CUDA kernels (the simulator without a GPU) give PyTorch's CPU values; scatter_add, whose
    atomic add has no 8- or 16-bit form, adds in int32 and wraps back."""
    fn = UNARY[name]
    out = fn(SOURCES[src](tidu).to("cuda"), tidu)
    out = tuple(o.cpu() for o in out) if isinstance(out, tuple) else out.cpu()
    _same(out, fn(SOURCES[src](torch), torch))


@pytest.mark.parametrize("a,b", list(itertools.product(SMALL, SMALL + ["bool", "int32", "int64", "float32"])))
def test_mixed_operands_promote_and_wrap(a: str, b: str) -> None:
    def run(L: Any) -> Any:
        x = L.tensor([250, 3, 0, 127, 5]).to(getattr(L, a))
        y = L.tensor([10, 2, 1, 126, 3]).to(getattr(L, b))
        return x + y, x - y if "bool" not in (a, b) else x, x * y, x < y, L.maximum(x, y), L.where(x > y, x, y)

    _same(*_both(run))


@pytest.mark.parametrize("dt", SMALL)
def test_creation_and_conversion(dt: str) -> None:
    for fn in (
        lambda L: L.zeros(2, 3, dtype=getattr(L, dt)),
        lambda L: L.ones(2, dtype=getattr(L, dt)),
        lambda L: L.full((2,), -1, dtype=getattr(L, dt)),
        lambda L: L.full_like(L.ones(2, dtype=getattr(L, dt)), 7),
        lambda L: L.zeros_like(L.ones(2, dtype=getattr(L, dt))),
        lambda L: L.empty(2, dtype=getattr(L, dt)).dtype,
        lambda L: L.arange(250, 260, dtype=getattr(L, dt)),
        lambda L: L.arange(-3, 3, dtype=getattr(L, dt)),
        lambda L: L.linspace(-1, 3, 3, dtype=getattr(L, dt)),
        lambda L: L.tensor([-1, 2.7, True], dtype=getattr(L, dt)),
        lambda L: L.tensor([[1, -2], [3, 4]], dtype=getattr(L, dt)),
        lambda L: L.tensor([1.7, -2.2, 300.0]).to(getattr(L, dt)),
        lambda L: L.tensor([-129, 300, 70000]).to(getattr(L, dt)),
        lambda L: L.tensor(np.array([1, 2], dtype=dt)),
        lambda L: L.from_numpy(np.array([[1, 2]], dtype=dt)),
        lambda L: L.randint(0, 5, (3,), dtype=getattr(L, dt)).dtype,
        lambda L: L.randint_like(L.ones(2, dtype=getattr(L, dt)), 5).dtype,
        lambda L: L.ones(2, dtype=getattr(L, dt)).new_full((2,), 3),
        lambda L: L.ones(2, dtype=getattr(L, dt)).type(),
        lambda L: L.ones(2).type(f"torch.{dtypes.LEGACY_TYPES[dt]}"),
        lambda L: (L.ones(2, dtype=getattr(L, dt)).is_signed(), getattr(L, dt).is_signed, getattr(L, dt).itemsize),
        lambda L: (L.iinfo(getattr(L, dt)).min, L.iinfo(getattr(L, dt)).max, L.iinfo(getattr(L, dt)).bits),
    ):
        out, ref = _both(fn)
        if isinstance(ref, torch.dtype):
            assert _name(out) == _name(ref)
        else:
            _same(out, ref)


def test_names_and_aliases() -> None:
    assert tidu.short is tidu.int16 and tidu.promote_types(tidu.uint8, tidu.int8) is tidu.int16
    for dt in SMALL:
        x = tidu.tensor([1, 2], dtype=getattr(tidu, dt))
        assert repr(x) == repr(torch.tensor([1, 2], dtype=getattr(torch, dt))).replace("torch.", "tidu.")
        assert x.numpy().dtype == np.dtype(dt) and tidu.as_tensor(x.numpy()).dtype is x.dtype
        assert repr(tidu.iinfo(x.dtype)) == repr(torch.iinfo(getattr(torch, dt)))
    assert dtypes.as_dtype("short") is tidu.int16 and dtypes.as_dtype(np.uint8) is tidu.uint8


@pytest.mark.parametrize("dt", SMALL)
def test_save_and_load_keep_the_dtype(dt: str) -> None:
    buffer = io.BytesIO()
    x = tidu.tensor([[1, -2], [3, 4]]).to(getattr(tidu, dt))
    tidu.save({"x": x, "dtype": x.dtype}, buffer)
    buffer.seek(0)
    loaded = tidu.load(buffer)
    assert loaded["dtype"] is x.dtype and loaded["x"].dtype is x.dtype
    np.testing.assert_array_equal(loaded["x"].numpy(), x.numpy())


def test_uint8_mask_warns_like_torch() -> None:
    x = tidu.arange(3.0)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        x[tidu.tensor([1, 0, 1], dtype=tidu.uint8)]
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        tidu.where(tidu.tensor([1, 0, 1], dtype=tidu.uint8), x, 0.0)


def test_uint8_class_targets_and_fused_wrapping() -> None:
    def run(L: Any) -> Any:
        logits = L.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])
        target = L.tensor([1, 2], dtype=L.uint8)
        return L.nn.functional.cross_entropy(logits, target), L.nn.functional.nll_loss(logits, target)

    out, ref = _both(run)
    for o, r in zip(out, ref):
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-6)

    def chain(L: Any) -> Any:  # intermediates wrap at each op, fused or not
        u = _u8(L)
        return ((u + 10) // 2 + u * 3) > 100, (u - 5) * (u + 7), (L.tensor([-1.7, 300.2, 2.5]) * 1.0).to(L.uint8) + 1

    _same(*_both(chain))


ERRORS = [
    "L.tensor([1], dtype=L.uint8, requires_grad=True)",
    "L.tensor([1], dtype=L.int16).requires_grad_()",
    "L.zeros(2, dtype=L.int8, requires_grad=True)",
    "L.tensor([300], dtype=L.uint8)",
    "L.tensor([-256], dtype=L.uint8)",
    "L.tensor([128], dtype=L.int8)",
    "L.tensor([-1.5], dtype=L.uint8)",
    "L.tensor([2 ** 40], dtype=L.int32)",
    "L.full((2,), 300, dtype=L.uint8)",
    "L.full((2,), 40000, dtype=L.int16)",
    "L.zeros(2, dtype=L.int16).fill_(-40000)",
    "L.zeros(2, dtype=L.int32).fill_(2 ** 40)",
    "L.zeros(2, dtype=L.uint8).clamp(6, 300)",
    "L.zeros(2, dtype=L.int16).masked_fill(L.tensor([True, False]), 40000)",
    "L.zeros(2, dtype=L.int16) + 2 ** 70",
    "L.zeros(2, dtype=L.uint8).__setitem__(0, 300)",
    "L.linspace(0, 300, 4, dtype=L.uint8)",
    "L.randint(-5, 3, (3,), dtype=L.uint8)",
    "L.randint(0, 300, (3,), dtype=L.uint8)",
    "L.randint(0, 200, (3,), dtype=L.int8)",
    "L.randint(0, 40000, (3,), dtype=L.int16)",
    "L.tensor([1, 2], dtype=L.uint8).mean()",
    "L.tensor([1, 2], dtype=L.uint8).exp_()",
    "L.tensor([1, 2], dtype=L.int16).softmax(0)",
    "L.tensor([1, 2], dtype=L.int16).norm()",
    "L.tensor([5], dtype=L.uint8) // 0",
    "L.tensor([5], dtype=L.int8) % 0",
    "L.tensor(5, dtype=L.int8).clone().div_(2)",
    "L.arange(3.0)[L.tensor([1, 0], dtype=L.int8)]",
    "L.arange(3.0)[L.tensor([1, 0], dtype=L.int16)]",
    "L.zeros(2).masked_fill(L.tensor([1, 0], dtype=L.uint8), 1.0)",
    "L.zeros(2).masked_fill(L.tensor([1, 0], dtype=L.int16), 1.0)",
    "L.where(L.tensor([1, 0], dtype=L.int8), 1.0, 0.0)",
    "L.nn.functional.embedding(L.tensor([1], dtype=L.uint8), L.ones(3, 2))",
    "L.nn.functional.one_hot(L.tensor([1], dtype=L.uint8))",
    "L.ones(2, 2, dtype=L.int8) @ L.ones(2, 2)",
]


def _setitem_uint8_mask(L: Any) -> None:
    x = L.zeros(3)
    x[L.tensor([1, 0, 1], dtype=L.uint8)] = 7.0


@pytest.mark.parametrize("call", [*ERRORS, _setitem_uint8_mask], ids=str)
def test_errors_match_torch(call: Any) -> None:
    # tidu's indexing error names the dtype it got after PyTorch's message
    same_message = not (isinstance(call, str) and "L.arange(3.0)[" in call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(call, same_message=same_message)


def test_index_error_message_starts_with_torchs() -> None:
    ref, ours = errors_of("L.arange(3.0)[L.tensor([1, 0], dtype=L.int8)]")
    assert ours[0] is ref[0] and ours[1].startswith(ref[1]) and ours[1].endswith("(got int8)")


@pytest.mark.parametrize("value,dt,fits", [
    (255, "uint8", True), (256, "uint8", False), (-255, "uint8", True), (-256, "uint8", False),
    (-1.0, "uint8", False), (255.0, "uint8", True), (127, "int8", True), (-129, "int8", False),
    (float("nan"), "int16", False), (float("inf"), "int16", False), (2**40, "int64", True), (True, "int8", True),
])
def test_fits_is_c10_overflows(value: Any, dt: str, fits: bool) -> None:
    assert dtypes.fits(value, getattr(dtypes, dt)) is fits


def test_wrap_is_twos_complement() -> None:
    for dt in SMALL:
        info = np.iinfo(dt)
        for v in (-(2**20) - 3, -300, -1, 0, 5, 255, 300, 2**20 + 7):
            assert dtypes.wrap(v, getattr(dtypes, dt)) == np.array(v).astype(dt).item()
        assert dtypes.wrap(info.max, getattr(dtypes, dt)) == info.max


@pytest.mark.parametrize("call", [
    "L.zeros(2, dtype=L.float16).fill_(65520.0)", "L.full((2,), -1e6, dtype=L.float16)",
    "L.full((2,), 1e39, dtype=L.float32)", "L.full_like(L.zeros(2, dtype=L.bfloat16), 1e39)",
    "L.zeros(2, dtype=L.float16).masked_fill(L.tensor([True, False]), 70000.0)",
    "L.zeros(2).masked_fill(L.tensor([True, False]), 1e39)",
    "L.zeros(2, dtype=L.uint8).masked_fill(L.tensor([True, False]), L.tensor(300.0))",
    "L.zeros(2, dtype=L.int8).masked_fill(L.tensor([True, False]), L.tensor(float('nan')))",
    "L.clamp(L.zeros(2, dtype=L.float16), max=1e6)", "L.clamp(L.zeros(2), min=-1e39)",
])
def test_a_number_beyond_a_float_dtypes_range_is_an_overflow_error(call: str) -> None:
    """A finite number beyond the dtype's largest is PyTorch's overflow error where it fills with
    the number (``fill_``, ``full``, ``masked_fill``, ``clamp``'s bounds); inf and NaN fit."""
    assert_same_error(call)


@pytest.mark.parametrize("call", [
    "L.zeros(2, dtype=L.float16).fill_(float('inf'))", "L.full((2,), float('nan'), dtype=L.bfloat16)",
    "L.tensor([1e6], dtype=L.float16)", "L.zeros(2, dtype=L.float16) + 1e6",
    "L.zeros(2, dtype=L.uint8).masked_fill(L.tensor([True, False]), L.tensor(2.5))",
    "L.zeros(2, dtype=L.float16).masked_fill(L.tensor([True, False]), L.tensor(3.0))",
])
def test_where_pytorch_rounds_to_inf_or_takes_the_value_tidu_does_too(call: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning either
        ours, ref = eval(call, {"L": tidu}), eval(call, {"L": torch})  # noqa: S307
    assert _name(ours.dtype) == _name(ref.dtype)
    np.testing.assert_array_equal(ours.double().numpy(), ref.double().numpy())
