# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Opacus DP-SGD of the DPMLPClassifier architecture (benchmark only).

A dense network ``d -> 64 relu -> 1`` with a logistic output, trained by
Opacus's ``PrivacyEngine.make_private_with_epsilon`` with Poisson sampling
(its default), per-example clipping to ``clip_norm``, the same expected
batch size, number of epochs (hence steps) and constant SGD step size as
the ``DPMLPClassifier`` it is compared with. Opacus is an optional
dependency of the benchmarks only.
"""

import numpy as np


def fit_opacus_mlp(
    X,
    y,
    *,
    epsilon,
    delta,
    hidden,
    epochs,
    batch_size,
    learning_rate,
    clip_norm=1.0,
    seed=0,
    accountant="rdp",
):
    """Train with Opacus; return (predict function, noise multiplier, rate,
    steps, Opacus's own epsilon)."""
    import torch
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(seed)
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float32))
    yt = torch.as_tensor(np.asarray(y, dtype=np.float32))
    model = torch.nn.Sequential(
        torch.nn.Linear(Xt.shape[1], hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(hidden, 1),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    loader = DataLoader(TensorDataset(Xt, yt), batch_size=batch_size)
    engine = PrivacyEngine(accountant=accountant)
    model, optimizer, loader = engine.make_private_with_epsilon(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        target_epsilon=epsilon,
        target_delta=delta,
        epochs=epochs,
        max_grad_norm=clip_norm,
        poisson_sampling=True,
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    steps = 0
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            if len(xb):
                loss_fn(model(xb).squeeze(-1), yb).backward()
            optimizer.step()
            steps += 1
    model.eval()

    def predict(Xq):
        with torch.no_grad():
            raw = model(torch.as_tensor(np.asarray(Xq, dtype=np.float32)))
        return (raw.squeeze(-1).numpy() > 0).astype(int)

    rate = 1.0 / len(loader)
    return predict, optimizer.noise_multiplier, rate, steps, engine.get_epsilon(delta)
