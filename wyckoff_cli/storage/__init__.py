"""Everything on disk: paths, config, chat logs, scratchpads, sessions."""
