#!/usr/bin/env bash
# What Retryline's tests need beyond npm packages, installed from the system's package manager:
# Debian's Chromium and Firefox ESR for the browser and extension tests (never a browser
# downloaded by a test tool), and redis-server for the Redis store's tests (they start their own,
# on a free port).
set -euo pipefail

# Each command the tests run, and the Debian package that provides it.
declare -A packages=([chromium]=chromium [firefox-esr]=firefox-esr [redis-server]=redis-server)

missing=()
for command in chromium firefox-esr redis-server; do
  command -v "$command" >/dev/null 2>&1 || missing+=("${packages[$command]}")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: chromium ($(command -v chromium)), firefox-esr ($(command -v firefox-esr)) and redis-server ($(command -v redis-server)) are installed"
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
