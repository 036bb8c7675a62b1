#!/usr/bin/env bash
# Renders a bundle's HTML report and takes a screenshot of it with headless
# Chromium: docs/seed-report.png, shown in the README, comes from here.
#
#   scripts/screenshot.sh [BUNDLE [OUT.png]]
#
# Needs Go and Chromium; it installs nothing. On Debian or Ubuntu:
#   apt-get install chromium
# The report loads nothing from the network, and Chromium runs with a
# throwaway profile and its background networking off.
set -euo pipefail
cd "$(dirname "$0")/.."

bundle=${1:-fixtures/seed/flashinfer-sm120-hang}
out=${2:-docs/seed-report.png}

browser=""
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then
		browser=$b
		break
	fi
done
if [ -z "$browser" ]; then
	echo "screenshot: no Chromium found; install it (Debian/Ubuntu: apt-get install chromium)" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/coroner analyze --fail-on never --format html -o "$tmp/report.html" "$bundle"
mkdir -p "$(dirname "$out")"
case $out in
/*) abs=$out ;;
*) abs=$PWD/$out ;;
esac
"$browser" --headless --no-sandbox --disable-gpu \
	--disable-background-networking --disable-component-update --disable-sync \
	--no-first-run --user-data-dir="$tmp/profile" \
	--hide-scrollbars --force-device-scale-factor=1 \
	--screenshot="$abs" --window-size=1280,2400 \
	"file://$tmp/report.html" 2>"$tmp/chromium.log" || {
	cat "$tmp/chromium.log" >&2
	exit 1
}
echo "wrote $out ($(wc -c <"$out") bytes)"
