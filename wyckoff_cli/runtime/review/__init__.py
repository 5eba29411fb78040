"""`wyckoff review`: a read-only review of a change by reviewer sub-agents.

- changes.py: the change to review, from git (run by Wyckoff, hardened), as file diffs;
- groups.py: a large change split into file groups, one reviewer each;
- tools.py: the `report_finding`, `confirm_finding` and `reject_finding` tools the
  reviewers and checkers call (schema-checked; a bad call goes back as a tool error);
- engine.py: the reviewers in parallel, then a check of every finding; only confirmed
  findings stay;
- findings.py and formats.py: the result and its text, Markdown, JSON and SARIF forms
  (`review.schema.json` is the JSON's schema, docs/REVIEW.md documents it).
"""
