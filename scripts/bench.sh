#!/usr/bin/env bash
# Benchmarks behind "make bench": verification of logs of 100 / 1 000 /
# 10 000 / 100 000 entries (every 10th a release update approved by a second person),
# the cost of "rsl record", peak memory, a CPU profile of the largest
# verification, and batched object reading (git cat-file --batch vs go-git).
#
# Repositories are generated in-process by internal/testing/benchrepo (no process
# per entry) and cached in .bench/ (or $GIT_SECURE_BENCH_CACHE), keyed by
# size; a re-run reuses them. Raw "go test -bench" output (benchstat input),
# the profile and the CLI measurements go to .bench/results/. A summary table
# is printed at the end.
#
# Environment: BENCH_SIZES (default "100 1000 10000 100000 1000000"; the CLI is
# timed at every size, the Go benchmarks at BENCH_GO_SIZES, default the
# sizes up to 10 000), BENCH_COUNT (runs per Go benchmark and per CLI
# measure, default 3), BENCH_CLI_RECORDS (CLI records timed, default 15),
# BENCH_CLONE_ENTRIES (entries of the repository cloned, default 1 000),
# BENCH_RT=1 (root: the timed CLI records run under chrt -f 10, an idle
# machine's scheduling on a loaded one; see docs/scaling.md, session 14).
# Every command timed through the binary is run under /usr/bin/time -v: its
# wall time, CPU and peak RSS are reported. 1 000 000 entries: generated
# once (5 min 17 s and 3 GB of memory at load 5-20 on 2 cores, 946 MB in the
# cache), then verified in full once per run (4 min 30 s there): leave it
# out of BENCH_SIZES for a quick run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export GIT_SECURE_BENCH_CACHE="${GIT_SECURE_BENCH_CACHE:-$ROOT/.bench}"
SIZES="${BENCH_SIZES:-100 1000 10000 100000 1000000}"
GO_SIZES="${BENCH_GO_SIZES:-$(printf '%s\n' $SIZES | awk '$1 <= 10000' | paste -sd' ' -)}"
COUNT="${BENCH_COUNT:-3}"
CLI_RECORDS="${BENCH_CLI_RECORDS:-15}"
RT=
if [ "${BENCH_RT:-}" = 1 ] && command -v chrt >/dev/null; then RT=1; fi
CLONE_ENTRIES="${BENCH_CLONE_ENTRIES:-1000}"
OUT="$GIT_SECURE_BENCH_CACHE/results"
BIN="$ROOT/bin/git-secure"
mkdir -p "$OUT"
rm -f "$OUT"/*.txt
T0=$(date +%s)

log() { printf '\n== %s\n' "$*" >&2; }
sizes_csv=$(echo $GO_SIZES | tr ' ' ',')
largest=$(printf '%s\n' $GO_SIZES | sort -n | tail -1)
# Record benchmarks: the sizes >= 1000 (the brief's 1 000, and the largest
# to show the cost does not grow), else the largest.
rec_sizes=$(printf '%s\n' $GO_SIZES | awk '$1 >= 1000' | paste -sd, -)
[ -n "$rec_sizes" ] || rec_sizes=$largest
rec_base=$(echo "$rec_sizes" | cut -d, -f1)

# A hermetic environment for git and the git-secure binary.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_COMMON_DIR || true

if [ ! -x "$BIN" ]; then
  log "building $BIN"
  CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$BIN" ./cmd/git-secure
fi

{
  echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(go version | cut -d' ' -f3), $(git --version)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine.txt"

# --- 1. repositories -------------------------------------------------------
log "1/6 benchmark repositories ($SIZES entries; cache $GIT_SECURE_BENCH_CACHE)"
go run ./internal/testing/benchrepo/cmd/mkbenchrepo $SIZES | tee "$OUT/generate.txt"
repo_dir() { awk -v n="$1" '$1 == n { print $6 }' "$OUT/generate.txt"; }

# --- 2. verification -------------------------------------------------------
log "2/6 go test -bench BenchmarkVerify (count $COUNT) and BenchmarkVerifyPhases"
GIT_SECURE_BENCH_SIZES=$sizes_csv go test -run '^$' -bench '^BenchmarkVerify$' -count "$COUNT" ./internal/verify | tee "$OUT/verify.txt"
GIT_SECURE_BENCH_SIZES=$sizes_csv go test -run '^$' -bench '^BenchmarkVerifyPhases$' -count 1 ./internal/verify | tee "$OUT/phases.txt"
# Rule files (delegations): the same verification with 100 rule files, and
# with 10 000 persons (issue 19), at 1 000 entries and the largest size.
rf_sizes=$(printf '%s\n' "$rec_base" "$largest" | sort -nu | paste -sd, -)
GIT_SECURE_BENCH_SIZES=$rf_sizes go test -run '^$' -bench '^BenchmarkVerifyRuleFiles$' -count 1 ./internal/verify | tee "$OUT/rulefiles.txt"

log "3/6 CPU profile of the $largest-entry verification"
GIT_SECURE_BENCH_SIZES=$largest go test -run '^$' -bench '^BenchmarkVerify$' -benchtime 2x -count 1 \
  -cpuprofile "$OUT/verify-$largest.cpu.prof" -o "$OUT/verify.test" ./internal/verify >"$OUT/profile-run.txt"
go tool pprof -top -nodecount=15 "$OUT/verify.test" "$OUT/verify-$largest.cpu.prof" 2>/dev/null >"$OUT/pprof-top.txt"
go tool pprof -top -cum -unit=ms -nodecount=1000 "$OUT/verify.test" "$OUT/verify-$largest.cpu.prof" 2>/dev/null >"$OUT/pprof-cum.txt"

# --- 3. rsl record ---------------------------------------------------------
log "4/6 go test -bench BenchmarkRecord (entries $rec_sizes, count $COUNT)"
GIT_SECURE_BENCH_RECORD_SIZES=$rec_sizes go test -run '^$' -bench '^BenchmarkRecord$' -count "$COUNT" ./internal/porcelain | tee "$OUT/record.txt"

# --- 4. the CLI: verify wall time and peak RSS, rsl record per entry --------
log "5/6 bin/git-secure under /usr/bin/time: verify --full, rsl record"
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# timed NAME DIR CMD...: runs CMD in DIR under /usr/bin/time -v, appends
# "NAME wall-s rss-KB cpu-s" to $OUT/cli-timed.txt; the output is in
# $OUT/timed.out.
timed() {
  local name=$1 dir=$2; shift 2
  if command -v /usr/bin/time >/dev/null; then
    (cd "$dir" && /usr/bin/time -v -o "$OUT/timed.time" "$@" >"$OUT/timed.out" 2>&1 </dev/null) || true
    awk -v name="$name" -F': ' '
      /Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (k = 1; k <= n; k++) s = s * 60 + t[k]; w = s }
      /Maximum resident set size/ { r = $2 }
      /User time|System time/ { c += $2 }
      END { print name, w, r, c }' "$OUT/timed.time" >>"$OUT/cli-timed.txt"
  else
    local s e
    s=$(date +%s%N); (cd "$dir" && "$@" >"$OUT/timed.out" 2>&1 </dev/null) || true; e=$(date +%s%N)
    echo "$name $(awk -v d=$((e - s)) 'BEGIN { print d / 1e9 }') n/a n/a" >>"$OUT/cli-timed.txt"
  fi
}
# cli NAME FIELD: median of a field (2 wall, 3 rss KB, 4 cpu) of NAME's runs.
cli() { awk -v n="$1" -v f="$2" '$1 == n { print $f }' "$OUT/cli-timed.txt" 2>/dev/null | median; }
for n in $SIZES; do
  [ "$n" -ge 1000 ] || continue
  gd="$(repo_dir "$n")/repo.git"
  runs=$COUNT
  [ "$n" -lt 100000 ] || runs=1
  rm -f "$gd/secure/checkpoint.json" "$gd/secure/index"
  for i in $(seq "$runs"); do
    if command -v /usr/bin/time >/dev/null; then
      (cd "$gd" && /usr/bin/time -v -o "$OUT/cli-verify-$n-$i.time" "$BIN" verify --full >"$OUT/cli-verify-$n-$i.out" 2>&1 </dev/null) || true
      rss=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$OUT/cli-verify-$n-$i.time")
      wall=$(awk '/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); s = 0; for (k = 1; k <= n; k++) s = s * 60 + t[k]; print s }' "$OUT/cli-verify-$n-$i.time")
      cpu=$(awk -F: '/User time|System time/ { s += $2 } END { print s }' "$OUT/cli-verify-$n-$i.time")
    else
      s=$(date +%s%N); (cd "$gd" && "$BIN" verify --full >"$OUT/cli-verify-$n-$i.out" 2>&1 </dev/null) || true; e=$(date +%s%N)
      rss=n/a; cpu=n/a; wall=$(awk -v d=$((e - s)) 'BEGIN { print d / 1e9 }')
    fi
    grep -q "^verified $n entries" "$OUT/cli-verify-$n-$i.out" || { echo "bin/git-secure verify failed on $gd:" >&2; cat "$OUT/cli-verify-$n-$i.out" >&2; exit 1; }
    echo "$n $wall $rss $cpu" >>"$OUT/cli-verify.txt"
  done
  rm -f "$gd/secure/checkpoint.json" "$gd/secure/index"
  # rsl log and verify --at, from the checkpoint and index that a
  # verification leaves; and one new entry verified (incremental).
  (cd "$gd" && "$BIN" verify >/dev/null 2>&1 </dev/null) || true
  old=$(git -C "$gd" log --format=%H -n1 --skip=$((n / 3)) refs/heads/main)
  for i in $(seq "$COUNT"); do
    timed "rsl-log-n20-$n" "$gd" "$BIN" rsl log -n 20
    timed "verify-at-$n" "$gd" "$BIN" verify main --at "$old"
    grep -q "was a verified state" "$OUT/timed.out" || { echo "verify --at failed on $gd:" >&2; cat "$OUT/timed.out" >&2; exit 1; }
    timed "verify-incremental-$n" "$gd" "$BIN" verify
  done
  rm -f "$gd/secure/checkpoint.json" "$gd/secure/index"
done
[ -f "$OUT/cli-verify.txt" ] && cat "$OUT/cli-verify.txt"
[ -f "$OUT/cli-timed.txt" ] && cat "$OUT/cli-timed.txt"

# rsl record through the binary on a copy of the repository of $rec_base
# entries: move main to the next commit (not timed), record (timed).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a "$(repo_dir "$rec_base")" "$tmp/r"
gd="$tmp/r/repo.git"
key="$tmp/r/keys/alice"
cur=$(git -C "$gd" rev-parse refs/heads/main)
git -C "$gd" rev-list --reverse "refs/heads/main..refs/bench/spare" >"$tmp/spare.all"
head -n $((CLI_RECORDS + 1)) "$tmp/spare.all" >"$tmp/spare"
# us_now sets t to the time in microseconds, without starting a process
# where bash has EPOCHREALTIME (5.0 and later).
us_now() {
  if [ -n "${EPOCHREALTIME:-}" ]; then t=${EPOCHREALTIME/[.,]/}; else t=$(($(date +%s%N) / 1000)); fi
}
i=0
# BENCH_RT: this shell and all it starts (the timer too) run as
# SCHED_FIFO until the loop ends.
[ -z "$RT" ] || chrt -f -p 10 $$
while read -r next; do
  i=$((i + 1))
  git -C "$gd" update-ref refs/heads/main "$next" "$cur" </dev/null
  cur=$next
  if [ "$i" -le "$CLI_RECORDS" ]; then
    # The clock is read in this shell (no date process, no subshell)
    # right around the record: what is timed is /usr/bin/time starting
    # the record, the record and its git processes.
    # CPU: the shell's children's user and system time (bash's times
    # builtin, millisecond resolution, no process) before and after:
    # /usr/bin/time prints hundredths of a second, which made a 10 ms
    # record read as 0.0 ms of CPU (and pass).
    cd "$gd"
    times >"$tmp/t0"
    us_now; s=$t
    "$BIN" rsl record --key "$key" main >"$tmp/rec.out" 2>&1 </dev/null || { cat "$tmp/rec.out" >&2; exit 1; }
    us_now; e=$t
    times >"$tmp/t1"
    cd "$ROOT"
    echo $((e - s)) >>"$OUT/cli-record-us.txt"
    cat "$tmp/t0" "$tmp/t1" | awk '
      function us(x) { split(x, a, "m"); sub(/s$/, "", a[2]); return (a[1] * 60 + a[2]) * 1e6 }
      NR == 2 { c0 = us($1) + us($2) } NR == 4 { printf "%d\n", us($1) + us($2) - c0 }' >>"$OUT/cli-record-cpu-us.txt"
  else
    # One more, counting the git processes it starts.
    mkdir -p "$tmp/shim"
    printf '#!/bin/sh\necho "$*" >>"%s"\nexec "%s" "$@"\n' "$tmp/shim/log" "$(command -v git)" >"$tmp/shim/git"
    chmod +x "$tmp/shim/git"
    # Its peak RSS too (/usr/bin/time: the largest process of its tree).
    if [ -x /usr/bin/time ]; then
      (cd "$gd" && PATH="$tmp/shim:$PATH" /usr/bin/time -f '%M' -o "$tmp/rec.time" "$BIN" rsl record --key "$key" main >"$tmp/rec.out" 2>&1 </dev/null) || { cat "$tmp/rec.out" >&2; exit 1; }
      cat "$tmp/rec.time" >>"$OUT/cli-record-rss-kb.txt"
    else
      (cd "$gd" && PATH="$tmp/shim:$PATH" "$BIN" rsl record --key "$key" main >"$tmp/rec.out" 2>&1 </dev/null) || { cat "$tmp/rec.out" >&2; exit 1; }
    fi
    # No log at all: the record started no git process (session 15: the
    # log's ref is moved in-process).
    if [ -f "$tmp/shim/log" ]; then cp "$tmp/shim/log" "$OUT/cli-record-git-processes.txt"; else : >"$OUT/cli-record-git-processes.txt"; fi
  fi
done <"$tmp/spare"
[ -z "$RT" ] || chrt -o -p 0 $$
(cd "$gd" && "$BIN" verify --full >"$tmp/verify.out" 2>&1) || { echo "the copy does not verify after CLI records:" >&2; cat "$tmp/verify.out" >&2; exit 1; }
echo "CLI rsl record${RT:+ (chrt -f 10)}, µs per entry: $(tr '\n' ' ' <"$OUT/cli-record-us.txt")(median $(median <"$OUT/cli-record-us.txt"))"
echo "git processes per CLI record: $(wc -l <"$OUT/cli-record-git-processes.txt"): $(awk '{ print $1 }' "$OUT/cli-record-git-processes.txt" | paste -sd' ' -)"

# --- 5. batched object reading --------------------------------------------
log "6/6 go test -bench BenchmarkReadCommits5000 ./internal/gitrepo (count $COUNT)"
go test -run '^$' -bench '^BenchmarkReadCommits5000$' -count "$COUNT" ./internal/gitrepo | tee "$OUT/readcommits.txt"
# go-git on the same shape: a module of its own (bench/gogit), so that
# git-secure's go.mod does not require go-git.
( cd bench/gogit && go test -run '^$' -bench '^BenchmarkReadCommits5000$' -count "$COUNT" . ) | tee -a "$OUT/readcommits.txt"

# --- summary ---------------------------------------------------------------
# metric FILE NAME UNIT: median over the -count runs of benchmark NAME.
metric() {
  awk -v name="$2" -v unit="$3" '
    $1 == name || (index($1, name "-") == 1 && substr($1, length(name) + 2) ~ /^[0-9]+$/) {
      for (i = 3; i <= NF; i++) if ($i == unit) print $(i - 1)
    }' "$1" | median
}
# num FORMAT EXPR: awk arithmetic, "n/a" if an operand is n/a.
num() { case "$2" in *n/a*) echo n/a ;; *) awk "BEGIN { printf \"$1\", $2 }" ;; esac; }
pass() { case "$1" in *n/a*) echo "?" ;; *) awk "BEGIN { print (($1) ? \"PASS\" : \"FAIL\") }" ;; esac; }
cum_ms() { awk -v f="$1" '$6 == f { v = $4; sub(/ms$/, "", v); print v; exit }' "$OUT/pprof-cum.txt"; }

{
echo
echo "================================ git-secure benchmarks ================================"
cat "$OUT/machine.txt"
echo "load average at end:   $(cut -d' ' -f1-3 /proc/loadavg)   (other work on the machine inflates wall times; cpu/entry is this process only)"
echo
echo "Generated repositories (internal/testing/benchrepo; one pack written in-process, no process per entry)"
printf '  %-8s %-7s %9s %9s %9s\n' entries status build-s objects pack-MB
while read -r n st secs objs bytes dir; do
  printf '  %-8s %-7s %9s %9s %9s\n' "$n" "$st" "$secs" "$objs" "$(num '%.1f' "$bytes/1048576")"
done <"$OUT/generate.txt"
echo
echo "1. Full verification, verify.Verify on the whole log (every 10th entry a release update with bob's approval)"
echo "  (total-ms, us/entry: BenchmarkVerify wall time; cpu-us/entry: the Go process; peak heap and alloc in MB;"
echo "   cli-*: bin/git-secure verify --full under /usr/bin/time, median of 3, CPU including git cat-file)"
printf '  %-8s %10s %10s %12s %9s %9s %10s %9s %10s\n' entries total-ms us/entry cpu-us/entry peak-heap alloc-MB cli-wall-s cli-cpu-s cli-RSS-MB
for n in $SIZES; do
  b="BenchmarkVerify/entries=$n"
  t=$(metric "$OUT/verify.txt" "$b" ns/op)
  cw=n/a; cr=n/a; cc=n/a
  if [ -f "$OUT/cli-verify.txt" ] && grep -q "^$n " "$OUT/cli-verify.txt"; then
    cw=$(awk -v n="$n" '$1 == n { print $2 }' "$OUT/cli-verify.txt" | median)
    cc=$(awk -v n="$n" '$1 == n { print $4 }' "$OUT/cli-verify.txt" | median)
    cr=$(awk -v n="$n" '$1 == n { print $3 }' "$OUT/cli-verify.txt" | median)
    cr=$(num '%.1f' "$cr/1024")
  fi
  printf '  %-8s %10s %10s %12s %9s %9s %10s %9s %10s\n' "$n" \
    "$(num '%.1f' "$t/1e6")" \
    "$(num '%.1f' "$(metric "$OUT/verify.txt" "$b" ns/entry)/1e3")" \
    "$(num '%.1f' "$(metric "$OUT/verify.txt" "$b" cpu-ns/entry)/1e3")" \
    "$(num '%.1f' "$(metric "$OUT/verify.txt" "$b" peak-heap-MB)")" \
    "$(num '%.1f' "$(metric "$OUT/verify.txt" "$b" B/op)/1048576")" \
    "$cw" "$cc" "$cr"
done
set -- $(printf "%s\n" $GO_SIZES | sort -n)
small=$1; big=${!#}
ts=$(metric "$OUT/verify.txt" "BenchmarkVerify/entries=$small" ns/op)
tb=$(metric "$OUT/verify.txt" "BenchmarkVerify/entries=$big" ns/op)
# Marginal cost per entry between consecutive sizes: constant when the cost
# per entry does not depend on the log's length (fixed costs cancel out).
first_m=""; last_m=""; prev=""
for n in "$@"; do
  t=$(metric "$OUT/verify.txt" "BenchmarkVerify/entries=$n" ns/op)
  if [ -n "$prev" ]; then
    m=$(num '%.1f' "($t - $pt)/($n - $prev)/1e3")
    echo "  marginal cost per entry, $prev -> $n entries: $m us"
    [ -n "$first_m" ] || first_m=$m
    last_m=$m
  fi
  prev=$n; pt=$t
done
echo
echo "   Phases, run one by one (BenchmarkVerifyPhases): wall us per entry; approvals per approval."
echo "   'pipelined' and 'indexed' are the suggested fixes, measured in test code (see bench_test.go)."
printf '  %-8s %12s %10s %9s %7s %16s %10s %8s\n' entries read-objects pipelined read-log parse 'signatures(1cpu)' approvals indexed
for n in $GO_SIZES; do
  p="BenchmarkVerifyPhases/entries=$n"
  printf '  %-8s %12s %10s %9s %7s %16s %10s %8s\n' "$n" \
    "$(num '%.1f' "$(metric "$OUT/phases.txt" "$p/read-objects" ns/entry)/1e3")" \
    "$(num '%.1f' "$(metric "$OUT/phases.txt" "$p/read-objects-pipelined" ns/entry)/1e3")" \
    "$(num '%.1f' "$(metric "$OUT/phases.txt" "$p/read-log" ns/entry)/1e3")" \
    "$(num '%.1f' "$(metric "$OUT/phases.txt" "$p/parse" ns/entry)/1e3")" \
    "$(num '%.1f' "$(metric "$OUT/phases.txt" "$p/signatures" ns/entry)/1e3")" \
    "$(num '%.1f' "$(metric "$OUT/phases.txt" "$p/approvals" ns/approval)/1e3")" \
    "$(num '%.1f' "$(metric "$OUT/phases.txt" "$p/approvals-indexed" ns/approval)/1e3")"
done
echo
total=$(awk '/Total samples/ { v = $(NF - 1); print v }' "$OUT/pprof-top.txt")
total_ms=$(awk -v v="$total" 'BEGIN { if (v ~ /ms$/) { sub(/ms$/, "", v); print v } else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 } else print "n/a" }')
echo "   CPU profile of $largest entries (go test -cpuprofile, 3 verifications; $OUT/pprof-top.txt), share of $total:"
while IFS='|' read -r f label; do
  full=$f
  case $f in verify.* | attest.* | gitrepo.* | rsl.* | sign.*) full="github.com/git-secure/git-secure/internal/$f" ;; esac
  v=$(cum_ms "$full")
  [ -n "$v" ] || continue
  printf '    %-34s %-32s %8s ms %6s%%\n' "$f" "$label" "$v" "$(num '%.1f' "100*$v/$total_ms")"
done <<'EOF'
verify.(*verifier).checkSignature|entry signatures (2 goroutines)
sign.VerifySSHSig|  of which SSHSIG checks
crypto/ed25519.Verify|ed25519 (entries and approvals)
verify.(*verifier).replayWindow|replay: rules, approvals
verify.Approvers|  of which approvals
attest.(*Store).readDir|    of which store reads
gitrepo.ParseTree|    of which tree parsing
attest.(*Envelope).Verify|    of which envelope signatures
gitrepo.(*Repo).ReadCommitsPipelined|reading the log (pipelined)
gitrepo.(*catFile).read|  of which cat-file I/O
gitrepo.ParseCommit|  of which commit parsing
rsl.FromCommit|  of which entry decoding
verify.(*verifier).checkCurrent|current refs
runtime.gcBgMarkWorker|GC (background)
EOF
echo
echo "2. rsl record, one entry (ms; git processes included)"
printf '  %-8s %10s %10s %18s\n' entries main/warm main/cold release+approval
for n in $(echo "$rec_sizes" | tr , ' '); do
  r="BenchmarkRecord/entries=$n"
  printf '  %-8s %10s %10s %18s\n' "$n" \
    "$(num '%.1f' "$(metric "$OUT/record.txt" "$r/main/warm" ns/op)/1e6")" \
    "$(num '%.1f' "$(metric "$OUT/record.txt" "$r/main/cold" ns/op)/1e6")" \
    "$(num '%.1f' "$(metric "$OUT/record.txt" "$r/release/warm" ns/op)/1e6")"
done
cli_rec=$(median <"$OUT/cli-record-us.txt")
cli_rec_cpu=n/a
[ -f "$OUT/cli-record-cpu-us.txt" ] && cli_rec_cpu=$(median <"$OUT/cli-record-cpu-us.txt")
echo "  CLI: bin/git-secure rsl record main ($rec_base entries, median of $CLI_RECORDS): $(num '%.1f' "$cli_rec/1e3") ms wall, $(num '%.1f' "$cli_rec_cpu/1e3") ms CPU (git-secure + its git processes)"
echo "       $(wc -l <"$OUT/cli-record-git-processes.txt") git processes per record: $(awk '{ print $1 }' "$OUT/cli-record-git-processes.txt" | paste -sd' ' -)"
echo
echo "3. Object reads, 5 000 commits (internal/gitrepo BenchmarkReadCommits5000, ns/commit)"
for s in batch go-git process-per-commit-200; do
  printf '  %-26s %10s\n' "$s" "$(num '%.0f' "$(metric "$OUT/readcommits.txt" "BenchmarkReadCommits5000/$s" ns/commit)")"
done
echo
echo "4. Hook overhead (internal/testing/e2e benchmarks): git commit with and without git-secure's hooks, alternately (BenchmarkCommitPair); git push of one commit per transport:"
echo "   plain = plain git to a server without git-secure; secure = through git-remote-secure (records, signs, pushes atomically)"
echo "   to an enforcing server; the two alternate push by push (BenchmarkPushPair), so both see the machine as it is at that moment."
echo "   to-enforcing = plain git pushing an unprotected branch to an enforcing server (its pre-receive hook's share), measured apart."
echo "   git clone URL against git clone secure::URL of a generated $CLONE_ENTRIES-entry repository, alternately (BenchmarkClonePair)."
echo "   CPU: the processes the benchmark waited for (getrusage): both sides over file:// and http-backend, the client only over git daemon."
( cd internal/testing/e2e && go test -run '^$' -bench 'Commit|PushPair|PushPlainToEnforcing' -benchtime="${HOOK_BENCH_N:-20}x" -count="${BENCH_COUNT:-3}" . ) >"$OUT/hooks.txt" 2>&1 || true
( cd internal/testing/e2e && GIT_SECURE_BENCH_CLONE_ENTRIES=$CLONE_ENTRIES go test -run '^$' -bench 'ClonePair' -benchtime="${CLONE_BENCH_N:-5}x" -count="${BENCH_COUNT:-3}" . ) >>"$OUT/hooks.txt" 2>&1 || true
# BenchmarkCommitPair: plain and hooked commits alternate round by round;
# the ratio judged is the median round's (paired-ratio), median of the runs.
commit_ratio=$(metric "$OUT/hooks.txt" BenchmarkCommitPair paired-ratio)
printf '  %-26s %10s ms   with hooks %10s ms   ratio %s (median round %s)   CPU ratio %s\n' "git commit" \
  "$(num '%.1f' "$(metric "$OUT/hooks.txt" BenchmarkCommitPair plain-ms)")" "$(num '%.1f' "$(metric "$OUT/hooks.txt" BenchmarkCommitPair secure-ms)")" \
  "$(num '%.2f' "$(metric "$OUT/hooks.txt" BenchmarkCommitPair ratio)")" "$(num '%.2f' "$commit_ratio")" "$(num '%.2f' "$(metric "$OUT/hooks.txt" BenchmarkCommitPair cpu-ratio)")"
push_ratios=""
for tr in file git-daemon http-backend; do
  pp=$(metric "$OUT/hooks.txt" "BenchmarkPushPair/$tr" plain-ms)
  ps=$(metric "$OUT/hooks.txt" "BenchmarkPushPair/$tr" secure-ms)
  pr=$(metric "$OUT/hooks.txt" "BenchmarkPushPair/$tr" ratio)
  pe=$(metric "$OUT/hooks.txt" "BenchmarkPushPlainToEnforcing/$tr" ns/op)
  pc=$(metric "$OUT/hooks.txt" "BenchmarkPushPair/$tr" cpu-ratio)
  printf '  git push %-17s plain %6s ms   secure %6s ms   ratio %s   CPU ratio %s   (to-enforcing %6s ms)\n' "($tr)" "$(num '%.1f' "$pp")" "$(num '%.1f' "$ps")" "$(num '%.2f' "$pr")" "$(num '%.2f' "$pc")" "$(num '%.1f' "$pe/1e6")"
  push_ratios="$push_ratios $tr $(num '%.2f' "$pr")x $(pass "$pr <= 2");"
done
for tr in file git-daemon http-backend; do
  printf '  git clone %-16s plain %6s ms   secure %6s ms   ratio %s   CPU %6s / %6s ms, ratio %s\n' "($tr)" \
    "$(num '%.1f' "$(metric "$OUT/hooks.txt" "BenchmarkClonePair/$tr" plain-ms)")" "$(num '%.1f' "$(metric "$OUT/hooks.txt" "BenchmarkClonePair/$tr" secure-ms)")" \
    "$(num '%.2f' "$(metric "$OUT/hooks.txt" "BenchmarkClonePair/$tr" ratio)")" \
    "$(num '%.1f' "$(metric "$OUT/hooks.txt" "BenchmarkClonePair/$tr" plain-cpu-ms)")" "$(num '%.1f' "$(metric "$OUT/hooks.txt" "BenchmarkClonePair/$tr" secure-cpu-ms)")" \
    "$(num '%.2f' "$(metric "$OUT/hooks.txt" "BenchmarkClonePair/$tr" cpu-ratio)")"
done
echo
for rn in $(echo "$rf_sizes" | tr , ' '); do
echo "5. Rule files (BenchmarkVerifyRuleFiles, $rn entries, ns/entry): the bench policy; with one path rule on main and release; with 100 rule files; with those and 10 000 persons (policy.MaxPersons)"
for v in rulefiles=0 rulefiles=0+pathrule rulefiles=100 rulefiles=100+persons=10000; do
  printf '  %-30s %10s us/entry\n' "$v" "$(num '%.0f' "$(metric "$OUT/rulefiles.txt" "BenchmarkVerifyRuleFiles/entries=$rn/$v" ns/entry)/1e3")"
done
printf '  %-30s %10s ms (per policy entry)\n' "decode 100 rule files" "$(num '%.1f' "$(metric "$OUT/rulefiles.txt" "BenchmarkVerifyRuleFiles/entries=$rn/load-100" ns/op)/1e6")"
printf '  %-30s %10s ms (per policy entry)\n' "decode those + 10 000 persons" "$(num '%.1f' "$(metric "$OUT/rulefiles.txt" "BenchmarkVerifyRuleFiles/entries=$rn/load-100+persons=10000" ns/op)/1e6")"
done
echo
echo "Targets"
v_big=$(num '%.2f' "$tb/1e9")
echo "  verify $big entries < 2 s:                  ${v_big} s   $(pass "$tb < 2e9")"
if [ -n "$first_m" ] && [ "$first_m" != "$last_m" ]; then
  echo "  per-entry cost constant (marginal us/entry $first_m -> $last_m, ratio <= 1.25): $(num '%.2f' "$last_m/$first_m")   $(pass "$last_m/$first_m <= 1.25")"
elif [ -n "$first_m" ]; then
  echo "  per-entry cost constant ($small -> $big, us/entry ratio <= 1.25): $(num '%.2f' "($tb/$big)/($ts/$small)")   $(pass "($tb/$big)/($ts/$small) <= 1.25")"
fi
rm_warm=$(metric "$OUT/record.txt" "BenchmarkRecord/entries=$rec_base/main/warm" ns/op)
echo "  rsl record <= 10 ms per entry:             warm $(num '%.1f' "$rm_warm/1e6") ms $(pass "$rm_warm <= 1e7"), CLI $(num '%.1f' "$cli_rec/1e3") ms wall $(pass "$cli_rec <= 1e4"), $(num '%.1f' "$cli_rec_cpu/1e3") ms CPU $(pass "$cli_rec_cpu <= 1e4")"
# Issue 19: 100 rule files and 10 000 persons, the policy decoded once,
# within 2x of the plain verification at the largest size (10 000); and
# within 2x of the same path rules without rule files or persons (every
# entry on main or release then needs a tree diff, whatever the files).
rf_v=$(metric "$OUT/rulefiles.txt" "BenchmarkVerifyRuleFiles/entries=$largest/rulefiles=100+persons=10000" ns/op)
rf_l=$(metric "$OUT/rulefiles.txt" "BenchmarkVerifyRuleFiles/entries=$largest/load-100+persons=10000" ns/op)
rf_p=$(metric "$OUT/verify.txt" "BenchmarkVerify/entries=$largest" ns/op)
rf_pr=$(metric "$OUT/rulefiles.txt" "BenchmarkVerifyRuleFiles/entries=$largest/rulefiles=0+pathrule" ns/op)
echo "  verify $largest entries, 100 rule files + 10 000 persons (policy decoded once) <= 2x plain: $(num '%.2f' "($rf_v + $rf_l)/1e9") s vs $(num '%.2f' "$rf_p/1e9") s, $(num '%.2f' "($rf_v + $rf_l)/$rf_p")x $(pass "$rf_v + $rf_l <= 2 * $rf_p")"
echo "    vs one path rule on main and release, no rule files: $(num '%.2f' "$rf_pr/1e9") s, $(num '%.2f' "($rf_v + $rf_l)/$rf_pr")x $(pass "$rf_v + $rf_l <= 2 * $rf_pr")"
t1000=$(metric "$OUT/verify.txt" "BenchmarkVerify/entries=1000" ns/op)
rss1000=$(awk '$1 == 1000 { print $3 }' "$OUT/cli-verify.txt" 2>/dev/null | median)
echo "  gittuf v0.15 reference (same machine kind): 1 000 entries verify 9.9 s, record 60 ms/entry, 45 MB"
echo "    git-secure:                               1 000 entries verify $(num '%.2f' "$t1000/1e9") s, record $(num '%.1f' "$cli_rec/1e3") ms/entry (CLI), $(num '%.1f' "$rss1000/1024") MB max RSS (CLI)"
echo
echo "  commit with hooks <= 1.5x a plain commit:    $(num '%.2f' "$commit_ratio")x $(pass "$commit_ratio <= 1.5")"
echo "  push through the helper <= 2x a plain push: $push_ratios"
echo
echo "Issue 18 targets (wall on this machine: see the load average above; CPU and RSS do not depend on it)"
echo "  CLI commands timed under /usr/bin/time -v (median of $COUNT; 1 run at >= 100 000 entries): wall s, CPU s, peak RSS MiB"
printf '    %-28s %8s %8s %9s\n' command wall-s cpu-s RSS-MiB
for n in $SIZES; do
  [ "$n" -ge 1000 ] || continue
  printf '    %-28s %8s %8s %9s\n' "verify --full ($n)" "$(awk -v n="$n" '$1 == n { print $2 }' "$OUT/cli-verify.txt" | median)" \
    "$(awk -v n="$n" '$1 == n { print $4 }' "$OUT/cli-verify.txt" | median)" "$(num '%.1f' "$(awk -v n="$n" '$1 == n { print $3 }' "$OUT/cli-verify.txt" | median)/1024")"
  for c in rsl-log-n20 verify-at verify-incremental; do
    printf '    %-28s %8s %8s %9s\n' "$c ($n)" "$(cli "$c-$n" 2)" "$(cli "$c-$n" 4)" "$(num '%.1f' "$(cli "$c-$n" 3)/1024")"
  done
done
rec_rss=$( [ -f "$OUT/cli-record-rss-kb.txt" ] && median <"$OUT/cli-record-rss-kb.txt" || echo n/a)
printf '    %-28s %8s %8s %9s\n' "rsl record ($rec_base)" "$(num '%.3f' "$cli_rec/1e6")" "$(num '%.3f' "$cli_rec_cpu/1e6")" "$(num '%.1f' "$rec_rss/1024")"
# The signature floor: one ed25519 check per entry plus one per approval
# (every 10th entry), 57 us each on one core of this machine kind.
floor10k=$(awk 'BEGIN { print 11000 * 57e-6 }')
w10k=$(awk '$1 == 10000 { print $2 }' "$OUT/cli-verify.txt" 2>/dev/null | median)
c10k=$(awk '$1 == 10000 { print $4 }' "$OUT/cli-verify.txt" 2>/dev/null | median)
echo "  full verify 10 000 <= 2x the signature floor ($(num '%.2f' "2*$floor10k") s): wall $w10k s $(pass "$w10k <= 2*$floor10k"), CPU $c10k s"
for n in 100000 1000000; do
  r=$(awk -v n="$n" '$1 == n { print $3 }' "$OUT/cli-verify.txt" 2>/dev/null | median)
  [ "$r" = n/a ] || echo "  peak RSS full verify $n <= 64 MiB:   $(num '%.1f' "$r/1024") MiB $(pass "$r <= 65536")"
done
a10k=$(metric "$OUT/verify.txt" "BenchmarkVerify/entries=10000" B/op)
echo "  allocations, 10 000 entries <= 30 MB: $(num '%.1f' "$a10k/1e6") MB $(pass "$a10k <= 30e6")"
echo "  rsl record <= 10 ms wall (CLI):       $(num '%.1f' "$cli_rec/1e3") ms $(pass "$cli_rec <= 1e4")"
for n in $SIZES; do
  [ "$n" -ge 10000 ] || continue
  l=$(cli "rsl-log-n20-$n" 2); a=$(cli "verify-at-$n" 2)
  echo "  rsl log first screen ($n) <= 50 ms: $(num '%.0f' "$l*1000") ms $(pass "$l <= 0.05") (CPU $(num '%.0f' "$(cli "rsl-log-n20-$n" 4)*1000") ms);  verify --at ($n) <= 100 ms: $(num '%.0f' "$a*1000") ms $(pass "$a <= 0.1") (CPU $(num '%.0f' "$(cli "verify-at-$n" 4)*1000") ms)"
done
inc_small=$(cli "verify-incremental-1000" 4); inc_big=$(cli "verify-incremental-$(printf '%s\n' $SIZES | sort -n | tail -1)" 4)
echo "  incremental verify flat (CPU, largest / 1 000 <= 1.25): $inc_small -> $inc_big s $(pass "$inc_big <= 1.25 * $inc_small")"
echo "  commit with hooks 1.0x (keep, <= 1.1x): $(num '%.2f' "$commit_ratio")x $(pass "$commit_ratio <= 1.1")"
echo "  protected push <= 1.5x a plain push (wall):$(for tr in file git-daemon http-backend; do pr=$(metric "$OUT/hooks.txt" "BenchmarkPushPair/$tr" ratio); printf ' %s %sx %s;' "$tr" "$(num '%.2f' "$pr")" "$(pass "$pr <= 1.5")"; done)"
pc=$(metric "$OUT/hooks.txt" "BenchmarkPushPair/file" cpu-ratio)
echo "  protected push over file:// <= 1.5x a plain push in CPU: $(num '%.2f' "$pc")x $(pass "$pc <= 1.5")"
echo "  clone through git-secure ($CLONE_ENTRIES entries) <= 1.5x a plain clone (wall):$(for tr in file git-daemon http-backend; do pr=$(metric "$OUT/hooks.txt" "BenchmarkClonePair/$tr" ratio); printf ' %s %sx %s;' "$tr" "$(num '%.2f' "$pr")" "$(pass "$pr <= 1.5")"; done)"
pc=$(metric "$OUT/hooks.txt" "BenchmarkClonePair/file" cpu-ratio)
echo "  clone over file:// <= 1.5x a plain clone in CPU: $(num '%.2f' "$pc")x $(pass "$pc <= 1.5")"
echo "Raw go test output (benchstat input): $OUT/{verify,phases,rulefiles,record,readcommits,hooks}.txt; CLI runs: $OUT/cli-{verify,timed}.txt"
echo "Total time: $(($(date +%s) - T0)) s"
} | tee "$OUT/summary.txt"
echo
echo "CPU profile, top 15 ($largest entries):"
sed -n '/flat%/,$p' "$OUT/pprof-top.txt"
