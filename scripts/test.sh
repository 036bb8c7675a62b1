#!/usr/bin/env bash
# The project's test command (README, .ci/run): vet, every Go test, a short
# fuzzing pass over every fuzz target, and the example user rule pack.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi

echo "== go test"
go test -count=1 ./...

echo "== fuzz (${FUZZTIME:=3s} per target)"
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "-- $pkg $target"
		go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$pkg" >/dev/null
	done
done
go run ./cmd/coroner rules test fixtures/rulepack-example
echo "ok"
