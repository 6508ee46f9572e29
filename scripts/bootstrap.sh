# Sourced by scripts/test and scripts/reviewbot: make .venv and install the project into it.
# Re-installs only when pyproject.toml or the extras changed since the last install.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${REVIEWBOT_VENV:-$ROOT/.venv}
PYTHON=${PYTHON:-python3}

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "error: reviewbot needs Python 3.11 or newer ($PYTHON is $("$PYTHON" -V 2>&1))" >&2
    exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
# Extras to install: dev by default; REVIEWBOT_EXTRAS=dev,local adds the local embedder.
EXTRAS=${REVIEWBOT_EXTRAS:-dev}
stamp="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1) $EXTRAS"
if [ "$(cat "$VENV/.bootstrap-stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "installing reviewbot and its dependencies into $VENV ..." >&2
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
    # setuptools tells of every editable install whose packages are mapped (migrations/
    # installs as reviewbot_migrations) that folders named like a package may shadow it:
    # true of any such project, and nothing to act on, so it is not shown
    PYTHONWARNINGS="ignore:Editable installation" \
        "$VENV/bin/python" -m pip install --quiet -e "$ROOT[$EXTRAS]" >&2
    echo "$stamp" > "$VENV/.bootstrap-stamp"
fi
