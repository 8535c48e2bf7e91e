#!/usr/bin/env bash
# Regenerates docs/report.png, the README's screenshot of an HTML report: the herd simulated
# for constant and exponential-full-jitter, written by `stagger simulate --html` and taken
# by headless Chromium (installed by install-chromium.sh if absent), 1280 px wide, the width the
# HTML report is held to by the browser test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-chromium.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo run -q --release -p stagger-cli -- simulate --workload herd \
  --policy constant,exponential,exponential-full-jitter,decorrelated-jitter --html "$tmp/herd.html" >/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1000 \
  --screenshot="$tmp/report.png" "file://$tmp/herd.html" 2>/dev/null
cp "$tmp/report.png" docs/report.png
echo "wrote docs/report.png"
