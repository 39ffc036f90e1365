#!/usr/bin/env bash
# Dogfooding: adopt git-secure on a copy of this project's own repository,
# push it to an enforcing server, clone it elsewhere, work with plain git, and
# verify. Uses the freshly built bin/git-secure and throwaway keys.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
[ -x "$bin/git-secure" ] || { echo "build first: make build" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 PATH="$bin:$PATH"
mkdir -p "$HOME"
git config --global user.name "Dogfood Maintainer"
git config --global user.email maintainer@example.invalid
git config --global init.defaultBranch main
git config --global gpg.format ssh
git config --global protocol.file.allow always
ssh-keygen -q -t ed25519 -N '' -C maintainer -f "$work/maintainer"
ssh-keygen -q -t ed25519 -N '' -C reviewer -f "$work/reviewer"
git config --global user.signingkey "$work/maintainer"

step() { printf '== %s\n' "$*"; }
step "copy of $(git -C "$root" rev-parse --short HEAD) with $(git -C "$root" rev-list --count HEAD) commits"
git clone -q --no-local "$root" "$work/project"
git init -q --bare "$work/server.git"
git secure server install "$work/server.git" >/dev/null
cd "$work/project"
git remote set-url origin "file://$work/server.git"
branch=$(git rev-parse --abbrev-ref HEAD)
[ "$branch" = main ] || git branch -m "$branch" main

step "adopt: init, persons, rule for main (2 persons), apply"
git secure init
git secure policy add-person maintainer --key "$work/maintainer.pub" >/dev/null
git secure policy add-person reviewer --key "$work/reviewer.pub" >/dev/null
git secure policy add-rule protect-main --ref refs/heads/main --allow maintainer --allow reviewer --threshold 2 >/dev/null
git secure policy apply

step "first push of the branch and its metadata to the enforcing server"
git push -q -u origin main
git for-each-ref --format='%(refname)' refs/secure | sed 's/^/   server has: /'

step "a change that needs two persons: reviewer approves first, then a plain push"
echo "dogfood $(date -u +%s)" >> DOGFOOD.txt
git add DOGFOOD.txt && git commit -qm "dogfood change"
git secure attest approve main --to HEAD --key "$work/reviewer" >/dev/null 2>&1
git push -q origin main

step "clone elsewhere, install the hooks, fetch: metadata arrives and is verified"
git clone -q "file://$work/server.git" "$work/clone"
cd "$work/clone"
git secure hooks install >/dev/null
git fetch -q origin
git secure verify
git secure verify --json >/dev/null

step "an unrecorded push to main is refused by the server"
echo "unrecorded" >> DOGFOOD.txt && git commit -qam "unrecorded change"
# Pushing to the URL bypasses the remote helper, as a user without git-secure would.
if git push -q --no-verify "file://$work/server.git" HEAD:refs/heads/main 2>/dev/null; then
  echo "unexpected: the server accepted an unrecorded push" >&2; exit 1
fi
echo "   refused, as it should be"
echo "dogfood: OK"
