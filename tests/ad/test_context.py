"""The AD context reaches every rule call (tidu-rs adcontext_tests)."""

from scalar_ops import ADD, EXP, MUL, SIN, CountingCtx, Executor, Program, call, leaf

from tidu.ad import linear_transpose, linearize
from tidu.eager import Recorder, try_backward


def test_ctx_reaches_every_jvp_and_transpose_rule():
    p = Program("x", "a")
    y = p(ADD, p(EXP, p(MUL, "a", "x")), p(SIN, "x"))
    graph = p.build(y)
    ctx = CountingCtx()
    lin = linearize(graph, [graph.global_key(y)], ["x"], 0, ctx)
    assert sorted(ctx.calls) == [("jvp", "add"), ("jvp", "exp"), ("jvp", "mul"), ("jvp", "sin")]
    ctx.calls.clear()
    transposed = linear_transpose(lin, ctx)
    linear_ops = [n for n in lin.as_graph().operations if n.role.is_linearized()]
    assert ctx.count("transpose") == len(linear_ops) > 0
    assert ctx.count("jvp") == 0 and transposed.tangent_outputs[0] is not None


def test_ctx_reaches_rules_called_by_try_backward():
    recorder = Recorder()
    x = leaf("x", 0.5)
    (u,) = call(recorder, MUL, x, x)
    (y,) = call(recorder, EXP, u)
    ctx = CountingCtx()
    try_backward(y.key, y.trace, 1.0, Executor(), ctx)
    assert ctx.count("jvp", "exp") == 1 and ctx.count("jvp", "mul") == 1
    assert ctx.count("transpose", "mul") >= 2  # exp's linear mul, and x * x's two terms
