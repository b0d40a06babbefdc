#!/bin/bash
# KUnit on the debug kernel: load softhca and softhca_kunit.ko in a guest,
# collect the KTAP results from debugfs, parse them with kunit.py's parser
# and report every test case.  The harness fails the run on any splat.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

dk=$("$top/scripts/kernel/debug-kernel.sh") || die "no debug kernel"
rel=$(cat "$dk/release")
make -s -C "$top" KDIR="$dk/build" modules >/dev/null || die "build failed"

share=$(run_dir kunit)
start=$SECONDS
SOFTHCA_SHARE=$share "$top/scripts/vm/run.sh" --timeout 1800 --share "$share" \
	--log "$share/console.log" "$dk" -- \
	"$top/scripts/tests/kunit-guest.sh" "$top/build/$rel" >/dev/null
rc=$?
say "kunit: guest run took $((SECONDS - start)) s, log $share/console.log"

# A module's suites print as subtests with no top-level header: give
# kunit.py one, over the suites, and the log from the first suite on.
ktap=$share/ktap
suites=$(grep -c '^    # Subtest:' "$share/dmesg.txt" 2>/dev/null)
{
	echo "KTAP version 1"
	echo "1..${suites:-0}"
	sed -n '/^    KTAP version 1$/,$p' "$share/dmesg.txt" 2>/dev/null
} >"$ktap"
python3 "$dk/src/tools/testing/kunit/kunit.py" parse --json="$share/kunit.json" \
	"$ktap" >"$share/kunit.txt" 2>&1
python3 "$top/scripts/kunit-report.py" "$share/kunit.json" >"$share/report"
replay_results "$share/report"
[ -s "$share/report" ] || fail kunit/results "no KTAP parsed; see $share"

if [ $rc = 0 ]; then
	pass kunit/kernel-log-clean
else
	fail kunit/kernel-log-clean "harness exit $rc; see $share/console.log"
fi
