"""actuator."""
