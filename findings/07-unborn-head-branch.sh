#!/bin/bash
# 07 (attacker session 14, 05): the branch every fresh clone checks out is whatever the server's HEAD
# names, and nothing protects or judges it. A bare server made with
# `git init --bare` (install/server.sh, git's default) has HEAD ->
# refs/heads/master, unborn while the project pushes main. mallory pushes
# master (no rule covers it: the plain-git push is accepted as
# "unprotected") with her own src/crypto: `git secure clone` then checks
# out master with mallory's crypto code, and verify passes (a warning that
# master has no entry, "not protected by any rule"). Same for any
# unprotected branch HEAD names (a forge's default-branch setting).
D0=$(cd "$(dirname "$0")" && pwd)
. "$D0/lib.sh"; setup >/dev/null 2>&1
set +e # refused steps are the expected outcome
URL=file://$SRV
echo "server HEAD: $(cat $SRV/HEAD)"
export HOME=$T/home/mallory GIT_CONFIG_NOSYSTEM=1
git init -q $T/raw; cd $T/raw
git fetch -q "$URL" main && git checkout -q -b master FETCH_HEAD
echo 'backdoor()' > src/crypto/aes.c; git commit -qam 'crypto: faster'
git push -q "$URL" master 2>&1 | tail -1
echo "== bob's fresh git secure clone (root pinned):"
export HOME=$T/home/bob
git secure clone -q "$URL" $T/fresh --root-key "$(fpr alice)" 2>&1 | tail -4
cd $T/fresh
echo "checked out: $(git symbolic-ref HEAD); src/crypto/aes.c: $(cat src/crypto/aes.c)"
git secure verify >/dev/null 2>$T/v.err; rc=$?
echo "git secure verify exit code: $rc"; grep -m1 master $T/v.err
if [ $rc -eq 0 ] && [ "$(cat src/crypto/aes.c)" = 'backdoor()' ]; then
  echo "VULNERABLE: a fresh verified clone checks out mallory's unrecorded crypto change"; exit 1
fi
echo held
