"""Functional transforms (torch.func's names), all from the primitives' JVP and transpose rules.

- ``transforms``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``
- ``linearize``: ``linearize`` (the printable linear map of a function)
- ``linear_transpose``: the transpose of a linear function
- ``vmap`` with ``batching`` (per-primitive batching rules)
- ``pytree``: nested tuples, lists and dicts of tensors
- ``functional_call``: a module run with other parameters (``tidu.nn.utils.stateless``), and
  ``stack_module_state`` (``ensembles``) for ensembles of one model
"""

from ..nn.utils.stateless import func_functional_call as functional_call  # noqa: E402 - one implementation
from .ensembles import stack_module_state
from .linear_transpose import linear_transpose
from .linearize import JvpFn, linearize
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from .vmap import vmap

__all__ = [
    "JvpFn", "functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linear_transpose", "linearize",
    "stack_module_state", "vjp", "vmap",
]
