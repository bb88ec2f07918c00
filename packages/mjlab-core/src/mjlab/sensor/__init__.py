"""sensor."""
