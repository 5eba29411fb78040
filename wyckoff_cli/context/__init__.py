"""Context management: system prompt, project instructions, memory, compaction."""
