"""Robot configs of the tracking task (one module per robot)."""
