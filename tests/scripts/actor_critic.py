"""An actor-critic (REINFORCE with a baseline) update on recorded episodes: a shared body with
policy and value heads, ``distributions.Categorical`` (``log_prob``, ``entropy``), discounted
returns computed in a Python loop, ``smooth_l1_loss`` for the critic, RMSprop, and a tensor
``register_hook`` that scales and records the gradient reaching the value head's output.

The episodes (states, and the actions taken) come from numpy, so nothing is sampled inside;
``Categorical.sample`` is only checked for its shape and range.
"""

from __future__ import annotations

import numpy as np


def make_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    episodes, length, n_obs, n_act = 3, 7, 5, 3
    return {
        "states": rng.standard_normal((episodes, length, n_obs)).astype(np.float32),
        "actions": rng.integers(0, n_act, size=(episodes, length)),
        "rewards": rng.uniform(-1, 1, size=(episodes, length)).astype(np.float32),
    }


def main(torch, run) -> None:  # noqa: ANN001
    nn = torch.nn
    F = torch.nn.functional
    from_numpy = torch.from_numpy
    Categorical = torch.distributions.Categorical
    gamma, eps = 0.9, torch.finfo(torch.float32).eps

    class Policy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.affine1 = nn.Linear(5, 16)
            self.action_head = nn.Linear(16, 3)
            self.value_head = nn.Linear(16, 1)

        def forward(self, x):  # noqa: ANN001, ANN202
            x = F.relu(self.affine1(x))
            action_prob = F.softmax(self.action_head(x), dim=-1)
            state_values = self.value_head(x)
            return action_prob, state_values

    model = Policy()
    run.sync("policy", model)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=3e-3, alpha=0.95)
    hooked = []

    for episode in range(run.data["states"].shape[0]):
        saved_log_probs, saved_values, entropies = [], [], []
        rewards = run.data["rewards"][episode].tolist()
        for t in range(run.data["states"].shape[1]):
            state = from_numpy(run.data["states"][episode, t]).float().unsqueeze(0)
            probs, state_value = model(state)
            m = Categorical(probs)
            sample = m.sample()
            assert sample.shape == (1,) and 0 <= sample.item() < 3
            action = torch.tensor([int(run.data["actions"][episode, t])])
            saved_log_probs.append(m.log_prob(action))
            saved_values.append(state_value)
            entropies.append(m.entropy())

        R = 0
        returns = []
        for r in rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = returns.sub(returns.mean()).div(returns.std().add(eps))

        values = torch.cat(saved_values).squeeze(-1)
        values.register_hook(lambda g: hooked.append(g.clone()) or g * 0.5)
        policy_losses, value_losses = [], []
        for log_prob, value, R in zip(saved_log_probs, values, returns):
            advantage = R.sub(value.item(), alpha=1.0)
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, R.reshape(())))
        entropy = torch.stack(entropies).mean()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum() - 0.01 * entropy

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        run.log(f"returns[{episode}]", returns)
        run.log(f"loss[{episode}]", loss.item())
        run.log(f"entropy[{episode}]", entropy)
        run.log(f"hooked grad[{episode}]", hooked[-1])
        run.log(f"value_head.weight.grad[{episode}]", model.value_head.weight.grad)
        run.log(f"action_head.bias.grad[{episode}]", model.action_head.bias.grad)
    run.log("affine1.weight", model.affine1.weight)
    assert len(hooked) == run.data["states"].shape[0]
