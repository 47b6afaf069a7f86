"""``vmap``: batching a function of one example, per-example gradients, and batching rules.

The code of docs/tutorials/vmap.md.

Run: python examples/vmap_per_example.py
"""

import warnings

import numpy as np

import tidu
from tidu.func import grad, vmap


def run() -> dict:
    # [START basics]
    def dot(a, b):
        return (a * b).sum()  # written for one pair of vectors

    xs = tidu.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ys = tidu.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    print(vmap(dot)(xs, ys))  # one dot product per row
    print(vmap(dot, in_dims=(0, None))(xs, ys[2]))  # the second argument is shared
    print(vmap(dot, in_dims=(1, 1))(xs, ys))  # map over columns instead
    # [END basics]
    np.testing.assert_allclose(vmap(dot)(xs, ys).numpy(), [1.0, 4.0, 11.0])

    # [START per_example]
    def loss(w, x, y):
        return ((x @ w).tanh() - y).pow(2).sum()  # the loss of ONE example

    rng = np.random.default_rng(0)
    w = tidu.tensor(rng.normal(size=(3, 2)))
    x = tidu.tensor(rng.normal(size=(8, 3)))
    y = tidu.tensor(rng.normal(size=(8, 2)))
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))(w, x, y)  # (8, 3, 2): one gradient per example
    # [END per_example]
    for i in range(8):
        np.testing.assert_allclose(per_example[i].numpy(), grad(loss)(w, x[i], y[i]).numpy(), rtol=1e-12)

    # [START batch_rule]
    cube = tidu.Primitive("example_cube")
    cube.def_impl(lambda x: x**3)
    cube.def_abstract_eval(lambda x: x)
    cube.def_jvp(lambda dx, x, out: dx * 3 * x * x)
    # elementwise: the batch is just more elements; the output is batched along dim 0
    cube.def_batch(lambda args, batch_dims: (cube.bind(args[0]), batch_dims[0]))

    print(vmap(lambda v: cube.bind(v).sum())(xs))
    # [END batch_rule]
    np.testing.assert_allclose(vmap(lambda v: cube.bind(v).sum())(xs).numpy(), (xs.numpy() ** 3).sum(1))

    # [START fallback]
    square = tidu.Primitive("example_square")  # no def_batch
    square.def_impl(lambda x: x * x)
    square.def_abstract_eval(lambda x: x)
    square.def_jvp(lambda dx, x, out: 2 * x * dx)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        looped = vmap(square.bind)(xs)  # runs once per example, then stacks
    print(caught[0].message)
    # [END fallback]
    np.testing.assert_allclose(looped.numpy(), xs.numpy() ** 2)
    assert "example_square" in str(caught[0].message)
    return {"per_example": per_example}


if __name__ == "__main__":
    print("per-example gradient shape:", tuple(run()["per_example"].shape))
