"""``tidu.autograd.Function``: a hand-written backward (and jvp) in reverse, forward and higher order.

The code of docs/tutorials/custom_gradients.md.

Run: python examples/custom_gradients.py
"""

import numpy as np

import tidu
from tidu.func import grad, jvp


# [START function]
class LogSumExp(tidu.autograd.Function):
    """log(sum(exp(x))) with the max subtracted, and its gradient softmax(x)."""

    @staticmethod
    def forward(ctx, x):
        m = x.amax()
        out = m + (x - m).exp().sum().log()
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, out = ctx.saved_tensors
        return grad_out * (x - out).exp()  # tidu ops: differentiable again

    @staticmethod
    def jvp(ctx, dx):
        x, out = ctx.saved_tensors
        return ((x - out).exp() * dx).sum()  # only needed for forward mode
# [END function]


# [START clip]
class ClipGradient(tidu.autograd.Function):
    """The identity forward; the backward clips the incoming gradient to [-bound, bound]."""

    @staticmethod
    def forward(ctx, x, bound):
        ctx.bound = bound
        return x

    @staticmethod
    def backward(ctx, grad_out):
        b = ctx.bound
        clipped = tidu.where(grad_out > b, b, tidu.where(grad_out < -b, -b, grad_out))
        return clipped, None  # no gradient for `bound`
# [END clip]


def run() -> dict:
    # [START use]
    x = tidu.tensor([1.0, 2.0, 3.0], dtype=tidu.float64, requires_grad=True)
    y = LogSumExp.apply(x)
    y.backward()  # reverse mode calls backward
    print(x.grad)  # softmax(x)

    v = x.detach()
    hess = tidu.func.hessian(LogSumExp.apply)(v)  # backward is differentiated again
    _, slope = jvp(LogSumExp.apply, (v,), (tidu.ones(3, dtype=tidu.float64),))  # forward mode calls jvp
    # [END use]
    s = np.exp(v.numpy()) / np.exp(v.numpy()).sum()
    np.testing.assert_allclose(x.grad.numpy(), s, rtol=1e-14)
    np.testing.assert_allclose(hess.numpy(), np.diag(s) - np.outer(s, s), rtol=1e-12, atol=1e-15)
    assert abs(slope.item() - 1.0) < 1e-14

    # [START clip_use]
    g = grad(lambda v: (ClipGradient.apply(v, 1.0) * 10).sum())(v)
    print(g)  # tensor([1., 1., 1.], dtype=tidu.float64): 10 clipped to 1
    # [END clip_use]
    assert g.tolist() == [1.0, 1.0, 1.0]
    return {"grad": x.grad, "hessian": hess}


if __name__ == "__main__":
    result = run()
    print("softmax:", result["grad"])
    print("hessian:\n", result["hessian"])
