#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, repositories and startup files: a confined command
# (workspace-write) makes git, a shell or a tool run its code later,
# unconfined, through what is not the workspace's own .git/hooks — a
# repository it creates (`git init .` in a workspace that is not one, a
# nested `vendor/lib/.git`, a gitlink that makes the user's `git status`
# at the top recurse into it), the repository of an `rw` root, an existing
# nested repository's config, the shell and tool startup files of the
# workspace, and the home directory's when the workspace holds it. Each
# class runs on both runners (bwrap, and Landlock through landlock-run), as
# root and as nobody, through `ward run` and through `ward mcp`; then the
# user's own tools run, as the user, and must run nothing the command
# wrote. (docs/RUNNERS.md, "Protected paths" and "After the run: the
# guard".)

load helpers
load persist

# The fsmonitor a command sets: git runs it at the user's next status.
fsmonitor() {
	printf 'touch %s; false' "$RT_PWN"
}

# --- a repository made in a workspace that is not one ----------------------

new_repo_case() {
	local front=$1 v=$2 who=$3
	require_runner "$v"
	become "$who"
	confined "$front" "$v" "git init -q . && git config core.fsmonitor '$(fsmonitor)' && echo INIT"
	[[ "$output" == *INIT* ]] || fail "the command did not run: $stderr"
	users_git
	assert_not_pwned
	[ ! -e "$WS/.git" ] || fail "the new repository is still in the workspace"
	[[ "$stderr" == *"a new git repository"*"$WS/.git appeared during the run"* ]] ||
		fail "the guard said nothing about the new repository"
	[[ "$stderr" == *"--keep-new-repos"* ]] || fail "nothing says how to keep one"
	in_quarantine "$WS/.git/config" || fail "the repository is not in the quarantine"
}

@test "bwrap: git init . with core.fsmonitor in a plain workspace runs nothing (root)" { new_repo_case run bwrap root; }
@test "bwrap: git init . with core.fsmonitor in a plain workspace runs nothing (nobody)" { new_repo_case run bwrap nobody; }
@test "landlock: git init . with core.fsmonitor in a plain workspace runs nothing (root)" { new_repo_case run landlock-run root; }
@test "landlock: git init . with core.fsmonitor in a plain workspace runs nothing (nobody)" { new_repo_case run landlock-run nobody; }
@test "ward mcp bwrap: git init . with core.fsmonitor runs nothing (nobody)" { new_repo_case mcp bwrap nobody; }
@test "ward mcp landlock: git init . with core.fsmonitor runs nothing (root)" { new_repo_case mcp landlock root; }

# A person may keep what calls make: --keep-new-repos, or the user file.
@test "landlock: --keep-new-repos and keep_new_repos: true keep a new repository" {
	require_runner landlock
	ward_run landlock-run workspace-write --keep-new-repos -c 'git init -q .'
	assert_status 0
	[ -d "$WS/.git" ] || fail "--keep-new-repos did not keep it"
	rm -rf "$WS/.git"
	mkdir -p "$HOME/.config/ward"
	echo 'keep_new_repos: true' >"$HOME/.config/ward/config.yml"
	ward_run landlock-run workspace-write -c 'git init -q .'
	[ -d "$WS/.git" ] || fail "keep_new_repos: true did not keep it"
	# Not from a project file: a repository may not keep its own plants.
	rm -rf "$WS/.git" "$HOME/.config/ward/config.yml"
	mkdir -p "$WS/.ward"
	echo 'keep_new_repos: true' >"$WS/.ward/config.yml"
	ward_run landlock-run workspace-write -c 'git init -q .'
	[ ! -e "$WS/.git" ] || fail "a project file kept a new repository"
	[[ "$stderr" == *"keep_new_repos: ignored"* ]] || fail "the project's key was not reported"
}

# --- a nested repository -----------------------------------------------------

# An existing nested repository's config (vendor/lib/.git/config) is
# protected like the workspace's own; one the command makes is taken away.
nested_case() {
	local front=$1 v=$2 who=$3
	require_runner "$v"
	become "$who"
	make_repo
	as_user git -C "$WS" init -q vendor/lib
	confined "$front" "$v" "git -C vendor/lib config core.fsmonitor '$(fsmonitor)'; git init -q vendor/new && git -C vendor/new config core.fsmonitor '$(fsmonitor)'; echo DONE"
	[[ "$output" == *DONE* ]] || fail "the command did not run: $stderr"
	as_user git -C "$WS/vendor/lib" status >/dev/null 2>&1 || true
	as_user git -C "$WS/vendor/new" status >/dev/null 2>&1 || true
	users_git
	assert_not_pwned
	! grep -q fsmonitor "$WS/vendor/lib/.git/config" || fail "vendor/lib's config keeps the fsmonitor"
	[ ! -e "$WS/vendor/new/.git" ] || fail "the new nested repository is still there"
}

@test "bwrap: a nested vendor/lib/.git/config keeps no core.fsmonitor (root)" { nested_case run bwrap root; }
@test "bwrap: a nested vendor/lib/.git/config keeps no core.fsmonitor (nobody)" { nested_case run bwrap nobody; }
@test "landlock: a nested vendor/lib/.git/config keeps no core.fsmonitor (root)" { nested_case run landlock-run root; }
@test "landlock: a nested vendor/lib/.git/config keeps no core.fsmonitor (nobody)" { nested_case run landlock-run nobody; }
@test "ward mcp landlock: a nested vendor/lib/.git/config keeps no core.fsmonitor (nobody)" { nested_case mcp landlock nobody; }

# --- a gitlink: the user's git status at the top recurses into it ----------

gitlink_case() {
	local front=$1 v=$2 who=$3
	require_runner "$v"
	become "$who"
	make_repo
	confined "$front" "$v" "git init -q sub && git -C sub -c user.name=x -c user.email=y commit -q --allow-empty -m s && git -C sub config core.fsmonitor '$(fsmonitor)' && git add sub 2>/dev/null && git ls-files -s sub"
	[[ "$output" == 160000* ]] || fail "no gitlink was recorded: $stderr"
	# The user's plain git, at the top: it would run `git status` inside
	# every populated gitlink.
	as_user git -C "$WS" status >/dev/null 2>&1 || true
	as_user git -C "$WS" commit -qm x >/dev/null 2>&1 || true
	assert_not_pwned
	[ ! -e "$WS/sub/.git" ] || fail "the gitlink's repository is still there"
}

@test "bwrap: a gitlink plus core.fsmonitor runs nothing at the user's git status (root)" { gitlink_case run bwrap root; }
@test "bwrap: a gitlink plus core.fsmonitor runs nothing at the user's git status (nobody)" { gitlink_case run bwrap nobody; }
@test "landlock: a gitlink plus core.fsmonitor runs nothing at the user's git status (root)" { gitlink_case run landlock-run root; }
@test "landlock: a gitlink plus core.fsmonitor runs nothing at the user's git status (nobody)" { gitlink_case run landlock-run nobody; }
@test "ward mcp bwrap: a gitlink plus core.fsmonitor runs nothing (root)" { gitlink_case mcp bwrap root; }
@test "ward mcp landlock: a gitlink plus core.fsmonitor runs nothing (nobody)" { gitlink_case mcp landlock nobody; }

# A new submodule's git directory under .git/modules (where git looks when
# the user runs `git submodule update`) is taken away too.
@test "landlock: a new .git/modules/NAME is taken away" {
	require_runner landlock
	make_repo
	ward_run landlock-run workspace-write -c 'git init -q --bare .git/modules/evil && echo MADE'
	[[ "$output" == *MADE* ]] || fail "the command did not run"
	[ ! -e "$WS/.git/modules/evil" ] || fail ".git/modules/evil is still there"
	[[ "$stderr" == *"a new submodule's git directory"* ]] || fail "the guard said nothing"
}

# --- a repository in an rw root ------------------------------------------------

rw_root_case() {
	local front=$1 v=$2 who=$3 other=$OUT_DIR/other
	require_runner "$v"
	become "$who"
	as_user git init -q "$other"
	as_user git -C "$other" config user.email rt@example.invalid
	as_user git -C "$other" config user.name rt
	local extra="--access=rw $other"
	if [ "$front" = run ]; then
		ward_run "$v" workspace-write "$extra" -c "printf '#!/bin/sh\ntouch $RT_PWN.hook\n' > '$other/.git/hooks/pre-commit'; chmod +x '$other/.git/hooks/pre-commit'; git -C '$other' config core.fsmonitor '$(fsmonitor)'; git init -q '$other/deep/er'; echo DONE"
	else
		mcp_tool "$v" bash "$(json_command "printf '#!/bin/sh\ntouch $RT_PWN.hook\n' > '$other/.git/hooks/pre-commit'; chmod +x '$other/.git/hooks/pre-commit'; git -C '$other' config core.fsmonitor '$(fsmonitor)'; git init -q '$other/deep/er'; echo DONE")" "$extra"
	fi
	[[ "$output" == *DONE* ]] || fail "the command did not run: $stderr"
	as_user git -C "$other" status >/dev/null 2>&1 || true
	as_user git -C "$other" commit -q --allow-empty -m x >/dev/null 2>&1 || true
	assert_not_pwned
	[ ! -e "$RT_PWN.hook" ] || fail "the rw root's planted hook ran"
	[ ! -e "$other/deep/er/.git" ] || fail "a new repository in the rw root is still there"
}

@test "bwrap: the repository of an rw root stays the user's (root)" { rw_root_case run bwrap root; }
@test "bwrap: the repository of an rw root stays the user's (nobody)" { rw_root_case run bwrap nobody; }
@test "landlock: the repository of an rw root stays the user's (root)" { rw_root_case run landlock-run root; }
@test "landlock: the repository of an rw root stays the user's (nobody)" { rw_root_case run landlock-run nobody; }
@test "ward mcp landlock: the repository of an rw root stays the user's (root)" { rw_root_case mcp landlock root; }

# --- the fence -----------------------------------------------------------------

@test "fs fence: a new or nested repository's config is refused (ward fs write)" {
	command -v git >/dev/null || skip "git not installed"
	make_repo
	git -C "$WS" init -q vendor/lib
	local p
	for p in sub/.git/config sub/.git vendor/lib/.git/config \
		vendor/lib/.git/hooks/pre-commit .git/modules/x/config \
		.git/worktrees/w/commondir .bashrc .gitmodules .npmrc \
		.aws/credentials .codex/config.toml; do
		run "$WARD" fs write --mode workspace-write -w "$WS" -p --text x "$p"
		[ "$status" -eq 3 ] || fail "ward fs write $p: exit $status, expected 3 (denied)"
	done
	[ ! -e "$WS/sub" ] || fail "the fence made sub/"
	! grep -q x "$WS/vendor/lib/.git/config" || fail "the fence wrote vendor/lib/.git/config"
	# What git writes in a commit stays writable through the fence too.
	run "$WARD" fs write --mode workspace-write -w "$WS" --text x .git/description
	[ "$status" -eq 0 ] || fail "the fence refused .git/description: $output"
	run "$WARD" fs write --mode workspace-write -w "$WS" -p --keep-new-repos --text x new/.git/description
	[ "$status" -eq 0 ] || fail "--keep-new-repos did not let the fence make a repository: $output"
}

fence_mcp_case() {
	local v=$1 who=$2
	require_runner "$v"
	become "$who"
	mcp_tool "$v" write_file '{"path": "sub/.git/config", "content": "[core]\n\tfsmonitor = x\n"}'
	[ "$status" -eq 1 ] || fail "write_file sub/.git/config was not refused"
	[ ! -e "$WS/sub/.git/config" ] || fail "write_file made sub/.git/config"
}

@test "ward mcp: write_file sub/.git/config is refused (root)" { fence_mcp_case landlock root; }
@test "ward mcp: write_file sub/.git/config is refused (nobody)" { fence_mcp_case landlock nobody; }

# --- startup files ---------------------------------------------------------------

startup_case() {
	local front=$1 v=$2 who=$3 p
	require_runner "$v"
	become "$who"
	as_user sh -c "echo ': user' > '$WS/.bashrc'"
	confined "$front" "$v" "for f in .zshrc .profile .bash_profile .zshenv .gitconfig .npmrc .ripgreprc .gitmodules pip.conf .pypirc; do echo 'touch $RT_PWN' > \$f; done; echo 'touch $RT_PWN' >> .bashrc; for d in .aws .docker .kube .codex .cursor .gemini; do mkdir -p \$d && echo x > \$d/config; done; echo DONE"
	[[ "$output" == *DONE* ]] || fail "the command did not run: $stderr"
	for p in .zshrc .profile .bash_profile .zshenv .gitconfig .npmrc .ripgreprc .gitmodules pip.conf .pypirc .aws .docker .kube .codex .cursor .gemini; do
		[ ! -e "$WS/$p" ] || fail "$p is still in the workspace"
	done
	[ "$(cat "$WS/.bashrc")" = ": user" ] || fail ".bashrc was not put back"
	as_user bash --rcfile "$WS/.bashrc" -i -c true </dev/null >/dev/null 2>&1 || true
	assert_not_pwned
	assert_no_quarantine_in_ws
}

@test "bwrap: shell and tool startup files in the workspace stay the user's (root)" { startup_case run bwrap root; }
@test "bwrap: shell and tool startup files in the workspace stay the user's (nobody)" { startup_case run bwrap nobody; }
@test "landlock: shell and tool startup files in the workspace stay the user's (root)" { startup_case run landlock-run root; }
@test "landlock: shell and tool startup files in the workspace stay the user's (nobody)" { startup_case run landlock-run nobody; }
@test "ward mcp bwrap: shell and tool startup files stay the user's (nobody)" { startup_case mcp bwrap nobody; }

# --- the home directory as the workspace ------------------------------------------

# HOME is the workspace: refused under workspace-write with libward's one
# text (ward run and ward mcp alike); confirmed, the home directory's
# startup files and autostart places stay protected, and a warning names
# them.
home_case() {
	local v=$1 who=$2 p
	require_runner "$v"
	become "$who"
	rmdir "$WS"
	WS=$HOME
	ward_run "$v" workspace-write -c 'echo RAN > ran'
	[ "$status" -ne 0 ] || fail "a workspace of \$HOME was accepted"
	[ ! -e "$HOME/ran" ] || fail "the command ran"
	[[ "$stderr" == *"refusing to make $HOME the workspace under workspace-write"*"--allow-home-workspace"* ]] ||
		fail "the refusal does not say why and what to pass"
	mcp_tool "$v" bash "$(json_command 'echo RAN > ran')"
	[ "$status" -eq 2 ] || fail "ward mcp accepted a workspace of \$HOME"
	[[ "$stderr" == *"refusing to make $HOME the workspace under workspace-write"* ]] ||
		fail "ward mcp does not give the same text"
	ward_run "$v" workspace-write --allow-home-workspace -c "
		echo 'touch $RT_PWN' >> .bashrc; echo x > .profile
		mkdir -p .ssh .config/systemd/user .config/autostart .local/bin
		echo key > .ssh/authorized_keys
		printf '[Service]\nExecStart=/bin/touch $RT_PWN\n' > .config/systemd/user/x.service
		printf '[Desktop Entry]\nExec=touch $RT_PWN\n' > .config/autostart/x.desktop
		printf '#!/bin/sh\ntouch $RT_PWN\n' > .local/bin/git; chmod +x .local/bin/git
		echo DONE"
	[[ "$output" == *DONE* ]] || fail "the confirmed call did not run: $stderr"
	[[ "$stderr" == *"your home directory $HOME lies in the writable root"*".ssh"*".config/autostart"* ]] ||
		fail "no warning names the home directory's protected places"
	for p in .bashrc .profile .ssh/authorized_keys .config/systemd/user/x.service \
		.config/autostart/x.desktop .local/bin/git; do
		[ ! -e "$HOME/$p" ] || fail "$p is still in the home directory"
	done
	# The same from the user's own file.
	mkdir -p "$HOME/.config/ward"
	echo 'allow_home_workspace: true' >"$HOME/.config/ward/config.yml"
	[ "$who" != nobody ] || chown -R 65534:65534 "$HOME/.config"
	ward_run "$v" workspace-write -c 'echo x > .zshrc; echo DONE'
	[[ "$output" == *DONE* ]] || fail "allow_home_workspace: true did not confirm: $stderr"
	[ ! -e "$HOME/.zshrc" ] || fail ".zshrc is still in the home directory"
}

@test "bwrap: --workspace \$HOME is refused, and confirmed keeps the dotfiles (root)" { home_case bwrap root; }
@test "bwrap: --workspace \$HOME is refused, and confirmed keeps the dotfiles (nobody)" { home_case bwrap nobody; }
@test "landlock: --workspace \$HOME is refused, and confirmed keeps the dotfiles (root)" { home_case landlock-run root; }
@test "landlock: --workspace \$HOME is refused, and confirmed keeps the dotfiles (nobody)" { home_case landlock-run nobody; }

@test "--workspace / is refused under workspace-write, read-only is not" {
	require_runner landlock
	run "$WARD" run --runner landlock -m workspace-write -w / -- true
	[ "$status" -ne 0 ] || fail "a workspace of / was accepted"
	[[ "$output" == *"refusing to make / the workspace under workspace-write: it is the root directory"* ]] ||
		fail "the refusal does not say why"
	run "$WARD" run --runner landlock -m read-only -w / -- true
	[ "$status" -eq 0 ] || fail "read-only with a workspace of / was refused: $output"
	# A project file cannot confirm it.
	mkdir -p "$HOME/.ward"
	echo 'allow_home_workspace: true' >"$HOME/.ward/config.yml"
	run "$WARD" run --runner landlock -m workspace-write -w "$HOME" -- true
	[ "$status" -ne 0 ] || fail "a project file confirmed a workspace of \$HOME"
}
