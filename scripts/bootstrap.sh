#!/usr/bin/env bash
# What Retryline's tests need beyond npm packages: Chromium and Firefox ESR for the browser and
# extension tests (never a browser downloaded by a test tool), and redis-server for the Redis
# store's tests (they start their own, on a free port). The demo needs none of them.
#
# Installs what is missing with apt-get where it can (as root, or with sudo). Where it cannot
# (macOS, no apt-get, neither root nor sudo, apt-get failing) it prints what to install and exits 0
# all the same, so `pnpm bootstrap && pnpm demo` runs the demo; the tests that need a missing
# program fail, naming it.
#
# Written for bash 3.2 (macOS's /bin/bash): no associative arrays, no empty-array expansions.
set -eu

programs="chromium firefox-esr redis-server"

# The row of program $1: the variable that points the tests at another copy, where the tests look
# on Linux and on macOS (a bare name: on PATH), and Homebrew's arguments. The Debian package is
# named as the program. The same table as test/support/test-programs.ts (TEST_PROGRAMS);
# test/newcomer/bootstrap.test.ts keeps the two in step.
row() {
  case "$1" in
    chromium)
      variable=RETRYLINE_CHROMIUM linux=/usr/bin/chromium
      macos=/Applications/Chromium.app/Contents/MacOS/Chromium homebrew="--cask chromium" ;;
    firefox-esr)
      variable=RETRYLINE_FIREFOX linux=/usr/bin/firefox-esr
      macos=/Applications/Firefox.app/Contents/MacOS/firefox homebrew="--cask firefox@esr" ;;
    redis-server)
      variable=REDIS_SERVER linux=redis-server macos=redis-server homebrew=redis ;;
  esac
}

# Prints the path the tests would use for program $1; fails when it is not installed.
find_program() {
  row "$1"
  eval "place=\${$variable:-}"
  if [ -z "$place" ]; then
    case "${OSTYPE:-}" in darwin*) place=$macos ;; *) place=$linux ;; esac
  fi
  case "$place" in
    */*) [ -f "$place" ] && [ -x "$place" ] && echo "$place" ;;
    *) command -v "$place" ;;
  esac
}

# Prints the programs that are not installed, space-separated.
missing_programs() {
  missing=""
  for program in $programs; do
    find_program "$program" >/dev/null 2>&1 || missing="${missing:+$missing }$program"
  done
  echo "$missing"
}

print_installed() {
  found=""
  for program in $programs; do
    found="${found:+$found, }$program ($(find_program "$program"))"
  done
  echo "bootstrap: installed: $found"
}

# Prints why they were not installed ($1) and how to install the missing programs ($2).
print_what_to_install() {
  names="" casks="" formulae="" variables=""
  for program in $2; do
    row "$program"
    names="${names:+$names, }$program"
    case "$homebrew" in
      --cask\ *) casks="$casks ${homebrew#--cask }" ;;
      *) formulae="$formulae $homebrew" ;;
    esac
    variables="${variables:+$variables, }$variable"
  done
  brew=""
  if [ -n "$casks" ]; then brew="brew install --cask$casks"; fi
  if [ -n "$formulae" ]; then brew="${brew:+$brew && }brew install$formulae"; fi
  # echo, a builtin: this runs where little else may be installed.
  echo "bootstrap: not installed: $names ($1)."
  echo "bootstrap: the demo needs none of them; the tests that do fail until they are installed:"
  echo "  Debian (as root):  apt-get install $2"
  echo "  macOS (Homebrew):  $brew"
  echo "  elsewhere:         set $variables to their paths"
}

missing=$(missing_programs)
if [ -z "$missing" ]; then
  print_installed
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  print_what_to_install "no apt-get on this machine" "$missing"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
  # Only a sudo that asks for no password: a prompt would hold up the demo (and Ctrl-C would stop it).
  sudo="sudo -n"
elif command -v sudo >/dev/null 2>&1; then
  print_what_to_install "sudo needs a password: run sudo -v, then pnpm bootstrap again" "$missing"
  exit 0
else
  print_what_to_install "apt-get needs root, and there is no sudo" "$missing"
  exit 0
fi

echo "bootstrap: installing $missing with ${sudo:+sudo }apt-get (a minute or two)…"
# $sudo and $missing split into words on purpose: "sudo -n" or nothing, then one word per package.
# One package at a time: a name this distribution lacks (Ubuntu has no firefox-esr) stops only itself.
# shellcheck disable=SC2086
if $sudo apt-get update -qq; then
  for package in $missing; do
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null || true
  done
fi
missing=$(missing_programs)
if [ -z "$missing" ]; then
  print_installed
else
  print_what_to_install "${sudo:+sudo }apt-get did not install them all, see above" "$missing"
fi
exit 0
