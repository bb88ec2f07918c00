"""A downstream project's own mjlab task: a two-link planar arm reaching targets."""
