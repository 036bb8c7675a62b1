#!/usr/bin/env bash
# The project's test command (README, .ci/run): vet, staticcheck, gofmt,
# every Go test, a short fuzzing pass over every fuzz target, and the example
# user rule pack.
# It needs no git checkout and reads nothing from stdin. Each step says how
# long it took; a step that fails says which, why, and with what output.
#
#   scripts/test.sh                 # everything (about 5 minutes on 2 cores, warm)
#   FUZZTIME=10s scripts/test.sh    # fuzz longer (default 1s per target)
#   FUZZTIME=0 scripts/test.sh      # no fuzzing (the seed corpora still run in go test)
#   STEPS="gofmt fuzz" FUZZPKGS=./parser/procs scripts/test.sh   # some steps, some packages
set -euo pipefail
cd "$(dirname "$0")/.."
exec </dev/null

FUZZTIME=${FUZZTIME:-1s}
STEPS=${STEPS:-vet staticcheck gofmt test fuzz rules}
# staticcheck is pinned: a new release brings new checks, which would fail
# CI on code that did not change. 0.8.2 is staticcheck 2026.2.2.
STATICCHECK_VERSION=v0.8.2
FUZZPKGS=${FUZZPKGS:-./...}
start=$SECONDS
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# step NAME CMD...: runs CMD, printing its output; on failure says which step
# failed and with what exit status, and stops.
step() {
	local name=$1 t0=$SECONDS rc=0
	shift
	echo "== $name"
	"$@" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $name (exit status $rc, after $((SECONDS - t0)) s); its output is above" >&2
		exit 1
	fi
	echo "   $name: ok in $((SECONDS - t0)) s"
}

# The Go files of every package, tests and build-constrained files included:
# from go list, so that no git checkout is needed.
gofiles() {
	go list -f '{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .CgoFiles}}{{$d}}/{{.}}
{{end}}{{range .TestGoFiles}}{{$d}}/{{.}}
{{end}}{{range .XTestGoFiles}}{{$d}}/{{.}}
{{end}}{{range .IgnoredGoFiles}}{{$d}}/{{.}}
{{end}}' ./... | sed '/^$/d'
}

check_gofmt() {
	local files unformatted
	files=$(gofiles)
	if [ -z "$files" ]; then
		echo "no Go files found (go list ./... listed none)" >&2
		return 1
	fi
	# Never gofmt with no file argument: it would read stdin.
	# shellcheck disable=SC2086
	unformatted=$(gofmt -l $files)
	if [ -n "$unformatted" ]; then
		echo "gofmt needed on (run gofmt -w on them):"
		echo "$unformatted"
		return 1
	fi
}

# staticcheck: the pinned release, installed with go install (from the Go
# module proxy, the one network CI has) unless that very version is already
# where go install puts it (GOBIN, or GOPATH's bin), then run on every
# package. Its findings are its output.
run_staticcheck() {
	local dir bin want out
	dir=$(go env GOBIN)
	if [ -z "$dir" ]; then
		dir=$(go env GOPATH)
		dir="${dir%%:*}/bin"
	fi
	bin="$dir/staticcheck"
	want="(${STATICCHECK_VERSION#v})"
	if ! "$bin" -version 2>/dev/null | grep -qF "$want"; then
		if ! out=$(go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" 2>&1); then
			echo "installing staticcheck $STATICCHECK_VERSION with go install FAILED (it needs the Go module proxy):" >&2
			echo "$out" >&2
			return 1
		fi
	fi
	"$bin" ./...
}

# fuzz: the test binaries of the packages with fuzz targets, built in one go
# command with coroner's own packages instrumented for coverage (what
# go test -fuzz does to every package, one package per command, which took
# most of the time), then each target for FUZZTIME from a fresh corpus
# cache, so that the smoke costs the same every time. A failing target
# prints its output: the failing input and where it was written.
#
# Go 1.26's fuzzing coordinator can fail a target with a bare "context
# deadline exceeded" at the end of -fuzztime, having found nothing: a race
# between its deadline and its workers' (go.dev/issue/75804, fixed in Go
# 1.27), which a loaded 2-core machine hits now and then (twice in a row
# for one target in a run beside other builds). A target that fails so,
# without writing a failing input, runs again, up to three times in all,
# and fails only if every run does; one that writes an input fails at once.
fuzz() {
	local pkg dir targets target bin out rc failed="" first=() second=() t0
	declare -A base dirs tgts
	# shellcheck disable=SC2086
	for pkg in $(go list $FUZZPKGS); do
		dir=$(go list -f '{{.Dir}}' "$pkg")
		targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
		[ -n "$targets" ] || continue
		dirs[$pkg]=$dir
		tgts[$pkg]=$targets
		# go test -c -o DIR/ names each binary after its package.
		if [ -n "${base[$(basename "$dir")]:-}" ]; then second+=("$pkg"); else first+=("$pkg"); fi
		base[$(basename "$dir")]=1
	done
	mkdir -p "$log/bin1" "$log/bin2"
	t0=$SECONDS
	for group in 1 2; do
		local pkgs=("${first[@]}")
		[ "$group" = 2 ] && pkgs=("${second[@]}")
		[ "${#pkgs[@]}" -gt 0 ] || continue
		if ! out=$(go test -c -gcflags='github.com/coroner-dev/coroner/...=-d=libfuzzer' -o "$log/bin$group/" "${pkgs[@]}" 2>&1); then
			echo "building the fuzzing test binaries FAILED:" >&2
			echo "$out" >&2
			return 1
		fi
	done
	echo "-- built ${#dirs[@]} test binaries in $((SECONDS - t0)) s"
	for pkg in "${first[@]}" "${second[@]}"; do
		dir=${dirs[$pkg]}
		bin="$log/bin1/$(basename "$dir").test"
		for p in "${second[@]}"; do [ "$p" = "$pkg" ] && bin="$log/bin2/$(basename "$dir").test"; done
		for target in ${tgts[$pkg]}; do
			t0=$SECONDS
			local inputs try
			for try in 1 2 3; do
				inputs=$(ls "$dir/testdata/fuzz/$target" 2>/dev/null || true)
				rc=0
				out=$(cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^${target}\$" -test.fuzztime="$FUZZTIME" \
					-test.fuzzcachedir="$log/cache/$pkg/$target" 2>&1) || rc=$?
				if [ "$rc" -ne 0 ] && [ "$try" -lt 3 ] && [[ "$out" == *"context deadline exceeded"* ]] &&
					[ "$(ls "$dir/testdata/fuzz/$target" 2>/dev/null || true)" = "$inputs" ]; then
					echo "-- $pkg $target: Go's fuzzing deadline race (go.dev/issue/75804), no failing input written: again"
					continue
				fi
				break
			done
			if [ "$rc" -ne 0 ]; then
				echo "-- $pkg $target FAILED (exit status $rc) after $((SECONDS - t0)) s; its output:" >&2
				echo "$out" >&2
				echo "   (a failing input is written under $dir/testdata/fuzz/$target/; go test -run '$target' $pkg replays it)" >&2
				failed="$failed $pkg.$target"
				continue
			fi
			echo "-- $pkg $target: ok in $((SECONDS - t0)) s"
		done
	done
	if [ -n "$failed" ]; then
		echo "fuzzing failed in:$failed" >&2
		return 1
	fi
}

want() { [[ " $STEPS " == *" $1 "* ]]; }

want vet && step "go vet" go vet ./...
want staticcheck && step "staticcheck $STATICCHECK_VERSION" run_staticcheck
want gofmt && step "gofmt" check_gofmt
want test && step "go test" go test -count=1 ./...
if want fuzz && [ "$FUZZTIME" != "0" ]; then
	step "fuzz ($FUZZTIME per target)" fuzz
fi
want rules && step "rules test fixtures/rulepack-example" go run ./cmd/coroner rules test fixtures/rulepack-example
echo "ok: $STEPS: passed in $((SECONDS - start)) s"
