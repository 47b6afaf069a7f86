"""The adjoint identity <ct, J t> = Re <J^T ct, t> on random programs, real and complex."""

import random

import pytest
from scalar_ops import ADD, CONJ, COS, EXP, MUL, NEG, SIN, SINCOS, Program, evaluate, seed_env

from tidu.ad import linear_transpose, linearize, tangent_of

UNARY = [NEG, EXP, SIN, COS, SINCOS]
INPUTS = ["x0", "x1", "x2"]


def random_program(rng, complex_values):
    """A random program over three inputs; returns (graph, output ids, wrt, primal env)."""
    p = Program(*INPUTS)
    values = [p.ids[name] for name in INPUTS]
    for _ in range(rng.randint(1, 8)):
        kind = rng.random()
        if kind < 0.45:
            op = rng.choice([ADD, MUL])
            out = p(op, rng.choice(values), rng.choice(values))
        else:
            ops = UNARY + ([CONJ] if complex_values else [])
            out = p(rng.choice(ops), rng.choice(values))
        values.extend(out if isinstance(out, list) else [out])
    outputs = list(dict.fromkeys(rng.choice(values) for _ in range(rng.randint(1, 3))))
    wrt = rng.sample(INPUTS, rng.randint(1, 3))
    return p.build(*outputs), outputs, wrt


def sample(rng, complex_values):
    real = rng.uniform(-1, 1)
    return complex(real, rng.uniform(-1, 1)) if complex_values else real


def inner(a, b):
    """The real inner product Re(conj(a) b) that transposes are taken against."""
    return (complex(a).conjugate() * b).real


@pytest.mark.parametrize("complex_values", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("seed", range(25))
def test_adjoint_identity_on_random_programs(seed, complex_values):
    rng = random.Random(seed)
    graph, outputs, wrt = random_program(rng, complex_values)
    primals = {name: sample(rng, complex_values) for name in INPUTS}
    tangents = {name: sample(rng, complex_values) for name in wrt}
    cotangents = [sample(rng, complex_values) for _ in outputs]

    lin = linearize(graph, [graph.global_key(o) for o in outputs], wrt, 0)
    values = evaluate(lin.as_graph(), {**primals, **{tangent_of(k, 0): v for k, v in tangents.items()}})
    jt = [0.0 if t is None else values[t] for t in lin.tangent_outputs]

    transposed = linear_transpose(lin)
    values = evaluate(transposed.as_graph(), {**primals, **seed_env(transposed, lin, cotangents)})
    jtct = [0.0 if t is None else values[t] for t in transposed.tangent_outputs]

    lhs = sum(inner(ct, v) for ct, v in zip(cotangents, jt))
    rhs = sum(inner(v, tangents[k]) for (k, _), v in zip(lin.tangent_inputs, jtct))
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9), str(graph)


def test_random_programs_cover_the_interesting_cases():
    """The generator really produces inactive outputs, fan-out and multi-output operations."""
    inactive = fan_out = multi = 0
    for seed in range(25):
        graph, outputs, wrt = random_program(random.Random(seed), False)
        lin = linearize(graph, [graph.global_key(o) for o in outputs], wrt, 0)
        inactive += None in lin.tangent_outputs
        fan_out += any(
            n.operation == ADD and n.role.is_linearized() for n in linear_transpose(lin).as_graph().operations
        )
        multi += any(n.operation == SINCOS for n in graph.operations)
    assert inactive and fan_out and multi
