"""A user-defined tensor primitive, used in reverse mode, forward mode and to third order.

``softplus(x) = log(1 + exp(x))`` declared with ``tidu.Primitive``: a Numba kernel, a
shape rule and one JVP rule. No backward function is written: reverse mode transposes
the JVP, and higher orders differentiate the rule itself (it is written with tidu ops).

Run: python examples/custom_primitive.py
"""

import math

import numpy as np
from numba import njit

import tidu


# [START kernel]
@njit(cache=True)
def _softplus_kernel(x, out):
    for i in range(x.size):
        v = x.flat[i]
        out.flat[i] = v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))


def softplus_impl(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    _softplus_kernel(np.ascontiguousarray(x), out)
    return out
# [END kernel]


# [START declare]
softplus = tidu.Primitive("example_softplus")
softplus.def_impl(softplus_impl)


@softplus.def_abstract_eval
def _softplus_shape(x: tidu.ShapeDtype) -> tidu.ShapeDtype:
    if not x.dtype.is_floating_point:
        raise TypeError(f"softplus: expected a floating-point tensor, got {x.dtype}")
    return x


# d softplus(x) = sigmoid(x) dx, written with tidu ops so it can be differentiated again
softplus.def_jvp(lambda dx, x, out: dx * tidu.sigmoid(x))
# [END declare]


def run() -> dict:
    # [START use]
    x = tidu.tensor([-1.0, 0.0, 2.0], dtype=tidu.float64, requires_grad=True)

    # reverse mode: the transpose of the JVP
    (g,) = tidu.autograd.grad(softplus.bind(x).sum(), x, create_graph=True)
    # forward mode: the JVP itself
    _, tangent = tidu.func.jvp(softplus.bind, (x.detach(),), (tidu.ones(3, dtype=tidu.float64),))
    # second and third order: differentiate the gradient again
    (g2,) = tidu.autograd.grad(g.sum(), x, create_graph=True)
    (g3,) = tidu.autograd.grad(g2.sum(), x)
    # [END use]
    s = 1 / (1 + np.exp(-x.detach().numpy()))
    np.testing.assert_allclose(g.detach().numpy(), s, rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), s, rtol=1e-12)
    np.testing.assert_allclose(g2.detach().numpy(), s * (1 - s), rtol=1e-12)
    np.testing.assert_allclose(g3.numpy(), s * (1 - s) * (1 - 2 * s), rtol=1e-10)
    assert tidu.autograd.gradcheck(softplus.bind, (x,), check_forward_ad=True)
    assert tidu.autograd.gradgradcheck(softplus.bind, (x,))
    return {"grad": g.detach(), "third": g3}


if __name__ == "__main__":
    result = run()
    print("d softplus / dx     =", result["grad"])
    print("d^3 softplus / dx^3 =", result["third"])
