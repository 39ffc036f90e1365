#!/bin/sh
# Installs git-secure's hooks and remote helper in one clone, then fetches and
# verifies the remote's metadata.
#   sh /path/to/git-secure/install/repo.sh [REPO_DIR]
set -eu
cd "${1:-.}"
command -v git-secure >/dev/null || { echo "git-secure is not on PATH: run make install first" >&2; exit 2; }
git secure hooks install
for r in $(git remote); do
  git fetch "$r"
done
git secure verify
