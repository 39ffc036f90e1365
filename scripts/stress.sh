#!/usr/bin/env bash
# Adversarial stress run (make stress): git-secure under push races and
# crashes, at full size, against enforcing servers on loopback only
# (file:// and git daemon on 127.0.0.1). Bounded in time: every go test run
# has its own -timeout (the tests stop their loops 2-3 minutes before it
# and still report), and timeout(1) ends a run that overstays. Prints the
# figures of every run; exits non-zero if any run failed.
#
#   TestStressPushRace  8 pushers x 50 pushes to one protected main, per
#                       transport: pushes attempted, accepted, retried,
#                       entries, losses (must be 0), wall time, pushes/s
#   TestStressNonAtomicRace
#                       every person pushes a protected branch with its entry
#                       at the same moment, half without --atomic: the server
#                       verifies after every round, nothing lands in part
#   TestCrashKill       git-secure operations SIGKILLed at random moments:
#                       outcomes per category
#   TestStaleLock*, TestStaleConfigLock
#                       the repairable states the kills leave, made on purpose
#
# Sizes: STRESS_PUSHERS, STRESS_PUSHES, STRESS_TRANSPORTS ("file daemon"),
# CRASH_ITERATIONS; time bounds: RACE_TIMEOUT, CRASH_TIMEOUT (go durations,
# whole minutes).
set -uo pipefail
cd "$(dirname "$0")/.."

export GIT_SECURE_STRESS=full
export GIT_SECURE_STRESS_PUSHERS=${STRESS_PUSHERS:-8}
export GIT_SECURE_STRESS_PUSHES=${STRESS_PUSHES:-50}
export GIT_SECURE_CRASH_ITERATIONS=${CRASH_ITERATIONS:-200}
race_timeout=${RACE_TIMEOUT:-20m}
crash_timeout=${CRASH_TIMEOUT:-10m}

# minutes of a go duration like 20m, plus a grace period for timeout(1).
hard_bound() { echo "$(( ${1%m} + 2 ))m"; }

status=0
start=$(date +%s)
for tr in ${STRESS_TRANSPORTS:-file daemon}; do
  echo "== push race over $tr: $GIT_SECURE_STRESS_PUSHERS pushers x $GIT_SECURE_STRESS_PUSHES pushes (bound $race_timeout)"
  GIT_SECURE_STRESS_TRANSPORTS=$tr timeout --kill-after=30s "$(hard_bound "$race_timeout")" \
    go test -count=1 -run '^TestStressPushRace$' -timeout "$race_timeout" -v ./internal/testing/stress/ || status=1
done
echo "== non-atomic race: $GIT_SECURE_STRESS_PUSHERS pushers (bound $race_timeout)"
timeout --kill-after=30s "$(hard_bound "$race_timeout")" \
  go test -count=1 -run '^TestStressNonAtomicRace$' -timeout "$race_timeout" -v ./internal/testing/stress/ || status=1
echo "== crash kills: $GIT_SECURE_CRASH_ITERATIONS iterations (bound $crash_timeout)"
timeout --kill-after=30s "$(hard_bound "$crash_timeout")" \
  go test -count=1 -run '^(TestCrashKill|TestStaleLockIsNamed|TestStaleConfigLock)$' -timeout "$crash_timeout" -v ./internal/testing/stress/ || status=1
echo "== stress: $(( $(date +%s) - start ))s in all, exit $status"
exit $status
