"""Whole-body motion tracking: motion files (`motion`), synthetic clips (`synthetic`), the
motion command and its terms (`mdp`), the task config (`tracking_env_cfg`) and robot configs."""
