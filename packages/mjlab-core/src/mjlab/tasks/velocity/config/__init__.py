"""The velocity task for each robot: one module per robot over the shared base config
(`mjlab.tasks.velocity.velocity_env_cfg`), each with `flat`, `flat_play`, `rough`, `rough_play`."""
