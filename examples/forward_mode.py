"""Forward mode: ``jvp``, ``linearize`` (a printable linear map), ``linear_transpose``, Hessian-vector products.

The code of docs/tutorials/forward_mode.md.

Run: python examples/forward_mode.py
"""

import numpy as np

import tidu
from tidu.func import grad, jvp


def run() -> dict:
    # [START jvp]
    def f(x, y):
        return x.sin() * y

    x = tidu.tensor([0.0, 1.0], dtype=tidu.float64)
    y = tidu.tensor([2.0, 3.0], dtype=tidu.float64)
    dx = tidu.tensor([1.0, 1.0], dtype=tidu.float64)
    dy = tidu.tensor([0.0, 0.5], dtype=tidu.float64)
    out, tangent = jvp(f, (x, y), (dx, dy))  # f(x, y) and J @ (dx, dy) in one pass
    # [END jvp]
    xs, ys = x.numpy(), y.numpy()
    np.testing.assert_allclose(tangent.numpy(), np.cos(xs) * ys * dx.numpy() + np.sin(xs) * dy.numpy(), rtol=1e-14)

    # [START linearize]
    out, jvp_fn = tidu.linearize(lambda v: v * v.sin(), tidu.tensor([3.0, 0.5], dtype=tidu.float64))
    print(jvp_fn.graph)  # the linear program: the JVP rules of mul and sin, once
    t1 = jvp_fn(tidu.tensor([1.0, 0.0], dtype=tidu.float64))  # reuse it for many tangents
    t2 = jvp_fn(tidu.tensor([0.0, 1.0], dtype=tidu.float64))
    # [END linearize]
    v = np.array([3.0, 0.5])
    d = np.sin(v) + v * np.cos(v)
    np.testing.assert_allclose(t1.numpy() + t2.numpy(), d, rtol=1e-14)
    assert "mul" in str(jvp_fn.graph)

    # [START linear_transpose]
    a = tidu.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=tidu.float64)

    def linear(v):
        return a @ v * 2  # linear in v: R^3 -> R^2

    linear_t = tidu.linear_transpose(linear, tidu.zeros(3, dtype=tidu.float64))
    (ct_v,) = linear_t(tidu.tensor([1.0, -1.0], dtype=tidu.float64))  # = 2 * a.T @ ct
    # [END linear_transpose]
    np.testing.assert_allclose(ct_v.numpy(), 2 * a.numpy().T @ np.array([1.0, -1.0]), rtol=1e-15)

    # [START hvp]
    def loss(v):
        return (v.exp() * v).sum()

    v = tidu.tensor([0.1, 0.2, 0.3], dtype=tidu.float64)
    u = tidu.tensor([1.0, 0.0, -1.0], dtype=tidu.float64)
    _, hvp = jvp(grad(loss), (v,), (u,))  # forward over reverse: H @ u without forming H
    # [END hvp]
    vn = v.numpy()
    np.testing.assert_allclose(hvp.numpy(), np.exp(vn) * (vn + 2) * u.numpy(), rtol=1e-14)
    return {"tangent": tangent, "transpose": ct_v, "hvp": hvp}


if __name__ == "__main__":
    result = run()
    for name, value in result.items():
        print(f"{name}: {value}")
