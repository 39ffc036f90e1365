#!/bin/sh
# Sets a repository up for a team, run once by the person who holds the root
# key. Each TEAM MEMBER file is "name path/to/key.pub" per line.
#   sh install/team.sh ROOT_KEY MEMBERS_FILE [RULE_REF] [THRESHOLD]
# Example: sh install/team.sh ~/.ssh/id_ed25519 members.txt refs/heads/main 2
set -eu
root=$1; members=$2; ref=${3:-refs/heads/main}; threshold=${4:-1}
git secure init --key "$root"
allow=""
while read -r name key; do
  [ -n "$name" ] || continue
  case "$name" in \#*) continue ;; esac
  git secure policy add-person "$name" --key "$key"
  allow="$allow --allow $name"
done < "$members"
# shellcheck disable=SC2086
git secure policy add-rule protect-$(basename "$ref") --ref "$ref" $allow --threshold "$threshold"
git secure policy apply --key "$root"
git secure policy list
echo "Now push: git push -u origin $(basename "$ref") (the log and policy go with it)."
echo "Each member: make install, then in their clone: git secure hooks install"
