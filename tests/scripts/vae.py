"""A small VAE on random 1x8x8 "images" in [0, 1]: conv encoder, reparameterization, BCE + KL, Adam.

The reparameterization draws ``eps`` with ``randn_like``; the comparison replaces that draw by
the same numpy noise on both sides (``run.noise``).
"""

from __future__ import annotations

import numpy as np


def make_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"images": rng.uniform(0.0, 1.0, size=(4, 6, 1, 8, 8)).astype(np.float32)}


def main(torch, run) -> None:  # noqa: ANN001
    nn = torch.nn
    F = torch.nn.functional

    class VAE(nn.Module):
        def __init__(self, latent: int = 4) -> None:
            super().__init__()
            self.encoder = nn.Sequential(
                nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1),  # 8x8 -> 4x4
                nn.ReLU(),
                nn.Conv2d(4, 8, 3, stride=2, padding=1),  # 4x4 -> 2x2
                nn.ReLU(),
                nn.Flatten(),
            )
            self.fc_mu = nn.Linear(32, latent)
            self.fc_logvar = nn.Linear(32, latent)
            self.decoder = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, 64))

        def encode(self, x):  # noqa: ANN001, ANN202
            h = self.encoder(x)
            return self.fc_mu(h), self.fc_logvar(h)

        def reparameterize(self, mu, logvar):  # noqa: ANN001, ANN202
            std = torch.exp(0.5 * logvar)
            eps = run.noise(torch.randn_like(std))
            return mu + eps * std

        def decode(self, z):  # noqa: ANN001, ANN202
            return torch.sigmoid(self.decoder(z)).view(-1, 1, 8, 8)

        def forward(self, x):  # noqa: ANN001, ANN202
            mu, logvar = self.encode(x)
            z = self.reparameterize(mu, logvar)
            return self.decode(z), mu, logvar

    def loss_function(recon, x, mu, logvar):  # noqa: ANN001, ANN202
        bce = F.binary_cross_entropy(recon, x, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return (bce + kld) / x.size(0), bce, kld

    model = VAE()
    run.sync("vae", model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for step, batch in enumerate(torch.from_numpy(run.data["images"])):
        optimizer.zero_grad()
        recon, mu, logvar = model(batch)
        loss, bce, kld = loss_function(recon, batch, mu, logvar)
        loss.backward()
        run.log(f"loss[{step}]", loss.item())
        run.log(f"kld[{step}]", kld)
        run.log(f"grad fc_logvar.weight[{step}]", model.fc_logvar.weight.grad)
        optimizer.step()
    run.log("encoder.0.weight", model.encoder[0].weight)

    # sampling from the prior, as such scripts end
    model.eval()
    with torch.no_grad():
        z = run.noise(torch.randn(5, 4))
        samples = model.decode(z)
    assert samples.shape == (5, 1, 8, 8) and not samples.requires_grad
    run.log("samples", samples)
