"""A character-level LSTM language model: ``nn.Embedding``, a two-layer ``nn.LSTM(batch_first=True)``
whose hidden state is carried from chunk to chunk and detached between them (truncated
backpropagation through time), ``CrossEntropyLoss`` on logits reshaped to (N, vocab),
``clip_grad_norm_``, SGD with momentum and ``StepLR``; then greedy generation under ``no_grad``.

No dropout between the layers (``dropout=0``), so nothing random runs inside.
"""

from __future__ import annotations

import numpy as np

VOCAB = 11


def make_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    # a "text" of 4 parallel streams, cut into chunks of 6 steps (inputs and next-char targets)
    text = rng.integers(0, VOCAB, size=(4, 4 * 6 + 1))
    return {"text": text}


def main(torch, run) -> None:  # noqa: ANN001
    nn = torch.nn

    class CharRNN(nn.Module):
        def __init__(self, vocab: int, emb: int = 8, hidden: int = 12, layers: int = 2) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, emb)
            self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
            self.head = nn.Linear(hidden, vocab)
            self.layers, self.hidden = layers, hidden

        def init_hidden(self, batch: int):  # noqa: ANN202
            weight = next(self.parameters())
            return (weight.new_zeros(self.layers, batch, self.hidden), weight.new_zeros(self.layers, batch, self.hidden))

        def forward(self, x, hidden):  # noqa: ANN001, ANN202
            out, hidden = self.lstm(self.embed(x), hidden)
            return self.head(out), hidden

    def repackage_hidden(h):  # noqa: ANN001, ANN202
        """Wraps hidden states in new tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    text = torch.from_numpy(run.data["text"]).long()
    batch, bptt = text.size(0), 6
    model = CharRNN(VOCAB)
    run.sync("rnn", model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

    for epoch in range(2):
        model.train()
        hidden = model.init_hidden(batch)
        total = 0.0
        for i in range(0, text.size(1) - 1, bptt):
            data, targets = text[:, i : i + bptt], text[:, i + 1 : i + 1 + bptt]
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(data, hidden)
            loss = criterion(output.reshape(-1, VOCAB), targets.reshape(-1))
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optimizer.step()
            total += loss.item()
            run.log(f"loss[{epoch},{i}]", loss.item())
            run.log(f"grad norm[{epoch},{i}]", norm)
            run.log(f"lr[{epoch},{i}]", scheduler.get_last_lr()[0])
        scheduler.step()
        run.log(f"ppl[{epoch}]", np.exp(total / (text.size(1) // bptt)))
        run.log(f"h[{epoch}]", hidden[0])
    run.log("lstm.weight_hh_l1", model.lstm.weight_hh_l1)
    run.log("embed.weight", model.embed.weight)

    model.eval()
    with torch.no_grad():
        hidden = model.init_hidden(1)
        inp = torch.tensor([[3]])
        generated = []
        for _ in range(8):
            out, hidden = model(inp, hidden)
            inp = out[:, -1].argmax(dim=-1, keepdim=True)
            generated.append(inp.item())
    run.log("generated", np.array(generated))
