#!/usr/bin/env bash
# What Retryline's tests need beyond npm packages, installed from the system's package manager:
# Debian's Chromium for the browser and extension tests (never a browser downloaded by a test
# tool), and redis-server for the Redis store's tests (they start their own, on a free port).
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: chromium ($(command -v chromium)) and redis-server ($(command -v redis-server)) are installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "bootstrap: the tests need ${missing[*]}; install them (Debian: apt-get install ${missing[*]}) and run again" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "bootstrap: no apt-get here; install ${missing[*]} with your package manager so that they are on PATH" >&2
  exit 1
fi
echo "bootstrap: installing ${missing[*]} with apt-get (about 30 s)…"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
echo "bootstrap: installed ${missing[*]}"
