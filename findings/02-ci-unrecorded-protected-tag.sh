#!/bin/bash
# Finding 02: in CI (the enforcement on a forge without hooks), a protected
# release tag that the log never recorded passes `git secure verify`.
# install/ci/git-secure-ci.sh fetches the server's tags into refs/tags/*
# ("+refs/tags/*:refs/tags/*") and runs `git secure verify --remote origin`;
# verify treats every tag the log never recorded as the clone's own
# (clonecheck.go reportLocal: "never recorded and nothing would judge it" /
# state "new", never a failure), so mallory's v1.0, which rule releases
# (refs/tags/v*: alice) forbids her, is reported at most as local state and
# the job passes. The enforcing server refuses the same push.
# Expected: a fresh CI clone fails on a protected tag the server serves
# without an entry (the CI fetch puts the server's tags where verify takes
# them for local work).
. "$(dirname "$0")/lib.sh"
setup
cd $T/alice
as alice git secure policy add-rule releases --ref 'refs/tags/v*' --allow alice >/dev/null
as alice git secure policy apply >/dev/null
as alice git push -q 2>&1 | grep -v '^$' || true
FORGE=$T/forge.git
git clone -q --mirror "$SRV" "$FORGE"
rm -f $FORGE/hooks/pre-receive $FORGE/hooks/reference-transaction $FORGE/hooks/post-receive
cd $T/mallory
as mallory git pull -q 2>/dev/null || true
as mallory git tag v1.0
echo "== the enforcing server refuses the tag:"
as mallory git -c url.file://$SRV.pushInsteadOf=file://$SRV push --no-verify "file://$SRV" refs/tags/v1.0 2>&1 | grep -E 'rejected' | head -1
echo "== the forge takes it; CI (git-secure-ci.sh fetch + verify):"
as mallory git -c url.file://$FORGE.pushInsteadOf=file://$FORGE push --no-verify -q "file://$FORGE" refs/tags/v1.0
git clone -q "file://$FORGE" $T/ci 2>/dev/null; cd $T/ci
GIT_SECURE_ROOT_KEYS=$(fpr alice) bash "$WT/install/ci/git-secure-ci.sh" fetch 2>&1 | tail -1
if GIT_SECURE_ROOT_KEYS=$(fpr alice) bash "$WT/install/ci/git-secure-ci.sh" verify; then
  echo "VULNERABLE: CI verified a server serving refs/tags/v1.0 that no entry records (rule releases: alice)"; exit 1
fi
echo "held: CI verify refused"
