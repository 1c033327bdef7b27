# shellcheck shell=bash
# Sourced by tests/run.sh and tests/container/run.sh: the suite owns its
# world. A HOME of its own for the whole run (ward's default configuration
# and state directories, git's and npm's configuration), never the
# caller's — which may be /tmp (CI images, arbitrary-uid containers:
# tests/e2e/home.bats covers that on purpose), hold a ward.yml, or lack a
# git identity. Mode 0700 like a real home: the tests that run as nobody
# expect it out of nobody's reach. Removed when the sourcing shell exits.
own_home=$(mktemp -d /var/tmp/ward-check-home.XXXXXX) || exit 2
trap 'rm -rf "$own_home"' EXIT
export HOME=$own_home
unset XDG_CONFIG_HOME XDG_STATE_HOME
export GIT_AUTHOR_NAME="ward tests" GIT_AUTHOR_EMAIL=tests@ward.invalid
export GIT_COMMITTER_NAME="ward tests" GIT_COMMITTER_EMAIL=tests@ward.invalid
