"""AD rule errors: the failure type of every fallible engine entry point."""

from __future__ import annotations

import enum


class ADRuleKind(enum.Enum):
    """Which rule failed: ``ADRuleKind.Jvp`` or ``ADRuleKind.Transpose``.

    >>> ADRuleKind.Jvp.as_str()
    'jvp'
    """

    Jvp = "jvp"
    Transpose = "transpose"

    def as_str(self) -> str:
        return self.value


class ADRuleError(RuntimeError):
    """A primitive could not be differentiated (tidu-rs's ``ADRuleError``).

    >>> str(ADRuleError.unsupported("custom::op", ADRuleKind.Jvp))
    'unsupported jvp AD rule for custom::op'
    >>> str(ADRuleError.invalid_input("fft", ADRuleKind.Transpose, "rank mismatch"))
    'invalid transpose AD input for fft: rank mismatch'
    """

    def __init__(self, op: object, rule: ADRuleKind, message: str | None = None) -> None:
        self.op = str(op)
        self.kind = rule
        self.message = message
        if message is None:
            text = f"unsupported {rule.as_str()} AD rule for {self.op}"
        else:
            text = f"invalid {rule.as_str()} AD input for {self.op}: {message}"
        super().__init__(text)

    @classmethod
    def unsupported(cls, op: object, rule: ADRuleKind) -> ADRuleError:
        return cls(op, rule)

    @classmethod
    def invalid_input(cls, op: object, rule: ADRuleKind, message: str) -> ADRuleError:
        return cls(op, rule, message)

    def rule(self) -> ADRuleKind:
        return self.kind

    @property
    def primitive(self) -> str:
        return self.op

    def is_unsupported(self) -> bool:
        return self.message is None
