#!/bin/bash
# 08: on a forge without hooks (CI is the enforcement), a protected ref
# outside refs/heads, refs/tags and refs/replace, moved past the log, passes
# CI: install/ci/git-secure-ci.sh fetched those namespaces and
# refs/secure/* only, so `git secure verify --remote origin` never saw a
# rule's refs/notes/* (or refs/custom/*, any pattern) and said "not fetched:
# not judged". Here alice protects refs/notes/* (the review notes a release
# job reads) and mallory replaces them on the forge with notes of her own.
# lib.sh's crypto path rule is removed first: a path rule applies to every
# ref some rule names, and made the old check fail for another reason (the
# objects of the recorded notes it never fetched).
D0=$(cd "$(dirname "$0")" && pwd)
. "$D0/lib.sh"; setup >/dev/null 2>&1
set +e # refused steps are the expected outcome
cd "$T/alice"
as alice git secure policy remove-rule crypto >/dev/null
as alice git secure policy add-rule notes --ref 'refs/notes/*' --allow alice >/dev/null
as alice git secure policy apply >/dev/null
as alice git notes add -m 'reviewed-by: alice' HEAD
as alice git push -q origin main refs/notes/commits 2>&1 | grep -v '^$'
FORGE=$T/forge.git
git clone -q --mirror "$SRV" "$FORGE"
rm -f $FORGE/hooks/pre-receive $FORGE/hooks/reference-transaction $FORGE/hooks/post-receive
export HOME=$T/home/mallory GIT_CONFIG_NOSYSTEM=1
git clone -q "file://$FORGE" $T/raw 2>/dev/null; cd $T/raw
git fetch -q origin refs/notes/commits:refs/notes/commits
git notes add -f -m 'reviewed-by: alice, bob (release approved)' origin/main 2>/dev/null
git push -q origin refs/notes/commits 2>&1 | tail -2
echo "== CI (git-secure-ci.sh fetch + verify) on a fresh clone of the forge:"
git clone -q "file://$FORGE" $T/ci 2>/dev/null; cd $T/ci
GIT_SECURE_ROOT_KEYS=$(fpr alice) bash "$WT/install/ci/git-secure-ci.sh" fetch 2>&1 | tail -1
out=$(GIT_SECURE_ROOT_KEYS=$(fpr alice) GIT_SECURE_SUMMARY=$T/summary.md bash "$WT/install/ci/git-secure-ci.sh" verify 2>&1); rc=$?
printf '%s\n' "$out" | grep -E 'notes|verified|FAILED' | sed 's/^/  /'
echo "CI verify exit code: $rc"
echo "== a mirror of the forge reads main's review note as:"
git clone -q --mirror "file://$FORGE" $T/mirror.git
echo "  $(git --git-dir=$T/mirror.git notes show main)"
if [ $rc -eq 0 ]; then
  echo "VULNERABLE: CI passed while the forge serves refs/notes/commits moved by mallory, whom no rule allows"; exit 1
fi
echo held
