"""Reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``, ``jacfwd``, ``hessian``.

The code of docs/tutorials/grad_and_jacobians.md; every number is checked
against a closed form.

Run: python examples/grad_and_jacobians.py
"""

import numpy as np

import tidu
from tidu.func import grad, grad_and_value, hessian, jacfwd, jacrev, vjp


def run() -> dict:
    # [START grad]
    def loss(w, x):
        return ((x @ w).tanh() ** 2).sum()

    w = tidu.tensor([[0.5, -1.0], [0.25, 2.0]], dtype=tidu.float64)
    x = tidu.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, 3.0]], dtype=tidu.float64)

    g_w = grad(loss)(w, x)  # d loss / d w, shaped like w
    g_w, g_x = grad(loss, argnums=(0, 1))(w, x)  # one gradient per argnum
    g_w, value = grad_and_value(loss)(w, x)  # the loss comes for free
    # [END grad]
    t = np.tanh(x.numpy() @ w.numpy())
    np.testing.assert_allclose(g_w.numpy(), x.numpy().T @ (2 * t * (1 - t * t)), rtol=1e-13)
    np.testing.assert_allclose(g_x.numpy(), (2 * t * (1 - t * t)) @ w.numpy().T, rtol=1e-13)
    np.testing.assert_allclose(value.item(), np.sum(t * t), rtol=1e-14)

    # [START pytree]
    def model_loss(params, x):
        hidden = (x @ params["w"] + params["b"]).tanh()
        loss = (hidden**2).mean()
        return loss, {"hidden": hidden}  # has_aux: (output, auxiliary data)

    params = {"w": w, "b": tidu.tensor([0.1, -0.1], dtype=tidu.float64)}
    grads, aux = grad(model_loss, has_aux=True)(params, x)
    print(sorted(grads), tuple(grads["w"].shape), tuple(aux["hidden"].shape))
    # [END pytree]
    assert sorted(grads) == ["b", "w"] and aux["hidden"].shape == (3, 2)

    # [START vjp]
    out, vjp_fn = vjp(lambda v: v.sin() * v.sum(), tidu.tensor([0.0, 1.0, 2.0], dtype=tidu.float64))
    (ct_v,) = vjp_fn(tidu.tensor([1.0, 0.0, 0.0], dtype=tidu.float64))  # row 0 of the Jacobian
    # [END vjp]
    v = np.array([0.0, 1.0, 2.0])
    jac = np.diag(np.cos(v) * v.sum()) + np.sin(v)[:, None]
    np.testing.assert_allclose(ct_v.numpy(), jac[0], rtol=1e-14)

    # [START jacobians]
    def f(v):
        return (v[:2] * v[1:]).exp()  # R^3 -> R^2: a non-square Jacobian

    v = tidu.tensor([0.1, 0.2, 0.3], dtype=tidu.float64)
    j_rev = jacrev(f)(v)  # rows: the vjp of every one-hot output cotangent, batched
    j_fwd = jacfwd(f)(v)  # columns: the jvp of every one-hot input tangent, batched
    print(tuple(j_rev.shape))  # output shape + input shape
    h = hessian(lambda v: (v.exp() * v).sum())(v)  # jacfwd(jacrev(f))
    # [END jacobians]
    a = np.array([0.1, 0.2, 0.3])
    e = np.exp(a[:2] * a[1:])
    want = np.array([[a[1] * e[0], a[0] * e[0], 0.0], [0.0, a[2] * e[1], a[1] * e[1]]])
    np.testing.assert_allclose(j_rev.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(j_fwd.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(h.numpy(), np.diag(np.exp(a) * (a + 2)), rtol=1e-14)
    return {"grad_w": g_w, "jacobian": j_rev, "hessian": h}


if __name__ == "__main__":
    result = run()
    print("grad w.r.t. w:\n", result["grad_w"])
    print("Jacobian:\n", result["jacobian"])
    print("Hessian:\n", result["hessian"])
