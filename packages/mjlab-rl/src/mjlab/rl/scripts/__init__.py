"""Command-line entry points: train, play, list-envs."""
