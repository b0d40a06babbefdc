#!/bin/bash
# Lint, as a kernel maintainer would before applying: checkpatch --strict
# and kernel-doc on every kernel source, then W=1 and sparse builds against
# each kernel softhca targets, and the driver's layering (docs/layers.md)
# from the objects; shellcheck on the harness; systemd-analyze verify on
# the systemd units.  Any finding fails its test.  The builds are the
# ones the suites use (build/<release>), made afresh: make check's build
# suite leaves the modules to them.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

dk=$("$top/scripts/kernel/debug-kernel.sh") || die "no debug kernel"
cd "$top" || exit 1
mapfile -t srcs < <(find drivers kunit include -name '*.[ch]' | sort)

# MACRO_ARG_REUSE guards against arguments with side effects; softhca's
# table and fixture macros take field and variable names only.
lint_checkpatch() {
	perl "$dk/src/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types --ignore MACRO_ARG_REUSE -f "${srcs[@]}" |
		grep -v '^total: 0 errors, 0 warnings, 0 checks'
	return 0
}

lint_kerneldoc() {
	perl "$dk/src/scripts/kernel-doc" -none "${srcs[@]}" 2>&1
}

# Every shell script (a shell's #!, or *.sh, sourced ones too), with what
# it sources (-x); findings of every severity count.
lint_shellcheck() {
	local f files=()
	while read -r f; do
		case $f in
		*.sh) files+=("$f") ;;
		*) head -n 1 "$f" | grep -Eq '^#!/bin/(ba)?sh' && files+=("$f") ;;
		esac
	done < <(find scripts userspace .ci -type f | sort)
	shellcheck -x -P SCRIPTDIR -f gcc "${files[@]}" 2>&1
	return 0
}

# The systemd units, as systemd reads them: a template as an instance.
lint_systemd() {
	local dir f unit
	dir=$(mktemp -d)
	cp "$top"/userspace/systemd/* "$dir/"
	for f in "$dir"/*; do
		unit=${f##*/}
		unit=${unit/@./@lint0.}
		SYSTEMD_UNIT_PATH=$dir: systemd-analyze verify "$unit" 2>&1
	done
	rm -rf "$dir"
	return 0
}

# build_dir KDIR: where the Makefile builds softhca for the kernel of
# KDIR, and the suites find it.
build_dir() {
	echo "$top/build/$(kdir_release "$1")"
}

# lint_build KDIR: softhca built afresh (its directory emptied first, so
# that every file is compiled and every warning shows) with W=1 (the
# Makefile's flags, so the suites after use this build as it is) and
# sparse on every file (C=2); prints every warning and error.
lint_build() {
	local out status
	rm -rf "$(build_dir "$1")"
	out=$(make -s -j"$(nproc)" -C "$top" KDIR="$1" modules C=2 2>&1)
	status=$?
	grep -E 'warning:|error:|ERROR|Error|sparse:' <<<"$out"
	[ "$status" = 0 ] || echo "make exit $status"
	return 0
}

# The layering (docs/layers.md), from the objects of the build before.
lint_layers() {
	"$top/scripts/layers.py" "$top/docs/layers.md" \
		"$(build_dir "$1")/drivers/softhca" |
		grep -v '^layers: .* 0 errors$'
	return 0
}

lint_test() {
	local name=$1 out
	shift
	out=$("$@")
	if [ -z "$out" ]; then
		pass "lint/$name"
	else
		printf '%s\n' "$out" | head -n 40
		fail "lint/$name"
	fi
}

lint_test checkpatch lint_checkpatch
lint_test kernel-doc lint_kerneldoc
lint_test shellcheck lint_shellcheck
lint_test systemd lint_systemd
debian_kdir=$(default_kdir 2>/dev/null)
lint_test "w1-sparse-$(basename "$debian_kdir")" lint_build "$debian_kdir"
lint_test layers lint_layers "$debian_kdir"
lint_test "w1-sparse-debug-$(cat "$dk/release")" lint_build "$dk/build"
lts612=$(kdir_lts612)
if [ -n "$lts612" ]; then
	lint_test "w1-sparse-$(basename "$lts612")" lint_build "$lts612"
else
	skip lint/w1-sparse-6.12 "no linux-headers-6.12.*+deb12-amd64"
fi
