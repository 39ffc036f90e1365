#!/bin/bash
# 09 (attacker session 15, 01): a pusher with no key in the policy makes the
# server's pre-receive spend O(new entries x log length) after verification,
# past secure.maxPushSeconds (3 s here), with one small push: N entries signed
# by eve, each "create refs/tags/eI" (rule tags protects refs/tags/*),
# without the tags. hooks/run.go judgePush asked, per problem,
# neverPublished -> LatestEntry, a walk of the server's whole log.
# M: the server's log length (one entry per tag, as init writes them).
D0=$(cd "$(dirname "$0")" && pwd)
M=${M:-600}; N=${N:-600}
. "$D0/lib.sh"
mkent() { # PREV NUM REF OLD NEW KEY: a signed ref entry, printed
  local prev=$1 num=$2 ref=$3 old=$4 new=$5 key=$6 verb=update
  [ "$old" = 0000000000000000000000000000000000000000 ] && verb=create
  [ "$new" = 0000000000000000000000000000000000000000 ] && verb=delete
  printf 'rsl #%s: %s %s\n\nformat: git-secure-rsl/1\nnumber: %s\ntype: ref\nref: %s\nold: %s\nnew: %s\n' "$num" "$verb" "$ref" "$num" "$ref" "$old" "$new" > $T/.msg
  local p=; [ -n "$prev" ] && p="-p $prev"
  GIT_SECURE_INTERNAL=1 git -c gpg.format=ssh -c user.signingkey="$key" commit-tree -S 4b825dc642cb6eb9a060e54bf8d69288fbee4904 $p -F $T/.msg
}
for p in alice eve; do mkuser $p; done
git init -q --bare "$SRV"; git -C "$SRV" symbolic-ref HEAD refs/heads/main
git secure server install "$SRV" >/dev/null 2>&1
git -C "$SRV" config secure.maxPushSeconds 3
mkdir -p "$T/alice"; cd "$T/alice"
as alice git init -q .
echo r > README; as alice git add -A; as alice git commit -qm init
for i in $(seq 1 $M); do echo "create refs/tags/a$i $(git rev-parse HEAD)"; done | as alice git update-ref --stdin
as alice git secure init >/dev/null 2>&1          # one entry per tag: a log of M entries
as alice git secure policy add-person alice --key "$T/alice.pub" >/dev/null
as alice git secure policy add-rule tags --ref 'refs/tags/*' --allow alice >/dev/null
as alice git secure policy apply >/dev/null
as alice git remote add origin "file://$SRV"
as alice git push -q -u origin main 2>&1 | grep -v routed || true
cd "$T"; as eve git clone -q "file://$SRV" "$T/eve"   # eve: push access, no key in the policy
cd "$T/eve"; as eve git fetch -q origin 'refs/secure/*:refs/secure/*'
tip=$(git rev-parse refs/secure/rsl); num=$(git log -1 --format=%B $tip | sed -n 's/^number: //p')
c=$(git rev-parse HEAD)
echo "server log: $num entries; eve signs $N entries creating refs/tags/e1..e$N (never sent)"
for i in $(seq 1 $N); do num=$((num+1)); tip=$(as eve mkent $tip $num refs/tags/e$i 0000000000000000000000000000000000000000 $c "$T/home/eve/.ssh/id_ed25519"); done
s=$(date +%s.%N)
as eve git push "file://$SRV" $tip:refs/secure/rsl >$T/push.out 2>&1 || true
el=$(echo "$(date +%s.%N) - $s" | bc)
echo "refusal lines: $(grep -c "rejected:" $T/push.out); $(grep -o '[0-9]* more problem' $T/push.out || echo 'none') left unprinted"
grep -q 'rejected' $T/push.out || { echo "push not refused:"; cat $T/push.out; echo VULNERABLE; exit 1; }
echo "push of $(git rev-list --objects refs/secure/rsl ^$(git rev-parse origin/main) | wc -l) objects refused after ${el}s (secure.maxPushSeconds = 3)"
if awk "BEGIN { exit !($el >= 6) }"; then echo VULNERABLE; exit 1; else echo held; fi
