"""Checkpoints: snapshots of the whole work tree (shell commands' changes included)
in a shadow git repository, restore with a preview, undo, redo and rewind.
See docs/CHECKPOINTS.md."""
