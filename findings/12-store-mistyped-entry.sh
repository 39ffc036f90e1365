#!/bin/bash
# 12 (attacker session 15, 03 variant, well-formed objects only): a pusher
# with no key puts an empty tree at alice's signer file of a proposed
# update's approval directory, in a store that did not exist yet (its
# creation was not checked); alice could no longer approve that update.
# Prints VULNERABLE (exit 1) or held.
D0=$(cd "$(dirname "$0")" && pwd)
. "$D0/lib.sh"
set +e # refused steps are the expected outcome
dirhash() { # DOMAIN REF FROM TO
  printf '%s\0%s\0%s\0%s' "$1" "$2" "$3" "$4" | sha256sum | cut -d' ' -f1
}
setup >/dev/null 2>&1
cd $T/bob; echo fix >> README; as bob git commit -qam fix
X=$(git rev-parse origin/main); Y=$(git rev-parse HEAD)
as bob git push -q origin HEAD:refs/heads/review/fix 2>&1 | grep -v '^$' || true
# mallory: plain git, no key: an (empty, well-formed) tree at alice's signer file of that update
cd $T; git clone -q file://$SRV $T/m2; cd $T/m2; git fetch -q origin '+refs/secure/*:refs/secure/*'
S=$(ssh-keygen -lf $T/alice.pub -E sha256 | awk '{print $2}' | sed 's/^SHA256://' | base64 -d 2>/dev/null | xxd -p -c 64)
[ ${#S} -eq 64 ] || S=$(ssh-keygen -lf $T/alice.pub -E sha256 | awk '{print $2}' | sed 's/^SHA256://; s/$/=/' | base64 -d | xxd -p -c 64)
A=$(dirhash git-secure-approval-v1 refs/heads/main $X $Y)
empty=$(git hash-object -t tree -w /dev/null)
tip=$(git rev-parse -q --verify refs/secure/attestations || true); root=; [ -n "$tip" ] && root=$(git rev-parse $tip^{tree})
d=$(printf '040000 tree %s\t%s.json\n' $empty $S | git mktree)
sub=; [ -n "$root" ] && sub=$(git rev-parse -q --verify $root:approvals || true)
ns=$( { [ -n "$sub" ] && git ls-tree $sub; printf '040000 tree %s\t%s\n' $d $A; } | git mktree)
nr=$( { [ -n "$root" ] && git ls-tree $root | grep -v "	approvals\$"; printf '040000 tree %s\tapprovals\n' $ns; } | git mktree)
p=; [ -n "$tip" ] && p="-p $tip"
c=$(git commit-tree $nr $p -m "git-secure: junk")
git push origin $c:refs/secure/attestations 2>&1 | tail -1
cd $T/alice; as alice git fetch -q 2>&1 | tail -1
as alice git secure attest approve main --to $Y 2>&1 | tail -2; echo "alice approve rc=${PIPESTATUS[0]}"
cd $T/bob; as bob git secure attest approve main --to $Y 2>&1 | tail -1; echo "bob approve rc=${PIPESTATUS[0]}"
cd $T/alice; if as alice git secure attest approve main --to $Y >/dev/null 2>&1; then echo held; else echo VULNERABLE; exit 1; fi
