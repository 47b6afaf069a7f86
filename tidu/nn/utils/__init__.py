"""``tidu.nn.utils``: gradient clipping, parameters to and from one vector, packed sequences
(``rnn``), pruning (``prune``), weight and spectral normalisation (``parametrizations``, ``parametrize``, and the older
hook-based ``weight_norm`` and ``spectral_norm``), BatchNorm
folding (``fuse_conv_bn_eval``...), ``skip_init`` and ``stateless.functional_call``."""

from . import convert_parameters, parametrizations, parametrize, prune, rnn, stateless
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "convert_parameters",
           "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize", "prune", "remove_weight_norm", "rnn",
           "vector_to_parameters", "weight_norm", "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "skip_init", "stateless", "spectral_norm", "remove_spectral_norm"]
