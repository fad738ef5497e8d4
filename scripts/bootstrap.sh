#!/usr/bin/env bash
# What Retryline's tests need beyond npm packages, installed from the system's package manager:
# Debian's Chromium for the browser tests (never a browser downloaded by a test tool).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "bootstrap: chromium is installed ($(command -v chromium))"
  exit 0
fi

install=(apt-get install -y -qq chromium)
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "bootstrap: the browser tests need Chromium at /usr/bin/chromium; install it (Debian: apt-get install chromium) and run again" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "bootstrap: no apt-get here; install Chromium with your package manager so that 'chromium' is on PATH" >&2
  exit 1
fi
echo "bootstrap: installing chromium with apt-get (about 30 s)…"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" "${install[@]}" >/dev/null
echo "bootstrap: chromium installed ($(command -v chromium))"
