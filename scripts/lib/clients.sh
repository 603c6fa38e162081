# Sourced by scripts/interop and scripts/multi-instance: installs the MCP
# clients nobody here wrote, each pinned, reinstalled only when its pin file
# changed.
#
#   ensure_npm DIR              npm ci in DIR (interop/ts, interop/inspector)
#   ensure_venv VENV REQS       a virtualenv at VENV with `pip install -r REQS`

_clients_digest() { sha256sum "$1" | cut -d' ' -f1; }

ensure_npm() {
  local dir="$1" stamp="$1/node_modules/.interop-lock.sha256"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(_clients_digest "$dir/package-lock.json")" ]; then
    echo "clients: npm ci ($dir)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund)
    _clients_digest "$dir/package-lock.json" >"$stamp"
  fi
}

ensure_venv() {
  local venv="$1" reqs="$2" stamp="$1/.interop-requirements.sha256"
  if [ ! -x "$venv/bin/python" ]; then
    echo "clients: creating the virtualenv $venv" >&2
    if ! python3 -m venv "$venv"; then
      rm -rf "$venv"
      echo "clients: python3 -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
      return 1
    fi
  fi
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(_clients_digest "$reqs")" ]; then
    echo "clients: pip install -r $reqs" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$reqs"
    _clients_digest "$reqs" >"$stamp"
  fi
}
