#!/bin/sh
# Installs git-secure for the current user: the binary (with git-remote-secure)
# into $PREFIX/bin (default ~/.local), then the hooks for every repository of
# this user. Repositories without a git-secure policy are not affected.
#   sh install/user.sh            # from a checkout of git-secure
set -eu
cd "$(dirname "$0")/.."
PREFIX=${PREFIX:-$HOME/.local}
make install PREFIX="$PREFIX"
case ":$PATH:" in *":$PREFIX/bin:"*) ;; *) echo "add $PREFIX/bin to your PATH" >&2 ;; esac
"$PREFIX/bin/git-secure" hooks install --global
echo "git-secure installed for $(id -un). Set your signing key once:"
echo "  git config --global gpg.format ssh"
echo "  git config --global user.signingkey ~/.ssh/id_ed25519.pub"
