"""Contact sensor over sets of bodies/geoms: contact found, net force, air and contact time."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import mujoco
import numpy as np
import torch

from mjlab.sensor.sensor_base import Sensor, SensorCfg, sensordata_slice
from mjlab.utils.config import Config
from mjlab.utils.env_ids import resolve_env_ids
from mjlab.utils.string import resolve_matching_names

_MODE_OBJ = {
    "body": mujoco.mjtObj.mjOBJ_BODY,
    "geom": mujoco.mjtObj.mjOBJ_GEOM,
    "subtree": mujoco.mjtObj.mjOBJ_XBODY,  # MuJoCo's contact sensor reads XBODY as "subtree"
}
# MuJoCo contact sensor (mjSENS_CONTACT) intprm: data bits (found=1, force=2), reduce, num.
_DATA_FOUND_FORCE = 1 | 2
_REDUCE_NETFORCE = 3


@dataclass(kw_only=True)
class ContactMatch(Config):
    """A set of objects on one side of a contact."""

    mode: Literal["body", "geom", "subtree"] = "body"
    """Match bodies, geoms, or whole subtrees (a body and its descendants)."""
    patterns: tuple[str, ...] | None = None
    """Regexes (full match) over the entity's (or scene's) names of that kind."""
    pattern: str | tuple[str, ...] | None = None
    """mjlab 1.6's name for `patterns` (one regex or several); give one of the two."""
    entity: str | None = "robot"
    """Entity whose objects are matched; None for scene-level objects (e.g. the "terrain" geom)."""
    exclude: str | tuple[str, ...] = ()
    """Regexes (full match) of names to leave out of what the patterns matched (one regex or
    several)."""

    def __post_init__(self) -> None:
        if (self.patterns is None) == (self.pattern is None):
            raise ValueError(
                "ContactMatch: give the names by exactly one of patterns (a tuple of regexes) "
                f"or pattern (mjlab 1.6), got patterns={self.patterns!r}, "
                f"pattern={self.pattern!r}."
            )
        if isinstance(self.patterns, str):
            raise ValueError(
                f"ContactMatch.patterns must be a tuple of regexes, e.g. ('{self.patterns}',)."
            )

    @property
    def regexes(self) -> tuple[str, ...]:
        """The name regexes, whichever field gave them."""
        given = self.patterns if self.patterns is not None else self.pattern
        return (given,) if isinstance(given, str) else tuple(given or ())

    def select(self, names: list[str], owner: str) -> list[str]:
        """The names (in their order) the regexes match, less the excluded ones.

        Raises:
            ValueError: a regex matches nothing (lists the names), or the exclusions leave
                nothing.
        """
        _, found = resolve_matching_names(self.regexes, names, what=self.mode, owner=owner)
        exclude = (self.exclude,) if isinstance(self.exclude, str) else tuple(self.exclude)
        kept = [n for n in found if not any(re.fullmatch(x, n) for x in exclude)]
        if not kept:
            raise ValueError(
                f"ContactMatch over {owner}: exclude={self.exclude!r} leaves none of {found}."
            )
        return kept


@dataclass(kw_only=True)
class ContactSensorCfg(SensorCfg):
    """One MuJoCo contact sensor per primary object, reducing its contacts (with the secondary
    set, or anything) to: found (bool) and net contact force (3, N)."""

    primary: ContactMatch
    """Objects whose contacts are measured; one slot per matched object, in name order."""
    secondary: ContactMatch | None = None
    """Only contacts with this set count; None: contacts with anything."""
    track_air_time: bool = True
    """Accumulate air time / contact time per slot (needed by feet-air-time rewards)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for side in (self.primary, self.secondary):
            if side is not None and side.mode not in _MODE_OBJ:
                raise ValueError(f"ContactMatch.mode '{side.mode}' not in {sorted(_MODE_OBJ)}.")

    def build(self) -> ContactSensor:
        return ContactSensor(self)


class ContactSensor(Sensor):
    """Contact state per slot (matched primary object).

    Times are accumulated as integer env-step counts and converted on read (count * dt), so a
    long episode has no float32 drift.
    """

    cfg: ContactSensorCfg

    def _names(self, match: ContactMatch, spec: mujoco.MjSpec, entities: dict) -> list[str]:
        if match.entity is None:
            objs = spec.geoms if match.mode == "geom" else spec.bodies
            names = [o.name for o in objs if o.name and "/" not in o.name]
            return match.select(names, "the scene")
        if match.entity not in entities:
            raise ValueError(f"Contact sensor '{self.name}': unknown entity '{match.entity}'.")
        ent = entities[match.entity]
        objs = ent.spec.geoms if match.mode == "geom" else ent.spec.bodies
        # After the scene attaches the entity, its spec's names carry the "<entity>/" prefix.
        prefix = f"{match.entity}/"
        names = [o.name.removeprefix(prefix) for o in objs if o.name]
        found = match.select(names, f"entity '{match.entity}'")
        return [f"{match.entity}/{n}" for n in found]

    def edit_spec(self, spec, entities) -> None:
        cfg = self.cfg
        self.slot_names = self._names(cfg.primary, spec, entities)
        ref_type, ref_names = mujoco.mjtObj.mjOBJ_UNKNOWN, [""]
        if cfg.secondary is not None:
            ref_names = self._names(cfg.secondary, spec, entities)
            if len(ref_names) != 1:
                raise ValueError(
                    f"Contact sensor '{self.name}': the secondary set must match exactly one object "
                    f"(MuJoCo contact sensors take one reference), got {ref_names}. Use mode='subtree'."
                )
            ref_type = _MODE_OBJ[cfg.secondary.mode]
        self._sensor_names = []
        for i, obj in enumerate(self.slot_names):
            sensor_name = f"{self.name}/{i}"
            spec.add_sensor(
                name=sensor_name,
                type=mujoco.mjtSensor.mjSENS_CONTACT,
                objtype=_MODE_OBJ[cfg.primary.mode],
                objname=obj,
                reftype=ref_type,
                refname=ref_names[0],
                intprm=[_DATA_FOUND_FORCE, _REDUCE_NETFORCE, 1],
            )
            self._sensor_names.append(sensor_name)

    def initialize(self, model, sim, scene) -> None:
        super().initialize(model, sim, scene)
        slices = [sensordata_slice(model, n) for n in self._sensor_names]
        n, b = self.num_envs, len(slices)
        # Each sensor writes [found, fx, fy, fz]. They are added one after another, so their
        # rows are normally one block of sensordata, read as a view; otherwise one gather.
        starts = [s.start for s in slices]
        self._rows_at: slice | torch.Tensor
        if b and starts == list(range(starts[0], starts[0] + 4 * b, 4)):
            self._rows_at = slice(starts[0], starts[0] + 4 * b)
        else:
            index = np.asarray(starts, dtype=np.int64)[:, None] + np.arange(4)
            self._rows_at = torch.as_tensor(index.reshape(-1), device=self.device)
        zeros = lambda: torch.zeros(n, b, dtype=torch.long, device=self.device)  # noqa: E731
        self._air_steps, self._contact_steps = zeros(), zeros()
        self._last_air_steps, self._last_contact_steps = zeros(), zeros()
        self._first_contact = torch.zeros(n, b, dtype=torch.bool, device=self.device)
        self._dt = 0.0

    @property
    def num_slots(self) -> int:
        return len(self.slot_names)

    def _rows(self) -> torch.Tensor:
        """(num_envs, num_slots, 4) [found, fx, fy, fz] of every slot, in sensordata's dtype."""
        rows = self.sim.data.columns("sensordata", self._rows_at)
        return rows.view(rows.shape[0], self.num_slots, 4)  # a C call (unflatten is Python)

    @property
    def found(self) -> torch.Tensor:
        """(num_envs, num_slots) bool: the slot touches (the secondary set) now."""
        return self._rows()[..., 0] > 0

    @property
    def force(self) -> torch.Tensor:
        """(num_envs, num_slots, 3) net contact force on each slot, N (MuJoCo contact sensor
        with reduce=netforce, world frame). A float32 copy."""
        return self._rows()[..., 1:].to(torch.float32, copy=True)

    def in_contact_above(self, threshold: float) -> torch.Tensor:
        """(num_envs, num_slots) bool: the slot touches with a net force above `threshold` N,
        compared as |force|^2 > threshold |threshold| in sensordata's dtype (float64 on C
        MuJoCo), so a negative threshold keeps every touching slot."""
        rows = self._rows()
        above = rows[..., 1:].square().sum(dim=-1) > threshold * abs(threshold)
        if threshold >= 0.0:
            # A slot that found nothing reports the net force of no contacts, exactly zero, so
            # the force test alone decides (three tensor operations fewer per call).
            return above
        return above & (rows[..., 0] > 0)

    def update(self, dt: float) -> None:
        if not self.cfg.track_air_time:
            return
        self._dt = dt
        contact = self.found
        was_air = self._air_steps > 0
        was_contact = self._contact_steps > 0
        self._first_contact = contact & was_air
        # On touchdown remember the flight; on lift-off remember the stance.
        self._last_air_steps = torch.where(
            self._first_contact, self._air_steps, self._last_air_steps
        )
        self._last_contact_steps = torch.where(
            ~contact & was_contact, self._contact_steps, self._last_contact_steps
        )
        self._air_steps = torch.where(contact, 0, self._air_steps + 1)
        self._contact_steps = torch.where(contact, self._contact_steps + 1, 0)

    def reset(self, env_ids) -> None:
        env_ids = resolve_env_ids(env_ids, self.num_envs, self.device)
        if not self.cfg.track_air_time:
            return
        for buf in (
            self._air_steps,
            self._contact_steps,
            self._last_air_steps,
            self._last_contact_steps,
        ):
            buf[env_ids] = 0
        self._first_contact[env_ids] = False

    def _seconds(self, steps: torch.Tensor) -> torch.Tensor:
        return steps.to(torch.float64).mul(self._dt).float()

    @property
    def current_air_time(self) -> torch.Tensor:
        """(num_envs, num_slots) time since the slot last lost contact, s (0 in contact)."""
        return self._seconds(self._air_steps)

    @property
    def current_contact_time(self) -> torch.Tensor:
        """(num_envs, num_slots) time in contact so far, s (0 in the air)."""
        return self._seconds(self._contact_steps)

    @property
    def last_air_time(self) -> torch.Tensor:
        """(num_envs, num_slots) duration of the last completed flight, s."""
        return self._seconds(self._last_air_steps)

    @property
    def last_contact_time(self) -> torch.Tensor:
        """(num_envs, num_slots) duration of the last completed stance, s."""
        return self._seconds(self._last_contact_steps)

    @property
    def first_contact(self) -> torch.Tensor:
        """(num_envs, num_slots) bool: touchdown happened in the last env step."""
        return self._first_contact
