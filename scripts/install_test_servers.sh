#!/usr/bin/env bash
# Installs the published servers some tests run against, as a user would install them, into
# .test-servers/ (ignored by git). Tests never reach the network themselves: a test whose
# server is not installed here is skipped with the reason. `.ci/run` calls this first.
# Needs node and npm; without them it says so and exits 0 (those tests skip).
set -uo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    echo "install_test_servers: node and npm not found; the tests of npm servers will be skipped"
    exit 0
fi
packages=(
    "@modelcontextprotocol/server-everything"
    "typescript-language-server@4"
    "typescript@5"
)
npm install --silent --no-audit --no-fund --prefix .test-servers "${packages[@]}" \
    || echo "install_test_servers: npm install failed; the tests of npm servers will be skipped"
exit 0
