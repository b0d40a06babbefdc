#!/bin/bash
# scripts/selftest/run.sh [NAME...]
#
# Checks that the VM harness catches what it must: builds the modules in
# scripts/selftest/modules against the debug kernel and boots that kernel
# twice (scripts/vm/run.sh): once to insmod and rmmod the clean module,
# which must succeed (exit 0), and once for every broken one in turn, a
# run the harness must fail as a splat (exit 90) with each module's
# intended report among the lines its splat scan flagged.  Reports
# harness-selftest/NAME.  Default: all modules.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

# NAME -> the report its module must provoke ("" for the clean module).
declare -A expect=(
	[clean]=''
	[warn]='WARNING: CPU: .* selftest_init'
	[sleep_atomic]='BUG: sleeping function called from invalid context'
	[lock_inversion]='WARNING: possible circular locking dependency detected'
	[kasan_uaf]='BUG: KASAN: use-after-free in selftest_init'
	[kmemleak_leak]='unreferenced object 0x[0-9a-f]+ \(size 128\)'
)
# The broken modules share a boot, in an order where no report silences
# the next: lockdep's first, since a KASAN report turns lockdep off, and
# KASAN's last.  kmemleak reports at the end of any run.
order="clean lock_inversion sleep_atomic warn kmemleak_leak kasan_uaf"

# Build out of the source tree, in the cache, next to the kernel it is for.
build_modules() {
	local dk=$1 bdir=$2
	rm -rf "$bdir"
	mkdir -p "$bdir"
	cp "$top"/scripts/selftest/modules/{Kbuild,*.c} "$bdir/"
	make -s -C "$dk/build" M="$bdir" modules >&2
}

# boot NAME MODULE...: one boot that loads and unloads each MODULE in
# turn; sets $rc (the harness's exit) and $dir (its logs).
boot() {
	local name=$1 start m script=
	shift
	dir=$out/$name
	mkdir -p "$dir"
	for m; do
		script+="insmod $bdir/selftest_$m.ko && rmmod selftest_$m; "
	done
	start=$SECONDS
	rc=0
	"$top/scripts/vm/run.sh" --share "$dir" --log "$dir/console.log" "$dk" -- \
		sh -c "$script" >/dev/null 2>"$dir/stderr" || rc=$?
	say "selftest: $name: harness exit $rc after $((SECONDS - start)) s"
}

# flagged NAME: the splat scan flagged (">") a line with NAME's report.
flagged() {
	grep -Eq "^> +[0-9]+  .*${expect[$1]}" "$dir/stderr"
}

names=${*:-$order}
for name in $names; do
	[ -n "${expect[$name]+set}" ] || die "no self-test named $name"
done
dk=$("$top/scripts/kernel/debug-kernel.sh")
bdir=$cache/selftest-build-$(basename "$dk")
build_modules "$dk" "$bdir"
out=$(run_dir selftest)
say "selftest: logs in $out"
broken=()
for name in $names; do
	[ "$name" = clean ] || broken+=("$name")
done
if [[ " $names " == *" clean "* ]]; then
	boot clean clean
	if [ $rc = 0 ]; then
		pass harness-selftest/clean
	else
		fail harness-selftest/clean "exit $rc, see $dir"
		tail -n 40 "$dir/stderr" >&2
	fi
fi
[ ${#broken[@]} -gt 0 ] || exit 0
boot broken "${broken[@]}"
for name in "${broken[@]}"; do
	if [ $rc = 90 ] && flagged "$name"; then
		pass "harness-selftest/$name"
	else
		fail "harness-selftest/$name" "exit $rc, report not flagged; see $dir"
	fi
done
