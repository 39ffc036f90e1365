#!/bin/bash
# 10 (attacker session 15, 04): a server (or anyone who can move refs on a
# hookless forge) that serves K protected tags moved past the log makes
# every fresh clone (and CI job) spend O(K x log length) before refusing:
# verify's mismatch walked the log per moved ref, the helper's hint walked
# it again per ref (RepairHint -> LatestEntry), and the refetch for a push
# caught halfway ran the whole verification twice.
# M: tags, one log entry each (as init writes them); all are moved.
D0=$(cd "$(dirname "$0")" && pwd)
M=${M:-800}
. "$D0/lib.sh"
for p in alice carol; do mkuser $p; done
git init -q --bare -b main "$SRV"; git secure server install "$SRV" >/dev/null 2>&1
mkdir -p "$T/alice"; cd "$T/alice"
as alice git init -q .
echo r > README; as alice git add -A; as alice git commit -qm init; echo s >> README; as alice git commit -qam second
for i in $(seq 1 $M); do echo "create refs/tags/a$i $(git rev-parse HEAD)"; done | as alice git update-ref --stdin
as alice git secure init >/dev/null 2>&1
as alice git secure policy add-person alice --key "$T/alice.pub" >/dev/null
as alice git secure policy add-rule tags --ref 'refs/tags/*' --allow alice >/dev/null
as alice git secure policy apply >/dev/null
as alice git remote add origin "file://$SRV"
as alice git push -q -u origin main 2>&1 | grep -v routed || true
s=$(date +%s.%N)
as carol git secure clone -q "file://$SRV" "$T/carol0" --root-key "$(fpr alice)" >/dev/null 2>&1
echo "baseline: carol's clone of the honest server verified in $(echo "$(date +%s.%N) - $s" | bc)s"
# the server (malicious, or its admin) moves every tag back one commit
old=$(git -C $SRV rev-parse main~1)
git -C $SRV for-each-ref --format='update %(refname) '$old refs/tags | git -C $SRV -c core.hooksPath=/dev/null update-ref --stdin
s=$(date +%s.%N)
as carol git secure clone -q "file://$SRV" "$T/carol" --root-key "$(fpr alice)" >$T/c.out 2>&1 && { echo "clone of the moved tags succeeded"; echo VULNERABLE; exit 1; }
el=$(echo "$(date +%s.%N) - $s" | bc)
echo "carol's clone refused after ${el}s ($(grep -c 'ref does not match the log' $T/c.out) refs named; $(grep -c 'behind the recorded' $T/c.out) named as moved back)"
if awk "BEGIN { exit !($el >= 20) }"; then echo VULNERABLE; exit 1; else echo held; fi
