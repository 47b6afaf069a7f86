"""Train a small CNN on scikit-learn's 8x8 digits, with tidu's PyTorch API.

Two 3x3 convolutions with max pooling and a linear classifier (about 6k parameters) on the same
split as ``train_digits.py``: about 97% test accuracy in 10 epochs, in a few seconds on
2 cores.

    python examples/train_cnn_digits.py             # 10 epochs
    python examples/train_cnn_digits.py --quick     # 2 epochs, a smoke run
"""

from __future__ import annotations

import argparse
import time

from train_digits import accuracy, load_digits_split, train_pytorch_style

import tidu as torch
from tidu import nn


def make_model() -> nn.Module:
    # [START model]
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 8x8 -> 4x4
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 4x4 -> 2x2
        nn.Flatten(), nn.Linear(16 * 2 * 2, 10),
    )
    # [END model]


def run(epochs: int = 10, lr: float = 1e-2, batch_size: int = 64, seed: int = 0) -> float:
    """Train with train_digits.py's loop (Adam, cosine schedule) and return the test accuracy."""
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = load_digits_split(seed)
    data = (x_train.reshape(-1, 1, 8, 8), y_train, x_test.reshape(-1, 1, 8, 8), y_test)
    model = make_model()
    start = time.perf_counter()
    train_pytorch_style(model, data, epochs, lr, batch_size)
    test_accuracy = accuracy(model, data[2], data[3])
    print(f"test accuracy {test_accuracy:.1%} after {epochs} epochs ({time.perf_counter() - start:.1f} s)")
    return test_accuracy


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="2 epochs (a smoke run)")
    args = parser.parse_args(argv)
    return run(2 if args.quick else args.epochs)


if __name__ == "__main__":
    main()
