"""`MjlabOnPolicyRunner`: rsl-rl-lib's OnPolicyRunner with env state in checkpoints, atomic
saves, legacy checkpoint migration and ONNX export with deployment metadata."""

from __future__ import annotations

import dataclasses
import errno
import io
import os
import pickle
import re
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from rsl_rl.env import VecEnv
from rsl_rl.runners import OnPolicyRunner

from mjlab.rl.logger import IterationSummary, MjlabLogger

_COUNTER_KEY = "common_step_counter"


class MjlabOnPolicyRunner(OnPolicyRunner):
    """Base runner whose checkpoints resume a run exactly.

    Compared with rsl-rl-lib's `OnPolicyRunner`: checkpoints carry the whole env state
    (`ManagerBasedRlEnv.get_state`: physics, managers, generators), the global generators
    (torch, numpy, Python `random`) and the logger's episode statistics, so a run resumed from
    a checkpoint continues exactly as the uninterrupted run would have (bit for bit on CPU):
    the next iteration after `model_<k>.pt` is k + 1, as in the uninterrupted run (rsl-rl
    repeats k). They are written atomically; model upload to wandb follows
    `train_cfg["upload_model"]`; checkpoints of older rsl-rl versions load; ONNX export goes
    through mjlab-export with the task's deployment metadata; `on_save` is called after each
    checkpoint (`train` writes policy.onnx beside it there). The console shows one progress
    line per iteration (`mjlab.rl.logger.MjlabLogger`; `train_cfg["verbose"]`: rsl-rl's block).

    Args:
        env: an rsl-rl VecEnv (normally `RslRlVecEnvWrapper`); its `unwrapped` env, when it has
            one, holds `common_step_counter`.
        train_cfg: the dict from `to_rsl_rl_train_cfg` (rsl-rl writes into it).
        log_dir: run folder (checkpoints, logs); None disables writing.
        device: torch device of the networks, e.g. "cpu" or "cuda:0".

    Raises:
        ValueError: PPO minibatches of 0 samples (`mjlab.rl.config.check_minibatch`; a warning
            when they are very small).
    """

    def __init__(
        self, env: VecEnv, train_cfg: dict, log_dir: str | None = None, device: str = "cpu"
    ) -> None:
        from mjlab.rl.config import check_minibatch, is_recurrent_model

        # Before rsl-rl builds anything: a zero-sized minibatch makes every update a no-op.
        check_minibatch(
            env.num_envs,
            train_cfg["num_steps_per_env"],
            train_cfg.get("algorithm", {}).get("num_mini_batches", 1),
            recurrent=any(
                is_recurrent_model(train_cfg.get(role, {}).get("class_name", "MLPModel"))
                for role in ("actor", "critic")
            ),
        )
        # rsl-rl prints the resolved observation sets and the actor/critic modules while it
        # builds them, and a line when it stores the git diff: train_cfg["verbose"] shows them.
        self._quiet = not train_cfg.get("verbose", False)
        with _stdout_hidden(self._quiet):
            super().__init__(env, train_cfg, log_dir, device)
        # rsl-rl builds a plain Logger inline (no class to choose): the same arguments build
        # mjlab's, whose console is one progress line per iteration (train_cfg["verbose"]:
        # rsl-rl's block).
        self.logger = MjlabLogger(
            log_dir=log_dir,
            cfg=self.cfg,
            env_cfg=self.env.cfg,
            num_envs=self.env.num_envs,
            is_distributed=self.is_distributed,
            gpu_world_size=self.gpu_world_size,
            gpu_global_rank=self.gpu_global_rank,
            device=self.device,
            verbose=not self._quiet,
            on_iteration=self._show_progress,
        )
        self.progress: Any = None
        """The run's `mjlab.rl.progress.TrainingProgress` (its `records` are the curve)."""
        self.on_save: Callable[[Path], object] | None = None
        """Called with the checkpoint's path after each `save` (e.g. `mjlab.rl.run.PolicyExport`
        writing policy.onnx beside it); None: nothing."""
        env = self._env()
        # Read now, before anything (a curriculum) edits the env's config copy at run time.
        self._env_config = config_fields(env.cfg) if hasattr(env, "get_state") else None
        self._env_defaults = config_field_defaults(env.cfg) if hasattr(env, "get_state") else {}
        self._next_after_loaded = False
        self.resume_note = ""
        self.resumed_exactly = False
        """True after `load` restored the env, generators and logs of the checkpoint: `learn`
        then continues that run's next iteration as it would have run."""

    def _env(self) -> Any:
        return getattr(self.env, "unwrapped", self.env)

    # -- console progress and training curve --------------------------------------------------------
    def _show_progress(self, summary: IterationSummary) -> None:
        """The progress line of one iteration (`MjlabLogger.on_iteration`)."""
        if self.progress is None:  # learn() was bypassed: count from here
            self.progress = self._new_progress(summary.total, summary.start)
        self.progress.update(
            summary.iteration,
            summary.steps_per_second,
            summary.mean_reward,
            summary.mean_length,
            summary.terms,
            collect_s=summary.collect_s,
            update_s=summary.update_s,
        )

    def _new_progress(self, total: int, start: int) -> Any:
        from mjlab.rl.progress import TrainingProgress, headline_term

        return TrainingProgress(
            total,
            headline=headline_term(self.env),
            start=start,
            quiet=bool(self.cfg.get("verbose", False)),
        )

    def learn(self, num_learning_iterations: int, init_at_random_ep_len: bool = False) -> None:
        """rsl-rl's `learn`, then (on the process that logs) `training_curve.png` and `.csv` in
        the run folder (`mjlab.rl.progress.write_training_curve`); the PNG's path is printed."""
        if self._next_after_loaded:
            # A checkpoint is written after its iteration: continue with the next one.
            self.current_learning_iteration += 1
            self._next_after_loaded = False
        if self.resumed_exactly:
            # Keep the restored episode lengths (the uninterrupted run does not redraw them).
            self.resumed_exactly = False
            init_at_random_ep_len = False
        if self.logger.log_dir:  # the process that logs (ranks > 0 have no log_dir)
            start = self.current_learning_iteration
            # Created before the first iteration: its clock (ETA, curve wall time) starts now.
            self.progress = self._new_progress(start + num_learning_iterations, start)
        try:
            super().learn(num_learning_iterations, init_at_random_ep_len)
        finally:
            if self.progress is not None:
                self.progress.close()
        if self.progress is not None and self.logger.log_dir:
            from mjlab.rl.progress import write_training_curve

            png = write_training_curve(
                self.progress.records,
                self.logger.log_dir,
                title=str(self.cfg.get("task_id", "")),
                headline=self.progress.headline,
            )
            if png is not None:
                print(f"[mjlab] training curve: {png}")

    # -- checkpoints -----------------------------------------------------------------------------
    def save(self, path: str, infos: dict | None = None) -> None:
        """Save a checkpoint: models, optimizer, iteration, `infos` and the run's state.

        The file is written to a temporary file in the same folder, flushed to disk, then renamed
        over `path`, so a reader never sees a half-written checkpoint and a failing write leaves
        any previous file at `path` intact. `infos["env_state"]` holds the env's
        `common_step_counter`, its whole state (`ManagerBasedRlEnv.get_state`) and its config's
        fields (`config_fields`: a resume compares them and names what changed); `infos["run_state"]` the global generators (torch, CUDA, numpy, Python) and the
        logger's episode statistics. The file is uploaded to the logging service (wandb) only if
        `train_cfg["upload_model"]` is true (default true). `on_save`, when set, is called with
        `path` once the file is in place (its errors are its own).

        Args:
            path: the checkpoint file; its folder is created.
            infos: extra data stored under "infos" (a dict, copied): numbers, strings, bools,
                None, tensors, numpy arrays/scalars (stored as tensors/numbers), and lists,
                tuples and dicts of them: exactly what `load` (weights_only) reads back.

        Raises:
            ValueError: `infos` holds something `load` could not read (the key is named);
                nothing is written.
            OSError: the write failed (a full disk says so); nothing at `path` changed.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        saved = self.alg.save()
        saved["iter"] = self.current_learning_iteration
        infos = dict(infos or {})
        infos.update(self._run_state())
        saved["infos"] = checkpoint_value(infos, "infos")
        _remove_stale_temp_files(path.parent)
        # Serialize in memory first: a full disk is then an OSError of the write, not an
        # error from inside torch's zip writer.
        buffer = io.BytesIO()
        torch.save(saved, buffer)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
        )
        tmp = Path(tmp_name)
        try:
            # mkstemp makes the file private (0600); a checkpoint gets the mode of any new
            # file (0666 less the umask), like policy.onnx beside it.
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as handle:
                handle.write(buffer.getbuffer())
                handle.flush()
                os.fsync(handle.fileno())  # on disk before the rename makes it visible
            os.replace(tmp, path)
        except OSError as err:
            tmp.unlink(missing_ok=True)
            if err.errno == errno.ENOSPC or "No space left" in str(err):
                raise OSError(
                    errno.ENOSPC,
                    f"Disk full: checkpoint {path} was not saved ({err}); the previous "
                    "checkpoint there, if any, is intact. Free space in "
                    f"{path.parent}.",
                ) from err
            raise
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if self.cfg.get("upload_model", True):
            self.logger.save_model(str(path), self.current_learning_iteration)
        if self.on_save is not None:
            self.on_save(path)

    def load(
        self,
        path: str,
        load_cfg: dict | None = None,
        strict: bool = True,
        map_location: str | None = None,
        verify: bool = True,
    ) -> dict:
        """Load a checkpoint, as untrusted input (`torch.load(weights_only=True)`).

        Restores `common_step_counter` when the checkpoint has it (curricula continue where they
        were; a checkpoint without env state leaves the counter alone) and migrates checkpoints
        of older rsl-rl versions: `model_state_dict` with `actor.*` -> actor `mlp.*`,
        `critic.*` -> critic `mlp.*`, `actor_obs_normalizer.*` / `critic_obs_normalizer.*` ->
        each model's `obs_normalizer.*`, and `std` / `log_std` -> `distribution.std_param` /
        `distribution.log_std_param` (also in 4.x actor state dicts). The optimizer state is
        re-indexed to the current parameter order, so training resumes from a migrated checkpoint.

        Args:
            path: the checkpoint file.
            load_cfg: which parts to load, e.g. {"actor": True, "critic": True, "optimizer":
                True, "iteration": True}; None loads everything.
            strict: whether the model state dicts must match the models exactly.
            map_location: device to load tensors onto (e.g. "cpu" for a GPU checkpoint).
            verify: check the file with `verify_checkpoint` first; False for a caller that
                already did (a command checks it before building the env).

        Returns:
            The checkpoint's `infos` (None for checkpoints saved without).

        Raises:
            FileNotFoundError: no such file.
            ValueError: not a valid checkpoint file (truncated, empty, random bytes, or data
                that is not plain), damaged (`mjlab.rl.checkpoint.CheckpointError`: a zip
                record whose bytes fail its CRC-32, checked by `verify_checkpoint` before
                anything is read unless `verify` is False), or not an rsl-rl checkpoint.
            CheckpointMismatchError (a ValueError and a RuntimeError): state dicts that do not
                fit the models (with strict=True: another task's or network size's checkpoint),
                naming the file and one mismatch.
        """
        from mjlab.rl.checkpoint import CheckpointMismatchError, verify_checkpoint

        path = verify_checkpoint(path) if verify else Path(path)
        try:
            loaded = torch.load(path, weights_only=True, map_location=map_location)
        except (EOFError, zipfile.BadZipFile) as err:
            raise ValueError(
                f"{path} is not a valid checkpoint ({path.stat().st_size} bytes: truncated or "
                f"empty; {type(err).__name__})."
            ) from None
        except pickle.UnpicklingError as err:
            # Torch's message suggests loading untrusted data unsafely: keep only what it found.
            lines = str(err).splitlines()
            detail = next((ln.strip() for ln in lines if "WeightsUnpickler error" in ln), "")
            detail = "" if "weights_only" in detail else f" ({detail[:200]})"
            raise ValueError(
                f"{path} is not a valid checkpoint: not a torch file, or it holds data that is "
                f"not plain (numbers, strings, tensors){detail}."
            ) from None
        except RuntimeError as err:
            if "PytorchStreamReader" not in str(err) and "zip archive" not in str(err):
                raise  # e.g. a map_location the machine does not have: the real error
            raise ValueError(
                f"{path} is not a valid checkpoint ({path.stat().st_size} bytes: truncated, "
                "damaged or not a torch file)."
            ) from None
        if not isinstance(loaded, dict):
            raise ValueError(
                f"{path} is not a valid checkpoint (it holds a {type(loaded).__name__})."
            )
        loaded, old_order = _migrate(loaded)
        if old_order is not None and "optimizer_state_dict" in loaded:
            loaded["optimizer_state_dict"] = _reindex_optimizer_state(
                loaded["optimizer_state_dict"], old_order, self._parameter_names()
            )
        try:
            resumed = self.alg.load(loaded, load_cfg, strict)
        except RuntimeError as err:
            if "state_dict" not in str(err):
                raise
            # torch lists every mismatching key; the first line and one example say enough.
            lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
            example = lines[1] if len(lines) > 1 else ""
            raise CheckpointMismatchError(
                f"{path} does not fit this task's networks ({example.rstrip('.')}): it was "
                "trained for another task or network size. Use a checkpoint of this task; "
                "its run folder's params/ names the task it was trained for."
            ) from None
        if resumed:
            self.current_learning_iteration = loaded["iter"]
            self._next_after_loaded = True
        infos = loaded.get("infos")
        state = infos.get("env_state") if isinstance(infos, dict) else None
        env = self._env()
        if isinstance(state, dict) and _COUNTER_KEY in state and hasattr(env, _COUNTER_KEY):
            setattr(env, _COUNTER_KEY, int(state[_COUNTER_KEY]))
        self.resume_note = "no env state in the checkpoint: the env starts anew"
        if load_cfg is None or load_cfg.get("env_state", False):
            self.resumed_exactly = self._load_run_state(infos)
        return infos

    # -- exact resume ------------------------------------------------------------------------------
    def _run_state(self) -> dict[str, Any]:
        import random

        import numpy as np

        env = self._env()
        infos: dict[str, Any] = {}
        if hasattr(env, _COUNTER_KEY):
            infos["env_state"] = {_COUNTER_KEY: int(getattr(env, _COUNTER_KEY))}
            if self.cfg.get("save_env_state", True) and hasattr(env, "get_state"):
                infos["env_state"]["state"] = env.get_state()
                infos["env_state"]["config"] = self._env_config
        logger = self.logger
        infos["run_state"] = {
            "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else [],
            "numpy": np.random.get_state(),  # noqa: NPY002 (the global one others draw from)
            "python": random.getstate(),
            "logger": {
                "rewbuffer": list(logger.rewbuffer),
                "lenbuffer": list(logger.lenbuffer),
                "cur_reward_sum": logger.cur_reward_sum.clone(),
                "cur_episode_length": logger.cur_episode_length.clone(),
                "tot_timesteps": int(logger.tot_timesteps),
                "tot_time": float(logger.tot_time),
            },
        }
        return infos

    def _changed_fields(self, state: dict) -> list[str] | None:
        """The env config paths whose value differs from the checkpoint's (None: the
        checkpoint stored no config). A field the checkpoint has no entry for counts only when
        it is off its default: a field added since then, left at its default, runs as before."""
        saved, now = state.get("config"), self._env_config
        if not isinstance(saved, dict) or now is None:
            return None
        return [
            k
            for k in sorted(set(saved) | set(now))
            if saved.get(k) != now.get(k)
            and not (k not in saved and self._env_defaults.get(k) == now.get(k))
        ]

    def _config_changes(self, state: dict) -> str:
        """The env config fields that differ from the checkpoint's, e.g. "scene.num_envs 64 ->
        32"; a generic phrase for checkpoints that did not store their config."""
        changed = self._changed_fields(state)
        if changed is None:
            return "another task, num_envs, seed or field"
        saved, now = state["config"], self._env_config or {}
        shown = [f"{k} {saved.get(k, '(none)')} -> {now.get(k, '(none)')}" for k in changed[:3]]
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return "; ".join(shown) + more if shown else "another code version"

    def _load_run_state(self, infos: Any) -> bool:
        """Restore the env, the generators and the logs from `infos` when the checkpoint has
        them and the env's config is the one it was saved with; sets `resume_note`."""
        import random

        import numpy as np

        env = self._env()
        state = infos.get("env_state") if isinstance(infos, dict) else None
        run = infos.get("run_state") if isinstance(infos, dict) else None
        if not isinstance(state, dict) or "state" not in state or not isinstance(run, dict):
            return False
        if not hasattr(env, "set_state") or self._changed_fields(state) != []:
            self.resume_note = (
                f"the env's config differs from the checkpoint's ({self._config_changes(state)}): "
                "networks and optimizer restored, the env starts anew"
            )
            return False
        try:
            env.set_state(state["state"])
        except ValueError as err:  # also mjlab.utils.snapshot.StateMismatchError
            self.resume_note = f"the env state does not fit this env ({err}): it starts anew"
            return False
        torch.set_rng_state(run["torch"].cpu())
        if run["cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all([state.cpu() for state in run["cuda"]])
        kind, keys, *rest = run["numpy"]
        np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), *rest))  # noqa: NPY002
        random.setstate(_as_tuples(run["python"]))
        logger, saved = self.logger, run["logger"]
        logger.rewbuffer.clear()
        logger.rewbuffer.extend(saved["rewbuffer"])
        logger.lenbuffer.clear()
        logger.lenbuffer.extend(saved["lenbuffer"])
        logger.cur_reward_sum.copy_(saved["cur_reward_sum"])
        logger.cur_episode_length.copy_(saved["cur_episode_length"])
        logger.tot_timesteps = saved["tot_timesteps"]
        logger.tot_time = saved["tot_time"]
        self.resume_note = "env, generators and episode statistics restored: an exact resume"
        return True

    def _parameter_names(self) -> list[tuple[str, str]]:
        """(model, name) of every parameter, in the order PPO handed them to its optimizer."""
        names = [("actor", n) for n, _ in self.alg._raw_actor.named_parameters()]
        return names + [("critic", n) for n, _ in self.alg._raw_critic.named_parameters()]

    # -- export ------------------------------------------------------------------------------------
    def export_policy_to_onnx(
        self, path: str, filename: str = "policy.onnx", verbose: bool = False
    ) -> None:
        """Export the policy to `path/filename` as ONNX, through mjlab-export.

        Uses the legacy TorchScript-based exporter (`dynamo=False`; torch >= 2.9 defaults to the
        dynamo path, which warns about `dynamic_axes`). The observation normalizer is inside the
        graph, and the task's deployment metadata (joint order, gains, observation layout) is
        attached when the env has managers. The file is uploaded to wandb when
        `train_cfg["upload_model"]` is true. Paths are joined with pathlib, never derived by
        splitting strings, and errors are raised, never swallowed.

        Args:
            path: folder of the ONNX file (created if missing).
            filename: the file name.
            verbose: print the exporter's graph.

        Raises:
            ValueError: the actor and the metadata disagree, or the export failed its checks.
        """
        from mjlab.export import export_policy, metadata_from_env

        env = self._env()
        policy = self.alg.get_policy()
        actor = policy.as_onnx(verbose=verbose)
        actor.to("cpu").eval()
        metadata = None
        if hasattr(env, "action_manager"):
            metadata = metadata_from_env(
                env,
                task_id=self.cfg.get("task_id", ""),
                clip_actions=getattr(self.env, "clip_actions", None),
                # A CNN actor (rsl-rl's CNNModel) reads these groups as images, after "obs".
                image_groups=tuple(getattr(policy, "obs_groups_2d", ())),
            )
        out = export_policy(actor, Path(path) / filename, metadata, verbose=verbose)
        if metadata is not None and metadata.motion is not None:
            target = Path(path) / motion_file_name(filename)
            _save_motion_beside(env, target, metadata.motion.content_hash)
        if self.cfg.get("upload_model", True):
            self.logger.save_model(str(out), self.current_learning_iteration)


def _stdout_hidden(hide: bool) -> Any:
    """A context that swallows what is printed to stdout when `hide`, else does nothing."""
    import contextlib

    return contextlib.redirect_stdout(io.StringIO()) if hide else contextlib.nullcontext()


def config_fields(cfg: Any) -> dict[str, str]:
    """A config's leaves by dotted path, as short strings (`mjlab.rl.cli.to_plain` form), e.g.
    {"scene.num_envs": "64", "seed": "3", ...}: what a checkpoint stores to name a change."""
    from mjlab.rl.cli import to_plain

    out: dict[str, str] = {}
    _flatten(to_plain(cfg), "", out)
    return out


def _flatten(value: Any, path: str, out: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list) and value and any(isinstance(v, dict) for v in value):
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", out)
    else:
        out[path] = re.sub(r" at 0x[0-9a-f]+", "", str(value))[:200]


def config_field_defaults(cfg: Any) -> dict[str, str]:
    """The leaves (as in `config_fields`) that every dataclass field of `cfg` would have at its
    declared default, by the same dotted paths; fields without a default are left out.

    A checkpoint saved before a field existed has no entry for it; when the field still holds
    its default, the run is the one that was saved (new fields default to the old behaviour)."""
    from mjlab.rl.cli import to_plain

    out: dict[str, str] = {}

    def walk(value: Any, path: str) -> None:
        def at(name: str) -> str:
            return f"{path}.{name}" if path else name

        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                if f.default is not dataclasses.MISSING:
                    _flatten(to_plain(f.default), at(f.name), out)
                elif f.default_factory is not dataclasses.MISSING:
                    _flatten(to_plain(f.default_factory()), at(f.name), out)
                walk(getattr(value, f.name), at(f.name))
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, at(str(key)))
        elif isinstance(value, (list, tuple)) and any(
            dataclasses.is_dataclass(v) or isinstance(v, dict) for v in value
        ):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")

    walk(cfg, "")
    return out


def _as_tuples(value: Any) -> Any:
    """Python's `random` state with its lists (a checkpoint may give lists) as tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(_as_tuples(v) for v in value)
    return value


def checkpoint_value(value: Any, where: str) -> Any:
    """`value` in the types `torch.load(weights_only=True)` reads back: numbers, strings,
    bools, None, tensors, and lists/tuples/dicts of them; numpy arrays become tensors and numpy
    scalars Python numbers.

    Raises:
        ValueError: anything else, naming where it is (e.g. "infos['callback']").
    """
    if type(value).__module__ == "numpy":  # first: np.float64 is also a float
        import numpy as np

        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            return torch.from_numpy(np.ascontiguousarray(value))
        if isinstance(value, (np.bool_, np.integer, np.floating)):
            return value.item()
    elif value is None or type(value) in (bool, int, float, str) or isinstance(value, torch.Tensor):
        return value
    elif type(value) is dict:
        out = {}
        for k, v in value.items():
            key = checkpoint_value(k, f"{where} key {k!r}")
            if type(key) not in (bool, int, float, str):
                raise ValueError(f"{where} key {k!r} must be a string or a number.")
            out[key] = checkpoint_value(v, f"{where}[{k!r}]")
        return out
    elif type(value) in (list, tuple):
        items = [checkpoint_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return items if type(value) is list else tuple(items)
    raise ValueError(
        f"{where} is a {type(value).__name__}, which a checkpoint cannot hold (load reads "
        "weights only): use numbers, strings, tensors or numpy arrays, and lists/dicts of them."
    )


def _umask() -> int:
    """The process's umask, read from /proc (os.umask can only read it by changing it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _remove_stale_temp_files(folder: Path) -> None:
    """Remove temp files of saves whose process is gone (killed during a save); a save in
    progress in another live process keeps its file (its pid is in the name)."""
    for stale in folder.glob(".*.pt.*.tmp"):
        match = re.search(r"\.pt\.(\d+)\.", stale.name)
        pid = int(match.group(1)) if match else None
        if pid == os.getpid():
            continue  # another thread of this process may be saving
        if pid is not None:
            try:
                os.kill(pid, 0)
                continue  # alive: another process is saving
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
        stale.unlink(missing_ok=True)


_MLP_LAYER = re.compile(r"^(actor|critic)\.(\d+\..*)$")
_STD_KEYS = {"std": "distribution.std_param", "log_std": "distribution.log_std_param"}


def migrate_checkpoint(loaded: dict) -> dict:
    """Rewrite a pre-5.x rsl-rl checkpoint into the 5.x layout; 5.x checkpoints pass through.

    Pre-4.x (`model_state_dict`): `actor.N.*` / `critic.N.*` -> `mlp.N.*` of each model,
    `{actor,critic}_obs_normalizer.*` -> each model's `obs_normalizer.*`, `std` / `log_std` ->
    the actor's `distribution.std_param` / `distribution.log_std_param`. 4.x (`actor_state_dict`
    with `std` / `log_std`): the same std renaming. Keys of neither kind stay in the actor's dict
    under their old name, so a strict load names them. The input dict is not modified.

    Args:
        loaded: a checkpoint dict as `torch.load` returns it.

    Returns:
        The checkpoint in rsl-rl-lib 5.x layout.

    Raises:
        ValueError: a checkpoint with neither layout, naming the keys it has.
    """
    return _migrate(loaded)[0]


def _migrate(loaded: dict) -> tuple[dict, list[tuple[str, str]] | None]:
    """`migrate_checkpoint`, plus every model key as (model, new name) in the checkpoint's
    original order (the order of the old optimizer's parameters); None if nothing was renamed."""
    loaded = dict(loaded)
    order: list[tuple[str, str]] = []
    if "actor_state_dict" in loaded:
        if not any(key in _STD_KEYS for key in loaded["actor_state_dict"]):
            return loaded, None
        actor: dict[str, Any] = {}
        for key, value in loaded["actor_state_dict"].items():
            actor[_STD_KEYS.get(key, key)] = value
            order.append(("actor", _STD_KEYS.get(key, key)))
        order += [("critic", key) for key in loaded.get("critic_state_dict", {})]
        loaded["actor_state_dict"] = actor
        return loaded, order
    if "model_state_dict" not in loaded:
        raise ValueError(
            f"Not an rsl-rl checkpoint: expected 'actor_state_dict' (rsl-rl >= 4) or "
            f"'model_state_dict' (older), found keys {sorted(loaded)}."
        )
    models: dict[str, dict[str, Any]] = {"actor": {}, "critic": {}}
    for key, value in loaded.pop("model_state_dict").items():
        match = _MLP_LAYER.match(key)
        if match:
            model, new = match.group(1), f"mlp.{match.group(2)}"
        elif key.startswith(("actor_obs_normalizer.", "critic_obs_normalizer.")):
            prefix, rest = key.split(".", 1)
            model, new = prefix.removesuffix("_obs_normalizer"), f"obs_normalizer.{rest}"
        else:
            model, new = "actor", _STD_KEYS.get(key, key)
        models[model][new] = value
        order.append((model, new))
    loaded["actor_state_dict"] = models["actor"]
    loaded["critic_state_dict"] = models["critic"]
    return loaded, order


def _reindex_optimizer_state(
    state: dict, old_order: list[tuple[str, str]], new_order: list[tuple[str, str]]
) -> dict:
    """Optimizer state of a migrated checkpoint, re-indexed from the old parameter order (the
    parameters among `old_order`) to `new_order`. Returned unchanged when the parameters do not
    correspond one to one; the optimizer's own load then reports the mismatch."""
    new_index = {name: i for i, name in enumerate(new_order)}
    old_params = [name for name in old_order if name in new_index]
    groups = state.get("param_groups", [])
    n = len(new_order)
    if len(groups) != 1 or len(groups[0]["params"]) != n or len(old_params) != n:
        return state
    old_ids = groups[0]["params"]
    per_param = state.get("state", {})
    reindexed = {
        new_index[name]: per_param[old_id]
        for old_id, name in zip(old_ids, old_params, strict=True)
        if old_id in per_param
    }
    return {
        "state": reindexed,
        "param_groups": [{**groups[0], "params": list(range(len(new_order)))}],
    }


def motion_file_name(onnx_name: str) -> str:
    """The name of a tracking policy's motion file beside its ONNX file: `motion.npz` beside
    policy.onnx (what `train` writes), `<stem>_motion.npz` beside any other name, so that
    several exported files in one folder each keep theirs."""
    return "motion.npz" if onnx_name == "policy.onnx" else f"{Path(onnx_name).stem}_motion.npz"


def _save_motion_beside(env: Any, target: Path, content_hash: str) -> None:
    """Write a tracking task's reference motion to `target`, unless the file there already
    holds it (same content hash: `train` saves often): the robot side needs the very file the
    policy was trained on (its content hash is in the metadata), and a "synthetic:<clip>"
    motion exists only in memory otherwise. Another motion there is replaced."""
    for term in env.command_manager.terms.values():
        motion = getattr(term, "motion", None)
        if callable(getattr(term, "deployment_motion", None)) and hasattr(motion, "save"):
            if target.exists():
                try:
                    if type(motion).load(target).content_hash() == content_hash:
                        return
                except (OSError, ValueError):
                    pass  # damaged or not a motion: written again below
            motion.save(target)
            return
