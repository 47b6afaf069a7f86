"""Variable-length batches for the recurrent layers: ``PackedSequence`` (every sequence's steps
interleaved time-major, longest sequence first) and the functions that pack, pad and unpad.

Every conversion is one recorded gather of rows, so gradients flow through packing and padding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import ops
from ...core import dtypes
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """A packed batch: ``data`` holds step 0 of every sequence, then step 1 of those still
    running, and so on (sequences in decreasing-length order); ``batch_sizes[t]`` says how many
    sequences run at step ``t``. ``sorted_indices`` maps that order to the batch's (``None`` when
    the batch was already sorted), ``unsorted_indices`` is its inverse.

    >>> import tidu
    >>> from tidu.nn.utils.rnn import PackedSequence
    >>> PackedSequence(tidu.tensor([1.0, 2.0, 3.0]), tidu.tensor([2, 1]), tidu.tensor([1, 0]))
    PackedSequence(data=tensor([1., 2., 3.]), batch_sizes=tensor([2, 1]), sorted_indices=tensor([1, 0]), unsorted_indices=tensor([1, 0]))
    """

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The data converted as ``Tensor.to`` would; the indices follow its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cuda")

    def double(self) -> PackedSequence:
        return self.to(dtype=dtypes.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=dtypes.float32)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of an index permutation (``None`` stays ``None``).

    >>> import tidu
    >>> tidu.nn.utils.rnn.invert_permutation(tidu.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    inverse = np.argsort(np.asarray(permutation.tolist(), dtype=np.int64))
    return ops.tensor(inverse, dtype=dtypes.int64, device=permutation.device)


def _gather_padded(rows: Tensor, index: np.ndarray, padding_value: float) -> Tensor:
    """``rows`` gathered into ``index``'s shape (plus the rows' trailing shape); an index equal to
    ``len(rows)`` reads ``padding_value``."""
    pad = ops.full((1, *rows.shape[1:]), padding_value, dtype=rows.dtype, device=rows.device)
    table = ops.cat([rows, pad])
    flat = ops.tensor(index.reshape(-1), dtype=dtypes.int64, device=rows.device)
    return table[flat].reshape(tuple(index.shape) + tuple(rows.shape[1:]))


def _lengths_array(lengths: Tensor | Sequence[int]) -> np.ndarray:
    values = lengths.tolist() if isinstance(lengths, Tensor) else list(lengths)
    return np.asarray(values, dtype=np.int64).reshape(-1)


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` when ``batch_first``) whose sequence ``b``
    is ``lengths[b]`` steps long; unless ``enforce_sorted=False`` the lengths must decrease.

    >>> import tidu
    >>> from tidu.nn.utils.rnn import pack_padded_sequence
    >>> padded = tidu.tensor([[1, 2, 3], [4, 5, 0]])
    >>> pack_padded_sequence(padded, [3, 2], batch_first=True)
    PackedSequence(data=tensor([1, 4, 2, 5, 3]), batch_sizes=tensor([2, 2, 1]), sorted_indices=None, unsorted_indices=None)
    """
    lengths_np = _lengths_array(lengths)
    if enforce_sorted:
        if np.any(np.diff(lengths_np) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                "if you do not need ONNX exportability.")
        order, sorted_indices = np.arange(len(lengths_np)), None
    else:
        order = np.argsort(-lengths_np, kind="stable")
        sorted_indices = ops.tensor(order, dtype=dtypes.int64, device=input.device)
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if len(lengths_np) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths_np)} "
                           f"(batch_size={batch})")
    if lengths_np.size and lengths_np.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lengths_np.size and lengths_np.max() > steps:
        raise RuntimeError(f"Expected every length to be at most the padded length {steps}, but got "
                           f"{int(lengths_np.max())}")
    sorted_lengths = lengths_np[order]
    batch_sizes = [int((sorted_lengths > t).sum()) for t in range(int(sorted_lengths[0]) if batch else 0)]
    index = np.concatenate([t * batch + order[:size] for t, size in enumerate(batch_sizes)] or [np.zeros(0, int)])
    data = _gather_padded(input.reshape(steps * batch, *input.shape[2:]), index, 0.0)
    return PackedSequence(data, ops.tensor(batch_sizes, dtype=dtypes.int64), sorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Unpack to a padded batch ``(T, B, *)`` (``(B, T, *)`` when ``batch_first``) in the batch's
    original order, and the lengths (``int64``); ``total_length`` pads ``T`` further.

    >>> import tidu
    >>> from tidu.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> packed = pack_sequence([tidu.tensor([1, 2]), tidu.tensor([3, 4, 5])], enforce_sorted=False)
    >>> pad_packed_sequence(packed, batch_first=True, padding_value=-1)
    (tensor([[ 1,  2, -1],
            [ 3,  4,  5]]), tensor([2, 3]))
    """
    data, batch_sizes, _, unsorted_indices = sequence
    sizes = [int(b) for b in batch_sizes.tolist()]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch = sizes[0] if sizes else 0
    index = np.full((steps, batch), data.shape[0], dtype=np.int64)
    offset = 0
    for t, size in enumerate(sizes):
        index[t, :size] = offset + np.arange(size)
        offset += size
    lengths = np.array([sum(size > b for size in sizes) for b in range(batch)], dtype=np.int64)
    if unsorted_indices is not None:
        order = np.asarray(unsorted_indices.tolist(), dtype=np.int64)
        index, lengths = index[:, order], lengths[order]
    padded = _gather_padded(data, index.T if batch_first else index, padding_value)
    return padded, ops.tensor(lengths, dtype=dtypes.int64)


def pad_sequence(sequences: Tensor | Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` when
    ``batch_first``), padding each on ``padding_side`` with ``padding_value``.

    >>> import tidu
    >>> from tidu.nn.utils.rnn import pad_sequence
    >>> pad_sequence([tidu.tensor([1, 2, 3]), tidu.tensor([4])], batch_first=True, padding_side="left")
    tensor([[1, 2, 3],
            [0, 0, 4]])
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for other in sequences[1:]:
        for dim, (a, b) in enumerate(zip(trailing, tuple(other.shape[1:]), strict=False)):
            if a != b:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                   f"non-singleton dimension {dim + 1}")
    lengths = [s.shape[0] for s in sequences]
    steps, total = max(lengths), sum(lengths)
    index = np.full((steps, len(sequences)), total, dtype=np.int64)
    start = 0
    for b, length in enumerate(lengths):
        first = 0 if padding_side == "right" else steps - length
        index[first:first + length, b] = start + np.arange(length)
        start += length
    padded = _gather_padded(ops.cat(sequences), index.T if batch_first else index, padding_value)
    return padded


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False
                   ) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length (the inverse of ``pad_sequence``).

    >>> import tidu
    >>> from tidu.nn.utils.rnn import unpad_sequence
    >>> unpad_sequence(tidu.tensor([[1, 2, 3], [4, 0, 0]]), tidu.tensor([3, 1]), batch_first=True)
    [tensor([1, 2, 3]), tensor([4])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :int(length)] for b, length in enumerate(_lengths_array(lengths))]


def pack_sequence(sequences: Iterable[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)``; unless ``enforce_sorted=False`` they must come
    longest first.

    >>> import tidu
    >>> from tidu.nn.utils.rnn import pack_sequence
    >>> pack_sequence([tidu.tensor([1, 2, 3]), tidu.tensor([4, 5])])
    PackedSequence(data=tensor([1, 4, 2, 5, 3]), batch_sizes=tensor([2, 2, 1]), sorted_indices=None, unsorted_indices=None)
    """
    sequences = list(sequences)
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` holds, in the batch's original order.

    >>> import tidu
    >>> from tidu.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> unpack_sequence(pack_sequence([tidu.tensor([1]), tidu.tensor([2, 3])], enforce_sorted=False))
    [tensor([1]), tensor([2, 3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
