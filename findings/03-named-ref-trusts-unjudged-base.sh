#!/bin/bash
# Finding 03: `git secure verify refs/tags/v2.0` (the README: "name the
# release tag you build to have it judged") judges the tag's creation
# against the recorded states of the other refs the path rule covers
# (verify.recordedTargetsExcept -> changedSinceBase), but a run limited to
# named refs never judges those refs' entries (verifier.wanted): an
# unauthorized entry of another ref becomes the base that hides the
# protected change.
# mallory may move dev and create release tags; src/crypto/** needs alice.
# On a forge (no hooks): entry dev -> E (evil src/crypto, signed by mallory:
# fails rule crypto), then entry create refs/tags/v2.0 at E (signed by
# mallory). Full verify fails on the dev entry; verify of the tag alone
# compares v2.0 with dev's recorded E, finds no crypto change, and passes.
# Expected: the named-ref run fails too (judge the entries whose states it
# uses as bases, or use only states it judged).
. "$(dirname "$0")/lib.sh"
setup
cd $T/alice
as alice git secure policy add-rule releases --ref 'refs/tags/v*' --allow alice --allow mallory >/dev/null
as alice git secure policy apply >/dev/null
as alice git push -q 2>&1 | grep -v '^$' || true
FORGE=$T/forge.git
git clone -q --mirror "$SRV" "$FORGE"
rm -f $FORGE/hooks/pre-receive $FORGE/hooks/reference-transaction $FORGE/hooks/post-receive
cd $T/mallory
as mallory git pull -q 2>/dev/null || true
as mallory git checkout -qb dev
echo evil > src/crypto/aes.c; as mallory git commit -qam "evil"
E=$(as mallory git rev-parse HEAD)
entry() { # entry REF OLD NEW: mallory signs the next entry on top of refs/secure/rsl
  local tip n verb=update
  tip=$(as mallory git rev-parse refs/secure/rsl)
  n=$(( $(as mallory git log -1 --format=%B $tip | sed -n 's/^number: //p') + 1 ))
  [ "$2" = 0000000000000000000000000000000000000000 ] && verb=create
  printf 'rsl #%d: %s %s\n\nformat: git-secure-rsl/1\nnumber: %d\ntype: ref\nref: %s\nold: %s\nnew: %s\n' $n $verb $1 $n $1 $2 $3 > $T/msg
  as mallory git update-ref refs/secure/rsl $(as mallory git commit-tree -S -p $tip -F $T/msg 4b825dc642cb6eb9a060e54bf8d69288fbee4904)
}
Z=0000000000000000000000000000000000000000
entry refs/heads/dev $Z $E
entry refs/tags/v2.0 $Z $E
as mallory git -c url.file://$FORGE.pushInsteadOf=file://$FORGE push --no-verify -q "file://$FORGE" $E:refs/heads/dev $E:refs/tags/v2.0 refs/secure/rsl:refs/secure/rsl
git clone -q "file://$FORGE" $T/down 2>/dev/null; cd $T/down
git fetch -q origin 'refs/secure/*:refs/secure/*'
echo "== full verify:"
git secure verify --root-key "$(fpr alice)" 2>&1 | grep -E 'error|FAILED' | head -2
echo "== verify of the release tag alone:"
if git secure verify --root-key "$(fpr alice)" refs/tags/v2.0; then
  echo "VULNERABLE: v2.0 (src/crypto/aes.c: '$(git show v2.0:src/crypto/aes.c)', never approved by alice) verified"; exit 1
fi
echo "held: the tag's verification failed"
