"""Exportable actors from rsl-rl-lib 5.x policy models."""

from __future__ import annotations

import torch


def actor_from_rsl_rl(model: torch.nn.Module, *, verbose: bool = False) -> torch.nn.Module:
    """The deterministic ONNX-exportable actor of an rsl-rl-lib 5.x model.

    Uses the model's own `as_onnx()` wrapper (rsl_rl's `MLPModel`/`CNNModel`): a copy with the
    observation normalizer, the MLP and the distribution's deterministic output (the mean), so
    the exported graph maps raw concatenated observations (B, D) to actions (B, A). The copy is
    on the model's device in eval mode; `export_policy` moves it to the CPU.

    Args:
        model: e.g. `runner.alg.get_policy()`.
        verbose: passed to `as_onnx`.

    Returns:
        A `torch.nn.Module` for `export_policy`.

    Raises:
        TypeError: the model has no `as_onnx` method (not an rsl-rl-lib 5.x model).
        NotImplementedError: the model is recurrent (its ONNX graph takes hidden states, which
            `OnnxPolicy` does not carry).
    """
    if not callable(getattr(model, "as_onnx", None)):
        raise TypeError(
            f"{type(model).__name__} has no as_onnx(); pass an rsl-rl-lib 5.x model such as "
            "runner.alg.get_policy()."
        )
    if getattr(model, "is_recurrent", False):
        raise NotImplementedError(
            f"{type(model).__name__} is recurrent; exporting recurrent policies with hidden-state "
            "inputs is not supported by mjlab-export yet."
        )
    return model.as_onnx(verbose=verbose).eval()
