"""Battle Line bots (issue 4)."""
