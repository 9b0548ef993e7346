"""framework."""
