#!/usr/bin/env bash
# A Python 3.12+ venv with Harbor, for tests/integrations/test_harbor.py (Harbor needs
# 3.12; Wyckoff's own venv may be 3.11). Usage: scripts/make_harbor_venv.sh [DIR]
# (default /tmp/harbor-venv; the test looks there or at $WYCKOFF_HARBOR_PYTHON).
set -euo pipefail
target="${1:-/tmp/harbor-venv}"
python=""
for candidate in python3.13 python3.12 "$HOME"/.pyenv/versions/3.13*/bin/python "$HOME"/.pyenv/versions/3.12*/bin/python; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
        python="$candidate"
        break
    fi
done
if [ -z "$python" ]; then
    echo "make_harbor_venv: no Python 3.12+ found (python3.12, python3.13 or pyenv's)" >&2
    exit 1
fi
"$python" -m venv "$target"
"$target/bin/pip" install -q harbor
echo "Harbor venv ready: $target/bin/python (run tests/integrations/test_harbor.py)"
