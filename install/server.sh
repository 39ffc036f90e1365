#!/bin/sh
# Turns bare repositories into enforcing git-secure servers: a pre-receive
# hook verifies every push and refuses updates of protected refs without a
# valid, signed log entry and its threshold; a reference-transaction hook
# makes each push land whole; a post-receive hook refreshes the freshness
# statement (refs/secure/timestamp) when the repository has a key
# (git config secure.timestampKey FILE; see install/README.md for the cron
# line that keeps it fresh when nobody pushes).
#   sh install/server.sh /srv/git/project.git [...]
# GIT_SECURE_HEAD=main also points each repository's HEAD (the branch
# clones check out) at that branch: git init --bare leaves it on master.
# git-secure must be installed where the server's git runs (make install).
set -eu
[ $# -ge 1 ] || { echo "usage: $0 BARE_REPO..." >&2; exit 2; }
for repo in "$@"; do
  if [ -n "${GIT_SECURE_HEAD:-}" ]; then
    git secure server install --head "$GIT_SECURE_HEAD" "$repo"
  else
    git secure server install "$repo"
  fi
done
