"""The local and Ray engines train rsl-rl PPO on the point-mass env."""

import functools
import ipaddress
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from rlightning.engine import LocalEngine, RayEngine, loopback_only_ray
from rlightning.engine.ray_engine import fingerprint_mismatches
from rlightning.policy import TrainConfig


def test_local_engine_learns_to_reach_and_hold_the_target(pm, tmp_path):
    config = TrainConfig(seed=1, log_interval=0, save_dir=str(tmp_path), save_interval=10)
    engine = LocalEngine(pm.make_point_mass_env, pm.point_mass_train_cfg(), config, device="cpu")
    zero_policy_error = pm.mean_abs_error_of_deterministic_policy(
        lambda obs: obs["actor"][:, :1] * 0.0, pm.make_point_mass_env(seed=7), 99
    )
    reports = engine.run(25)
    engine.close()

    assert [r.iteration for r in reports] == list(range(25))
    assert reports[-1].total_steps == 25 * 24 * 64
    assert all(r.steps_per_second > 0 and r.num_steps == 24 * 64 for r in reports)
    assert math.isnan(reports[0].mean_episode_reward)  # no 100-step episode ends in 24 steps
    early = reports[5].mean_episode_reward  # the first finished episodes (random policy)
    final = reports[-1].mean_episode_reward
    assert final > 2.0 * early, (early, final)
    assert 95.0 < reports[-1].mean_episode_length <= 100.0
    assert "Metrics/abs_position_error" in reports[-1].env_log
    error = pm.mean_abs_error_of_deterministic_policy(
        engine.learner.algo.actor, pm.make_point_mass_env(seed=7), 99
    )
    assert error < 0.15 < 0.5 * zero_policy_error, (error, zero_policy_error)
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert saved == ["model_0.pt", "model_10.pt", "model_20.pt", "model_24.pt"]


@pytest.fixture(scope="module")
def ray_cluster():
    """One Ray for this module's Ray tests: a head and one worker node (two raylets, as
    `ray start --head` and `ray start --address` make them) on 127.0.0.1, every server on
    loopback (as train-rlightning's local Ray: `loopback_only_ray`).

    `ray start --address=127.0.0.1:PORT` cannot make such a worker node: with clustering off
    (what keeps Ray on loopback) it refuses to join, and with it on it rewrites 127.0.0.1 to the
    machine's external address. Ray's own multi-node test cluster starts the same processes
    without either. The driver is connected (`ray.init`) for the whole module.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "1")
        mp.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
        # Under `uv run`, Ray would ship the project to new uv-run workers; use this venv.
        mp.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        ray = pytest.importorskip("ray")
        constants = sys.modules["ray._private.ray_constants"]
        mp.setattr(constants, "ENABLE_RAY_CLUSTER", constants.ENABLE_RAY_CLUSTER)
        loopback_only_ray()
        from ray.cluster_utils import Cluster

        cluster = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 2,
                "node_ip_address": "127.0.0.1",
                "include_dashboard": False,
            },
        )
        try:
            cluster.add_node(num_cpus=2, node_ip_address="127.0.0.1")
            cluster.wait_for_nodes()
            ray.init(address=cluster.address, log_to_driver=False)
            yield cluster
        finally:
            ray.shutdown()
            cluster.shutdown()


def listening_sockets(pids: set[int]) -> list[tuple[str, str]]:
    """(process name, local address) of every TCP socket `ss -ltnp` lists as LISTEN for one of
    `pids`."""
    if shutil.which("ss") is None:
        pytest.skip("needs `ss` (iproute2) to list listening sockets")
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        owners = re.findall(r'\("([^"]+)",pid=(\d+)', line)
        for name, pid in owners:
            if int(pid) in pids:
                found.append((name, fields[3]))
    return found


def is_loopback(address: str) -> bool:
    """Whether an `ss` local address ("127.0.0.1:80", "[::ffff:127.0.0.1]:80", "*:80") is a
    loopback one."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host in ("*", "0.0.0.0", "::"):
        return False
    ip = ipaddress.ip_address(host)
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def process_tree(pid: int) -> set[int]:
    psutil = pytest.importorskip("psutil")  # installed with ray
    try:
        root = psutil.Process(pid)
        return {pid, *(p.pid for p in root.children(recursive=True))}
    except psutil.NoSuchProcess:
        return set()


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_train_rlightning_ray_listens_on_loopback_only_with_nothing_set(tmp_path):
    """The command a user runs, in an environment without any Ray variable: every socket its
    process tree listens on (GCS, raylet, workers, agents) is a loopback one."""
    pytest.importorskip("ray")
    pytest.importorskip("mjlab.tasks")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(CUDA_VISIBLE_DEVICES="", WANDB_MODE="offline")
    command = [sys.executable, "-m", "rlightning.engine.mjlab_train", "Mjlab-Cartpole-Balance"]
    command += ["--engine", "ray", "--agent.max-iterations", "40"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    seen: dict[tuple[str, str], None] = {}
    try:
        # Sample for the whole start-up and into training (the runtime-env agent starts late).
        deadline = time.monotonic() + 300
        training_since = None
        while proc.poll() is None and time.monotonic() < deadline:
            for socket in listening_sockets(process_tree(proc.pid)):
                seen[socket] = None
            if training_since is None and any(name.startswith("ray::") for name, _ in seen):
                training_since = time.monotonic()
            if training_since is not None and time.monotonic() - training_since > 15.0:
                break
            time.sleep(1.0)
    finally:
        proc.kill()
        output = proc.communicate()[0].decode(errors="replace")
    names = {name for name, _ in seen}
    assert {"gcs_server", "raylet"} <= names, (sorted(seen), output[-2000:])
    exposed = [s for s in seen if not is_loopback(s[1])]
    assert exposed == [], sorted(seen)


def _kill(engine, actor_index: int) -> None:
    _node, pid = engine.rollout_locations()[actor_index]
    os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_rollout_actor_killed_mid_training_is_restarted_and_no_iteration_is_lost(
    pm, ray_cluster, tmp_path, capsys
):
    import ray

    ray.cloudpickle.register_pickle_by_value(pm)
    engine = RayEngine(
        functools.partial(pm.make_point_mass_env, num_envs=16),
        # Observation normalizers: their statistics (buffers) must travel with the weights too.
        pm.point_mass_train_cfg(num_steps_per_env=16, obs_normalization=True),
        TrainConfig(seed=0, log_interval=0, save_dir=str(tmp_path), save_interval=100),
        num_rollout_workers=2,
        learner_options={"num_cpus": 0.5},
        rollout_options={"num_cpus": 0.5},
        timeout_s=240.0,
        max_actor_restarts=1,
    )
    try:
        initial = engine.learner_fingerprint()
        pids = [pid for _, pid in engine.rollout_locations()]
        fingerprints = []
        killer: list[threading.Timer] = []
        checked: list[int] = []

        def fault(report):
            fingerprints.append(engine.learner_fingerprint())
            if report.iteration == 1:
                _kill(engine, 0)  # between iterations: the next collect finds it restarted
                # The other during the next iteration's collect or weight load, while Ray
                # restarts the first (both restarts, seconds of process start-up each, overlap).
                # By its pid from the start: asking the engine would wait for the first.
                killer.append(threading.Timer(0.05, os.kill, (pids[1], signal.SIGKILL)))
                killer[0].start()
            if report.iteration == 5:
                killer[0].join()
                assert engine.actor_restarts == [1, 1]
                # Every rollout ran the weights of its own iteration (restarted ones included).
                assert engine.last_collect_versions == [report.iteration + 1] * 2
                new_pids = [pid for _, pid in engine.rollout_locations()]
                assert all(a != b for a, b in zip(pids, new_pids, strict=True))
                # The restarted actors run exactly the learner's latest weights.
                learner = engine.learner_fingerprint()
                assert all(fp == learner for fp in engine.rollout_fingerprints())
                for actor_fingerprint in engine.rollout_fingerprints():
                    assert fingerprint_mismatches(learner, actor_fingerprint) == []
                assert any("obs_normalizer._mean" in name for name in learner)
                # Every update changed the weights.
                distinct = {tuple(sorted(fp.items())) for fp in [initial, *fingerprints]}
                assert len(distinct) == len(fingerprints) + 1
                # Ray binds to loopback only (every listening socket of the tree, per `ss`).
                listening = listening_sockets(process_tree(os.getpid()))
                assert len(listening) >= 3, listening  # GCS, raylets, workers
                assert [s for s in listening if not is_loopback(s[1])] == [], listening
                checked.append(report.iteration)
                _kill(engine, 0)  # a second time: past max_actor_restarts=1

        # Past its restart budget the run ends, naming the actor, with the learner's work saved.
        with pytest.raises(
            RuntimeError,
            match=r"env_0 was lost \(ActorDiedError\) and Ray does not restart it.*model_5\.pt",
        ):
            engine.run(8, callback=fault)
        assert checked == [5]
        assert engine.iteration == 6  # iterations 0-5 ran in full despite two restarts
        assert engine.total_steps == 6 * 2 * 16 * 16
        assert (tmp_path / "model_5.pt").stat().st_size > 0
        out = capsys.readouterr().out
        assert "rollout actor env_0 was lost and Ray restarted it (1/1)" in out
        assert "rollout actor env_1 was lost and Ray restarted it (1/1)" in out
    finally:
        engine.close()


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_train_rlightning_joins_a_two_node_cluster_and_trains_cartpole_on_both(
    ray_cluster, tmp_path, capsys
):
    pytest.importorskip("mjlab.tasks")
    from mjlab.rl.cli import parse_task_cli
    from rlightning.engine import mjlab_train

    assert ray_cluster.address.startswith("127.0.0.1:")
    argv = ["Mjlab-Cartpole-Balance", "--engine", "ray", "--ray-address"]
    argv += [ray_cluster.address, "--env.scene.num-envs", "64"]
    argv += ["--agent.max-iterations", "4", "--log-root", str(tmp_path)]
    reports = mjlab_train.run(*parse_task_cli("train-rlightning", mjlab_train._cfg_types(), argv))
    out = capsys.readouterr().out
    assert "2 rollout actors on 2 Ray node(s)" in out, out
    assert [r.num_steps for r in reports] == [2 * 64 * 32] * 4
    assert all(math.isfinite(r.losses["value"]) for r in reports)
    assert sorted(p.name for p in tmp_path.rglob("model_*.pt")) == ["model_0.pt", "model_3.pt"]
    listening = listening_sockets(process_tree(os.getpid()))
    assert {name for name, _ in listening} >= {"gcs_server", "raylet"}, listening
    assert [s for s in listening if not is_loopback(s[1])] == [], listening


def test_train_rlightning_refuses_a_log_root_that_is_a_file_in_one_line(tmp_path, capsys):
    pytest.importorskip("mjlab.tasks")
    from rlightning.engine import mjlab_train

    root = tmp_path / "notes.txt"
    root.write_text("not a folder")
    with pytest.raises(SystemExit) as stop:
        mjlab_train.main(["Mjlab-Cartpole-Balance", "--log-root", str(root)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"train-rlightning: error: --log-root {root} is a file, not a folder")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--env.actions.effort.scale", "nan"], "env.actions['effort'].scale is nan"),
        (
            # Ray: the learner's update holds 2 workers x 4 envs x 8 steps = 64 samples.
            [
                "--engine",
                "ray",
                "--env.scene.num-envs",
                "4",
                "--agent.num-steps-per-env",
                "8",
                "--agent.algorithm.num-mini-batches",
                "65",
            ],
            "splits an update's 64 samples",
        ),
        (["--engine", "ray", "--num-rollout-workers", "0"], "--num-rollout-workers must be"),
    ],
    ids=["nan-action-scale", "zero-sized-minibatches-over-workers", "no-rollout-workers"],
)
def test_train_rlightning_refuses_an_inconsistent_run_config_before_anything_is_built(
    extra, message, tmp_path, monkeypatch, capsys
):
    pytest.importorskip("mjlab.tasks")
    from mjlab.envs import ManagerBasedRlEnv
    from rlightning.engine import mjlab_train

    monkeypatch.chdir(tmp_path)
    built = []
    monkeypatch.setattr(ManagerBasedRlEnv, "__init__", lambda *a, **k: built.append(1))
    with pytest.raises(SystemExit) as stop:
        mjlab_train.main(["Mjlab-Cartpole-Balance", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1, err
    assert err[0].startswith("train-rlightning: error: ") and message in err[0], err
    assert not built and not any(tmp_path.rglob("params"))
