#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded time each and prints the
# executions per target.
set -euo pipefail
cd "$(dirname "$0")/.."
time_per=${1:-20s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/func //' | sort -u); do
    echo "== $pkg $target ($time_per)"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$time_per" -fuzzminimizetime=200x "$pkg" 2>&1 | grep -E 'elapsed|PASS|FAIL|ok|failure' | tail -3
  done
done
