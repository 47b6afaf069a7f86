"""The layer classes of ``tidu.nn``, one file per kind."""

from .activation import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .container import ModuleDict, ModuleList, Sequential
from .dropout import Dropout
from .flatten import Flatten
from .linear import Bilinear, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .sparse import Embedding
from .transformer import TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Bilinear", "CrossEntropyLoss", "Dropout",
    "Embedding", "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm", "Linear", "LogSoftmax", "MSELoss",
    "Module", "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss", "NonDynamicallyQuantizableLinear",
    "ReLU", "Sequential", "SiLU", "Sigmoid", "Softmax", "Tanh", "TransformerEncoder", "TransformerEncoderLayer",
]
