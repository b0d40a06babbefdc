#!/bin/bash
# deb.sh [KDIR]
#
# The Debian packages as a user installs them: the README's install block
# as written (`make deb` here, the rest in a guest of Debian's kernel for
# KDIR, default 6.1, whose headers the host has), then
# scripts/tests/deb-guest.sh's checks and the README's uninstall block.
# The guest starts without softhca in its module tree: DKMS builds it
# there, under TCG.  Results: deb/... (deb-<major.minor>/... for another
# kernel).
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

suite_kernel deb "${1:-}"

share=$(run_dir "deb-$rel")

# readme_block NAME: the indented block after the README's
# "<!-- NAME: ... -->" marker, unindented.
readme_block() {
	awk -v marker="<!-- $1:" '
		index($0, marker) == 1 { found = 1; next }
		found && /^    / { sub(/^    /, ""); print; started = 1; next }
		found && started { exit }
	' "$top/README.md"
}

readme_block install >"$share/install"
readme_block uninstall >"$share/uninstall"
if [ "$(head -n 1 "$share/install")" != "make deb" ] ||
	! [ -s "$share/uninstall" ]; then
	fail "$prefix/suite" "the README's install block does not start with make deb, or has no uninstall block"
	exit 1
fi
sed -i 1d "$share/install"

if ! (cd "$top" && make deb) >"$share/make-deb.log" 2>&1; then
	fail "$prefix/make-deb" "see $share/make-deb.log"
	exit 1
fi
pass "$prefix/make-deb"

start=$SECONDS
(cd "$top" && SOFTHCA_RESULTS=$share/results SOFTHCA_SHARE=$share \
	"$top/scripts/vm/run.sh" --timeout 2400 --share "$share" \
	--log "$share/console.log" "$kernel" -- \
	"$top/scripts/tests/deb-guest.sh" "$share/install" \
	"$share/uninstall" >/dev/null)
rc=$?
say "deb ($rel): guest run took $((SECONDS - start)) s"
guest_verdict deb $rc "$share"
