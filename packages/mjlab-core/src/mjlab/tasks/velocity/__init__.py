"""Velocity tracking tasks (Go1, G1; flat and rough terrain)."""
