"""Constants shared by `Simulation` and its two backends (one module that both import, so
neither imports the other for them)."""

MAXVAL = 1e10
"""C MuJoCo's mjMAXVAL: mj_checkPos/Vel/Acc reset a world whose qpos/qvel/qacc exceed it; both
backends flag such a world as diverged."""
STATE_FIELDS = (
    "time",
    "qpos",
    "qvel",
    "act",
    "ctrl",
    "qfrc_applied",
    "xfrc_applied",
    "mocap_pos",
    "mocap_quat",
)
"""MjData fields held in the state rows (writable, persistent); everything else is an output."""
