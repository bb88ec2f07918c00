"""entity."""
