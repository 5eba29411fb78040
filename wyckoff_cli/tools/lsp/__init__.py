"""Language servers: diagnostics after every edit and the lsp_* navigation tools (docs/LSP.md)."""
