"""`wyckoff acp`: Wyckoff as an Agent Client Protocol agent over stdio (see docs/ACP.md)."""
