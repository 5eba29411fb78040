"""The agent runtime: one loop turning a user message into a stream of events."""
