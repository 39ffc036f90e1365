#!/bin/bash
# 11 (attacker session 15, 03): a pusher with no key plants, in
# refs/secure/attestations, a tree git accepts but git-secure's strict
# parser refuses (a name twice), in a directory no commit of the store had:
# the hook read only directories the parent had, and readers turned the
# tree into an error: fresh clones, every fetch and push through the
# helper, and approvals of pending updates failed, and the junk could not
# be removed by a push (the hook failed reading it).
# Prints VULNERABLE (exit 1) or held.
D0=$(cd "$(dirname "$0")" && pwd)
. "$D0/lib.sh"
set +e # refused steps are the expected outcome
plant() {
  local kind=$1 name=$2
  local b=$(echo junk | git hash-object -w --stdin)
  local bad=$( { printf '100644 x.json\0'; echo $b | xxd -r -p; printf '100644 x.json\0'; echo $b | xxd -r -p; } | git hash-object -t tree --literally -w --stdin)
  local tip=$(git rev-parse -q --verify refs/secure/attestations || true)
  local root=; [ -n "$tip" ] && root=$(git rev-parse $tip^{tree})
  local sub=; [ -n "$root" ] && sub=$(git rev-parse -q --verify $root:$kind || true)
  local newsub=$( { [ -n "$sub" ] && git ls-tree $sub; printf '040000 tree %s\t%s\n' $bad $name; } | git mktree)
  local newroot=$( { [ -n "$root" ] && git ls-tree $root | grep -v "	$kind\$"; printf '040000 tree %s\t%s\n' $newsub $kind; } | git mktree)
  local p=; [ -n "$tip" ] && p="-p $tip"
  git commit-tree $newroot $p -m "git-secure: add $kind/$name/x.json"
}
dirhash() { # DOMAIN REF FROM TO
  printf '%s\0%s\0%s\0%s' "$1" "$2" "$3" "$4" | sha256sum | cut -d' ' -f1
}
for p in alice bob carol mallory; do mkuser $p; done
git init -q --bare -b main "$SRV"; git secure server install "$SRV" >/dev/null 2>&1
mkdir -p "$T/alice"; cd "$T/alice"
as alice git init -q .
echo r > README; as alice git add -A; as alice git commit -qm init
as alice git secure init >/dev/null 2>&1
as alice git secure policy add-person alice --key "$T/alice.pub" >/dev/null
as alice git secure policy add-person bob --key "$T/bob.pub" >/dev/null
as alice git secure policy add-rule protect-main --ref refs/heads/main --allow alice --allow bob --threshold 2 --tree-approvals >/dev/null
as alice git secure policy apply >/dev/null
as alice git remote add origin "file://$SRV"
as alice git push -q -u origin main 2>&1 | grep -v routed || true
cd $T; as bob git secure clone -q "file://$SRV" "$T/bob" --root-key "$(fpr alice)" >/dev/null 2>&1
# honest work: bob's change, alice approves it, bob pushes it
cd $T/bob; echo fix >> README; as bob git commit -qam fix
X=$(git rev-parse origin/main); Y=$(git rev-parse HEAD); TY=$(git rev-parse HEAD^{tree})
as bob git push -q origin HEAD:refs/heads/review/fix 2>&1 | grep -v '^$' || true
cd $T/alice; as alice git fetch -q
as alice git secure attest approve main --to $Y >/dev/null 2>&1; as alice git push -q 2>&1 || true
cd $T/bob; as bob git push -q origin main 2>&1 | grep -v '^$' || true
echo "server main: $(git -C $SRV rev-parse main) (Y=$Y)"
# mallory: push access, no key, plain git
cd $T; git clone -q file://$SRV $T/mallory; cd $T/mallory
git fetch -q origin '+refs/secure/*:refs/secure/*'
A=$(dirhash git-secure-approval-tree-v1 refs/heads/main $X $TY)
c=$(plant approvals-tree $A)
git push origin $c:refs/secure/attestations 2>&1 | tail -2
echo "server accepted mallory's store commit: $( [ "$(git -C $SRV rev-parse refs/secure/attestations)" = $c ] && echo yes || echo no)"
# carol: a fresh clone pinned to the root key
cd $T; as carol git secure clone "file://$SRV" "$T/carol" --root-key "$(fpr alice)" 2>&1 | tail -4; echo "carol clone rc=${PIPESTATUS[0]}"
# existing clones: every fetch through git-remote-secure now fails
cd $T/bob; as bob git fetch 2>&1 | tail -1; echo "bob fetch rc=${PIPESTATUS[0]}"
# pending work: bob proposes Z; mallory plants the commit-bound directory first; alice cannot approve
echo fix2 >> README; as bob git commit -qam fix2; Z=$(git rev-parse HEAD)
as bob git push origin HEAD:refs/heads/review/fix2 2>&1 | tail -1; echo "bob push of a review branch rc=${PIPESTATUS[0]}"
cd $T/mallory; git fetch -q origin '+refs/secure/*:refs/secure/*'
c2=$(plant approvals $(dirhash git-secure-approval-v1 refs/heads/main $Y $Z)); git push -q origin $c2:refs/secure/attestations
cd $T/alice; as alice git fetch -q 2>/dev/null || true
as alice git secure attest approve main --to $Z 2>&1 | tail -1
# the planted tree cannot be removed through the hook (alice's commit dropping it)
cd $T/mallory; git fetch -q origin '+refs/secure/*:refs/secure/*'
r=$(git rev-parse refs/secure/attestations^{tree}); good=$(git ls-tree $r | grep -v approvals-tree | git mktree)
fix=$(git commit-tree $good -p refs/secure/attestations -m "git-secure: remove junk")
git push origin $fix:refs/secure/attestations 2>&1 | grep -i "error\|rejected" | head -2
# the root key holder cannot push anything through git-remote-secure any more (here: a policy change)
cd $T/alice
as alice git secure policy add-person carol --key "$T/carol.pub" >/dev/null 2>&1; as alice git secure policy apply --no-fetch >/dev/null 2>&1 || as alice git secure policy apply >/dev/null 2>&1 || true
rc=0; as alice git push origin main >$T/ap.out 2>&1 || rc=$?; grep -m1 rejected $T/ap.out; echo "alice push of a policy change rc=$rc"
if ! [ -d $T/carol ]; then echo VULNERABLE; exit 1; else echo held; fi
