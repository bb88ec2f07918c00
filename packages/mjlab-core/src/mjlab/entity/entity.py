"""`Entity`: one robot or object of a scene, its MjSpec edits and its named torch views."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import mujoco
import numpy as np
import torch

from mjlab.actuator import (
    BuiltinActuatorGroup,
    CommandField,
    FusedActuatorGroup,
    XmlActuatorCfg,
)
from mjlab.entity.entity_cfg import TERRAIN, EntityCfg
from mjlab.entity.indexing import EntityIndexing
from mjlab.utils.env_ids import resolve_env_ids
from mjlab.utils.math import heading_from_quat, projected_gravity, quat_apply, quat_apply_inverse
from mjlab.utils.spec_config import SPEC_EDITOR_FIELDS
from mjlab.utils.string import resolve_matching_names, resolve_matching_values

_FREE = mujoco.mjtJoint.mjJNT_FREE
_TRN_JOINT = mujoco.mjtTrn.mjTRN_JOINT


class Entity:
    """One entity of a scene.

    Lifecycle: constructed from its config (loads and edits its own MjSpec: collisions,
    actuators), attached by the scene under the prefix "<name>/", then `initialize`d against the
    compiled model and the simulation, after which `entity.data` gives torch views.

    Joint order everywhere is the model's joint order (depth-first body order), free joint
    excluded; `joint_names` are the MJCF names without the scene prefix.
    """

    # Index lookups, not state; `fused_actuators` repeats `actuators` (recorded there).
    _snapshot_exclude = ("_ctrl_cols_cache", "_ctrl_sel", "fused_actuators", "_target_cols_cache")

    def __init__(self, cfg: EntityCfg, name: str = "entity"):
        self.cfg = cfg
        self.name = name
        try:
            spec = cfg.spec_fn()
        except Exception as err:  # MuJoCo's XML errors, a missing file, a failed download
            raise ValueError(
                f"Entity '{name}': its spec_fn could not load the model: {err}"
            ) from err
        if not isinstance(spec, mujoco.MjSpec):
            raise TypeError(f"Entity '{name}': spec_fn returned {type(spec)}, not a mujoco.MjSpec.")
        self.spec = spec
        self.terrain_pairs: list[dict] = []
        """Contact pairs of this entity with the scene's terrain, as `MjSpec.add_pair` keyword
        arguments with the entity's own (unprefixed) geom name in "geomname1"; the scene adds
        them once it knows its terrain geom."""
        self._remove_ground()
        self._apply_spec_editors()
        self._edit_collisions()
        self._add_contact_pairs()
        self._edit_actuators()

    # -- spec edits -----------------------------------------------------------------------------
    def _remove_ground(self) -> None:
        """Delete `cfg.ground_geoms` and move the `<pair>`s that name them to `terrain_pairs`."""
        ground = set(self.cfg.ground_geoms)
        if not ground:
            return
        spec = self.spec
        world = {g.name: g for g in spec.worldbody.geoms if g.name}
        for name in sorted(ground - set(world)):
            where = (
                "a geom of a body, not of the worldbody (a robot part cannot be the ground)"
                if any(g.name == name for g in spec.geoms)
                else "not a geom of its MJCF"
            )
            raise ValueError(
                f"Entity '{self.name}': EntityCfg.ground_geoms names '{name}', which is {where}. "
                f"Named worldbody geoms: {sorted(world)}."
            )
        for pair in list(spec.pairs):
            g1, g2 = pair.geomname1, pair.geomname2
            if not (g1 in ground or g2 in ground):
                continue
            own = g2 if g1 in ground else g1
            name = pair.name or f"{own}_terrain"
            params = {
                "condim": int(pair.condim),
                "friction": [float(v) for v in pair.friction],
                "solref": [float(v) for v in pair.solref],
                "solreffriction": [float(v) for v in pair.solreffriction],
                "solimp": [float(v) for v in pair.solimp],
                "margin": float(pair.margin),
                "gap": float(pair.gap),
            }
            spec.delete(pair)
            if own not in ground:
                self._set_terrain_pair(own, name, params)
        materials = {world[n].material for n in ground} - {""}
        for name in ground:
            spec.delete(world[name])
        # The ground's own material (and its textures) and a skybox belong to the scene. A
        # material that something else still uses stays.
        still_used = {
            o.material for objs in (spec.geoms, spec.sites, spec.tendons, spec.skins) for o in objs
        }
        textures: set[str] = set()
        for mat in list(spec.materials):
            if mat.name in materials and mat.name not in still_used:
                textures |= {t for t in mat.textures if t}
                spec.delete(mat)
        textures -= {t for mat in spec.materials for t in mat.textures if t}
        for tex in list(spec.textures):
            if tex.type == mujoco.mjtTexture.mjTEXTURE_SKYBOX or tex.name in textures:
                spec.delete(tex)

    def _apply_spec_editors(self) -> None:
        """`cfg.lights`, `cameras`, `textures`, `materials`, `meshes`, `geoms`, in that order
        (a material may name a texture added just before)."""
        owner = f"Entity '{self.name}'"
        for field_name in SPEC_EDITOR_FIELDS:
            for editor in getattr(self.cfg, field_name):
                editor.edit_spec(self.spec, owner)

    def _set_terrain_pair(self, geom: str, name: str, params: dict) -> None:
        """One terrain pair per geom: a later setting replaces an earlier one's parameters."""
        for pair in self.terrain_pairs:
            if pair["geomname1"] == geom:
                pair.update(params)
                return
        taken = {p["name"] for p in self.terrain_pairs} | {p.name for p in self.spec.pairs}
        unique, k = name, 1
        while unique in taken:
            unique, k = f"{name}_{k}", k + 1
        self.terrain_pairs.append({"name": unique, "geomname1": geom, **params})

    def _add_contact_pairs(self) -> None:
        """`cfg.contact_pairs`, in order: terrain pairs are kept for the scene, pairs between
        own geoms go into the spec. A pair for two geoms that already have one (from the MJCF,
        `ground_geoms` or an earlier config) replaces its parameters instead of doubling it."""
        names = [g.name for g in self.spec.geoms if g.name]
        for k, c in enumerate(self.cfg.contact_pairs):
            owner = f"entity '{self.name}' (EntityCfg.contact_pairs[{k}])"
            _, first = resolve_matching_names(c.geom1, names, what="geom", owner=owner)
            params = {
                "condim": c.condim,
                "friction": list(c.friction),
                "solref": list(c.solref),
                "solimp": list(c.solimp),
                "margin": c.margin,
                "gap": c.gap,
            }
            if c.geom2 == TERRAIN:
                for g in first:
                    self._set_terrain_pair(g, f"{g}_terrain", params)
                continue
            _, second = resolve_matching_names(c.geom2, names, what="geom", owner=owner)
            existing = {frozenset((p.geomname1, p.geomname2)): p for p in self.spec.pairs}
            for a in first:
                for b in second:
                    key = frozenset((a, b))
                    if a == b:
                        continue
                    pair = existing.get(key)
                    if pair is None:
                        pair = existing[key] = self.spec.add_pair(
                            name=f"pair{k}_{a}_{b}", geomname1=a, geomname2=b
                        )
                    for attr, value in params.items():
                        setattr(pair, attr, value)

    def _edit_collisions(self) -> None:
        geoms = list(self.spec.geoms)
        names = [g.name for g in geoms]
        for c in self.cfg.collisions:
            ids, _ = resolve_matching_names(
                c.geom_names_expr, names, what="geom", owner=f"entity '{self.name}'"
            )
            selected = set(ids)
            for i, geom in enumerate(geoms):
                if i not in selected:
                    if c.disable_other_geoms:
                        geom.contype, geom.conaffinity = 0, 0
                    continue
                for attr in ("contype", "conaffinity", "condim", "priority"):
                    if getattr(c, attr) is not None:
                        setattr(geom, attr, getattr(c, attr))
                if c.friction is not None:
                    geom.friction[: len(c.friction)] = c.friction
                if c.solref is not None:
                    geom.solref = list(c.solref)
                if c.solimp is not None:
                    geom.solimp[: len(c.solimp)] = c.solimp

    def _edit_actuators(self) -> None:
        self.actuators: list = []
        """Runtime `mjlab.actuator.Actuator`s in config order, each with the joints it finally
        owns: where configs overlap, the last config selecting a joint owns it (as its actuator
        replaces the earlier ones in the spec); a config left with no joint gets no runtime."""
        if self.cfg.articulation is None:
            return
        joints = [j for j in self.spec.joints if j.type != _FREE]
        names = [j.name for j in joints]
        selections = []
        final: dict[int, int] = {}  # joint -> index of the last config selecting it
        for k, act_cfg in enumerate(self.cfg.articulation.actuators):
            ids, sel = resolve_matching_names(
                act_cfg.names_expr, names, what="joint", owner=f"entity '{self.name}'"
            )
            selections.append((ids, sel))
            for i in ids:
                final[i] = k
        owner: dict[int, tuple] = {}  # joint -> (cfg, index in cfg, values)
        for k, (act_cfg, (ids, sel)) in enumerate(
            zip(self.cfg.articulation.actuators, selections, strict=True)
        ):
            keep = [p for p, i in enumerate(ids) if final[i] == k]
            if keep:
                runtime = act_cfg.build(ids, sel)
                runtime.restrict(keep)
                self.actuators.append(runtime)
            if not self.cfg.sort_actuators or isinstance(act_cfg, XmlActuatorCfg):
                act_cfg.apply(self.spec, [joints[i] for i in ids])
                continue
            # Sorted: delete now, add every configured actuator below in joint order.
            act_cfg.remove_existing(self.spec, [joints[i] for i in ids])
            values = act_cfg._per_joint(sel)
            for p, i in enumerate(ids):
                owner[i] = (act_cfg, p, values)
        for i in sorted(owner):
            act_cfg, p, values = owner[i]
            act_cfg.add_one(self.spec, joints[i], p, values)

    # -- after compile ---------------------------------------------------------------------------
    def initialize(
        self,
        model: mujoco.MjModel,
        sim,
        env_origins: torch.Tensor,
        generator: torch.Generator | None = None,
    ) -> None:
        """Resolve this entity's ids in the compiled scene model and bind the views.

        Args:
            model: the compiled scene model (entity names carry the "<name>/" prefix).
            sim: the `mjlab.sim.Simulation` running it.
            env_origins: (num_envs, 3) world positions of the env origins, m.
            generator: the env's torch generator (`env.rng`), for the actuators' random delays;
                None: each delayed actuator uses a private generator seeded with 0 (torch's
                global generator is never drawn from).
        """
        prefix = f"{self.name}/"
        self.sim = sim
        self.device = sim.device
        self.num_envs = sim.num_envs

        def ours(obj: mujoco.mjtObj, count: int) -> tuple[list[int], list[str]]:
            ids, names = [], []
            for i in range(count):
                full = mujoco.mj_id2name(model, obj, i) or ""
                if full.startswith(prefix):
                    ids.append(i)
                    names.append(full[len(prefix) :])
            return ids, names

        self.body_ids_global, self.body_names = ours(mujoco.mjtObj.mjOBJ_BODY, model.nbody)
        if not self.body_ids_global:
            raise ValueError(f"Entity '{self.name}' has no bodies in the compiled model.")
        root = self.body_ids_global[0]
        # Geoms, sites and joints by owning body: many are unnamed (name "").
        body_set = set(self.body_ids_global)

        def owned(
            obj: mujoco.mjtObj, count: int, body_of: np.ndarray
        ) -> tuple[list[int], list[str]]:
            ids = [i for i in range(count) if int(body_of[i]) in body_set]
            return ids, [(mujoco.mj_id2name(model, obj, i) or "").removeprefix(prefix) for i in ids]

        self.geom_ids_global, self.geom_names = owned(
            mujoco.mjtObj.mjOBJ_GEOM, model.ngeom, model.geom_bodyid
        )
        self.site_ids_global, self.site_names = owned(
            mujoco.mjtObj.mjOBJ_SITE, model.nsite, model.site_bodyid
        )

        # Cameras and lights: by owning body, or by name prefix for those on the entity's
        # worldbody (they compile onto the world body, which no entity owns).
        def owned_or_named(
            obj: mujoco.mjtObj, count: int, body_of: np.ndarray
        ) -> tuple[list[int], list[str]]:
            ids, names = [], []
            for i in range(count):
                full = mujoco.mj_id2name(model, obj, i) or ""
                if int(body_of[i]) in body_set or full.startswith(prefix):
                    ids.append(i)
                    names.append(full.removeprefix(prefix))
            return ids, names

        self.camera_ids_global, self.camera_names = owned_or_named(
            mujoco.mjtObj.mjOBJ_CAMERA, model.ncam, model.cam_bodyid
        )
        self.light_ids_global, self.light_names = owned_or_named(
            mujoco.mjtObj.mjOBJ_LIGHT, model.nlight, model.light_bodyid
        )
        # Tendons, materials and contact pairs have no owning body: matched by name prefix.
        self.tendon_ids_global, self.tendon_names = ours(mujoco.mjtObj.mjOBJ_TENDON, model.ntendon)
        self.material_ids_global, self.material_names = ours(
            mujoco.mjtObj.mjOBJ_MATERIAL, model.nmat
        )
        self.pair_ids_global, self.pair_names = ours(mujoco.mjtObj.mjOBJ_PAIR, model.npair)
        self.texture_ids_global, self.texture_names = ours(mujoco.mjtObj.mjOBJ_TEXTURE, model.ntex)
        joint_ids = [j for j in range(model.njnt) if int(model.jnt_bodyid[j]) in body_set]
        joint_names = [
            (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or "").removeprefix(prefix)
            for j in joint_ids
        ]
        free = [j for j in joint_ids if model.jnt_type[j] == _FREE]
        self.is_fixed_base = not free
        self.joint_ids_global = [j for j in joint_ids if model.jnt_type[j] != _FREE]
        self.joint_names = [
            n for j, n in zip(joint_ids, joint_names, strict=True) if model.jnt_type[j] != _FREE
        ]
        nj = len(self.joint_ids_global)
        jids = np.array(self.joint_ids_global, dtype=np.int64)
        self._qpos_adr = torch.as_tensor(model.jnt_qposadr[jids], device=self.device)
        self._dof_adr = torch.as_tensor(model.jnt_dofadr[jids], device=self.device)
        # Reads: a slice (a view, no gather) where the addresses are contiguous, as for every
        # robot whose joints are all hinges or slides.
        self._qpos_sel = _as_slice(model.jnt_qposadr[jids], self._qpos_adr)
        self._dof_sel = _as_slice(model.jnt_dofadr[jids], self._dof_adr)
        if free:
            qadr, dadr = int(model.jnt_qposadr[free[0]]), int(model.jnt_dofadr[free[0]])
            self._root_qpos = slice(qadr, qadr + 7)
            self._root_qvel = slice(dadr, dadr + 6)
        self._root_body = root
        self._body_ids = torch.as_tensor(self.body_ids_global, device=self.device)

        # One actuator per joint at most, found by transmission (never by declaration order).
        act_for_joint = np.full(nj, -1, dtype=np.int64)
        joint_index = {j: i for i, j in enumerate(self.joint_ids_global)}
        for a in range(model.nu):
            if (
                model.actuator_trntype[a] == _TRN_JOINT
                and model.actuator_trnid[a, 0] in joint_index
            ):
                act_for_joint[joint_index[model.actuator_trnid[a, 0]]] = a
        self.joint_actuator_ids = act_for_joint
        """(num_joints,) actuator id driving each joint, -1 where none."""
        self.actuated_joint_ids = np.nonzero(act_for_joint >= 0)[0]
        self.actuator_names = [self.joint_names[j] for j in self.actuated_joint_ids]
        """Names of the actuated joints, in joint order (actions select actuators by these)."""
        self._ctrl_ids = torch.as_tensor(act_for_joint[self.actuated_joint_ids], device=self.device)
        self._ctrl_sel = _as_slice(act_for_joint[self.actuated_joint_ids], self._ctrl_ids)
        self._ctrl_cols_cache: dict[tuple[int, ...], tuple[torch.Tensor, slice | torch.Tensor]] = {}
        self._init_actuators(act_for_joint, generator)
        self.indexing = self._make_indexing(model, free)
        """mjlab 1.6's `EntityIndexing` of this entity."""

        self.data = EntityData(self, model, env_origins)

    def _make_indexing(self, model: mujoco.MjModel, free: list[int]) -> EntityIndexing:
        spec = self.spec

        def ids(values) -> torch.Tensor:
            return torch.as_tensor(list(values), dtype=torch.long, device=self.device)

        free_q = free_v = ids([])
        if free:
            q0, v0 = int(model.jnt_qposadr[free[0]]), int(model.jnt_dofadr[free[0]])
            free_q, free_v = ids(range(q0, q0 + 7)), ids(range(v0, v0 + 6))
        mocap = int(model.body_mocapid[self._root_body])
        return EntityIndexing(
            bodies=tuple(b for b in spec.bodies if b != spec.worldbody),
            joints=tuple(j for j in spec.joints if j.type != mujoco.mjtJoint.mjJNT_FREE),
            geoms=tuple(spec.geoms),
            sites=tuple(spec.sites),
            tendons=tuple(spec.tendons),
            cameras=tuple(spec.cameras),
            lights=tuple(spec.lights),
            materials=tuple(spec.materials),
            textures=tuple(spec.textures),
            pairs=tuple(spec.pairs),
            actuators=tuple(spec.actuators),
            body_ids=ids(self.body_ids_global),
            geom_ids=ids(self.geom_ids_global),
            site_ids=ids(self.site_ids_global),
            tendon_ids=ids(self.tendon_ids_global),
            cam_ids=ids(self.camera_ids_global),
            light_ids=ids(self.light_ids_global),
            mat_ids=ids(self.material_ids_global),
            tex_ids=ids(self.texture_ids_global),
            pair_ids=ids(self.pair_ids_global),
            ctrl_ids=ids(
                mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a.name) if a.name else -1
                for a in spec.actuators
            ),
            joint_ids=ids(self.joint_ids_global),
            mocap_id=None if mocap < 0 else mocap,
            joint_q_adr=self._qpos_adr.clone(),
            joint_v_adr=self._dof_adr.clone(),
            free_joint_q_adr=free_q,
            free_joint_v_adr=free_v,
        )

    def _init_actuators(self, act_for_joint: np.ndarray, generator: torch.Generator | None) -> None:
        for act in self.actuators:
            ctrl = act_for_joint[np.asarray(act.joint_ids, dtype=np.int64)]
            if (ctrl < 0).any():
                raise ValueError(
                    f"Entity '{self.name}': actuator config {type(act.cfg).__name__} selects "
                    "joints with no actuator in the compiled model."
                )
            act.initialize(ctrl, self.num_envs, self.device, generator)
        direct: dict[str, tuple[list[int], list[int]]] = {f.value: ([], []) for f in CommandField}
        for act in self.actuators:
            if not act.needs_substep:
                joints, ctrl = direct[act.cfg.target_field().value]
                joints.extend(act.joint_ids)
                ctrl.extend(int(c) for c in act.ctrl_ids.tolist())
        self.builtin_actuators = BuiltinActuatorGroup(
            **{k: (tuple(j), tuple(c)) for k, (j, c) in direct.items()}
        )
        """Configured builtin actuators without delay, by command field."""
        managed = tuple(a for a in self.actuators if a.needs_substep)
        self.fused_actuators = FusedActuatorGroup(actuators=managed)
        """Actuators whose ctrl is computed before every physics step (explicit or delayed)."""
        self._targets: torch.Tensor | None = None
        self._target_cols_cache: dict[tuple[int, ...] | None, torch.Tensor] = {}
        if managed:
            # (num_envs, 3, num_joints): position, velocity and effort targets of every joint.
            self._targets = torch.zeros(self.num_envs, 3, len(self.joint_names), device=self.device)
            self.sim.pre_substep_hooks.append(self._pre_substep)

    def _pre_substep(self) -> None:
        """Compute the ctrl of the explicit/delayed actuators from the targets and the state."""
        pos = self.sim.data.columns("qpos", self._qpos_sel).float()
        vel = self.sim.data.columns("qvel", self._dof_sel).float()
        ctrl = self.sim.data.ctrl
        for act in self.fused_actuators.actuators:  # one batched call per actuator config
            act.substep(self._targets, pos, vel, ctrl)

    # -- selection --------------------------------------------------------------------------------
    def find_joints(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Joint indices (entity joint order) and names matching the regexes.

        Raises:
            ValueError: a regex matches no joint; lists the entity's joints.
        """
        return resolve_matching_names(
            names, self.joint_names, what="joint", owner=f"entity '{self.name}'"
        )

    def find_bodies(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Body indices (entity body order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.body_names, what="body", owner=f"entity '{self.name}'"
        )

    def find_geoms(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Geom indices (entity geom order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.geom_names, what="geom", owner=f"entity '{self.name}'"
        )

    def find_sites(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Site indices (entity site order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.site_names, what="site", owner=f"entity '{self.name}'"
        )

    def find_tendons(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Tendon indices (entity tendon order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.tendon_names, what="tendon", owner=f"entity '{self.name}'"
        )

    def find_cameras(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Camera indices (entity camera order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.camera_names, what="camera", owner=f"entity '{self.name}'"
        )

    def find_lights(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Light indices (entity light order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.light_names, what="light", owner=f"entity '{self.name}'"
        )

    def find_materials(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Material indices (entity material order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.material_names, what="material", owner=f"entity '{self.name}'"
        )

    def find_pairs(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Contact pair indices (entity pair order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.pair_names, what="pair", owner=f"entity '{self.name}'"
        )

    def find_textures(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Texture indices (entity texture order) and names matching the regexes."""
        return resolve_matching_names(
            names, self.texture_names, what="texture", owner=f"entity '{self.name}'"
        )

    def find_actuators(self, names: str | Sequence[str]) -> tuple[list[int], list[str]]:
        """Indices into `actuator_names` (actuated joints in joint order) matching the regexes."""
        return resolve_matching_names(
            names, self.actuator_names, what="actuator", owner=f"entity '{self.name}'"
        )

    # -- writers ------------------------------------------------------------------------------------
    def _env_index(self, env_ids) -> torch.Tensor:
        if env_ids is None:
            return torch.arange(self.num_envs, device=self.device)
        return torch.as_tensor(env_ids, device=self.device, dtype=torch.long)

    def write_root_state_to_sim(self, root_state: torch.Tensor, env_ids=None) -> None:
        """Set the root pose and velocity of a floating-base entity.

        Args:
            root_state: (n, 13): position (3, world, m), quaternion (4, wxyz, world), linear
                velocity (3, world, m/s), angular velocity (3, world, rad/s).
            env_ids: the n envs, or None for all.

        Raises:
            ValueError: fixed-base entity or wrong shape.
        """
        if self.is_fixed_base:
            raise ValueError(f"Entity '{self.name}' is fixed-base: it has no root state to write.")
        ids = self._env_index(env_ids)
        if root_state.shape != (len(ids), 13):
            raise ValueError(f"root_state must be ({len(ids)}, 13), got {tuple(root_state.shape)}.")
        qpos, qvel = self.sim.data.qpos, self.sim.data.qvel
        quat = root_state[:, 3:7] / root_state[:, 3:7].norm(dim=-1, keepdim=True)
        pose = torch.cat([root_state[:, :3], quat], dim=-1)
        qpos[ids, self._root_qpos] = pose.to(qpos.dtype)
        # MuJoCo's free joint: linear velocity in world, angular velocity in the body frame.
        ang_b = quat_apply_inverse(quat, root_state[:, 10:13])
        qvel[ids, self._root_qvel] = torch.cat([root_state[:, 7:10], ang_b], dim=-1).to(qvel.dtype)

    def write_joint_state_to_sim(
        self, position: torch.Tensor, velocity: torch.Tensor, joint_ids=None, env_ids=None
    ) -> None:
        """Set joint positions (rad or m) and velocities, shape (n_envs, n_joints) each."""
        ids = self._env_index(env_ids)[:, None]
        jsel = slice(None) if joint_ids is None else torch.as_tensor(joint_ids, device=self.device)
        qpos, qvel = self.sim.data.qpos, self.sim.data.qvel
        qpos[ids, self._qpos_adr[jsel]] = position.to(qpos.dtype)
        qvel[ids, self._dof_adr[jsel]] = velocity.to(qvel.dtype)

    def _write_ctrl(self, value: torch.Tensor, joint_ids, env_ids, field: int = 0) -> None:
        ctrl = self.sim.data.ctrl
        if joint_ids is None:
            cols, sel = self._ctrl_ids, self._ctrl_sel
            if value.shape[-1] != len(cols):
                raise ValueError(
                    f"Entity '{self.name}' has {len(cols)} actuated joints; got targets of "
                    f"shape {tuple(value.shape)}."
                )
        else:
            cols, sel = self._ctrl_columns(joint_ids)  # validates the joints first
        if self._targets is not None:  # explicit/delayed actuators read the targets each step
            jidx = self._target_columns(joint_ids)
            rows = slice(None) if env_ids is None else self._env_index(env_ids)[:, None]
            self._targets[rows, field, jidx] = value.to(torch.float32)
        if env_ids is None:
            if isinstance(sel, slice):  # consecutive actuators: one copy into a kept view
                self.sim.data.columns("ctrl", sel).copy_(value)
            else:
                ctrl[:, cols] = value.to(ctrl.dtype)
        else:
            ctrl[self._env_index(env_ids)[:, None], cols] = value.to(ctrl.dtype)

    def _target_columns(self, joint_ids) -> torch.Tensor:
        """Joint index tensor of `joint_ids` (None: the actuated joints), kept per list (a list
        of ints is looked up without converting it, as in `_ctrl_columns`)."""
        if joint_ids is None:
            key = None
        elif isinstance(joint_ids, list) and all(type(j) is int for j in joint_ids):
            key = tuple(joint_ids)
        else:
            key = tuple(int(j) for j in np.asarray(joint_ids).reshape(-1))
        index = self._target_cols_cache.get(key)
        if index is None:
            joints = self.actuated_joint_ids if key is None else key
            index = torch.as_tensor(np.asarray(joints, dtype=np.int64), device=self.device)
            self._target_cols_cache[key] = index
        return index

    def _ctrl_columns(self, joint_ids) -> tuple[torch.Tensor, slice | torch.Tensor]:
        """ctrl columns of `joint_ids`: the index tensor, and the same columns as a slice when
        the actuators are consecutive (else the index again). Checked on the host once per
        distinct list: an action term writes the same joints every step without a device sync
        or a new index tensor."""
        if isinstance(joint_ids, list) and all(type(j) is int for j in joint_ids):
            key = tuple(joint_ids)  # the common case (action terms keep a list of ints)
        else:
            ids = np.asarray(joint_ids)
            if ids.dtype == bool:
                raise TypeError(
                    f"Entity '{self.name}': joint_ids must be joint indices, not a mask."
                )
            key = tuple(int(j) for j in ids.reshape(-1))
        cols = self._ctrl_cols_cache.get(key)
        if cols is None:
            acts = self.joint_actuator_ids[np.asarray(key, dtype=np.int64)]
            if (acts < 0).any():
                missing = [self.joint_names[j] for j, a in zip(key, acts, strict=True) if a < 0]
                raise ValueError(f"Joints {missing} of entity '{self.name}' have no actuator.")
            index = torch.as_tensor(acts, device=self.device)
            cols = self._ctrl_cols_cache[key] = (index, _as_slice(acts, index))
        return cols

    def set_joint_position_target(self, target: torch.Tensor, joint_ids=None, env_ids=None) -> None:
        """Position targets, rad, (n_envs, n_joints), for position actuators (ctrl)."""
        self._write_ctrl(target, joint_ids, env_ids)

    def set_joint_velocity_target(self, target: torch.Tensor, joint_ids=None, env_ids=None) -> None:
        """Velocity targets, rad/s, (n_envs, n_joints), for velocity actuators (ctrl)."""
        self._write_ctrl(target, joint_ids, env_ids, field=1)

    def set_joint_effort_target(self, target: torch.Tensor, joint_ids=None, env_ids=None) -> None:
        """Efforts, N m, (n_envs, n_joints), for motor actuators (ctrl)."""
        self._write_ctrl(target, joint_ids, env_ids, field=2)

    def reset(self, env_ids: torch.Tensor) -> None:
        """Write the default root state (at each env origin) and default joint state, and hold
        the default pose with position actuators. The caller runs `sim.forward()` afterwards."""
        env_ids = resolve_env_ids(env_ids, self.num_envs, self.device)
        d = self.data
        if not self.is_fixed_base:
            state = d.default_root_state[env_ids].clone()
            state[:, :3] += d.env_origins[env_ids]
            self.write_root_state_to_sim(state, env_ids)
        if self.joint_names:
            self.write_joint_state_to_sim(
                d.default_joint_pos[env_ids], d.default_joint_vel[env_ids], env_ids=env_ids
            )
            if len(self._ctrl_ids):
                # Position servos hold the default pose; other actuator types start at zero.
                hold = (
                    d.default_joint_pos[env_ids][:, self.actuated_joint_ids]
                    * d.is_position_actuated
                )
                self.sim.data.ctrl[env_ids[:, None], self._ctrl_ids] = hold.to(
                    self.sim.data.ctrl.dtype
                )
        if self._targets is not None:
            # Explicit/delayed actuators: hold the default pose, zero velocity and effort.
            self._targets[env_ids] = 0.0
            self._targets[env_ids, 0] = d.default_joint_pos[env_ids]
            for act in self.fused_actuators.actuators:
                act.reset(env_ids, self._targets)


def _written(values: tuple[torch.Tensor, ...]) -> int:
    """Sum of the tensors' version counters (bumped by in-place writes); -1 for tensors made
    under `torch.inference_mode` (training's rollouts, `play`), which keep no counter."""
    total = 0
    for t in values:  # a plain loop: this runs ~25 times per env step
        if t.is_inference():
            return -1
        total += t._version
    return total


def _f32(value: torch.Tensor) -> torch.Tensor:
    """A float32 copy (on MuJoCo Warp `.float()` of a float32 view would be the view itself)."""
    return value.to(torch.float32, copy=True)


def _as_slice(adr: np.ndarray, tensor: torch.Tensor) -> slice | torch.Tensor:
    """`slice(a, b)` when `adr` is a, a+1, ..., b-1 (or empty), else the index tensor."""
    adr = np.asarray(adr, dtype=np.int64)
    if adr.size == 0:
        return slice(0, 0)
    if np.array_equal(adr, np.arange(adr[0], adr[0] + adr.size)):
        return slice(int(adr[0]), int(adr[0]) + adr.size)
    return tensor


class EntityData:
    """Named torch views of one entity, all (num_envs, ...) float32 on the sim device.

    Frames: `_w` world, `_b` the root body frame. Units SI, angles rad, quaternions wxyz.

    The root and joint quantities (`joint_pos`, `joint_vel`, `root_link_*`,
    `projected_gravity_b`, `heading_w`) are computed once per physics state and shared by every
    term that reads them in a step: the cached tensor is returned until the simulation's next
    `step`/`forward`/`reset`/`set_state`, an in-place write to `sim.data.qpos` or `qvel` (a
    reset event's), or an in-place write to the returned tensor itself, whichever comes first.
    The values are copies (never views of the simulation, on either backend). Treat them as
    read-only all the same: under `torch.inference_mode` (training rollouts, `play`) tensors keep
    no version counter, so an edit there would reach the other readers of this physics state.
    """

    # Derived values, recomputed from the restored state; the simulation's own qpos/qvel views.
    _snapshot_exclude = ("_cache", "_state_views")

    def __init__(self, entity: Entity, model: mujoco.MjModel, env_origins: torch.Tensor):
        self._e = entity
        self._sim = entity.sim
        self._cache: dict[str, tuple[tuple, tuple[torch.Tensor, ...], int]] = {}
        self._state_views: tuple[torch.Tensor, torch.Tensor] | None = None
        dev, n = entity.device, entity.num_envs
        f32 = dict(device=dev, dtype=torch.float32)
        init = entity.cfg.init_state
        nj = len(entity.joint_names)
        owner = f"entity '{entity.name}' init_state"
        jpos = (
            resolve_matching_values(
                dict(init.joint_pos), entity.joint_names, what="joint", owner=owner
            )
            if nj
            else []
        )
        jvel = (
            resolve_matching_values(
                dict(init.joint_vel), entity.joint_names, what="joint", owner=owner
            )
            if nj
            else []
        )
        self.env_origins = env_origins.to(**f32)
        """(num_envs, 3) env origins, world, m."""
        self.default_joint_pos = torch.tensor(jpos, **f32).repeat(n, 1).reshape(n, nj)
        """(num_envs, num_joints) default joint positions, rad."""
        self.default_joint_vel = torch.tensor(jvel, **f32).repeat(n, 1).reshape(n, nj)
        """(num_envs, num_joints) default joint velocities, rad/s."""
        self.default_root_state = torch.tensor(
            [*init.pos, *init.rot, *init.lin_vel, *init.ang_vel], **f32
        ).repeat(n, 1)
        """(num_envs, 13) default root state relative to the env origin (pos, quat wxyz, lin vel
        world, ang vel world)."""
        jids = np.array(entity.joint_ids_global, dtype=np.int64)
        limited = model.jnt_limited[jids].astype(bool) if nj else np.zeros(0, bool)
        rng = model.jnt_range[jids] if nj else np.zeros((0, 2))
        rng = np.where(limited[:, None], rng, np.array([-np.inf, np.inf]))
        self.joint_pos_limits = torch.tensor(rng, **f32).repeat(n, 1, 1).reshape(n, nj, 2)
        """(num_envs, num_joints, 2) joint range [lower, upper], rad; +-inf if unlimited."""
        factor = (
            entity.cfg.articulation.soft_joint_pos_limit_factor if entity.cfg.articulation else 1.0
        )
        finite = np.isfinite(rng).all(axis=1)
        mid = np.where(finite, np.where(finite[:, None], rng, 0.0).mean(axis=1), 0.0)
        half = np.where(finite, (rng[:, 1] - rng[:, 0]) / 2 * factor, np.inf)
        soft = np.stack([mid - half, mid + half], axis=-1)
        self.soft_joint_pos_limits = torch.tensor(soft, **f32).repeat(n, 1, 1).reshape(n, nj, 2)
        """(num_envs, num_joints, 2) soft limits: the range scaled about its centre, rad."""

        # Per-joint actuator parameters in joint order (0 where a joint has no actuator).
        acts = entity.joint_actuator_ids
        has = acts >= 0
        a = acts[has]
        kp = np.zeros(nj)
        kd = np.zeros(nj)
        effort = np.full(nj, np.inf)
        is_pos = np.zeros(nj, dtype=bool)
        gain, bias = model.actuator_gainprm[a], model.actuator_biasprm[a]
        position = (model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE) & (
            np.abs(bias[:, 1] + gain[:, 0]) < 1e-9
        )
        kp[has] = np.where(position, gain[:, 0], 0.0)
        kd[has] = np.where(
            model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE, -bias[:, 2], 0.0
        )
        is_pos[has] = position
        limited_f = model.actuator_forcelimited[a].astype(bool)
        effort[has] = np.where(limited_f, np.abs(model.actuator_forcerange[a]).max(axis=1), np.inf)
        for act in entity.actuators:  # explicit actuators report their own gains
            gains = act.nominal_gains()
            if gains is None:
                continue
            ids = np.asarray(act.joint_ids, dtype=np.int64)
            kp[ids] = gains.get("stiffness", kp[ids])
            kd[ids] = gains.get("damping", kd[ids])
            effort[ids] = gains.get("effort_limit", effort[ids])
        dof = np.asarray(model.jnt_dofadr[jids], dtype=np.int64) if nj else np.zeros(0, np.int64)
        self.joint_stiffness = torch.tensor(kp, **f32).repeat(n, 1)
        """(num_envs, num_joints) position gain kp of each joint's actuator, N m/rad."""
        self.joint_damping = torch.tensor(kd, **f32).repeat(n, 1)
        """(num_envs, num_joints) velocity gain kd of each joint's actuator, N m s/rad."""
        self.joint_effort_limits = torch.tensor(effort, **f32).repeat(n, 1)
        """(num_envs, num_joints) actuator force limit, N m (inf: unlimited)."""
        self.joint_armature = torch.tensor(model.dof_armature[dof] if nj else [], **f32).repeat(
            n, 1
        )
        """(num_envs, num_joints) joint armature, kg m^2."""
        limit = entity.cfg.joint_vel_limit
        velocity = np.full(nj, np.nan)  # nan: unknown (the MJCF has no speed limits)
        if limit is not None and nj:
            velocity[:] = resolve_matching_values(
                dict(limit) if isinstance(limit, Mapping) else limit,
                entity.joint_names,
                what="joint",
                owner=f"entity '{entity.name}' joint_vel_limit",
            )
        self.nominal_gains = {
            "stiffness": kp,
            "damping": kd,
            "effort_limit": effort,
            "velocity_limit": velocity,
        }
        """Per-joint gains of the compiled model (before any per-env randomization) and the
        configured speed limits (`EntityCfg.joint_vel_limit`, rad/s; nan: unknown), numpy."""
        self.encoder_bias = torch.zeros(n, nj, **f32)
        """(num_envs, num_joints) joint encoder offsets, rad: added to the observed joint
        positions (`joint_pos_biased`), never to the physics; set by `dr.encoder_bias`."""
        self.is_position_actuated = torch.tensor(is_pos[entity.actuated_joint_ids], **f32)
        """(num_actuated,) 1 where a joint's actuator is a position servo."""

    def _memo(self, name: str, compute) -> tuple[torch.Tensor, ...]:
        """`compute()` (a tuple of tensors), cached for the current physics state (see the class
        docstring for what ends a cached value)."""
        views = self._state_views
        if views is None:  # the simulation's views live as long as it does
            views = self._state_views = (self._sim.data.qpos, self._sim.data.qvel)
        # Values made under inference mode are not reused outside it (autograd refuses them).
        key = (
            self._sim.state_count,
            views[0]._version,
            views[1]._version,
            torch.is_inference_mode_enabled(),
        )
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key and hit[2] == _written(hit[1]):
            return hit[1]
        values = compute()
        self._cache[name] = (key, values, _written(values))
        return values

    # -- joints ---------------------------------------------------------------------------------
    @property
    def joint_pos(self) -> torch.Tensor:
        """(num_envs, num_joints) joint positions, rad."""
        return self._memo(
            "joint_pos", lambda: (_f32(self._sim.data.columns("qpos", self._e._qpos_sel)),)
        )[0]

    @property
    def joint_pos_biased(self) -> torch.Tensor:
        """(num_envs, num_joints) joint positions as the encoders report them, `joint_pos +
        encoder_bias`, rad."""
        return self.joint_pos + self.encoder_bias

    @property
    def joint_vel(self) -> torch.Tensor:
        """(num_envs, num_joints) joint velocities, rad/s."""
        return self._memo(
            "joint_vel",
            lambda: (_f32(self._sim.data.columns("qvel", self._e._dof_sel)),),
        )[0]

    @property
    def joint_acc(self) -> torch.Tensor:
        """(num_envs, num_joints) joint accelerations of the last physics substep, rad/s^2."""
        return self._memo(
            "joint_acc",
            lambda: (_f32(self._sim.data.columns("qacc", self._e._dof_sel)),),
        )[0]

    @property
    def actuator_force(self) -> torch.Tensor:
        """(num_envs, num_joints) generalized actuator force on each joint (qfrc_actuator) of the
        last physics substep, N m."""
        return self._memo(
            "actuator_force",
            lambda: (_f32(self._sim.data.columns("qfrc_actuator", self._e._dof_sel)),),
        )[0]

    @property
    def joint_pos_target(self) -> torch.Tensor:
        """(num_envs, num_actuated) position targets of the actuated joints, rad (m for slides).

        With explicit or delayed actuators, the position targets last set (the entity keeps
        them; ctrl holds torques or lagged commands); otherwise the ctrl of the actuated joints,
        which is the position target of position servos (and the velocity target or effort of
        other builtin actuators)."""
        e = self._e
        if e._targets is not None:
            return e._targets[:, 0, e._target_columns(None)]
        return self._sim.data.ctrl[:, e._ctrl_ids].float()

    # -- root -----------------------------------------------------------------------------------
    def _root_pose(self) -> tuple[torch.Tensor, ...]:
        return self._memo("root_pose", self._compute_root_pose)

    def _compute_root_pose(self) -> tuple[torch.Tensor, torch.Tensor]:
        e = self._e
        if e.is_fixed_base:
            b = e._root_body
            return _f32(self._sim.data.xpos[:, b]), _f32(self._sim.data.xquat[:, b])
        q = _f32(self._sim.data.columns("qpos", e._root_qpos))
        return q[:, :3], q[:, 3:7]

    @property
    def root_link_pos_w(self) -> torch.Tensor:
        """(num_envs, 3) root body origin, world, m."""
        return self._root_pose()[0]

    @property
    def root_link_quat_w(self) -> torch.Tensor:
        """(num_envs, 4) root body orientation, wxyz, world."""
        return self._root_pose()[1]

    def _root_vel_b(self) -> tuple[torch.Tensor, ...]:
        return self._memo("root_vel_b", self._compute_root_vel_b)

    def _compute_root_vel_b(self) -> tuple[torch.Tensor, torch.Tensor]:
        e = self._e
        if e.is_fixed_base:
            z = torch.zeros(e.num_envs, 3, device=e.device)
            return z, z.clone()
        v = _f32(self._sim.data.columns("qvel", e._root_qvel))
        # Free joint: linear velocity in world, angular velocity already in the body frame.
        return quat_apply_inverse(self.root_link_quat_w, v[:, :3]), v[:, 3:6]

    @property
    def root_link_lin_vel_b(self) -> torch.Tensor:
        """(num_envs, 3) linear velocity of the root body origin, root frame, m/s."""
        return self._root_vel_b()[0]

    @property
    def root_link_ang_vel_b(self) -> torch.Tensor:
        """(num_envs, 3) angular velocity of the root body, root frame, rad/s."""
        return self._root_vel_b()[1]

    @property
    def root_link_lin_vel_w(self) -> torch.Tensor:
        """(num_envs, 3) linear velocity of the root body origin, world, m/s."""
        if self._e.is_fixed_base:
            return torch.zeros(self._e.num_envs, 3, device=self._e.device)
        return self._memo(
            "root_lin_vel_w",
            lambda: (_f32(self._sim.data.columns("qvel", self._e._root_qvel)[:, :3]),),
        )[0]

    @property
    def root_link_ang_vel_w(self) -> torch.Tensor:
        """(num_envs, 3) angular velocity of the root body, world, rad/s."""
        return self._memo(
            "root_ang_vel_w",
            lambda: (quat_apply(self.root_link_quat_w, self.root_link_ang_vel_b),),
        )[0]

    @property
    def projected_gravity_b(self) -> torch.Tensor:
        """(num_envs, 3) unit gravity direction (0, 0, -1) expressed in the root frame."""
        return self._memo(
            "projected_gravity_b", lambda: (projected_gravity(self.root_link_quat_w),)
        )[0]

    @property
    def heading_w(self) -> torch.Tensor:
        """(num_envs,) yaw of the root's forward (x) axis in the world xy plane, rad, (-pi, pi]."""
        return self._memo("heading_w", lambda: (heading_from_quat(self.root_link_quat_w),))[0]

    # -- bodies ---------------------------------------------------------------------------------
    @property
    def body_link_pos_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) body frame origins, world, m."""
        return self._sim.data.xpos[:, self._e._body_ids].float()

    @property
    def body_link_quat_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 4) body orientations, wxyz, world."""
        return self._sim.data.xquat[:, self._e._body_ids].float()

    @property
    def body_link_ang_vel_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) body angular velocities, world, rad/s (from cvel)."""
        return self._sim.data.cvel[:, self._e._body_ids, :3].float()

    @property
    def body_link_lin_vel_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) linear velocity of each body origin, world, m/s.

        MuJoCo's cvel is (angular, linear) at the root subtree's centre of mass c (MuJoCo doc,
        mjData.cvel); the body origin p moves at v + w x (p - c).
        """
        ids = self._e._body_ids
        cvel = self._sim.data.cvel[:, ids].float()
        com = self._sim.data.subtree_com[:, self._e._root_body].float()
        offset = self._sim.data.xpos[:, ids].float() - com[:, None, :]
        return cvel[..., 3:] + torch.cross(cvel[..., :3], offset, dim=-1)
