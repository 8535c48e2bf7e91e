#!/usr/bin/env bash
# Installs Debian's Chromium, which the HTML report's browser test drives headless, unless it
# is already there. Exits 0 when `chromium` is on the PATH afterwards, 3 when it cannot be
# installed here (not root, no apt-get, or the package could not be fetched), saying why.
set -uo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "chromium is not installed, and installing it needs root (apt-get install chromium)" >&2
  exit 3
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is not installed, and there is no apt-get to install it with" >&2
  exit 3
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q chromium >/dev/null 2>&1; then
  apt-get update -q >/dev/null 2>&1
  if ! apt-get install -y -q chromium >/dev/null 2>&1; then
    echo "apt-get install chromium failed (offline, or no such package here)" >&2
    exit 3
  fi
fi
command -v chromium >/dev/null 2>&1 || { echo "chromium is still not on the PATH" >&2; exit 3; }
