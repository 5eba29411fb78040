"""`wyckoff batch`: many headless runs, each in its own clone, locally or on a Ray cluster."""
