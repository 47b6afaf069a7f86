"""Bad input: the exception class PyTorch raises, a message naming the problem, never Numba.

Each case runs the same call on tidu and on torch (where torch has the op): the class
must be torch's, and tidu's message must contain the listed fragments.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu.primitives import elementwise as ew
from tidu.primitives.linalg import dot_general


def _raised(fn: Callable[[], Any]) -> BaseException | None:
    try:
        fn()
    except Exception as err:  # noqa: BLE001
        return err
    return None


def check_error(lib_fn: Callable[[Any], Any], exc: type, *fragments: str, torch_too: bool = True) -> None:
    if torch_too:
        ref = _raised(lambda: lib_fn(torch))
        assert ref is not None and type(ref) is exc, (
            f"torch raised {type(ref).__name__}, the table says {exc.__name__}"
        )
    err = _raised(lambda: lib_fn(tidu))
    assert err is not None, "tidu raised nothing"
    assert isinstance(err, exc), f"tidu raised {type(err).__name__}: {err}; torch raises {exc.__name__}"
    text = str(err)
    assert "numba" not in type(err).__module__ and "numba" not in text.lower(), (
        f"a Numba error leaked: {text}"
    )
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in message: {text}"


CASES: dict[str, tuple[Callable[[Any], Any], type, tuple[str, ...]]] = {
    "add-shapes": (lambda L: L.ones(3) + L.ones(4), RuntimeError, ("(3)", "(4)")),
    "mul-shapes-2d": (lambda L: L.ones(2, 3) * L.ones(3, 2), RuntimeError, ("(3)", "(2)", "must match")),
    "maximum-shapes": (lambda L: L.maximum(L.ones(2), L.ones(3)), RuntimeError, ("(2)", "(3)")),
    "where-shapes": (lambda L: L.where(L.ones(2) > 0, L.ones(3), 0.0), RuntimeError, ("(2)", "(3)")),
    "matmul": (lambda L: L.ones(2, 3) @ L.ones(4, 5), RuntimeError, ("cannot be multiplied", "2x3", "4x5")),
    "matmul-batched-rhs": (lambda L: L.ones(5, 2, 3) @ L.ones(4, 5), RuntimeError, ("cannot be multiplied",)),
    "matmul-1d": (lambda L: L.ones(3) @ L.ones(4), RuntimeError, ("3", "4")),
    "matmul-batch": (lambda L: L.ones(2, 2, 3) @ L.ones(3, 3, 4), RuntimeError, ("(2)", "(3)")),
    "matmul-0d": (lambda L: L.ones(()) @ L.ones(3), RuntimeError, ("at least 1D",)),
    "matmul-dtype": (lambda L: L.ones(2, 3, dtype=L.float64) @ L.ones(3, 2), RuntimeError, ("dtype",)),
    "mm-1d": (lambda L: L.mm(L.ones(3), L.ones(3, 2)), RuntimeError, ()),
    "reshape": (lambda L: L.ones(6).reshape(4, -1), RuntimeError, ("[4, -1]", "invalid for input of size 6")),
    "reshape-exact": (lambda L: L.ones(2, 3).reshape(4), RuntimeError, ("invalid for input of size 6",)),
    "reshape-two-inferred": (lambda L: L.ones(6).reshape(-1, -1), RuntimeError, ("only one dimension",)),
    "view": (lambda L: L.ones(6).view(5), RuntimeError, ("invalid",)),
    "expand": (lambda L: L.ones(2, 3).expand(2, 4), RuntimeError, ("expanded size", "(4)", "(3)")),
    "expand-few": (lambda L: L.ones(2, 3).expand(3), RuntimeError, ("number of sizes",)),
    "permute-count": (lambda L: L.ones(2, 3).permute(0, 1, 2), RuntimeError, ("dims",)),
    "permute-repeat": (lambda L: L.ones(2, 3).permute(0, 0), RuntimeError, ("permut",)),
    "sum-dim": (lambda L: L.ones(2, 3).sum(dim=2), IndexError, ("Dimension out of range", "[-2, 1]", "2")),
    "sum-dim-repeat": (lambda L: L.ones(2, 3).sum(dim=(0, 0)), RuntimeError, ("multiple times",)),
    "mean-dim": (lambda L: L.ones(2, 3).mean(dim=-3), IndexError, ("Dimension out of range",)),
    "amax-dim": (lambda L: L.ones(2, 3).amax(dim=-3), IndexError, ("Dimension out of range",)),
    "amax-empty": (lambda L: L.zeros(0, 3).amax(dim=0), IndexError, ("non-zero size",)),
    "transpose-dim": (lambda L: L.ones(2, 3).transpose(0, 2), IndexError, ("Dimension out of range",)),
    "unsqueeze-dim": (lambda L: L.ones(2, 3).unsqueeze(3), IndexError, ("Dimension out of range",)),
    "squeeze-dim": (lambda L: L.ones(2, 3).squeeze(5), IndexError, ("Dimension out of range",)),
    "size-dim": (lambda L: L.ones(2, 3).size(2), IndexError, ("Dimension out of range",)),
    "t-3d": (lambda L: L.ones(2, 2, 2).t(), RuntimeError, ("3D",)),
    "mean-int": (lambda L: L.tensor([1, 2]).mean(), RuntimeError, ("mean", "floating point")),
    "tensor-str": (lambda L: L.tensor("abc"), TypeError, ("str",)),
    "tensor-list-str": (lambda L: L.tensor([1, "a"]), TypeError, ("str",)),
    "tensor-ragged": (lambda L: L.tensor([[1, 2], [3]]), ValueError, ()),
    "zeros-negative": (lambda L: L.zeros(-1), RuntimeError, ("negative",)),
    "ones-float-size": (lambda L: L.ones(2.5), TypeError, ("float",)),
    "requires-grad-int": (lambda L: L.tensor([1, 2], requires_grad=True), RuntimeError, ("floating point",)),
    "item": (lambda L: L.ones(2).item(), RuntimeError, ("2 elements",)),
    "bool-ambiguous": (lambda L: bool(L.ones(2)), RuntimeError, ("ambiguous",)),
    "numpy-requires-grad": (lambda L: L.ones(2, requires_grad=True).numpy(), RuntimeError, ("detach",)),
    "from-numpy-list": (lambda L: L.from_numpy([1, 2]), TypeError, ("np.ndarray",)),
    "exp-str": (lambda L: L.exp("a"), TypeError, ("Tensor",)),
    "add-str": (lambda L: L.ones(2) + "a", TypeError, ("str",)),
    "len-0d": (lambda L: len(L.tensor(1.0)), TypeError, ("0-d",)),
    "index-float": (lambda L: [1, 2][L.tensor(1.0)], TypeError, ("integer",)),
    "backward-no-grad": (lambda L: L.ones(2).sum().backward(), RuntimeError, ("does not require grad",)),
    "backward-non-scalar": (
        lambda L: L.ones(2, requires_grad=True).exp().backward(),
        RuntimeError,
        ("only for scalar outputs",),
    ),
    "inplace-leaf": (lambda L: L.ones(2, requires_grad=True).add_(1), RuntimeError, ("leaf",)),
    "randn-int": (lambda L: L.randn(2, dtype=L.int64), NotImplementedError, ("normal",)),
    "where-int": (lambda L: L.where(L.tensor([1, 0]), L.ones(2), L.zeros(2)), RuntimeError, ("boolean",)),
    "neg-bool": (lambda L: -L.tensor([True]), RuntimeError, ("Negation",)),
    "tensor-none": (lambda L: L.tensor(None), RuntimeError, ("Could not infer dtype",)),
    "gelu-approximate": (lambda L: (L.nn.functional.gelu if L is torch else L.gelu)(L.ones(2), approximate="x"), RuntimeError, ("approximate",)),
    "transpose-0d": (lambda L: L.tensor(1.0).transpose(0, 1), IndexError, ("Dimension out of range",)),
    "flatten-reversed": (lambda L: L.ones(2, 3).flatten(1, 0), RuntimeError, ("start_dim",)),
    "grad-wrong-shape": (lambda L: setattr(L.ones(2, requires_grad=True), "grad", L.ones(3)), RuntimeError, ("size",)),
    # PyTorch's kernels that have no integer or bool version (its kernel's name, the dtype's)
    "softmax-int": (lambda L: L.softmax(L.ones(2, 3, dtype=L.int64), dim=1), NotImplementedError,
                    ('"softmax_lastdim_kernel_impl" not implemented for \'Long\'',)),
    "softmax-int-dim0": (lambda L: L.softmax(L.ones(2, 3, dtype=L.int64), dim=0), NotImplementedError,
                         ('"softmax_kernel_impl"',)),
    "softmax-int-bad-dim": (lambda L: L.softmax(L.ones(3, dtype=L.int64), dim=1), IndexError, ("Dimension out of range",)),
    "log-softmax-bool": (lambda L: L.log_softmax(L.ones(3, dtype=L.bool), dim=0), NotImplementedError,
                         ('"log_softmax_lastdim_kernel_impl" not implemented for \'Bool\'',)),
    "gelu-int": (lambda L: L.nn.functional.gelu(L.ones(3, dtype=L.int64)), NotImplementedError, ('"GeluKernelImpl"',)),
    "silu-int": (lambda L: L.nn.functional.silu(L.ones(3, dtype=L.int32)), NotImplementedError,
                 ('"silu_cpu" not implemented for \'Int\'',)),
    "layer-norm-int": (lambda L: L.nn.functional.layer_norm(L.ones(2, 3, dtype=L.int64), (3,)), NotImplementedError,
                       ('"LayerNormKernelImpl"',)),
    "layer-norm-int-shape": (lambda L: L.nn.functional.layer_norm(L.ones(2, 3, dtype=L.int64), (2,)), RuntimeError,
                             ("normalized_shape",)),
    "mse-bool": (lambda L: L.nn.functional.mse_loss(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool)),
                 NotImplementedError, ('"mse_cpu" not implemented for \'Bool\'',)),
    "mse-int-shapes": (lambda L: L.nn.functional.mse_loss(L.ones(3, dtype=L.int64), L.ones(4, dtype=L.int64)),
                       RuntimeError, ("(3)", "(4)")),
    "einsum-bool": (lambda L: L.einsum("ij,jk->ik", L.ones(2, 2, dtype=L.bool), L.ones(2, 2, dtype=L.bool)),
                    NotImplementedError, ('"bmm" not implemented for \'Bool\'',)),
    "index-select-0d": (lambda L: L.tensor(1.0).index_select(0, L.tensor([0, 0])), RuntimeError,
                        ("Index to scalar can have only 1 value",)),
    "index-select-empty": (lambda L: L.zeros(0, 2).index_select(0, L.tensor([0])), RuntimeError,
                           ("should be positive",)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_error_matches_torch(name: str) -> None:
    fn, exc, fragments = CASES[name]
    check_error(fn, exc, *fragments)


@pytest.mark.smoke
def test_shape_mismatch_names_both_shapes_and_the_op() -> None:
    with pytest.raises(RuntimeError) as info:
        tidu.ones(3) + tidu.ones(4)
    assert "(3)" in str(info.value) and "(4)" in str(info.value) and "add" in str(info.value)


def test_broadcast_error_names_the_result_dimension() -> None:
    fn = lambda L: L.ones(2, 3) / L.ones(2)  # noqa: E731
    check_error(fn, RuntimeError, "non-singleton dimension 1")


# --- primitives called directly: dtype and shape checks before any kernel ---------------------
FLOAT_ONLY_UNARY = ["exp", "log", "tanh", "sin", "cos", "erf"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "eq", "ne", "lt", "le", "gt", "ge"]
REJECTED_DTYPE = {"sub": "bool", "div": "int64", "pow": "bool"}  # dtypes these kernels lack


@pytest.mark.smoke
def test_unsupported_dtype_names_dtype_and_primitive() -> None:
    with pytest.raises(TypeError) as info:
        ew.exp.bind(tidu.tensor([1, 2]))
    assert "int64" in str(info.value) and "exp" in str(info.value)


@pytest.mark.parametrize("name", FLOAT_ONLY_UNARY)
def test_float_only_unary_primitive_rejects_integers(name: str) -> None:
    for dt in ("int64", "int32", "bool"):
        x = tidu.ones(3, dtype=getattr(tidu, dt))
        with pytest.raises(TypeError, match=rf"{name}.*{dt}"):
            getattr(ew, name).bind(x)


@pytest.mark.parametrize("name", BINARY)
def test_binary_primitive_checks_dtype_and_shape(name: str) -> None:
    prim = getattr(ew, name)
    if name in REJECTED_DTYPE:
        bad = REJECTED_DTYPE[name]
        x = tidu.ones(3, dtype=getattr(tidu, bad))
        with pytest.raises(TypeError, match=rf"{name}.*{bad}"):
            prim.bind(x, x)
    with pytest.raises(TypeError, match=rf"{name}.*float32.*float64"):
        prim.bind(tidu.ones(3), tidu.ones(3, dtype=tidu.float64))
    with pytest.raises(RuntimeError, match=rf"{name}.*\(3,\).*\(4,\)"):
        prim.bind(tidu.ones(3), tidu.ones(4))


def test_dot_general_rejects_bool_and_bad_contractions() -> None:
    dims = (((1,), (0,)), ((), ()))
    with pytest.raises(TypeError, match="dot_general.*bool"):
        dot_general.bind(
            tidu.ones(2, 3, dtype=tidu.bool), tidu.ones(3, 2, dtype=tidu.bool), dimension_numbers=dims
        )
    with pytest.raises(RuntimeError, match=r"dot_general.*\(2, 3\).*\(4, 2\)"):
        dot_general.bind(tidu.ones(2, 3), tidu.ones(4, 2), dimension_numbers=dims)


def test_primitive_rejects_non_tensor_arguments() -> None:
    with pytest.raises(TypeError, match="exp.*ndarray"):
        ew.exp.bind(np.ones(3))


# --- missing AD rules ------------------------------------------------------------------------
no_jvp = tidu.Primitive("test_errors_no_jvp")
no_jvp.def_impl(lambda x: x * 2)
no_jvp.def_abstract_eval(lambda x: x)

no_transpose = tidu.Primitive("test_errors_no_transpose")
no_transpose.def_impl(lambda x: x * 2)
no_transpose.def_abstract_eval(lambda x: x)
no_transpose.def_jvp(lambda dx, x, out: no_transpose.bind(dx))  # looks linear; no transpose rule

bad_transpose = tidu.Primitive("test_errors_bad_transpose")
bad_transpose.def_impl(lambda x: x * 2)
bad_transpose.def_abstract_eval(lambda x: x)
bad_transpose.def_jvp(lambda dx, x, out: bad_transpose.bind(dx))
bad_transpose.def_transpose(lambda ct, x: [ct.sum()])  # wrong shape


@pytest.mark.smoke
def test_missing_jvp_rule_raises_adruleerror_at_backward() -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    y = no_jvp.bind(x).sum()  # recording works; the rule is needed only by backward
    with pytest.raises(tidu.ADRuleError) as info:
        y.backward()
    assert str(info.value) == "unsupported jvp AD rule for test_errors_no_jvp"
    assert isinstance(info.value, RuntimeError)
    assert info.value.kind is tidu.ADRuleKind.Jvp and info.value.primitive == "test_errors_no_jvp"
    with pytest.raises(tidu.ADRuleError) as info:
        tidu.func.jvp(no_jvp.bind, (tidu.tensor([1.0]),), (tidu.tensor([1.0]),))
    assert str(info.value) == "unsupported jvp AD rule for test_errors_no_jvp"
    assert no_jvp.bind(tidu.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]  # no grad needed: runs


def test_missing_transpose_rule_raises_adruleerror_at_backward() -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    y = no_transpose.bind(x).sum()
    with pytest.raises(tidu.ADRuleError, match="transpose") as info:
        y.backward()
    assert info.value.kind is tidu.ADRuleKind.Transpose


def test_transpose_rule_of_wrong_shape_raises_adruleerror() -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        tidu.ADRuleError, match="invalid transpose AD input for test_errors_bad_transpose"
    ) as info:
        bad_transpose.bind(x).sum().backward()
    assert info.value.kind is tidu.ADRuleKind.Transpose
    assert "(2,)" in str(info.value)


def test_declaring_a_primitive_twice_raises() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        tidu.Primitive("test_errors_no_jvp")


_SAME_OUTCOME = [
    "F.prelu(L.tensor(-2.0), L.tensor([0.25]))",
    "F.max_pool2d_with_indices(L.rand(1, 1, 4, 4), 2, 2, 0, 1, False, True)[1]",
    "F.conv_transpose2d(L.rand(1, 1, 3, 3), L.rand(1, 1, 2, 2), padding='same')",
    "F.adaptive_avg_pool2d(L.rand(1, 1, 4, 4), (2, 2, 2))", "F.adaptive_max_pool2d(L.rand(1, 1, 4, 4), -1)",
    "F.one_hot(L.tensor([0, 1]), 2.5)", "F.interpolate(L.rand(1, 1, 4), scale_factor=2, antialias=True)",
    "F.affine_grid(L.tensor([[[1, 0, 0], [0, 1, 0]]]), (1, 1, 2, 2), align_corners=False)",
    "F.unfold(L.ones(1, 1, 3, 3, dtype=L.int64), 2)", "F.interpolate(L.rand(1, 1, 4), size=0)",
    "F.interpolate(L.rand(1, 1, 4), scale_factor=-1.0)", "F.interpolate(L.rand(1, 1, 4), size=L.tensor(8))",
    "F.interpolate(L.rand(1, 1, 4), size=8, recompute_scale_factor=True)",
    "F.pad(L.rand(1, 1, 4), (1, 1), mode='reflect', value=2.0)", "F.rrelu(L.rand(3), lower=0.5, upper=0.1)",
    "F.softplus(L.tensor([1, 2]))", "F.logsigmoid(L.tensor([1, 2]))", "F.hardswish(L.tensor([1, 2]))",
    "F.adaptive_avg_pool2d(L.ones(1, 1, 2, 2, dtype=L.int64), 1)", "F.interpolate(L.ones(1, 1, 2, dtype=L.int64), scale_factor=2)",
    "F.scaled_dot_product_attention(L.rand(2, 2), L.rand(2, 2), L.rand(2, 2), attn_mask=L.ones(2, 2, dtype=L.int64))",
    "L.heaviside(L.tensor([1.0]), 0.5)", "L.ldexp(2, L.tensor([1]))", "L.ldexp(L.tensor([1.0]), 2)",
    "L.hypot(L.tensor([1]), 3)", "L.atan2(L.tensor([1.0]), 2)", "L.tensor([1.0]).atan2(2)",
    "L.copysign(2.0, L.tensor([-1.0]))", "L.fmod(5.0, L.tensor([3.0]))", "L.fmod(L.tensor([5.0]), 3.0)",
    "L.logaddexp(L.tensor([1]), L.tensor([2]))", "L.logaddexp2(L.tensor([True]), L.tensor([False]))",
    "L.diff(L.rand(3, 2), prepend=L.rand(2))", "L.tril_indices(3, 3, dtype=L.float32)",
    "L.tensor(1.0).unflatten(0, (1, 1))", "L.true_divide(L.rand(2), 2, rounding_mode='floor')",
    "L.chain_matmul(L.rand(2), L.rand(2, 2))",
]


@pytest.mark.parametrize("call", _SAME_OUTCOME)
def test_calls_succeed_or_fail_with_pytorchs_exception_class(call):
    outcomes = []
    for L in (tidu, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = eval(call, {"L": L, "F": L.nn.functional})  # noqa: S307 - the calls above
            outcomes.append(("ok", tuple(out.shape)))
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            outcomes.append((type(e).__name__,))
    assert outcomes[0] == outcomes[1]
