"""terrains."""
