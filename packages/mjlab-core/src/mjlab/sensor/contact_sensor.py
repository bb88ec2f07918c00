"""Contact sensor over sets of bodies/geoms: what touches, with which force, and for how long.

Each object matched by `ContactSensorCfg.primary` (a *primary*) gets one MuJoCo contact sensor
(`mjSENS_CONTACT`). MuJoCo gathers the contacts between that primary and the secondary object
(or anything), reduces them to `num_slots` contacts (`reduce`), and writes the requested
`fields` of each kept contact into `sensordata`. This module reads that block as torch views.

Shapes (B = num_envs, P = number of primaries, S = `ContactSensorCfg.num_slots`):

- `ContactSensor.data` (`ContactData`, mjlab 1.6's interface): per-contact fields have
  N = P * S rows, primary-major (primary `i` owns rows `i * S ... i * S + S - 1`); air and
  contact times are per primary (B, P); histories are (B, N, H[, 3]).
- The direct properties (`found`, `force`, `in_contact_above`, air times, `first_contact`)
  are per primary (B, P) and describe the net contact (`reduce="netforce"`, the default).

Sign convention (MuJoCo's): a contact's normal points from the primary to the other object,
and the force is the one the primary exerts on the other object, so the force on a foot
standing on flat ground reads (0, 0, -weight share).
"""

from __future__ import annotations

import re
import warnings
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

FIELD_DIMS = {
    "found": 1,
    "force": 3,
    "torque": 3,
    "dist": 1,
    "pos": 3,
    "normal": 3,
    "tangent": 3,
}
"""Contact fields MuJoCo's contact sensor can report, with their sizes, in the order it writes
them for each kept contact (bit `i` of the sensor's dataspec enables field `i`)."""

REDUCE_MODES = {"none": 0, "mindist": 1, "maxforce": 2, "netforce": 3}
"""`ContactSensorCfg.reduce` values and MuJoCo's codes for them (the sensor's second intprm)."""

_SECONDARY_POLICIES = ("first", "any", "error")
_HISTORY_FIELDS = ("force", "torque", "dist")


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
    """One MuJoCo contact sensor per primary object, reporting the contacts between it and the
    secondary object (or anything).

    The defaults reduce each primary's contacts to one net contact: `found` (number of
    contacts) and the net force (3, N, world frame). mjlab 1.6's fields (`fields`, `reduce`,
    `num_slots`, `secondary_policy`, `global_frame`, `history_length`, `debug`) ask for more;
    read them through `ContactSensor.data`.
    """

    primary: ContactMatch
    """Objects whose contacts are measured; one primary per matched object, in name order."""
    secondary: ContactMatch | None = None
    """Only contacts with this object count; None: contacts with anything. When the match
    names several objects, `secondary_policy` decides (a MuJoCo contact sensor takes one
    reference object; mode "subtree" covers a body and its descendants)."""
    fields: tuple[str, ...] = ("found", "force")
    """Contact quantities to report, any of (units, frames):

    - "found": number of matching contacts before the reduction (0: none).
    - "force", "torque": (3,) N and N m, in the contact frame (x along the normal, y the
      tangent, z = x cross y), or the world frame with reduce="netforce" or
      global_frame=True.
    - "dist": signed surface distance, m (negative: penetration).
    - "pos": (3,) contact point, world frame, m.
    - "normal", "tangent": (3,) unit contact-frame axes, world frame; the normal points from
      the primary to the other object.
    """
    reduce: Literal["none", "mindist", "maxforce", "netforce"] = "netforce"
    """How each primary's contacts become `num_slots` reported contacts: "none" (the first
    ones found, order not defined), "mindist" (smallest distance first), "maxforce" (largest
    force norm first), or "netforce" (one contact summing all of them, force and torque in the
    world frame; the other slots read 0). mjlab's default is
    "maxforce"; ours is "netforce", what the built-in tasks' policies were trained with."""
    num_slots: int = 1
    """Contacts reported per primary (>= 1); slots beyond the contacts found read 0. Not to
    be confused with the `ContactSensor.num_slots` property, the number of primaries."""
    secondary_policy: Literal["first", "any", "error"] = "first"
    """When `secondary` matches several objects: "first" keeps the first (name order) and warns,
    "any" drops the secondary filter (contacts with anything count), "error" raises. The whole
    ground is one object: the terrain body, `ContactMatch(mode="body", pattern="terrain",
    entity=None)`."""
    track_air_time: bool = True
    """Keep per-primary air and contact times (feet-air-time rewards); needs "found" in
    `fields`. mjlab's default is False."""
    global_frame: bool = False
    """Rotate force and torque from each contact's frame into the world frame; needs "normal"
    and "tangent" in `fields` (already so with reduce="netforce")."""
    history_length: int = 0
    """Keep the last `history_length` physics substeps of force, torque and dist (those in
    `fields`) in `ContactData.*_history`, index 0 the newest. Set it to the env's decimation to
    see every substep of a policy step (a contact that begins and ends between two policy steps
    included). 0: no history. Recording each substep makes the simulation step substep by
    substep (one backend call each instead of one per policy step)."""
    debug: bool = False
    """Print each MuJoCo contact sensor as it is added to the scene (object, reference, fields,
    reduce, slots), to check what the patterns matched."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid (also run when the env is
        built, so an edit after construction is checked too)."""
        name = type(self).__name__
        for side in (self.primary, self.secondary):
            if side is not None and side.mode not in _MODE_OBJ:
                raise ValueError(f"ContactMatch.mode '{side.mode}' not in {sorted(_MODE_OBJ)}.")
        if isinstance(self.fields, str):
            raise ValueError(
                f"{name}.fields must be a tuple, got the string {self.fields!r}; write "
                f"({self.fields!r},)."
            )
        fields = tuple(self.fields)
        bad = [f for f in fields if f not in FIELD_DIMS]
        if bad or not fields or len(set(fields)) != len(fields):
            raise ValueError(
                f"{name}.fields must be a non-empty tuple of distinct values from "
                f"{tuple(FIELD_DIMS)}, got {fields!r}."
            )
        if self.reduce not in REDUCE_MODES:
            raise ValueError(
                f"{name}.reduce must be one of {tuple(REDUCE_MODES)}, got {self.reduce!r}."
            )
        if isinstance(self.num_slots, bool) or not isinstance(self.num_slots, int):
            raise ValueError(f"{name}.num_slots must be an integer >= 1, got {self.num_slots!r}.")
        if self.num_slots < 1:
            raise ValueError(f"{name}.num_slots must be an integer >= 1, got {self.num_slots!r}.")
        if self.secondary_policy not in _SECONDARY_POLICIES:
            raise ValueError(
                f"{name}.secondary_policy must be one of {_SECONDARY_POLICIES}, got "
                f"{self.secondary_policy!r}."
            )
        if self.global_frame and self.reduce != "netforce":
            missing = [f for f in ("normal", "tangent") if f not in fields]
            if missing:
                raise ValueError(
                    f"{name}.global_frame=True rotates each contact's force/torque by its frame, "
                    f"so fields needs 'normal' and 'tangent' (missing {missing}); add them, or "
                    "use reduce='netforce' (already in the world frame)."
                )
        if self.track_air_time and "found" not in fields:
            raise ValueError(
                f"{name}.track_air_time=True needs 'found' in fields (got {fields!r}): add it, "
                "or set track_air_time=False."
            )
        h = self.history_length
        if isinstance(h, bool) or not isinstance(h, int) or h < 0:
            raise ValueError(f"{name}.history_length must be an integer >= 0, got {h!r}.")
        if h > 0 and not any(f in fields for f in _HISTORY_FIELDS):
            raise ValueError(
                f"{name}.history_length={h} records {_HISTORY_FIELDS}, none of which is in "
                f"fields {fields!r}: add one, or set history_length=0."
            )

    def build(self) -> ContactSensor:
        return ContactSensor(self)


@dataclass
class ContactData:
    """What a contact sensor reports (mjlab 1.6's `ContactData`); a field is None when not
    asked for (`ContactSensorCfg.fields`, `track_air_time`, `history_length`).

    B = num_envs, P = primaries, S = `ContactSensorCfg.num_slots`, N = P * S (primary-major:
    primary `i` owns rows `i * S ... i * S + S - 1`, see `ContactSensor.primary_names`),
    H = `history_length`. All float32, on the simulation's device.
    """

    found: torch.Tensor | None = None
    """(B, N) number of matching contacts before the reduction; 0: none (a slot beyond the
    contacts kept reads 0)."""
    force: torch.Tensor | None = None
    """(B, N, 3) force the primary exerts on the other object, N; contact frame, or world frame
    when reduce="netforce" or global_frame=True."""
    torque: torch.Tensor | None = None
    """(B, N, 3) torque, N m, same frame as `force`."""
    dist: torch.Tensor | None = None
    """(B, N) signed surface distance, m (negative: penetration)."""
    pos: torch.Tensor | None = None
    """(B, N, 3) contact point, world frame, m."""
    normal: torch.Tensor | None = None
    """(B, N, 3) contact normal, world frame, unit, from the primary to the other object."""
    tangent: torch.Tensor | None = None
    """(B, N, 3) first tangent axis of the contact frame, world frame, unit."""

    current_air_time: torch.Tensor | None = None
    """(B, P) time since the primary last touched, s (0 while touching)."""
    last_air_time: torch.Tensor | None = None
    """(B, P) duration of the primary's last completed flight, s."""
    current_contact_time: torch.Tensor | None = None
    """(B, P) time the primary has been touching, s (0 in the air)."""
    last_contact_time: torch.Tensor | None = None
    """(B, P) duration of the primary's last completed stance, s."""

    force_history: torch.Tensor | None = None
    """(B, N, H, 3) `force` of the last H physics substeps, index 0 the newest."""
    torque_history: torch.Tensor | None = None
    """(B, N, H, 3) `torque` of the last H physics substeps, index 0 the newest."""
    dist_history: torch.Tensor | None = None
    """(B, N, H) `dist` of the last H physics substeps, index 0 the newest."""


class ContactSensor(Sensor):
    """Contacts of each primary object.

    Two ways to read it:

    - `data` (`ContactData`): every requested field, per contact slot, as mjlab 1.6 returns it.
    - The direct properties, per primary: `found` (bool), `force` (net force, needs
      reduce="netforce"), `in_contact_above`, `current_air_time`, `last_air_time`,
      `current_contact_time`, `last_contact_time`, `first_contact`.

    Air and contact times advance once per `update` (one env step): they are counted as
    integer steps and converted on read (count * dt), so a long episode has no float32 drift.
    A primary is touching when its `found` count is > 0 (any of its slots). With
    track_air_time=False the time properties read 0.
    """

    cfg: ContactSensorCfg
    # The data cache (and its version key) is recomputed from the state on read; the row layout
    # never changes.
    _snapshot_exclude = ("_data_cache", "_data_key", "_offsets", "_width", "_version")

    def _names(
        self, match: ContactMatch, spec: mujoco.MjSpec, entities: dict, role: str
    ) -> list[str]:
        """Full names of what `match` selects; errors name this sensor and the role."""
        try:
            return self._select(match, spec, entities)
        except ValueError as err:
            raise ValueError(f"Contact sensor '{self.name}', {role}: {err}") from None

    def _select(self, match: ContactMatch, spec: mujoco.MjSpec, entities: dict) -> list[str]:
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

    def _secondary(self, spec: mujoco.MjSpec, entities: dict) -> tuple[mujoco.mjtObj, str]:
        """The MuJoCo reference (type, full name) of the secondary side; (UNKNOWN, "") for
        contacts with anything."""
        cfg = self.cfg
        if cfg.secondary is None or cfg.secondary_policy == "any":
            return mujoco.mjtObj.mjOBJ_UNKNOWN, ""
        ref_names = self._names(cfg.secondary, spec, entities, "secondary")
        if len(ref_names) > 1 and cfg.secondary_policy == "error":
            raise ValueError(
                f"Contact sensor '{self.name}': the secondary set must match exactly one object "
                f"(MuJoCo contact sensors take one reference), got {ref_names}. Use "
                "mode='subtree', or ContactSensorCfg.secondary_policy='first' (keep the first) "
                "or 'any' (no filter)."
            )
        if len(ref_names) > 1:
            warnings.warn(
                f"Contact sensor '{self.name}': the secondary set matches {len(ref_names)} "
                f"objects, but a MuJoCo contact sensor takes one reference, so only "
                f"'{ref_names[0]}' counts (secondary_policy='first'). Name one body instead "
                "(mode='body' or 'subtree'; the whole ground: ContactMatch(mode='body', "
                "pattern='terrain', entity=None)), or set secondary_policy='any' or 'error'.",
                stacklevel=2,
            )
        return _MODE_OBJ[cfg.secondary.mode], ref_names[0]

    def edit_spec(self, spec, entities) -> None:
        cfg = self.cfg
        self.slot_names = self._names(cfg.primary, spec, entities, "primary")
        ref_type, ref_name = self._secondary(spec, entities)
        # One sensor per primary reporting every requested field: MuJoCo writes, for each of
        # the num_slots kept contacts, the enabled fields in FIELD_DIMS order.
        dataspec = sum(1 << i for i, f in enumerate(FIELD_DIMS) if f in cfg.fields)
        intprm = [dataspec, REDUCE_MODES[cfg.reduce], cfg.num_slots]
        self._sensor_names = []
        for i, obj in enumerate(self.slot_names):
            sensor_name = f"{self.name}/{i}"
            spec.add_sensor(
                name=sensor_name,
                type=mujoco.mjtSensor.mjSENS_CONTACT,
                objtype=_MODE_OBJ[cfg.primary.mode],
                objname=obj,
                reftype=ref_type,
                refname=ref_name,
                intprm=intprm,
            )
            self._sensor_names.append(sensor_name)
            if cfg.debug:
                ref = f"{cfg.secondary.mode} '{ref_name}'" if ref_name else "anything"
                print(
                    f"[ContactSensor '{self.name}'] MuJoCo sensor '{sensor_name}': "
                    f"{cfg.primary.mode} '{obj}' against {ref}; fields {cfg.fields} "
                    f"(dataspec 0b{dataspec:07b}), reduce '{cfg.reduce}', {cfg.num_slots} slot(s)"
                )

    def initialize(self, model, sim, scene) -> None:
        super().initialize(model, sim, scene)
        cfg = self.cfg
        # Layout of one kept contact (a row): the requested fields in MuJoCo's order.
        self._offsets: dict[str, int] = {}
        width = 0
        for f, dim in FIELD_DIMS.items():
            if f in cfg.fields:
                self._offsets[f] = width
                width += dim
        self._width = width
        per_primary = cfg.num_slots * width
        slices = [sensordata_slice(model, n) for n in self._sensor_names]
        n, b = self.num_envs, len(slices)
        # The sensors are added one after another, so their rows are normally one block of
        # sensordata, read as a view; otherwise one gather.
        starts = [s.start for s in slices]
        self._rows_at: slice | torch.Tensor
        if b and starts == list(range(starts[0], starts[0] + per_primary * b, per_primary)):
            self._rows_at = slice(starts[0], starts[0] + per_primary * b)
        else:
            index = np.asarray(starts, dtype=np.int64)[:, None] + np.arange(per_primary)
            self._rows_at = torch.as_tensor(index.reshape(-1), device=self.device)
        zeros = lambda: torch.zeros(n, b, dtype=torch.long, device=self.device)  # noqa: E731
        self._air_steps, self._contact_steps = zeros(), zeros()
        self._last_air_steps, self._last_contact_steps = zeros(), zeros()
        self._first_contact = torch.zeros(n, b, dtype=torch.bool, device=self.device)
        self._dt = 0.0
        self._history: dict[str, torch.Tensor] = {}
        for f in _HISTORY_FIELDS:
            if cfg.history_length > 0 and f in cfg.fields:
                shape = (n, b * cfg.num_slots, cfg.history_length, *_trailing(f))
                self._history[f] = torch.zeros(shape, dtype=torch.float32, device=self.device)
        # A substep whose contacts are in sensordata but not yet in the history.
        self._substep_unrecorded = False
        if self._history:
            sim.pre_substep_hooks.append(self._before_substep)
        self._version = 0  # bumped by update / reset: keys the `data` cache
        self._data_key = None
        self._data_cache: ContactData | None = None

    @property
    def num_slots(self) -> int:
        """Number of primaries P (one MuJoCo sensor each). The contacts reported per primary
        are `cfg.num_slots`."""
        return len(self.slot_names)

    @property
    def primary_names(self) -> list[str]:
        """The primaries in the order of the per-primary axis P (mjlab 1.6): names inside
        their entity (no "<entity>/" prefix). `slot_names` holds the full scene names."""
        entity = self.cfg.primary.entity
        prefix = f"{entity}/" if entity else ""
        return [s.removeprefix(prefix) for s in self.slot_names]

    def _rows(self) -> torch.Tensor:
        """(num_envs, P, num_slots * row width) this sensor's sensordata, in its dtype (with
        the defaults one row per primary: [found, fx, fy, fz])."""
        rows = self.sim.data.columns("sensordata", self._rows_at)
        return rows.view(rows.shape[0], self.num_slots, -1)  # a C call (unflatten is Python)

    def _require(self, *fields: str, netforce: bool = False, what: str) -> None:
        missing = [f for f in fields if f not in self.cfg.fields]
        if missing:
            raise ValueError(
                f"Contact sensor '{self.name}': {what} needs {missing} in ContactSensorCfg.fields "
                f"(it has {self.cfg.fields}); add them."
            )
        if netforce and self.cfg.reduce != "netforce":
            raise ValueError(
                f"Contact sensor '{self.name}': {what} is the net contact force, reported only "
                f"with ContactSensorCfg.reduce='netforce' (this one: '{self.cfg.reduce}'). Read "
                "`data.force` (per contact slot) instead, or set reduce='netforce'."
            )

    @property
    def found(self) -> torch.Tensor:
        """(num_envs, P) bool: the primary touches (the secondary object) now. Needs "found"
        in fields."""
        if "found" not in self._offsets:
            self._require("found", what="`found`")
        # The first slot's count is the number of contacts found, 0 when none.
        return self._rows()[..., self._offsets["found"]] > 0

    @property
    def force(self) -> torch.Tensor:
        """(num_envs, P, 3) net contact force of each primary, N, world frame (MuJoCo contact
        sensor with reduce="netforce"). A float32 copy."""
        if "force" not in self._offsets or self.cfg.reduce != "netforce":
            self._require("force", netforce=True, what="`force`")
        at = self._offsets["force"]
        return self._rows()[..., at : at + 3].to(torch.float32, copy=True)

    def in_contact_above(self, threshold: float) -> torch.Tensor:
        """(num_envs, P) bool: the primary touches with a net force above `threshold` N,
        compared as |force|^2 > threshold |threshold| in sensordata's dtype (float64 on C
        MuJoCo), so a negative threshold keeps every touching primary. Needs "found" and
        "force" in fields and reduce="netforce"."""
        offsets = self._offsets
        if "force" not in offsets or "found" not in offsets or self.cfg.reduce != "netforce":
            self._require("found", "force", netforce=True, what="`in_contact_above`")
        rows = self._rows()
        at = offsets["force"]
        above = rows[..., at : at + 3].square().sum(dim=-1) > threshold * abs(threshold)
        if threshold >= 0.0:
            # A primary that found nothing reports the net force of no contacts, exactly zero,
            # so the force test alone decides (three tensor operations fewer per call).
            return above
        return above & (rows[..., offsets["found"]] > 0)

    # ------------------------------------------------------------------------------------------
    # mjlab 1.6: ContactData

    def _contacts(self, names) -> dict[str, torch.Tensor]:
        """The fields `names` (requested ones only) of every contact slot, float32 (B, N, ...),
        force/torque rotated to the world frame when `global_frame` asks for it."""
        cfg = self.cfg
        rows = self._rows()
        rows = rows.view(rows.shape[0], -1, self._width)  # (B, N, width)
        wanted = set(names)
        rotate = cfg.global_frame and cfg.reduce != "netforce"
        if rotate and wanted & {"force", "torque"}:
            wanted |= {"normal", "tangent"}
        out = {}
        for f in FIELD_DIMS:
            if f in wanted and f in self._offsets:
                at, dim = self._offsets[f], FIELD_DIMS[f]
                value = rows[..., at : at + dim].to(torch.float32, copy=True)
                out[f] = value.squeeze(-1) if dim == 1 else value
        if rotate:
            normal, tangent = out["normal"], out["tangent"]
            # Columns: the contact frame's axes in the world (x normal, y tangent, z = x cross y).
            frame = torch.stack((normal, tangent, torch.linalg.cross(normal, tangent)), dim=-1)
            touching = normal.square().sum(dim=-1, keepdim=True) > 0  # empty slots stay zero
            for f in ("force", "torque"):
                if f in out:
                    world = (frame @ out[f].unsqueeze(-1)).squeeze(-1)
                    out[f] = torch.where(touching, world, out[f])
        return out

    @property
    def data(self) -> ContactData:
        """Everything this sensor reports, as mjlab 1.6's `ContactData` (see it for shapes,
        units and frames). Fields not asked for are None. Computed on the first read after the
        physics state changed or after `update` / `reset`; later reads return the same
        tensors, so `.clone()` before writing into them."""
        key = (self.sim.state_count, self._version, torch.is_inference_mode_enabled())
        if self._data_key == key and self._data_cache is not None:
            return self._data_cache
        out = ContactData(**self._contacts(self.cfg.fields))
        if self.cfg.track_air_time:
            out.current_air_time = self.current_air_time
            out.last_air_time = self.last_air_time
            out.current_contact_time = self.current_contact_time
            out.last_contact_time = self.last_contact_time
        for f, buf in self._history.items():
            setattr(out, f"{f}_history", buf)
        self._data_cache, self._data_key = out, key
        return out

    def _record_history(self) -> None:
        """Push the contacts now in sensordata (the last physics substep) into the history."""
        values = self._contacts(self._history)
        for f, buf in self._history.items():
            buf[:, :, 1:] = buf[:, :, :-1].clone()
            buf[:, :, 0] = values[f]
        self._substep_unrecorded = False

    def _before_substep(self) -> None:
        # Runs before each physics substep (Simulation.pre_substep_hooks): sensordata still
        # holds the previous substep's contacts. The last substep of a policy step is recorded
        # by `update`; the first substep after it finds nothing new.
        if self._substep_unrecorded:
            self._record_history()
        self._substep_unrecorded = True

    def update(self, dt: float) -> None:
        self._version += 1
        if self._history and self._substep_unrecorded:
            self._record_history()
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
        self._version += 1
        for buf in self._history.values():
            buf[env_ids] = 0.0
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

    def _require_air_time(self, what: str) -> None:
        if not self.cfg.track_air_time:
            raise ValueError(
                f"Contact sensor '{self.name}': {what} needs ContactSensorCfg.track_air_time=True."
            )

    @property
    def current_air_time(self) -> torch.Tensor:
        """(num_envs, P) time since the primary last lost contact, s (0 in contact)."""
        return self._seconds(self._air_steps)

    @property
    def current_contact_time(self) -> torch.Tensor:
        """(num_envs, P) time in contact so far, s (0 in the air)."""
        return self._seconds(self._contact_steps)

    @property
    def last_air_time(self) -> torch.Tensor:
        """(num_envs, P) duration of the last completed flight, s."""
        return self._seconds(self._last_air_steps)

    @property
    def last_contact_time(self) -> torch.Tensor:
        """(num_envs, P) duration of the last completed stance, s."""
        return self._seconds(self._last_contact_steps)

    @property
    def first_contact(self) -> torch.Tensor:
        """(num_envs, P) bool: touchdown happened in the last env step."""
        return self._first_contact

    def compute_first_contact(self, dt: float, abs_tol: float = 1.0e-6) -> torch.Tensor:
        """(num_envs, P) bool: the primary has been touching for at most `dt` (+ `abs_tol`)
        seconds, i.e. it landed within the last `dt` s (mjlab 1.6). Needs track_air_time."""
        self._require_air_time("compute_first_contact")
        time = self.current_contact_time
        return (time > 0.0) & (time < dt + abs_tol)

    def compute_first_air(self, dt: float, abs_tol: float = 1.0e-6) -> torch.Tensor:
        """(num_envs, P) bool: the primary has been in the air for at most `dt` (+ `abs_tol`)
        seconds, i.e. it lifted off within the last `dt` s (mjlab 1.6). Needs track_air_time."""
        self._require_air_time("compute_first_air")
        time = self.current_air_time
        return (time > 0.0) & (time < dt + abs_tol)


def _trailing(field: str) -> tuple[int, ...]:
    return (3,) if FIELD_DIMS[field] == 3 else ()
