"""`OnnxPolicy`: run an exported mjlab policy with onnxruntime + numpy only (no torch)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from mjlab.deploy.metadata import METADATA_KEY, DeploymentMetadata, ObservationTermSpec


class OnnxPolicy:
    """An exported policy and its deployment metadata.

    Args:
        path: the .onnx file.
        allow_missing_metadata: run a file without `mjlab.deployment` metadata ("raw" mode:
            only `__call__` works).
        intra_op_threads, inter_op_threads: onnxruntime threads (1 and 1: predictable latency
            on a robot computer).

    Raises:
        FileNotFoundError: no such file.
        ValueError: metadata missing (unless allowed) or malformed, naming the field.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        allow_missing_metadata: bool = False,
        intra_op_threads: int = 1,
        inter_op_threads: int = 1,
    ):
        import onnxruntime as ort

        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"No policy file at {self.path}.")
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_op_threads
        options.inter_op_num_threads = inter_op_threads
        self.session = ort.InferenceSession(
            str(self.path), options, providers=["CPUExecutionProvider"]
        )
        props = self.session.get_modelmeta().custom_metadata_map
        self.metadata: DeploymentMetadata | None = None
        if METADATA_KEY in props:
            self.metadata = DeploymentMetadata.from_json(props[METADATA_KEY])
        elif not allow_missing_metadata:
            raise ValueError(
                f"{self.path} has no '{METADATA_KEY}' metadata: it was not exported by mjlab-export. "
                "Re-export it, or pass allow_missing_metadata=True to run it raw."
            )
        inputs = self.session.get_inputs()
        self._input = inputs[0].name
        self.obs_dim = int(inputs[0].shape[-1])
        self.action_dim = int(self.session.get_outputs()[0].shape[-1])
        self._history: dict[str, np.ndarray] = {}
        if self.metadata is not None:
            if self.metadata.obs_dim != self.obs_dim:
                raise ValueError(
                    f"Metadata observation terms add up to {self.metadata.obs_dim} values but the "
                    f"network takes {self.obs_dim}."
                )
            m = self.metadata
            self.joint_names = list(m.joint_names)
            self.stiffness = np.asarray(m.stiffness, dtype=np.float64)
            self.damping = np.asarray(m.damping, dtype=np.float64)
            self.effort_limit = np.asarray(m.effort_limit, dtype=np.float64)
            self.default_joint_pos = np.asarray(m.default_joint_pos, dtype=np.float64)
            self.action_scale = np.asarray(m.action_scale, dtype=np.float64)
            self.action_offset = np.asarray(m.action_offset, dtype=np.float64)
            self.step_dt = m.step_dt
            self.observation_terms: list[ObservationTermSpec] = list(m.observations)

    # -- observations ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget observation history (call at the start of every episode)."""
        self._history.clear()

    def _require_metadata(self) -> DeploymentMetadata:
        if self.metadata is None:
            raise ValueError(
                f"{self.path} was loaded without metadata; only raw __call__ is available."
            )
        return self.metadata

    def build_observation(self, terms: Mapping[str, np.ndarray]) -> np.ndarray:
        """Assemble the observation vector in the file's term order.

        Each term: raw value -> clip -> scale; a term with history_length H contributes its last
        H processed values, oldest first (filled with the first value after `reset()`).

        Args:
            terms: {term name: (dim,) or (batch, dim) array}.

        Returns:
            (obs_dim,) or (batch, obs_dim) float32.

        Raises:
            ValueError: a missing or unknown term, or a term of the wrong shape (named).
        """
        meta = self._require_metadata()
        names = [t.name for t in meta.observations]
        missing = [n for n in names if n not in terms]
        unknown = [n for n in terms if n not in names]
        if missing or unknown:
            raise ValueError(
                f"Observation terms missing {missing}, unknown {unknown}; the policy reads {names}."
            )
        parts = []
        batched = None
        for spec in meta.observations:
            value = np.asarray(terms[spec.name], dtype=np.float64)
            is_batched = value.ndim == 2
            if value.shape[-1] != spec.dim or value.ndim not in (1, 2):
                raise ValueError(
                    f"Observation term '{spec.name}' has shape {value.shape}; expected ({spec.dim},) or (batch, {spec.dim})."
                )
            if batched is None:
                batched = is_batched
            elif batched != is_batched:
                raise ValueError("Observation terms mix batched and unbatched arrays.")
            if spec.clip is not None:
                value = np.clip(value, spec.clip[0], spec.clip[1])
            if spec.scale is not None:
                value = value * np.asarray(spec.scale)
            if spec.history_length > 0:
                hist = self._history.get(spec.name)
                if hist is None or hist.shape[1:] != value.shape:
                    hist = np.repeat(value[None], spec.history_length, axis=0)
                else:
                    hist = np.concatenate([hist[1:], value[None]], axis=0)
                self._history[spec.name] = hist
                value = np.moveaxis(hist, 0, -2).reshape(*value.shape[:-1], -1)
            parts.append(value)
        return np.concatenate(parts, axis=-1).astype(np.float32)

    # -- inference ---------------------------------------------------------------------------------
    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """Actions for observations (obs_dim,) or (batch, obs_dim). Returns float32 of matching rank.

        Raises:
            ValueError: wrong size, or NaN/Inf in the observation.
        """
        obs = np.asarray(obs, dtype=np.float32)
        single = obs.ndim == 1
        batch = obs[None] if single else obs
        if batch.ndim != 2 or batch.shape[1] != self.obs_dim:
            raise ValueError(
                f"Observation has shape {obs.shape}; expected ({self.obs_dim},) or (batch, {self.obs_dim})."
            )
        if not np.isfinite(batch).all():
            bad = np.nonzero(~np.isfinite(batch).all(axis=0))[0].tolist()
            raise ValueError(
                f"Observation contains NaN or Inf at indices {bad[:10]}; refusing to act on it."
            )
        actions = self.session.run(None, {self._input: batch})[0]
        return actions[0] if single else actions

    def joint_targets(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """PD targets in joint order (`joint_names`): q_target = action_offset + action_scale * a.

        Returns:
            (q_target rad, kp N m/rad, kd N m s/rad), each shaped like `actions` / (num_joints,).
        """
        meta = self._require_metadata()
        if meta.action_type != "joint_position":
            raise ValueError(
                f"This policy's actions are '{meta.action_type}', not joint position targets."
            )
        actions = np.asarray(actions, dtype=np.float64)
        if actions.shape[-1] != len(self.joint_names):
            raise ValueError(
                f"Actions have {actions.shape[-1]} values; the policy drives {len(self.joint_names)} joints."
            )
        return (
            self.action_offset + self.action_scale * actions,
            self.stiffness.copy(),
            self.damping.copy(),
        )

    def __repr__(self) -> str:
        task = self.metadata.task_id if self.metadata else "raw"
        return f"OnnxPolicy({self.path.name!r}, task={task!r}, obs_dim={self.obs_dim}, action_dim={self.action_dim})"
