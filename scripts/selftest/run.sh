#!/bin/bash
# scripts/selftest/run.sh [NAME...]
#
# Checks that the VM harness catches what it must: builds the modules in
# scripts/selftest/modules against the debug kernel, boots that kernel once
# per module (scripts/vm/run.sh) to insmod and rmmod it, and reports
# harness-selftest/NAME.  A broken module passes when the harness fails its
# run as a splat (exit 90) and the console shows the intended report; the
# clean one passes when its run succeeds (exit 0).  Default: all modules.
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
order="clean warn sleep_atomic lock_inversion kasan_uaf kmemleak_leak"

# Build out of the source tree, in the cache, next to the kernel it is for.
build_modules() {
	local dk=$1 bdir=$2
	rm -rf "$bdir"
	mkdir -p "$bdir"
	cp "$top"/scripts/selftest/modules/{Kbuild,*.c} "$bdir/"
	make -s -C "$dk/build" M="$bdir" modules >&2
}

# check_one NAME: one boot, one verdict.
check_one() {
	local name=$1 dir=$out/$1 rc=0 start secs want
	mkdir -p "$dir"
	start=$SECONDS
	"$top/scripts/vm/run.sh" --share "$dir" --log "$dir/console.log" "$dk" -- \
		sh -c "insmod $bdir/selftest_$name.ko && rmmod selftest_$name" \
		>/dev/null 2>"$dir/stderr" || rc=$?
	secs=$((SECONDS - start))
	say "selftest: $name: harness exit $rc after $secs s"
	want=${expect[$name]}
	if [ -z "$want" ]; then
		[ $rc = 0 ] && pass "harness-selftest/$name" "$secs s" && return
	elif [ $rc = 90 ] && grep -Eq "$want" "$dir/console.log"; then
		pass "harness-selftest/$name" "$secs s"
		return
	fi
	fail "harness-selftest/$name" "exit $rc, see $dir"
	tail -n 40 "$dir/stderr" >&2
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
total=$SECONDS
for name in $names; do
	check_one "$name"
done
say "selftest: $(wc -w <<<"$names") boots in $((SECONDS - total)) s"
