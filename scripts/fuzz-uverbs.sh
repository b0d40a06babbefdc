#!/bin/bash
# fuzz-uverbs.sh [--seconds N] [--seed S] [--procs P] [--ops N] [--debian]
#
# A campaign of userspace/tests/fuzz-uverbs (random uverbs commands, rings
# written over while traffic runs) against softhca on the debug kernel
# (KASAN, lockdep, kmemleak): the commands go to one device, the traffic
# of half the workers to a second one over a veth between two network
# namespaces, the other half's in loopback.  --debian: on Debian's kernel
# instead.
# Defaults: $DURATION seconds (else 90), seed $SEED (else from the clock),
# 4 processes, 10^6 operations (the time runs out first); on the debug
# kernel, 2% of softhca's allocations fail meanwhile (fuzz-uverbs --fail;
# Debian's kernels have no fault injection).  Prints the seed;
# the workers' logs (every operation, its arguments and its answer) and
# the console stay in the run directory it names.  Results:
#   fuzz/uverbs-setup, fuzz/uverbs-regress-<seed> (the kept cases),
#   fuzz/uverbs, fuzz/uverbs-over-the-wire,
#   fuzz/uverbs-resources-baseline, fuzz/uverbs-unload
#   (from the guest), and fuzz/uverbs-kernel-log-clean: no splat in the
#   kernel log, kmemleak's scan after the run included.
# Replay one worker of a campaign:
#   fuzz-uverbs --seed S --procs P --ops N --worker I   (in a guest)
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

seconds=${DURATION:-90}
seed=${SEED:-$(printf '%#x' $(($(date +%s%N) & 0xffffffffffff)))}
procs=4
ops=1000000
debian=
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) seconds=$2 && shift 2 ;;
	--seed) seed=$2 && shift 2 ;;
	--procs) procs=$2 && shift 2 ;;
	--ops) ops=$2 && shift 2 ;;
	--debian) debian=1 && shift ;;
	*) die "usage: fuzz-uverbs.sh [--seconds N] [--seed S] [--procs P] [--ops N] [--debian]" ;;
	esac
done

if [ -n "$debian" ]; then
	kdir=$(make -s -C "$top" print-kdir)
	kernel=$("$top/scripts/kernel/debian-kernel.sh" "$(kdir_release "$kdir")") ||
		die "no Debian kernel"
	fail=0
else
	fail=2
	kernel=$("$top/scripts/kernel/debug-kernel.sh") || die "no debug kernel"
	kdir=$kernel/build
fi
rel=$(kdir_release "$kdir")
make -s -C "$top" KDIR="$kdir" modules >/dev/null || die "module build failed"
make -s -C "$top" userspace >/dev/null || die "provider build failed"

share=$(run_dir fuzz-uverbs)
say "fuzz-uverbs: seed $seed, $seconds s, $procs processes, $fail% of allocations failing, on $rel; logs in $share"
start=$SECONDS
SOFTHCA_RESULTS=$share/results SOFTHCA_SHARE=$share \
	"$top/scripts/vm/run.sh" --timeout $((seconds + 900)) --mem 3G \
	--share "$share" --log "$share/console.log" "$kernel" -- \
	"$top/scripts/tests/fuzz-uverbs-guest.sh" "$top/build/$rel" \
	"$top/build/userspace/libsofthca" "$seconds" "$seed" "$procs" \
	"$ops" "$fail" >/dev/null
rc=$?
say "fuzz-uverbs: guest run took $((SECONDS - start)) s"
grep -h '^fuzz-uverbs\|^worker' "$share/console.log"
replay_results "$share/results"
case $rc in
90) fail fuzz/uverbs-kernel-log-clean "kernel splat, seed $seed; see $share" ;;
9[1-3]) fail fuzz/uverbs-kernel-log-clean "harness exit $rc, seed $seed; see $share" ;;
*) pass fuzz/uverbs-kernel-log-clean ;;
esac
