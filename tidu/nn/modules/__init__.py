"""The layer classes of ``tidu.nn``, one file per kind."""

from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .linear import Bilinear, Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from .module import Module
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .parallel import DataParallel
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "DataParallel",
    "ConvTranspose1d", "ConvTranspose2d", "Fold", "Unfold",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "GroupNorm", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid", "Mish",
    "ReLU6", "Softsign", "Upsample", "GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase",
    "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "Conv1d", "Conv2d", "MaxPool2d", "BatchNorm1d", "BatchNorm2d", "Bilinear", "CrossEntropyLoss", "Dropout", "ELU",
    "Embedding", "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax",
    "MSELoss", "Module", "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss",
    "NonDynamicallyQuantizableLinear", "ParameterDict", "ParameterList", "ReLU", "Sequential", "SiLU", "Sigmoid",
    "Softmax", "Softplus", "Tanh", "TransformerEncoder", "TransformerEncoderLayer",
    "CELU", "GLU", "SELU", "Hardshrink", "PReLU", "Softmax2d", "Softmin", "Softshrink", "Tanhshrink", "Threshold",
    "CosineSimilarity", "PairwiseDistance", "Dropout1d", "Dropout2d", "Unflatten", "CosineEmbeddingLoss",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss",
    "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss", "InstanceNorm1d", "InstanceNorm2d",
    "RMSNorm", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d", "PixelShuffle", "PixelUnshuffle", "AvgPool1d", "MaxPool1d",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "MaxUnpool1d", "MaxUnpool2d", "LPPool1d", "LPPool2d", "LocalResponseNorm", "AlphaDropout", "FeatureAlphaDropout",
    "ChannelShuffle", "UpsamplingNearest2d", "UpsamplingBilinear2d", "EmbeddingBag", "MultiMarginLoss",
    "MultiLabelMarginLoss",
    "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "MaxUnpool3d",
    "LPPool3d", "BatchNorm3d", "InstanceNorm3d", "Dropout3d", "ConstantPad3d", "ZeroPad3d", "ReflectionPad3d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]
