"""``ProbsOrLogits``: the parameterization by exactly one of ``probs`` and ``logits``, the other
derived lazily."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from .utils import as_tensor, logits_to_probs, probs_to_logits


class ProbsOrLogits:
    """Mixin: ``probs`` and ``logits`` of a binary (sigmoid) or categorical (softmax) parameterization."""

    _is_binary = True

    def _set_probs_or_logits(self, probs: Any, logits: Any) -> Any:
        """Store the one given (as a tensor) and return it."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        self.__dict__[name] = as_tensor(value)
        return self.__dict__[name]

    @property
    def _param(self) -> Any:
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @cached_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=self._is_binary)

    @cached_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=self._is_binary)
