"""The session layer: one builder for every host, and the UI-free chat controller."""
