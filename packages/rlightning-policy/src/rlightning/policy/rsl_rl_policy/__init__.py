"""rsl_rl_policy."""
