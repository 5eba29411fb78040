"""The permission engine: pure policy over tool calls.

Rules and their syntax (`rules`), the subject a call is judged by (`subject`), shell parsing
(`shellparse`, `shellcommand`), destructive effects (`destructive`), protected paths
(`protected`), the workspace boundary (`workspace`), the bubblewrap arguments (`sandbox`) and
the policy that combines them (`policy`). Nothing here runs a tool or talks to a user.
"""
