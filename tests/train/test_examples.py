"""The training examples, shortened (tests/test_examples.py also runs each script whole)."""

import pytest

import tidu


@pytest.mark.slow
def test_train_digits_quick(tmp_path):
    import train_digits

    plot, weights = tmp_path / "loss.png", tmp_path / "mlp.safetensors"
    accuracy = train_digits.main(["--quick", "--plot", str(plot), "--save", str(weights)])
    assert accuracy > 0.85
    assert plot.read_bytes()[:4] == b"\x89PNG"
    model = train_digits.make_model()
    model.load_state_dict(tidu.load(weights))
    _, _, x_test, y_test = train_digits.load_digits_split()
    assert train_digits.accuracy(model, x_test, y_test) == accuracy


def test_train_digits_with_the_trainer():
    import train_digits

    assert train_digits.run(epochs=2, trainer=True, plot=None) > 0.8


@pytest.mark.slow
def test_char_transformer_learns(capsys):
    import char_transformer

    first, last = char_transformer.main(["--epochs", "2"])
    assert last < first < 3.0
    out = capsys.readouterr().out
    assert "sample: 'the " in out and "epoch 2/2: average loss" in out


def test_train_cnn_digits_learns():
    import train_cnn_digits

    assert train_cnn_digits.main(["--quick"]) > 0.8
