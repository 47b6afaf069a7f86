"""Sequence-to-one forecasting of noisy sine waves with an ``nn.LSTMCell`` and an ``nn.GRUCell``
unrolled by hand, ``MSELoss``, full-batch Adam (the scripts that use ``LBFGS`` here use Adam when
it is missing: tidu has no ``LBFGS`` yet), and a ``DataLoader`` over a ``TensorDataset`` with
``shuffle=True``: each epoch accumulates the gradient over all its batches before one step, so the
result does not depend on the order (tidu's shuffle is not PyTorch's), and the script checks that
every sample came exactly once. Then a closed-loop forecast under ``no_grad``.
"""

from __future__ import annotations

import numpy as np


def make_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    n, length = 20, 9
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1))
    t = np.arange(length + 1)[None, :] * 0.4
    wave = np.sin(t + phase) + 0.05 * rng.standard_normal((n, length + 1))
    return {"x": wave[:, :-1, None].astype(np.float32), "y": wave[:, -1:].astype(np.float32)}


def main(torch, run) -> None:  # noqa: ANN001
    nn = torch.nn
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

    class Forecaster(nn.Module):
        def __init__(self, hidden: int = 10) -> None:
            super().__init__()
            self.hidden = hidden
            self.lstm = nn.LSTMCell(1, hidden)
            self.gru = nn.GRUCell(hidden, hidden)
            self.linear = nn.Linear(hidden, 1)

        def forward(self, x, future: int = 0):  # noqa: ANN001, ANN202
            b = x.size(0)
            h_t = torch.zeros(b, self.hidden, dtype=x.dtype)
            c_t = torch.zeros(b, self.hidden, dtype=x.dtype)
            h2_t = torch.zeros(b, self.hidden, dtype=x.dtype)
            outputs = []
            for input_t in x.split(1, dim=1):
                h_t, c_t = self.lstm(input_t.squeeze(1), (h_t, c_t))
                h2_t = self.gru(h_t, h2_t)
                output = self.linear(h2_t)
                outputs += [output]
            for _ in range(future):  # feed the prediction back in
                h_t, c_t = self.lstm(output, (h_t, c_t))
                h2_t = self.gru(h_t, h2_t)
                output = self.linear(h2_t)
                outputs += [output]
            return torch.cat(outputs, dim=1)

    x, y = torch.from_numpy(run.data["x"]), torch.from_numpy(run.data["y"])
    n = x.shape[0]
    dataset = TensorDataset(torch.arange(n), x, y)
    loader = DataLoader(dataset, batch_size=6, shuffle=True)
    assert len(loader) == 4
    model = Forecaster()
    run.sync("model", model)
    criterion = nn.MSELoss(reduction="sum")
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    for epoch in range(3):
        optimizer.zero_grad()
        seen, total = [], 0.0
        for idx, xb, yb in loader:
            pred = model(xb)[:, -1:]
            loss = criterion(pred, yb) / n
            loss.backward()
            seen += idx.tolist()
            total += loss.item()
        assert sorted(seen) == list(range(n)), seen
        optimizer.step()
        run.log(f"loss[{epoch}]", total)
        run.log(f"lstm.weight_hh.grad[{epoch}]", model.lstm.weight_hh.grad)
        run.log(f"gru.bias_ih.grad[{epoch}]", model.gru.bias_ih.grad)

    with torch.no_grad():
        forecast = model(x[:3], future=4)
    assert forecast.shape == (3, x.shape[1] + 4)
    run.log("forecast", forecast)
    run.log("eval mse", nn.functional.mse_loss(model(x)[:, -1:], y).item())
