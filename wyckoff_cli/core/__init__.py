"""The shared language of every layer: messages, events, errors, usage. Imports nothing of ours."""
