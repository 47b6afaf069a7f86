"""A small ResNet-style CNN on 3x8x8 images: residual blocks with ``BatchNorm2d`` and a 1x1
projection shortcut, ``AdaptiveAvgPool2d``, ``Dropout``, ``train()``/``eval()``, SGD (Nesterov,
weight decay) with ``CosineAnnealingLR``, label smoothing, a checkpoint (model, optimizer and
scheduler state) written with ``torch.save`` to a temporary file and read back with
``torch.load`` into fresh objects, which must give the same next loss as the run that went on,
a ``no_grad`` evaluation with ``argmax`` accuracy, intermediate features read by a forward
hook, and the usual cuda/mps/cpu device choice.

The compared runs use ``Dropout(p=0)``; the script checks dropout's train/eval behaviour
(zeros and a ``1 / (1 - p)`` scale in training, identity in eval) on a separate module.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np


def make_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "x": rng.standard_normal((4, 8, 3, 8, 8)).astype(np.float32),
        "y": rng.integers(0, 5, size=(4, 8)),
        "x_test": rng.standard_normal((16, 3, 8, 8)).astype(np.float32),
        "y_test": rng.integers(0, 5, size=16),
    }


def main(torch, run) -> None:  # noqa: ANN001
    nn = torch.nn
    F = torch.nn.functional
    use_cuda = False  # the comparison runs on the CPU
    if use_cuda and torch.cuda.is_available():
        device = torch.device("cuda")
    elif torch.backends.mps.is_available():
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, in_planes: int, planes: int, stride: int = 1) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.shortcut = nn.Sequential()
            if stride != 1 or in_planes != planes:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride, bias=False), nn.BatchNorm2d(planes)
                )

        def forward(self, x):  # noqa: ANN001, ANN202
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += self.shortcut(x)
            return F.relu(out)

    class ResNet(nn.Module):
        def __init__(self, num_classes: int = 5, p: float = 0.0) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
            self.layer2 = BasicBlock(8, 16, stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.dropout = nn.Dropout(p)
            self.fc = nn.Linear(16, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d | nn.GroupNorm):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

        def forward(self, x):  # noqa: ANN001, ANN202
            x = F.relu(self.bn1(self.conv1(x)))
            x = self.layer2(self.layer1(x))
            x = torch.flatten(self.avgpool(x), 1)
            return self.fc(self.dropout(x))

    # dropout: random zeros scaled by 1/(1-p) in training, the identity in eval
    drop = nn.Dropout(0.5)
    ones = torch.ones(1000)
    dropped = drop(ones)
    assert set(dropped.unique().tolist()) <= {0.0, 2.0} and 300 < int((dropped == 0).sum()) < 700
    drop.eval()
    assert torch.equal(drop(ones), ones)

    def make():  # noqa: ANN202
        model = ResNet().to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)
        return model, optimizer, scheduler

    model, optimizer, scheduler = make()
    run.sync("resnet", model)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    def train_step(model, optimizer, scheduler, step):  # noqa: ANN001, ANN202
        model.train()
        inputs = torch.from_numpy(run.data["x"][step]).to(device)
        targets = torch.from_numpy(run.data["y"][step]).to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        _, predicted = outputs.max(1)
        return loss.item(), predicted.eq(targets).sum().item()

    def evaluate(model):  # noqa: ANN001, ANN202
        model.eval()
        correct = 0
        with torch.no_grad():
            inputs = torch.from_numpy(run.data["x_test"])
            targets = torch.from_numpy(run.data["y_test"])
            logits = model(inputs)
            test_loss = F.cross_entropy(logits, targets, reduction="sum").item()
            correct += (logits.argmax(dim=1) == targets).sum().item()
        return test_loss / len(targets), 100.0 * correct / len(targets)

    features = {}

    def save_features(name):  # noqa: ANN001, ANN202
        def hook(module, inputs, output):  # noqa: ANN001, ANN202
            features[name] = output.detach()

        return hook

    handle = model.layer2.register_forward_hook(save_features("layer2"))
    for step in range(2):
        loss, correct = train_step(model, optimizer, scheduler, step)
        run.log(f"layer2 features[{step}]", features["layer2"].mean(dim=(2, 3)))
        run.log(f"loss[{step}]", loss)
        run.log(f"correct[{step}]", correct)
        run.log(f"lr[{step}]", optimizer.param_groups[0]["lr"])
    run.log("layer2.shortcut.0.weight.grad", model.layer2.shortcut[0].weight.grad)
    run.log("bn1.running_var", model.bn1.running_var)
    handle.remove()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoint.pt")
        torch.save(
            {
                "epoch": 2,
                "model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict(),
                "scheduler_state_dict": scheduler.state_dict(),
            },
            path,
        )
        test_loss, accuracy = evaluate(model)
        run.log("test loss", test_loss)
        run.log("accuracy", accuracy)
        continued = [train_step(model, optimizer, scheduler, step)[0] for step in (2, 3)]

        checkpoint = torch.load(path, map_location=device, weights_only=True)
        resumed, resumed_optimizer, resumed_scheduler = make()
        resumed.load_state_dict(checkpoint["model_state_dict"])
        resumed_optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
        resumed_scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
        assert checkpoint["epoch"] == 2
        assert evaluate(resumed) == (test_loss, accuracy)
        again = [train_step(resumed, resumed_optimizer, resumed_scheduler, step)[0] for step in (2, 3)]
    assert again == continued, (again, continued)
    run.log("continued", continued)
    run.log("fc.weight", resumed.fc.weight)
