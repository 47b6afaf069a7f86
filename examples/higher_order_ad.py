"""Higher-order AD: transforms nested to any depth, on built-in and user-defined primitives.

The code of docs/guides/higher-order-ad.md. Each derivative is checked against its closed form.

Run: python examples/higher_order_ad.py
"""

import numpy as np

import tidu
from tidu.func import grad, hessian, jacfwd, jacrev, jvp

# [START primitive]
logistic = tidu.Primitive("example_logistic")
logistic.def_impl(lambda x: 1 / (1 + np.exp(-x)))
logistic.def_abstract_eval(lambda x: x)
# the rule reads the output; it is written with tidu ops, so it is differentiable again
logistic.def_jvp(lambda dx, x, out: dx * out * (1 - out))
# [END primitive]


def run() -> dict:
    # [START nesting]
    x = tidu.tensor(0.5, dtype=tidu.float64)
    d1 = grad(logistic.bind)(x)  # reverse
    d2 = grad(grad(logistic.bind))(x)  # reverse over reverse
    d3 = grad(grad(grad(logistic.bind)))(x)  # third order
    _, d3_mixed = jvp(grad(grad(logistic.bind)), (x,), (tidu.ones_like(x),))  # forward over reverse
    _, d1_fwd = jvp(logistic.bind, (x,), (tidu.ones_like(x),))  # forward mode: the JVP rule itself
    d3_fwd = jacfwd(jacfwd(jacfwd(logistic.bind)))(x)  # forward over forward over forward
    # [END nesting]
    s = 1 / (1 + np.exp(-0.5))
    want = [s * (1 - s), s * (1 - s) * (1 - 2 * s), s * (1 - s) * (1 - 6 * s + 6 * s * s)]
    for got, w in zip((d1, d2, d3), want):
        np.testing.assert_allclose(got.item(), w, rtol=1e-13)
    np.testing.assert_allclose(d1_fwd.item(), want[0], rtol=1e-13)
    np.testing.assert_allclose(d3_mixed.item(), want[2], rtol=1e-13)
    np.testing.assert_allclose(d3_fwd.item(), want[2], rtol=1e-13)

    # [START tensors]
    def energy(v):
        return (logistic.bind(v) * v.sum()).sum()

    v = tidu.tensor([0.1, -0.4, 0.7], dtype=tidu.float64)
    h_fwd_rev = jacfwd(jacrev(energy))(v)  # what hessian() does
    h_rev_rev = jacrev(jacrev(energy))(v)
    third = jacfwd(jacfwd(jacrev(energy)))(v)  # a (3, 3, 3) tensor of third derivatives
    # [END tensors]
    np.testing.assert_allclose(h_fwd_rev.numpy(), h_rev_rev.numpy(), rtol=1e-13)
    np.testing.assert_allclose(h_fwd_rev.numpy(), hessian(energy)(v).numpy(), rtol=1e-13)
    vn = v.numpy()
    sv = 1 / (1 + np.exp(-vn))
    d1v, d2v, d3v = sv * (1 - sv), sv * (1 - sv) * (1 - 2 * sv), sv * (1 - sv) * (1 - 6 * sv + 6 * sv * sv)
    h = np.diag(d2v * vn.sum() + 2 * d1v) + d1v[:, None] + d1v[None, :] - 2 * np.diag(d1v)
    np.testing.assert_allclose(h_fwd_rev.numpy(), h, rtol=1e-12)
    t = np.zeros((3, 3, 3))
    for i in range(3):
        t[i, i, i] = d3v[i] * vn.sum() + 3 * d2v[i]
        for j in range(3):
            if j != i:
                t[i, i, j] += d2v[i]
                t[i, j, i] += d2v[i]
                t[j, i, i] += d2v[i]
    np.testing.assert_allclose(third.numpy(), t, rtol=1e-12, atol=1e-15)

    # [START confusion]
    def outer(a):
        # d/db (a * b) at b = 1 is a; the inner derivative must not see a's perturbation
        return a * grad(lambda b: a * b)(tidu.tensor(1.0, dtype=tidu.float64))

    print(grad(outer)(tidu.tensor(3.0, dtype=tidu.float64)))  # d/da a**2 = 2a = 6
    # [END confusion]
    assert grad(outer)(tidu.tensor(3.0, dtype=tidu.float64)).item() == 6.0
    return {"d3": d3, "third": third}


if __name__ == "__main__":
    result = run()
    print("d^3 logistic / dx^3 at 0.5:", result["d3"])
    print("third-derivative tensor shape:", tuple(result["third"].shape))
