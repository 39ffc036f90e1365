#!/bin/bash
# Finding 01: a fresh clone's `git secure verify` (the only enforcement on a
# forge without hooks: CI) accepts a move of a path-protected branch that
# rolls a protected file back, signed by someone the path rule does not
# allow, once the commits of the previous state are unreachable.
#
# dev: mallory and alice may move it; src/crypto/** needs alice.
#   #4 alice creates dev at W;  #5 alice fixes src/crypto on dev (W -> X)
#   #6 mallory force-moves dev X -> Y (Y = W + an unrelated commit): this
#      reverts alice's crypto fix. The enforcing server refuses #6 (it has X
#      and sees src/crypto/aes.c change). On a forge, X is unreachable after
#      the force push, so a fresh clone lacks it: verify replaces X by the
#      newest recorded state still present (W: verify.diffBase, rules.go) and
#      diffs W -> Y, where src/crypto does not change. Exit 0, one warning
#      about entry #5.
# The Transition.DiffBase comment calls W "a larger, safe diff"; it is larger
# only when changes accumulate: a revert of what the missing states changed
# disappears from it.
# Expected: verify fails entry #6 (rule crypto), as the server does.
. "$(dirname "$0")/lib.sh"
setup
cd $T/alice
as alice git checkout -qb dev
as alice git push -q origin dev 2>&1 | grep -v '^$' || true
W=$(as alice git rev-parse HEAD)
echo fixed > src/crypto/aes.c; as alice git commit -qam "crypto fix"
as alice git push -q origin dev 2>&1 | grep -v '^$' || true
X=$(as alice git rev-parse HEAD)
FORGE=$T/forge.git   # a forge: no hooks; CI verifies
git clone -q --mirror "$SRV" "$FORGE"
rm -f $FORGE/hooks/pre-receive $FORGE/hooks/reference-transaction $FORGE/hooks/post-receive
cd $T/mallory
as mallory git fetch -q origin
as mallory git checkout -qB dev $W
echo note > NOTES; as mallory git add NOTES; as mallory git commit -qm "notes"
Y=$(as mallory git rev-parse HEAD)
# mallory signs entry #6 herself (an RSL entry is an SSH-signed commit, as git commit -S makes it)
tip=$(as mallory git rev-parse refs/secure/rsl)
n=$(( $(as mallory git log -1 --format=%B $tip | sed -n 's/^number: //p') + 1 ))
printf 'rsl #%d: update refs/heads/dev\n\nformat: git-secure-rsl/1\nnumber: %d\ntype: ref\nref: refs/heads/dev\nold: %s\nnew: %s\n' $n $n $X $Y > $T/msg
E=$(as mallory git commit-tree -S -p $tip -F $T/msg 4b825dc642cb6eb9a060e54bf8d69288fbee4904)
echo "== the enforcing server refuses entry #6:"
as mallory git -c url.file://$SRV.pushInsteadOf=file://$SRV push --no-verify -f "file://$SRV" $Y:refs/heads/dev $E:refs/secure/rsl 2>&1 | grep -E 'rejected: entry' | head -1
echo "== the forge takes it; CI verifies a fresh clone:"
as mallory git -c url.file://$FORGE.pushInsteadOf=file://$FORGE push --no-verify -q -f "file://$FORGE" $Y:refs/heads/dev $E:refs/secure/rsl
git clone -q "file://$FORGE" $T/ci 2>/dev/null; cd $T/ci
git fetch -q origin 'refs/secure/*:refs/secure/*'
git cat-file -e $X 2>/dev/null || echo "X=$X is not in the fresh clone"
echo "src/crypto/aes.c: X has '$(git -C $T/alice show $X:src/crypto/aes.c)', dev now has '$(git show origin/dev:src/crypto/aes.c)'"
echo "== git secure clone of the forge (the helper verifies the first fetch):"
as bob git secure clone -q "file://$FORGE" $T/bob2 --root-key "$(fpr alice)" && echo "cloned: the helper's verification accepted it too"
echo "== CI verify:"
if git secure verify --root-key "$(fpr alice)"; then
  echo "VULNERABLE: verify accepted mallory's revert of src/crypto (rule crypto needs alice)"; exit 1
fi
echo "held: verify refused"
