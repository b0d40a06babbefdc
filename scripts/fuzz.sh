#!/bin/bash
# fuzz.sh [--seconds N] [--frames N] [--seed N] [--name NAME]
#
# The wire fuzzer (kunit/fuzz_wire_test.c, softhca_fuzz.ko) on the debug
# kernel: mutated RoCEv2 frames to QPs in every state, until N frames are
# sent (default 1000000) or N seconds have passed, whichever comes first
# (--seconds alone: no bound on frames).  Prints the seed (replay a
# campaign with --seed) and reports NAME/round-R and NAME/kernel-log-clean
# as PASS/FAIL lines; the guest fails on any splat, as for KUnit.
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

frames=
seconds=0
seed=0
name=fuzz
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) seconds=$2; shift 2 ;;
	--frames) frames=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	*) die "usage: fuzz.sh [--seconds N] [--frames N] [--seed N] [--name NAME]" ;;
	esac
done
if [ -z "$frames" ]; then
	frames=$(( seconds ? 0 : 1000000 ))
fi
# Any seed but 0, which asks the module for a random one: print it here.
[ "$seed" != 0 ] || seed=$(( (RANDOM << 15 | RANDOM) + 1 ))
say "$name: seed=$seed frames=$frames seconds=$seconds"

dk=$("$top/scripts/kernel/debug-kernel.sh") || die "no debug kernel"
rel=$(cat "$dk/release")
make -s -C "$top" KDIR="$dk/build" modules >/dev/null || die "build failed"

share=$(run_dir "$name")
start=$SECONDS
# The guest's time: the campaign, plus boot, the device and each round's
# QPs; rounds are of at most 300 s.
limit=$(( seconds ? seconds + 900 : 86400 ))
SOFTHCA_SHARE=$share "$top/scripts/vm/run.sh" --timeout "$limit" \
	--share "$share" --log "$share/console.log" "$dk" -- \
	"$top/scripts/tests/fuzz-guest.sh" "$top/build/$rel" \
	seed="$seed" frames="$frames" seconds="$seconds" >/dev/null
rc=$?
say "$name: guest run took $((SECONDS - start)) s, log $share/console.log"

# One result per round, from the KTAP: "ok N round R" under the case.
grep -E '^ +(not )?ok [0-9]+ round [0-9]+' "$share/dmesg.txt" 2>/dev/null |
	while read -r ok rest; do
		round=${rest##* round }
		if [ "$ok" = ok ]; then
			pass "$name/round-$round"
		else
			fail "$name/round-$round" "seed=$seed; see $share/dmesg.txt"
		fi
	done
grep -q -E '^ +ok [0-9]+ round 0' "$share/dmesg.txt" 2>/dev/null ||
	fail "$name/results" "no passing round; see $share"
grep -E 'frames in [0-9]+ ms' "$share/dmesg.txt" 2>/dev/null | sed 's/^ *# */  /' >&2

if [ $rc = 0 ]; then
	pass "$name/kernel-log-clean"
else
	fail "$name/kernel-log-clean" "harness exit $rc, seed=$seed; see $share/console.log"
fi
