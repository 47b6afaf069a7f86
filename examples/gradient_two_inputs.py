"""Gradients of ``f(x, y) = x * y + x``, recorded eagerly as two calls.

``x`` feeds both calls, so its two cotangents (``y`` from the product, 1 from
the sum) meet at one key and ``try_backward`` adds them with the executor's
``add_operands``: df/dx = y + 1 and df/dy = x. Uses the scalar runtime of
examples/eager_reverse_mode.py. Run it from the repository root::

    PYTHONPATH=. python examples/gradient_two_inputs.py
"""

from __future__ import annotations

from eager_reverse_mode import (
    ExampleKeySource,
    ScalarBackwardExecutor,
    ScalarOp,
    assert_close,
    eager_input,
    input_key,
    record_primitive,
)

from tidu import eager
from tidu.eager import EagerInput, Recorder


def run(x_value: float = 3.0, y_value: float = 4.0) -> tuple[float, float]:
    """Return (df/dx, df/dy) of ``x * y + x``: (y + 1, x)."""
    recorder = Recorder(ExampleKeySource())
    x = eager_input("x", x_value, requires_grad=True)
    y = eager_input("y", y_value, requires_grad=True)

    product_value = ScalarOp.Mul.eval(None, [x.data, y.data])
    (product,) = record_primitive(recorder, ScalarOp.Mul, [x, y], product_value)
    # An output becomes the input of the next call: same key, and the trace that made it.
    product_input = EagerInput(product.key, product.trace, product.requires_grad, product_value[0])
    total_value = ScalarOp.Add.eval(None, [product_input.data, x.data])
    (total,) = record_primitive(recorder, ScalarOp.Add, [product_input, x], total_value)

    cotangents = eager.try_backward(total.key, total.trace, 1.0, ScalarBackwardExecutor(), None)
    grad_x, grad_y = cotangents[input_key("x")], cotangents[input_key("y")]
    assert_close(grad_x, y_value + 1.0)  # y from x * y, plus 1 from ... + x: fan-out accumulation
    assert_close(grad_y, x_value)
    return grad_x, grad_y


if __name__ == "__main__":
    grad_x, grad_y = run()
    print(f"f(x, y) = x * y + x at (3, 4): df/dx = {grad_x}, df/dy = {grad_y}")
