"""Template filters of the web workspace."""
