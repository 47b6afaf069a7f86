"""The layer classes of ``tidu.nn``, one file per kind."""

from .activation import (
    ELU,
    GELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Softsign,
    Tanh,
)
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .flatten import Flatten
from .linear import Bilinear, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool2d, MaxPool2d, Upsample
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding
from .transformer import TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "GroupNorm", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid", "Mish",
    "ReLU6", "Softsign", "Upsample", "GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase",
    "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "Conv1d", "Conv2d", "MaxPool2d", "BatchNorm1d", "BatchNorm2d", "Bilinear", "CrossEntropyLoss", "Dropout", "ELU",
    "Embedding", "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax",
    "MSELoss", "Module", "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss",
    "NonDynamicallyQuantizableLinear", "ParameterDict", "ParameterList", "ReLU", "Sequential", "SiLU", "Sigmoid",
    "Softmax", "Softplus", "Tanh", "TransformerEncoder", "TransformerEncoderLayer",
]
