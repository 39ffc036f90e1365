# Shared set-up for the attacker findings: a bare server with the enforcing
# hooks, and alice, bob (protect-main: 2 of alice, bob; crypto path rule:
# alice) and mallory (may push refs/heads/dev alone) with real SSH keys.
# Source it: . "$(dirname "$0")/lib.sh"; setup
set -eu
WT=${WT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)} # the worktree the script is in
export PATH="$WT/bin:$PATH"
# Without the binary every git secure step fails and a script would print
# VULNERABLE for the wrong reason: refuse to run instead.
[ -x "$WT/bin/git-secure" ] || { echo "findings: no $WT/bin/git-secure: run make build first" >&2; exit 2; }
export GOMAXPROCS=2
T=$(mktemp -d /tmp/gsattack.XXXXXX)
SRV=$T/srv.git
as() { # as PERSON CMD...: run in PERSON's HOME
  p=$1; shift
  ( export HOME=$T/home/$p GIT_CONFIG_NOSYSTEM=1; cd "${DIR:-$T/$p}" 2>/dev/null || cd "$HOME"; "$@" )
}
mkuser() {
  mkdir -p "$T/home/$1/.ssh"
  ssh-keygen -q -t ed25519 -N '' -C "$1" -f "$T/home/$1/.ssh/id_ed25519"
  cp "$T/home/$1/.ssh/id_ed25519.pub" "$T/$1.pub"
  HOME=$T/home/$1 git config --global user.name "$1"
  HOME=$T/home/$1 git config --global user.email "$1@example.org"
  HOME=$T/home/$1 git config --global gpg.format ssh
  HOME=$T/home/$1 git config --global user.signingkey "$T/home/$1/.ssh/id_ed25519"
  HOME=$T/home/$1 git config --global init.defaultBranch main
  HOME=$T/home/$1 git config --global advice.detachedHead false
}
fpr() { ssh-keygen -lf "$T/$1.pub" | awk '{print $2}'; }
setup() {
  for p in alice bob mallory; do mkuser $p; done
  git init -q --bare "$SRV"
  git secure server install "$SRV" >/dev/null
  mkdir -p "$T/alice"; cd "$T/alice"
  as alice git init -q .
  mkdir -p src/crypto; echo a > src/crypto/aes.c; echo r > README
  as alice git add -A; as alice git commit -qm init
  as alice git secure init >/dev/null
  as alice git secure policy add-person alice --key "$T/alice.pub" >/dev/null
  as alice git secure policy add-person bob --key "$T/bob.pub" >/dev/null
  as alice git secure policy add-person mallory --key "$T/mallory.pub" >/dev/null
  as alice git secure policy add-rule protect-main --ref refs/heads/main --allow alice --allow bob --threshold 2 >/dev/null
  as alice git secure policy add-rule crypto --path 'src/crypto/**' --allow alice >/dev/null
  as alice git secure policy add-rule dev --ref refs/heads/dev --allow mallory --allow alice >/dev/null
  as alice git secure policy apply >/dev/null
  as alice git remote add origin "file://$SRV"
  as alice git push -q -u origin main 2>&1 | grep -v '^$' || true
  cd "$T"
  for p in bob mallory; do
    as $p git secure clone -q "file://$SRV" "$T/$p" --root-key "$(fpr alice)" >/dev/null 2>&1
  done
}
