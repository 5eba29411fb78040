"""The MCP client: tools, resources and prompts of Model Context Protocol servers.

`start_mcp` (manager.py) is the entry point a session uses; docs/MCP.md describes the
configuration, trust, rules and troubleshooting. The `mcp` SDK is imported only when a
server is started, so importing this package stays cheap.
"""
