"""`OnnxPolicy`: run an exported mjlab policy with onnxruntime + numpy only (no torch)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from mjlab.deploy.indices import resolve_rows
from mjlab.deploy.integrity import verify_onnx_bytes
from mjlab.deploy.metadata import (
    METADATA_KEY,
    CommandSpec,
    DeploymentMetadata,
    ImageInputSpec,
    ObservationTermSpec,
)


class OnnxPolicy:
    """An exported policy and its deployment metadata.

    Typical robot loop: `reset()` at the start of an episode, then every `step_dt`:
    `obs = build_observation(terms)`, `actions = policy(obs)`,
    `q_target, kp, kd = joint_targets(actions)`. An image policy (`metadata.images`, e.g.
    `Mjlab-Lift-Cube-Franka-Rgb`) also takes its camera frames:
    `actions = policy(obs, images={"camera": frame})`, each frame as the camera gives it
    ((H, W, 3) uint8 RGB, or (H, W) float32 depth in metres; see `preprocess_image`).

    Args:
        path: the .onnx file.
        allow_missing_metadata: run a file without `mjlab.deployment` metadata ("raw" mode:
            only `__call__` works; the metadata attributes are None).
        intra_op_threads: onnxruntime intra-op threads (1: predictable latency on a robot).
        inter_op_threads: onnxruntime inter-op threads.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not an ONNX model onnxruntime can load; damaged (`OnnxIntegrityError`:
            the file's bytes do not match the sha256 written at export, checked before
            onnxruntime reads it; files without a digest load unchecked); metadata missing
            (unless allowed), malformed, or inconsistent with the network's input/output sizes
            (the message names the field).
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
        if intra_op_threads < 1 or inter_op_threads < 1:
            raise ValueError("intra_op_threads and inter_op_threads must be >= 1.")
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_op_threads
        options.inter_op_num_threads = inter_op_threads
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        data = self.path.read_bytes()
        self.verified = verify_onnx_bytes(data, self.path)
        """Whether the file carried a digest (`mjlab.deploy.integrity`) and matched it; False
        for files exported before digests were written (they load unchecked)."""
        try:
            # From the verified bytes: the model that runs is the one that was checked.
            self.session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime's own exception types (InvalidProtobuf, ...)
            raise ValueError(
                f"{self.path} is not an ONNX model onnxruntime can load: {err}"
            ) from err
        props = self.session.get_modelmeta().custom_metadata_map
        self.metadata: DeploymentMetadata | None = None
        if METADATA_KEY in props:
            try:
                self.metadata = DeploymentMetadata.from_json(props[METADATA_KEY])
            except ValueError as err:
                raise ValueError(f"{self.path}: {err}") from err
        elif not allow_missing_metadata:
            raise ValueError(
                f"{self.path} has no '{METADATA_KEY}' metadata: it was not exported by mjlab-export. "
                "Re-export it, or pass allow_missing_metadata=True to run it raw."
            )
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        images = self.metadata.images if self.metadata is not None else []
        if len(inputs) != 1 + len(images) or len(outputs) < 1:
            expected = ", ".join(["obs", *(i.name for i in images)])
            raise ValueError(
                f"{self.path} has {len(inputs)} inputs and {len(outputs)} outputs; this mjlab "
                f"policy has {1 + len(images)} inputs ({expected}) and one output (actions)."
            )
        for spec, node in zip(images, inputs[1:], strict=True):
            if node.name != spec.name or list(node.shape[1:]) != spec.shape:
                raise ValueError(
                    f"{self.path}: the network's input '{node.name}' {node.shape} does not match "
                    f"the metadata's image '{spec.name}' (batch, {', '.join(map(str, spec.shape))})."
                )
        self.image_inputs: list[ImageInputSpec] = list(images)
        """Camera inputs besides "obs" (empty for a state policy), in the graph's order."""
        self._input = inputs[0].name
        self._output = outputs[0].name
        self.obs_dim = _static_last_dim(inputs[0].shape, "input", self.path)
        self.action_dim = _static_last_dim(outputs[0].shape, "output", self.path)
        self._history: dict[str, np.ndarray] = {}
        self._refill: np.ndarray | None = None  # rows of a batch that start a new episode

        m = self.metadata
        self.joint_names: list[str] | None = None
        # Per-joint arrays in joint_names order, float64, read-only; None in raw mode.
        self.stiffness: np.ndarray | None = None
        self.damping: np.ndarray | None = None
        self.effort_limit: np.ndarray | None = None
        self.armature: np.ndarray | None = None
        self.default_joint_pos: np.ndarray | None = None
        self.action_scale: np.ndarray | None = None
        self.action_offset: np.ndarray | None = None
        self.step_dt: float | None = None
        self.physics_dt: float | None = None
        self.decimation: int | None = None
        self.observation_terms: list[ObservationTermSpec] | None = None
        self.commands: list[CommandSpec] | None = None
        if m is None:
            return
        if m.obs_dim != self.obs_dim:
            raise ValueError(
                f"Metadata observation terms add up to {m.obs_dim} values but the "
                f"network takes {self.obs_dim}."
            )
        if m.num_joints != self.action_dim:
            raise ValueError(
                f"Metadata lists {m.num_joints} joints but the network outputs {self.action_dim} "
                "actions."
            )
        self.joint_names = list(m.joint_names)
        self.stiffness = _readonly(m.stiffness)
        self.damping = _readonly(m.damping)
        self.effort_limit = _readonly(m.effort_limit)
        self.armature = _readonly(m.armature)
        self.default_joint_pos = _readonly(m.default_joint_pos)
        self.action_scale = _readonly(m.action_scale)
        self.action_offset = _readonly(m.action_offset)
        self.step_dt, self.physics_dt, self.decimation = m.step_dt, m.physics_dt, m.decimation
        self.observation_terms = list(m.observations)
        self.commands = list(m.commands)
        self._scale32 = np.asarray(m.action_scale, dtype=np.float32)
        self._offset32 = np.asarray(m.action_offset, dtype=np.float32)

    # -- observations ----------------------------------------------------------------------------
    def reset(self, rows: Sequence[int] | np.ndarray | None = None) -> None:
        """Start a new episode: forget observation history and delay, so the next
        `build_observation` fills each term's line with its value, as the env does.

        Args:
            rows: for a batched runtime, only these rows start a new episode (the env's partial
                reset): integer indices in [0, batch) or a boolean mask of length batch (the
                env's done mask) meaning its True rows; None: all of them (and the batch size
                may change).

        Raises:
            TypeError: float (or other non-integer) rows (`mjlab.deploy.indices.resolve_rows`).
            ValueError: rows outside the batch or a mask of the wrong length.
        """
        if rows is None:
            self._history.clear()
            self._refill = None
            return
        if not self._history:
            return  # nothing kept yet: every row fills on the next call anyway
        batch = next(iter(self._history.values())).shape[1:-1]
        if len(batch) != 1:
            raise ValueError("reset(rows) needs a batched runtime ((batch, dim) terms).")
        rows = resolve_rows(rows, batch[0], "rows")
        if self._refill is None:
            self._refill = np.zeros(batch[0], dtype=bool)
        self._refill[rows] = True

    def _require_metadata(self) -> DeploymentMetadata:
        if self.metadata is None:
            raise ValueError(
                f"{self.path} was loaded without metadata; only raw __call__ is available."
            )
        return self.metadata

    def build_observation(self, terms: Mapping[str, np.ndarray]) -> np.ndarray:
        """Assemble the observation vector in the file's term order, exactly as mjlab's
        ObservationManager does in training.

        Each term, in float32: raw value -> clip -> scale, pushed into a line of
        `delay + max(history_length, 1)` values that the first call after `reset()` fills with
        its value (an episode start). The term contributes the value from `delay` calls ago
        (history_length 0), or the `history_length` values ending there, oldest first. Each
        call advances every line exactly once. Training's observation noise is not applied.

        Args:
            terms: {term name: (dim,) or (batch, dim) array}, all batched or all not; the raw
                values (before clip and scale) in the units of the training environment.

        Returns:
            (obs_dim,) or (batch, obs_dim) float32.

        Raises:
            ValueError: a missing or unknown term, a term of the wrong shape or with NaN/Inf,
                or a batch size that changed without `reset()` (the term is named). The
                history is left unchanged when this is raised.
        """
        meta = self._require_metadata()
        names = [t.name for t in meta.observations]
        missing = [n for n in names if n not in terms]
        unknown = [n for n in terms if n not in names]
        if missing or unknown:
            raise ValueError(
                f"Observation terms missing {missing}, unknown {unknown}; the policy reads {names}."
            )
        values = {}
        batch_shape = None
        for spec in meta.observations:
            value = np.asarray(terms[spec.name])
            if value.ndim not in (1, 2) or value.shape[-1] != spec.dim:
                raise ValueError(
                    f"Observation term '{spec.name}' has shape {value.shape}; expected "
                    f"({spec.dim},) or (batch, {spec.dim})."
                )
            if batch_shape is None:
                batch_shape = value.shape[:-1]
            elif value.shape[:-1] != batch_shape:
                raise ValueError(
                    f"Observation term '{spec.name}' has shape {value.shape}, other terms have "
                    f"batch shape {batch_shape}; give every term the same batch shape."
                )
            with np.errstate(over="ignore", invalid="ignore"):  # refused just below
                value32 = value.astype(np.float32)
            if not np.isfinite(value32).all():
                raise ValueError(
                    f"Observation term '{spec.name}' contains NaN or Inf (or values beyond "
                    f"float32): {value}."
                )
            line = self._history.get(spec.name)
            if line is not None and line.shape[1:] != value.shape:
                raise ValueError(
                    f"Observation term '{spec.name}' changed shape from {line.shape[1:]} to "
                    f"{value.shape} since the last call; call reset() when the batch changes."
                )
            # The env casts every term to float32 first and processes in float32.
            values[spec.name] = value32
        parts = []
        for spec in meta.observations:
            value = values[spec.name]
            if spec.clip is not None:
                value = np.clip(value, np.float32(spec.clip[0]), np.float32(spec.clip[1]))
            if spec.scale is not None:
                value = value * np.asarray(spec.scale, dtype=np.float32)
            slots = spec.delay + max(spec.history_length, 1)
            line = self._history.get(spec.name)
            if line is None:
                line = np.repeat(value[None], slots, axis=0)
            else:
                line = np.concatenate([line[1:], value[None]], axis=0)
                if self._refill is not None:
                    line[:, self._refill] = value[self._refill]
            self._history[spec.name] = line
            end = slots - spec.delay
            if spec.history_length == 0:
                value = line[end - 1]
            else:
                # (H, ..., dim) -> (..., H * dim), oldest first.
                window = line[end - spec.history_length : end]
                value = np.moveaxis(window, 0, -2).reshape(*value.shape[:-1], -1)
            parts.append(value)
        self._refill = None
        return np.concatenate(parts, axis=-1).astype(np.float32)

    # -- images ------------------------------------------------------------------------------------
    def preprocess_image(self, name: str, frame: np.ndarray) -> np.ndarray:
        """What mjlab's image term makes of a camera frame (float32, channels first).

        Args:
            name: the image input (`image_inputs[i].name`, e.g. "camera").
            frame: "rgb": (H, W, 3) or (batch, H, W, 3) uint8; "depth": (H, W) or (batch, H, W)
                float depth along the camera axis, m. Pixels without a measurement (0, NaN or
                Inf, as depth cameras report holes) and those beyond max_depth read max_depth,
                as the training camera reports a miss.

        Returns:
            (batch, C, H, W) float32: rgb / 255, or clip(depth, 0, max_depth) / max_depth.

        Raises:
            ValueError: an unknown input, a frame of the wrong shape or dtype.
        """
        specs = {s.name: s for s in self.image_inputs}
        if name not in specs:
            raise ValueError(f"Image input '{name}' is not one of this policy's {list(specs)}.")
        spec = specs[name]
        frame = np.asarray(frame)
        raw = spec.raw_shape
        batched = frame.shape[1:] == raw
        if frame.shape != raw and not batched:
            raise ValueError(
                f"Image '{name}' ({spec.data_type}) has shape {frame.shape}; expected {raw} or "
                f"(batch, {', '.join(map(str, raw))})."
            )
        frames = frame if batched else frame[None]
        if spec.data_type == "rgb":
            if frames.dtype != np.uint8:
                raise ValueError(
                    f"Image '{name}' is {frames.dtype}; an rgb frame is uint8 (0-255), as the "
                    "camera gives it."
                )
            return np.ascontiguousarray(
                np.moveaxis(frames, -1, 1).astype(np.float32) / np.float32(255.0)
            )
        with np.errstate(invalid="ignore", over="ignore"):
            depth = frames.astype(np.float32)
            top = np.float32(spec.max_depth)
            # No measurement (0 or less, NaN, Inf) is a miss, as mjlab's camera reports it.
            measured = (depth > 0) & (depth <= top)
            depth = np.where(measured, depth, top)
        return (depth / top)[:, None]

    # -- inference ---------------------------------------------------------------------------------
    def __call__(
        self, obs: np.ndarray, images: Mapping[str, np.ndarray] | None = None
    ) -> np.ndarray:
        """Actions for observations (and, for an image policy, camera frames).

        Args:
            obs: (obs_dim,) or (batch, obs_dim), converted to float32.
            images: {input name: camera frame} for every `image_inputs` entry, as the camera
                gives it (see `preprocess_image`), batched like `obs`; None for a state policy.

        Returns:
            (action_dim,) or (batch, action_dim) float32, matching the rank of `obs`; clamped to
            +-`metadata.clip_actions` when training clamped them.

        Raises:
            ValueError: wrong size, NaN/Inf in the observation (indices and terms named), or
                missing, unknown or malformed images.
            RuntimeError: the network produced NaN/Inf actions.
        """
        obs = np.asarray(obs, dtype=np.float32)
        single = obs.ndim == 1
        batch = obs[None] if single else obs
        if batch.ndim != 2 or batch.shape[1] != self.obs_dim:
            raise ValueError(
                f"Observation has shape {obs.shape}; expected ({self.obs_dim},) or (batch, {self.obs_dim})."
            )
        finite = np.isfinite(batch)
        if not finite.all():
            bad = np.nonzero(~finite.all(axis=0))[0].tolist()
            raise ValueError(
                f"Observation contains NaN or Inf at indices {bad[:10]}{self._terms_at(bad)}; "
                "refusing to act on it."
            )
        feeds = {self._input: batch}
        given = dict(images or {})
        wanted = [s.name for s in self.image_inputs]
        if sorted(given) != sorted(wanted):
            raise ValueError(f"Images given {sorted(given)}; this policy reads {wanted or 'none'}.")
        for name in wanted:
            pixels = self.preprocess_image(name, given[name])
            if pixels.shape[0] != batch.shape[0]:
                raise ValueError(
                    f"Image '{name}' has a batch of {pixels.shape[0]}, the observation "
                    f"{batch.shape[0]}."
                )
            feeds[name] = pixels
        actions = self.session.run([self._output], feeds)[0]
        actions = np.asarray(actions, dtype=np.float32)
        if not np.isfinite(actions).all():
            raise RuntimeError(f"{self.path} produced NaN or Inf actions for a finite observation.")
        clip = self.metadata.clip_actions if self.metadata is not None else None
        if clip is not None:  # as the training wrapper, before the env saw the actions
            actions = np.clip(actions, np.float32(-clip), np.float32(clip))
        return actions[0] if single else actions

    def _terms_at(self, indices: list[int]) -> str:
        if self.metadata is None:
            return ""
        ends = np.cumsum([t.total_dim for t in self.metadata.observations])
        names = {
            self.metadata.observations[int(np.searchsorted(ends, i, "right"))].name for i in indices
        }
        return f" (terms {sorted(names)})"

    def process_actions(self, actions: np.ndarray) -> np.ndarray:
        """What the env's action term makes of `actions`: action_offset + action_scale * a,
        clipped to `action_clip`, then to `joint_pos_limits` where the metadata says the env
        clamped targets to the joint range (`clamp_to_joint_limits`), computed in float32 as
        in training.

        Args:
            actions: (num_joints,) or (batch, num_joints) raw policy actions.

        Returns:
            float64 array shaped like `actions`, in joint order (`joint_names`): rad for joint
            position targets, rad/s for velocity, N m for effort (`metadata.action_type`).

        Raises:
            ValueError: no metadata, a wrong size, or NaN/Inf in the actions.
        """
        meta = self._require_metadata()
        actions = np.asarray(actions)
        if actions.ndim not in (1, 2) or actions.shape[-1] != meta.num_joints:
            raise ValueError(
                f"Actions have shape {actions.shape}; the policy drives {meta.num_joints} joints: "
                f"expected ({meta.num_joints},) or (batch, {meta.num_joints})."
            )
        if not np.isfinite(actions).all():
            raise ValueError(
                f"Actions contain NaN or Inf ({actions}); refusing to turn them into joint "
                "commands."
            )
        processed = actions.astype(np.float32) * self._scale32 + self._offset32
        if meta.action_clip is not None:
            lo, hi = meta.action_clip
            processed = np.clip(processed, np.float32(lo), np.float32(hi))
        if meta.clamp_to_joint_limits and meta.joint_pos_limits:
            limits = np.asarray(meta.joint_pos_limits, dtype=np.float32)
            processed = np.clip(processed, limits[:, 0], limits[:, 1])
        return processed.astype(np.float64)

    def joint_targets(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """PD targets in joint order (`joint_names`): `process_actions(actions)`.

        Args:
            actions: (num_joints,) or (batch, num_joints) raw policy actions.

        Returns:
            (q_target rad shaped like `actions`, kp N m/rad (num_joints,), kd N m s/rad
            (num_joints,)), float64.

        Raises:
            ValueError: no metadata, actions that are not joint position targets, a wrong
                size, or NaN/Inf in the actions.
        """
        meta = self._require_metadata()
        if meta.action_type != "joint_position":
            raise ValueError(
                f"This policy's actions are '{meta.action_type}', not joint position targets; "
                "use process_actions()."
            )
        return (
            self.process_actions(actions),
            np.asarray(meta.stiffness, dtype=np.float64),
            np.asarray(meta.damping, dtype=np.float64),
        )

    def __repr__(self) -> str:
        task = self.metadata.task_id if self.metadata else "raw"
        return f"OnnxPolicy({self.path.name!r}, task={task!r}, obs_dim={self.obs_dim}, action_dim={self.action_dim})"


def _readonly(values: list[float]) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    array.flags.writeable = False
    return array


def _static_last_dim(shape: list, what: str, path: Path) -> int:
    if not shape or not isinstance(shape[-1], int):
        raise ValueError(
            f"{path}: the network's {what} has shape {shape}; its last axis must have a fixed size."
        )
    return int(shape[-1])
