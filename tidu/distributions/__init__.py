"""``tidu.distributions``: probability distributions with ``torch.distributions``'s API, built
from tidu's differentiable ops: ``log_prob``, ``entropy``, moments, ``cdf``/``icdf``,
(reparameterized) sampling and ``kl_divergence``.

>>> import tidu
>>> from tidu.distributions import Normal, kl_divergence
>>> loc = tidu.tensor([0.0, 1.0], requires_grad=True)
>>> d = Normal(loc, 2.0)
>>> d.batch_shape, d.sample((5,)).shape
(tidu.Size([2]), tidu.Size([5, 2]))
>>> d.log_prob(tidu.tensor([0.5, 0.5])).sum().backward()
>>> loc.grad
tensor([ 0.1250, -0.1250])
>>> kl_divergence(d, Normal(0.0, 1.0)).detach()
tensor([0.8069, 1.3069])

``Gamma`` and ``Chi2`` have no ``cdf`` (tidu lacks the incomplete gamma function). ``Beta`` and
``Dirichlet`` are reparameterized through their gamma draws (another unbiased gradient than
PyTorch's). Draws of ``Cauchy``, ``VonMises``, ``NegativeBinomial`` and the other host-sampled
families come from NumPy's generators on tidu's stream, so they differ from PyTorch's draws.
"""

from . import (
    constraint_registry,
    constraints,
    exp_family,
    generalized_pareto,
    structured_transforms,
    transforms,
)
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .folded import HalfCauchy, HalfNormal
from .gamma import Chi2, Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .relaxed import ExpRelaxedCategorical, LogitRelaxedBernoulli, RelaxedBernoulli, RelaxedOneHotCategorical
from .structured_transforms import (
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    identity_transform,
)
from .studentT import StudentT
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
    "ContinuousBernoulli", "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential",
    "FisherSnedecor", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "Kumaraswamy",
    "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "Pareto", "Poisson", "PowerTransform",
    "RelaxedBernoulli", "RelaxedOneHotCategorical", "SigmoidTransform", "StickBreakingTransform", "StudentT",
    "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "constraints",
    "kl_divergence", "register_kl", "transforms", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "ReshapeTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform", "identity_transform", "biject_to",
    "transform_to", "constraint_registry", "InverseGamma", "OneHotCategoricalStraightThrough", "ExponentialFamily",
    "GeneralizedPareto",
]
