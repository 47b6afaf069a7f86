"""``MixtureSameFamily``: a categorical mixture over the rightmost batch dimension of one
distribution."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """A mixture whose components are the rightmost batch dimension of ``component_distribution``,
    weighted by ``mixture_distribution`` (a ``Categorical`` over them).

    >>> import tidu
    >>> from tidu.distributions import Categorical, MixtureSameFamily, Normal
    >>> mix = Categorical(probs=tidu.tensor([0.3, 0.7]))
    >>> d = MixtureSameFamily(mix, Normal(tidu.tensor([-1.0, 2.0]), tidu.tensor([1.0, 0.5])))
    >>> d.log_prob(tidu.tensor(0.0)), d.mean, d.sample((4,)).shape
    (tensor(-2.6203), tensor(1.1000), tidu.Size([4]))
    """

    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mixture_batch = mixture_distribution.batch_shape
        component_batch = tidu.Size(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not compatible with "
                                 f"`component_distribution.batch_shape`({component_batch})")
        km, kc = mixture_distribution.logits.shape[-1], component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MixtureSameFamily:
        batch_shape = tidu.Size(batch_shape)
        new = type(self).__new__(type(self))
        new._component_distribution = self._component_distribution.expand((*batch_shape, self._num_component))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad(self, x: Any) -> Any:
        """``x`` with a component dimension before its event dimensions."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Any) -> Any:
        """Mixture weights shaped to broadcast against the components' batch and event."""
        batch_ndims, mixture_ndims = len(self._batch_shape), len(self._mixture_distribution.batch_shape)
        pad_ndims = 0 if mixture_ndims == 1 else batch_ndims - mixture_ndims
        return x.reshape(*x.shape[:-1], *(1,) * pad_ndims, x.shape[-1], *(1,) * self._event_ndims)

    @property
    def mean(self) -> Any:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Any:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        components = self._component_distribution
        mean_cond_var = (probs * components.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (components.mean - self._pad(self.mean)) ** 2).sum(-1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x: Any) -> Any:
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Any) -> Any:
        self._validate(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix_prob = tidu.log_softmax(self._mixture_distribution.logits, -1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape: Any = ()) -> Any:
        with tidu.no_grad():
            gather_dim = len(tuple(sample_shape)) + len(self._batch_shape)
            event = tuple(self._event_shape)
            mix_sample = self._mixture_distribution.sample(sample_shape)
            component_samples = self._component_distribution.sample(sample_shape)
            index = mix_sample.reshape(*mix_sample.shape, 1, *(1,) * len(event))
            index = index.expand(*mix_sample.shape, 1, *event)
            return component_samples.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})"
