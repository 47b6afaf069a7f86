"""A tiny DCGAN on 1x8x8 images: ConvTranspose2d + BatchNorm2d generator, LeakyReLU
discriminator, two Adam optimizers, ``BCEWithLogitsLoss``, ``.detach()`` for the discriminator's
step and ``zero_grad(set_to_none=True)``.

The latent codes come from numpy (the same on both sides); no dropout.
"""

from __future__ import annotations

import numpy as np


def make_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "real": np.tanh(rng.standard_normal((3, 8, 1, 8, 8))).astype(np.float32),
        "z": rng.standard_normal((3, 8, 6, 1, 1)).astype(np.float32),
    }


def main(torch, run) -> None:  # noqa: ANN001
    nn = torch.nn
    nz, ngf, ndf = 6, 8, 8

    def weights_init(m):  # noqa: ANN001, ANN202 (DCGAN's init; the values are then synced anyway)
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    netG = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),  # 1x1 -> 4x4
        nn.BatchNorm2d(ngf * 2),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, 1, 4, 2, 1, bias=False),  # 4x4 -> 8x8
        nn.Tanh(),
    )
    netD = nn.Sequential(
        nn.Conv2d(1, ndf, 4, 2, 1, bias=False),  # 8x8 -> 4x4
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),  # 4x4 -> 2x2
        nn.BatchNorm2d(ndf * 2),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False),  # 2x2 -> 1x1
        nn.Flatten(0),
    )
    netG.apply(weights_init)
    netD.apply(weights_init)
    run.sync("G", netG)
    run.sync("D", netD)

    criterion = nn.BCEWithLogitsLoss()
    optD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
    real_label, fake_label = 1.0, 0.0

    for step in range(run.data["real"].shape[0]):
        real = torch.tensor(run.data["real"][step])
        noise = torch.from_numpy(run.data["z"][step])
        b = real.size(0)

        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad(set_to_none=True)
        label = torch.full((b,), real_label, dtype=torch.float)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        fake = netG(noise)
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optD.step()
        if step == 0:  # the detached fake sent no gradient into G
            assert all(p.grad is None for p in netG.parameters())

        # (2) update G: maximize log(D(G(z)))
        netG.zero_grad(set_to_none=True)
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = torch.sigmoid(output).mean().item()
        optG.step()

        run.log(f"errD[{step}]", errD.item())
        run.log(f"errG[{step}]", errG.item())
        run.log(f"D(G(z))[{step}]", D_G_z2)
        run.log(f"G.0.weight.grad[{step}]", netG[0].weight.grad)
    run.log("D.bn.running_mean", netD[3].running_mean)
    run.log("D.bn.running_var", netD[3].running_var)
    run.log("D.bn.num_batches_tracked", netD[3].num_batches_tracked)
    run.log("G.bn.weight", netG[1].weight)
    netG.eval()
    with torch.no_grad():
        run.log("G.eval", netG(torch.from_numpy(run.data["z"][0])))
