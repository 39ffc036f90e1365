#!/usr/bin/env bash
# git-secure-ci.sh: the steps of the git-secure CI check, for GitHub
# Actions (action.yml calls it) and GitLab CI (install/ci/gitlab-ci.yml), so
# that a test can run exactly what CI runs.
#
#   git-secure-ci.sh install   put git-secure on PATH: a released binary
#                              checked against SHA256SUMS, or built from
#                              source when GIT_SECURE_BUILD=source
#   git-secure-ci.sh fetch     make a CI clone (shallow, one ref) hold what
#                              verification needs: full history, every
#                              ref of the server (but a forge's pull
#                              request refs), refs/secure/*
#   git-secure-ci.sh verify    verify the server's state; on a pull or merge
#                              request also answer "would merging this
#                              satisfy the policy, who must still approve?"
#                              and write it to the job summary
#   git-secure-ci.sh record-merge
#                              on a push to a branch: record the forge's
#                              move (merge button, squash, rebase merge, web
#                              edit) signed by the forge bridge key, if the
#                              approvals recorded for it (or the reviews the
#                              forge lists for the pull requests it merged)
#                              meet the policy; push the store and the log.
#                              Exit 1, naming who must still approve (or
#                              saying to revert), otherwise.
#                              Run it before verify.
#
# Settings (environment):
#   GIT_SECURE_VERSION      release to install (default: latest)
#   GIT_SECURE_RELEASE_URL  where `make dist` output is published; the
#                           binary is $URL/git-secure-OS-ARCH[.exe] and the
#                           checksums $URL/SHA256SUMS (default: the GitHub
#                           release of GIT_SECURE_REPOSITORY at the version)
#   GIT_SECURE_REPOSITORY   owner/name of git-secure's own repository
#   GIT_SECURE_BUILD        "source": build with Go from GIT_SECURE_SOURCE
#                           (default: the action's own checkout)
#   GIT_SECURE_REMOTE       the remote to verify (default: origin)
#   GIT_SECURE_ROOT_KEYS    root key fingerprints to pin, space separated
#                           (strongly advised: without them the first
#                           policy is trusted on first use)
#   GIT_SECURE_ROOT_THRESHOLD  how many of them must have signed
#   GIT_SECURE_EVENT        push | pull_request (default: from the CI)
#   GIT_SECURE_BASE         the pull request's base branch (default: from the CI)
#   GIT_SECURE_HEAD         the commit that would land (default: from the CI:
#                           GitHub's refs/pull/N/merge commit, GitLab's
#                           merged-results commit or the MR head)
#   GIT_SECURE_BRIDGE_KEY   record-merge: the forge app's private key (the
#                           secret's content; GIT_SECURE_BRIDGE_KEY_FILE: a
#                           file). Without either, record-merge does nothing.
#   GIT_SECURE_FORGE        record-merge: github, gitlab or none: the forge
#                           asked which pull (merge) requests a step merged,
#                           whose reviews are then recorded (forge
#                           record-merge --forge). Default: gitlab with
#                           GITLAB_TOKEN and CI_API_V4_URL, github with
#                           GITHUB_TOKEN and GITHUB_REPOSITORY, else none.
#   GIT_SECURE_REF          record-merge: the branch pushed (default: from
#                           the CI: GITHUB_REF, CI_COMMIT_BRANCH)
#   GIT_SECURE_SUMMARY      file the Markdown summary is appended to
#                           (default: $GITHUB_STEP_SUMMARY, else
#                           git-secure-summary.md)
# Exit codes are git-secure's: 0 verified, 1 a check failed, 2 usage or
# environment error.
if [ -z "${BASH_VERSION:-}" ]; then
	# sh git-secure-ci.sh: dash stops at "set -o pipefail" with "Illegal
	# option", which names neither the script nor the fix.
	echo "git-secure-ci.sh: this script needs bash: run it as bash $0 ... (or by its path), not with sh" >&2
	exit 2
fi
set -euo pipefail

say() { printf 'git-secure-ci: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

remote=${GIT_SECURE_REMOTE:-origin}

ci_event() {
	if [ -n "${GIT_SECURE_EVENT:-}" ]; then echo "$GIT_SECURE_EVENT"; return; fi
	case "${GITHUB_EVENT_NAME:-}" in
	pull_request | pull_request_target | merge_group) echo pull_request; return ;;
	esac
	if [ "${CI_PIPELINE_SOURCE:-}" = merge_request_event ]; then echo pull_request; return; fi
	echo push
}

ci_base() {
	local b=${GIT_SECURE_BASE:-${GITHUB_BASE_REF:-${CI_MERGE_REQUEST_TARGET_BRANCH_NAME:-}}}
	[ -n "$b" ] || die "no base branch: set GIT_SECURE_BASE (the branch the pull request merges into)"
	echo "$b"
}

ci_head() {
	echo "${GIT_SECURE_HEAD:-${GITHUB_SHA:-${CI_COMMIT_SHA:-$(git rev-parse HEAD)}}}"
}

summary_file() {
	echo "${GIT_SECURE_SUMMARY:-${GITHUB_STEP_SUMMARY:-git-secure-summary.md}}"
}

os_arch() {
	local os arch
	case "$(uname -s)" in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	MINGW* | MSYS* | CYGWIN* | Windows_NT) os=windows ;;
	*) die "no git-secure release for $(uname -s): set GIT_SECURE_BUILD=source" ;;
	esac
	case "$(uname -m)" in
	x86_64 | amd64) arch=amd64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) die "no git-secure release for $(uname -m): set GIT_SECURE_BUILD=source" ;;
	esac
	echo "$os-$arch"
}

sha256() {
	if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

cmd_install() {
	local dir=${GIT_SECURE_INSTALL_DIR:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/git-secure-bin}
	mkdir -p "$dir"
	local ext=
	if [ "${GIT_SECURE_BUILD:-release}" = source ]; then
		local src=${GIT_SECURE_SOURCE:-${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}}
		command -v go >/dev/null || die "GIT_SECURE_BUILD=source needs Go 1.26+ (actions/setup-go)"
		local version
		version=$(git -C "$src" describe --tags --always --dirty 2>/dev/null || echo dev)
		say "building git-secure $version from $src"
		(cd "$src" && CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs \
			-ldflags "-s -w -X github.com/git-secure/git-secure/internal/cli.Version=$version" \
			-o "$dir/git-secure" ./cmd/git-secure)
	else
		local target url name
		target=$(os_arch)
		[ "${target%-*}" = windows ] && ext=.exe
		name="git-secure-$target$ext"
		url=${GIT_SECURE_RELEASE_URL:-}
		if [ -z "$url" ]; then
			local repo=${GIT_SECURE_REPOSITORY:-git-secure/git-secure} v=${GIT_SECURE_VERSION:-latest}
			if [ "$v" = latest ]; then
				url="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/latest/download"
			else
				url="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download/$v"
			fi
		fi
		say "installing $name from $url"
		curl -fsSL --retry 3 -o "$dir/SHA256SUMS" "$url/SHA256SUMS" || die "cannot download $url/SHA256SUMS"
		curl -fsSL --retry 3 -o "$dir/$name" "$url/$name" || die "cannot download $url/$name"
		local want got
		want=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$dir/SHA256SUMS")
		got=$(sha256 "$dir/$name")
		[ -n "$want" ] || die "$name is not listed in $url/SHA256SUMS"
		[ "$want" = "$got" ] || die "$name does not match SHA256SUMS (want $want, got $got): refusing it"
		mv "$dir/$name" "$dir/git-secure$ext"
		chmod +x "$dir/git-secure$ext"
	fi
	# git runs "git-remote-secure" for secure:: remotes; on Windows it
	# must be a copy (symbolic links need privileges there).
	if [ -n "$ext" ]; then cp "$dir/git-secure$ext" "$dir/git-remote-secure$ext"; else ln -sf git-secure "$dir/git-remote-secure"; fi
	if [ -n "${GITHUB_PATH:-}" ]; then echo "$dir" >>"$GITHUB_PATH"; fi
	"$dir/git-secure$ext" --version >&2
	echo "$dir"
}

cmd_fetch() {
	git rev-parse --git-dir >/dev/null 2>&1 || die "not in a git repository: check the repository out first"
	local url
	url=$(git remote get-url "$remote" 2>/dev/null) || die "no remote $remote: set GIT_SECURE_REMOTE"
	# actions/checkout fetches one commit at depth 1 and GitLab at depth 20:
	# verification replays the whole log and checks the rules on every
	# recorded update, so it needs the full history of every branch and
	# tag the log records, and the log itself.
	local args=(--no-tags --prune --force)
	if [ "$(git rev-parse --is-shallow-repository)" = true ]; then args+=(--unshallow); fi
	# The clone's fetch refspecs decide what verify judges: it judges the
	# remote-tracking refs as the server's refs. The first refspec keeps
	# the branches where git users look for them; the second keeps every
	# ref the server serves (refs/remote-refs/REMOTE/heads/main is its
	# refs/heads/main), because a rule may protect any namespace: tags
	# (fetched into refs/tags/* alone they would count as this clone's own,
	# and verify never fails a tag the log does not record there), replace
	# refs (every mirror of the server reads a replaced commit as its
	# replacement, though this clone's git does not read them), notes,
	# refs/custom/*. Fetching one namespace at a time missed every other
	# one: a protected refs/notes/commits moved on a hookless forge passed.
	# A forge's own namespaces (refs/pull/*, ...) stay out, as they stay out
	# of the remote helper's fetch: thousands of refs nothing judges, some
	# the forge cannot even serve; unless the policy names one (fetched
	# below), then it is judged too.
	git config --replace-all "remote.$remote.fetch" "+refs/heads/*:refs/remotes/$remote/*"
	git config --add "remote.$remote.fetch" "+refs/*:refs/remote-refs/$remote/*"
	say "fetching every branch, tag, other ref (but a forge's) and refs/secure/* from $remote"
	git -c protocol.version=2 fetch "${args[@]}" "$remote" \
		"+refs/heads/*:refs/remotes/$remote/*" "+refs/tags/*:refs/tags/*" "+refs/secure/*:refs/secure/*"
	git show-ref --verify --quiet refs/secure/rsl || { say "error: $remote has no refs/secure/rsl: it does not use git-secure (git secure init, then push)"; exit 1; }
	local ns excludes=()
	for ns in pull merge-requests changes keep-around; do
		# A rule's ref pattern names the namespace: refs/pull/... in the
		# policy's JSON, its slashes possibly escaped. verify fails closed
		# on a namespace the policy names that a refspec leaves out, so a
		# spelling this misses fails the check; it never passes it.
		if ! git grep -q -E "refs(/|\\\\/)$ns(/|\\\\/)" refs/secure/policy -- 2>/dev/null; then
			excludes+=("^refs/$ns/*")
			git config --add "remote.$remote.fetch" "^refs/$ns/*"
		else
			say "the policy names refs/$ns/: fetching it too"
		fi
	done
	git -c protocol.version=2 fetch --no-tags --prune --force "$remote" "+refs/*:refs/remote-refs/$remote/*" ${excludes[@]+"${excludes[@]}"}
	# On a pull request CI checks out a commit that is on no branch (the
	# forge's merge commit): keep it, it is what --mergeable judges.
	: "${url:?}"
}

pin_args() {
	local k
	for k in ${GIT_SECURE_ROOT_KEYS:-}; do printf -- '--root-key\n%s\n' "$k"; done
	if [ -n "${GIT_SECURE_ROOT_THRESHOLD:-}" ]; then printf -- '--root-threshold\n%s\n' "$GIT_SECURE_ROOT_THRESHOLD"; fi
}

cmd_verify() {
	local summary event pins=() rc=0 out
	summary=$(summary_file)
	event=$(ci_event)
	while IFS= read -r line; do pins+=("$line"); done < <(pin_args)
	if [ ${#pins[@]} -eq 0 ]; then
		say "warning: no root key pinned (GIT_SECURE_ROOT_KEYS): the first policy is trusted on first use"
	fi
	out=$(git secure verify --remote "$remote" ${pins[@]+"${pins[@]}"} 2>&1) || rc=$?
	printf '%s\n' "$out" >&2
	{
		if [ $rc -eq 0 ]; then
			printf '### git-secure: %s verified\n\n' "$remote"
		else
			printf '### git-secure: %s does NOT verify (exit %d)\n\n' "$remote" "$rc"
		fi
		printf '```\n%s\n```\n\n' "$(printf '%s' "$out" | sed 's/```/`` `/g')"
	} >>"$summary"
	if [ $rc -ne 0 ]; then return $rc; fi
	if [ "$event" = pull_request ]; then
		local base head
		base=$(ci_base)
		head=$(ci_head)
		say "would merging $head into $base satisfy the policy?"
		git secure verify --mergeable --markdown "$base" "$head" >>"$summary" || rc=$?
		git secure verify --mergeable "$base" "$head" >&2 || true
	fi
	return $rc
}

# ci_forge names the forge whose API record-merge may ask (a token and the
# repository are needed): GIT_SECURE_FORGE (github, gitlab or none), else
# from the CI's variables.
ci_forge() {
	if [ -n "${GIT_SECURE_FORGE:-}" ]; then echo "$GIT_SECURE_FORGE"; return; fi
	if [ -n "${GITLAB_TOKEN:-}" ] && [ -n "${CI_API_V4_URL:-}" ]; then echo gitlab; return; fi
	if [ -n "${GITHUB_TOKEN:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ]; then echo github; return; fi
	echo none
}

# changed_secure_refs prints those of the given refs whose value here
# differs from the remote's.
changed_secure_refs() {
	local listed r here
	listed=$(git ls-remote "$remote" "$@")
	for r in "$@"; do
		here=$(git rev-parse -q --verify "$r" || true)
		[ -n "$here" ] || continue
		if [ "$here" != "$(printf '%s\n' "$listed" | awk -v r="$r" '$2 == r { print $1 }')" ]; then printf '%s ' "$r"; fi
	done
}

ci_ref() {
	local r=${GIT_SECURE_REF:-${GITHUB_REF:-}}
	if [ -z "$r" ] && [ -n "${CI_COMMIT_BRANCH:-}" ]; then r=refs/heads/$CI_COMMIT_BRANCH; fi
	echo "$r"
}

cmd_record_merge() {
	local event ref sha key summary rc=0 out attempt
	event=$(ci_event)
	summary=$(summary_file)
	if [ "$event" != push ]; then say "record-merge: not a push ($event): nothing to record"; return 0; fi
	ref=$(ci_ref)
	case "$ref" in
	refs/heads/*) ;;
	*) say "record-merge: $ref is not a branch: nothing to record"; return 0 ;;
	esac
	sha=$(ci_head)
	key=${GIT_SECURE_BRIDGE_KEY_FILE:-}
	if [ -z "$key" ]; then
		if [ -z "${GIT_SECURE_BRIDGE_KEY:-}" ]; then
			say "record-merge: no forge bridge key (GIT_SECURE_BRIDGE_KEY): a move the forge made stays unrecorded and verify fails on it"
			return 0
		fi
		key=$(mktemp)
		# shellcheck disable=SC2064
		trap "rm -f '$key'" EXIT
		chmod 600 "$key"
		printf '%s\n' "$GIT_SECURE_BRIDGE_KEY" >"$key"
	fi
	# Two pull requests merged before this job ran: the reviews of the
	# second were recorded against the old base. record-merge asks the
	# forge which pull requests a step it cannot record merged, records
	# their reviews and judges it again (GitLab runs no pipeline when
	# someone approves, so there this is how approvals are recorded).
	local forge=() pushes
	case "$(ci_forge)" in
	github) forge=(--forge github) ;;
	gitlab) forge=(--forge gitlab) ;;
	esac
	# Another job may push the log or the store between our fetch and our
	# push: fetch them again and record on top, a few times.
	for attempt in 1 2 3; do
		rc=0
		out=$(git secure forge record-merge "$ref" --to "$sha" --key "$key" ${forge[@]+"${forge[@]}"} 2>&1) || rc=$?
		printf '%s\n' "$out" >&2
		pushes=$(changed_secure_refs refs/secure/attestations refs/secure/rsl)
		# The store first, in the same atomic push: an entry whose
		# approvals are not on the server would not verify.
		# shellcheck disable=SC2086
		if [ -n "$pushes" ] && ! git push --atomic "$remote" $pushes; then
			say "the log or the store on $remote moved meanwhile (attempt $attempt): fetching them and recording again"
			git fetch -q "$remote" "+refs/secure/*:refs/secure/*"
			continue
		fi
		break
	done
	{
		if [ $rc -eq 0 ]; then
			printf '### git-secure: the forge'"'"'s move of %s is recorded\n\n' "$ref"
		else
			printf '### git-secure: the forge'"'"'s move of %s is NOT allowed (exit %d)\n\n' "$ref" "$rc"
		fi
		printf '```\n%s\n```\n\n' "$(printf '%s' "$out" | sed 's/```/`` `/g')"
	} >>"$summary"
	return $rc
}

case "${1:-}" in
install) cmd_install ;;
fetch) cmd_fetch ;;
record-merge) cmd_record_merge ;;
verify) cmd_verify ;;
*) die "usage: $0 install|fetch|record-merge|verify" ;;
esac
