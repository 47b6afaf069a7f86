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

Not reparameterized here (``has_rsample`` False, unlike PyTorch): ``Gamma``, ``Beta`` and
``Dirichlet``. ``Gamma`` has no ``cdf`` (tidu lacks the incomplete gamma function).
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical, OneHotCategorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .poisson import Poisson
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import AffineTransform, ExpTransform, SigmoidTransform, TanhTransform, Transform
from .uniform import Uniform

__all__ = [
    "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "ExpTransform",
    "Exponential", "Gamma", "Geometric", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal",
    "OneHotCategorical", "Poisson", "SigmoidTransform", "TanhTransform", "Transform", "TransformedDistribution",
    "Uniform", "constraints", "kl_divergence", "register_kl", "transforms",
]
