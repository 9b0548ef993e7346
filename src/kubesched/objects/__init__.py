"""objects."""
