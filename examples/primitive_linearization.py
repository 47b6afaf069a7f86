"""Primitive linearization: the JVP and the transpose of ``f(x) = x * x`` as graphs.

A Python port of tidu-rs's "Primitive Linearization" tutorial
(docs/tutorials/primitive_linearization.md). It builds the primitive
computation graph of ``x * x`` with ``GraphBuilder``, asks ``linearize`` for
its linear (JVP) graph, and ``linear_transpose`` for the reverse (VJP) graph,
then evaluates all three: at ``x = 3`` the primal is 9, the JVP along
``dx = 1.5`` is 9 and the cotangent of ``x`` for an output cotangent of 2 is 12.

The scalar primitive set is the one of examples/eager_reverse_mode.py. Run it
from the repository root::

    PYTHONPATH=. python examples/primitive_linearization.py
"""

from __future__ import annotations

from eager_reverse_mode import ScalarKey, ScalarOp, assert_close, input_key

from tidu.ad import Graph, GraphBuilder, OperationRole, PrimitiveValue, ValueKey, linear_transpose, linearize


# [START evaluate]
def evaluate(graph: Graph, data: dict[ValueKey, float]) -> dict[ValueKey, float]:
    """Run ``graph`` on concrete leaf values; returns every value by its global key."""
    values = dict(data)
    for input_id in graph.inputs:
        key = graph.values[input_id].key
        if key not in values:
            raise KeyError(f"missing concrete value for graph input {key!r}")
    for node in graph.operations:
        inputs = [values[graph.values[i].key] for i in node.inputs]
        for output_id, output in zip(node.outputs, node.operation.eval(None, inputs)):
            values[graph.values[output_id].key] = output
    return values


# [END evaluate]


def run() -> tuple[float, float, float]:
    """Return (primal, JVP, cotangent of x) for ``x * x`` at 3: (9, 9, 12)."""
    # [START build_graph]
    builder = GraphBuilder()
    x = builder.add_input(ScalarKey.User("x"))
    (y,) = builder.add_operation(
        ScalarOp.Mul, [PrimitiveValue.Local(x), PrimitiveValue.Local(x)], OperationRole.Primary
    )
    builder.set_outputs([y])
    graph = builder.build()

    primal = evaluate(graph, {input_key("x"): 3.0})
    y_key = graph.global_key(y)
    assert_close(primal[y_key], 9.0)
    # [END build_graph]

    # [START linearize]
    linear = linearize(graph, [y_key], [ScalarKey.User("x")], pass_id=0)
    linear_graph = linear.as_graph()
    ((_, dx),) = linear.tangent_inputs  # (ScalarKey.User("x"), local id of its tangent)
    tangents = evaluate(linear_graph, {**primal, linear_graph.global_key(dx): 1.5})
    jvp = tangents[linear_graph.global_key(linear.tangent_outputs[0])]
    assert_close(jvp, 9.0)  # 2 * x * dx
    # [END linearize]

    # [START transpose]
    transposed = linear_transpose(linear)
    transposed_graph = transposed.as_graph()
    ((_, ct_y),) = transposed.tangent_inputs  # one cotangent seed per active tangent output
    cotangents = evaluate(transposed_graph, {**primal, transposed_graph.global_key(ct_y): 2.0})
    ct_x = cotangents[transposed_graph.global_key(transposed.tangent_outputs[0])]
    assert_close(ct_x, 12.0)  # 2 * x * ct_y
    # [END transpose]
    return primal[y_key], jvp, ct_x


if __name__ == "__main__":
    primal, jvp, ct_x = run()
    print(f"f(3) = {primal}, JVP along dx = 1.5: {jvp}, cotangent of x for 2: {ct_x}")
