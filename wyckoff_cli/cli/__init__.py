"""The command line: entry point and sub-commands (the composition root)."""
