#!/bin/bash
# 04 (attacker session 14, 06): a path rule of targets.json without --ref (scope "protected-refs":
# "covers exactly the refs that at least one rule's git: pattern covers:
# the branches and tags that ship (main, releases)") does not cover a ref
# that only a rule in a rule file (delegation) names: policy.covers ->
# namedByRefPattern looks at targets.json's own rules (p.rules) only. The
# docs' own example delegates release branches to a release team's file
# (`policy delegate release --ref 'refs/heads/release/*' --key team:release`).
# Here alice delegates release/* to a file she signs, whose rule lets
# mallory cut release branches; mallory pushes release/1.0 = main with
# src/crypto/aes.c changed, which rule crypto (src/crypto/**: alice)
# should refuse; server and clones accept it.
D0=$(cd "$(dirname "$0")" && pwd)
. "$D0/lib.sh"; setup >/dev/null 2>&1
export GIT_CONFIG_NOSYSTEM=1
set +e # the attack's refused steps are the expected outcome
cd $T/alice; export HOME=$T/home/alice
git secure policy delegate release --ref 'refs/heads/release/*' --key alice >/dev/null
git secure policy add-rule --file release rel --ref 'refs/heads/release/*' --allow mallory --allow alice >/dev/null
git secure policy sign --file release >/dev/null 2>&1
git secure policy apply 2>&1 | tail -1
git push -q 2>&1 | grep -v '^$' | tail -2
echo "== the policy now says:"; git secure policy list 2>&1 | grep -E 'crypto|rel|release' | head -5
cd $T/mallory; export HOME=$T/home/mallory
git pull -q 2>&1 | tail -1
git checkout -q -b release/1.0 origin/main
echo 'backdoor()' > src/crypto/aes.c; git commit -qam 'crypto: speed up'
echo "== explain (what the server will check):"
git secure explain refs/heads/release/1.0 2>&1 | head -8
echo "== mallory pushes release/1.0 with a src/crypto change:"
git push -q origin release/1.0 2>&1 | grep -v '^$' | tail -3
got=$(git --git-dir=$SRV show refs/heads/release/1.0:src/crypto/aes.c 2>/dev/null)
cd $T/bob; export HOME=$T/home/bob
git fetch -q 2>&1 | tail -2; git secure verify --full >/dev/null 2>&1; rc=$?
echo "server has release/1.0 src/crypto/aes.c = '$got'; bob's verify --full exit $rc"
if [ "$got" = 'backdoor()' ] && [ $rc -eq 0 ]; then
  echo "VULNERABLE: mallory changed src/crypto on a protected release branch without alice (rule crypto)"; exit 1
fi
echo held
