#!/bin/bash
# wire.sh [--brief | --bench RAW [--reps N]] [KDIR]
#
# RoCEv2 between two hosts: builds softhca for KDIR (default: the kernel
# `make` builds for, Debian's 6.1), boots that Debian kernel twice, as
# guests a and b joined by a wire that never leaves the host (run.sh
# --wire: a virtio-net NIC each, the backends QEMU UDP sockets sending to
# each other over 127.0.0.1), and runs scripts/tests/wire-guest.sh in
# both, which step through the test cases in lock step.  Results are
# named wire/... for the default kernel and wire-<major.minor>/... for any
# other, as integration.sh does.  softhca and rdma_rxe run every case,
# UD, RC, rdma_cm's and the kernel's ULPs', in both directions, and
# rdma_rxe against itself the brief ones, the harness's baseline
# (softhca against itself is netns.sh's, in one guest, but for the ULPs
# and the event-driven latency case, which run here); see wire-cases.sh
# for the cases.  --brief:
# a case of each kind of traffic only, the others reported as skipped
# (make check), and the baseline without the ULPs.
#
# --bench RAW [--reps N]: figures instead, for `make bench`: perftest
# between the two guests, softhca against itself and rdma_rxe against
# itself in the same run, interleaved, N repetitions (default 5), written
# to RAW as "DEV FIGURE VALUE" lines, which bench.sh tables as it does
# its own (the medians).  Exits non-zero when a guest or a case failed.
#
# The rendezvous: both guests get the same --share, this run's directory,
# so each reaches the other's files straight through its own 9p mount
# (no caching: 9p's default cache=none).  Through the guest's root, an
# overlay over the host's root, a peer's share is not usable: overlayfs
# caches what it looked up in its lower layer, and files the other guest
# created afterwards were seen late or never (a negative dentry stayed).
# Each guest has its own directory in the share (a/, b/) for its results,
# figures and console log; run.sh keeps each guest's job apart
# (.vm.XXXXXX); rendezvous/ holds the lock-step files.
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

usage="usage: wire.sh [--brief | --bench RAW [--reps N]] [KDIR]"
brief=
bench=
reps=
while [ $# -gt 0 ]; do
	case $1 in
	--brief) brief=1 && shift ;;
	--bench)
		[ $# -ge 2 ] || die "$usage"
		bench=1 bench_raw=$2 && shift 2 ;;
	--reps)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "$usage"
		reps=$2
		shift 2 ;;
	-*) die "$usage" ;;
	*) break ;;
	esac
done
[ -z "$brief" ] || [ -z "$bench" ] || die "wire.sh: --brief or --bench, not both"
[ -n "$bench" ] || [ -z "$reps" ] || die "wire.sh: --reps goes with --bench"
[ -z "$bench" ] || bench=${reps:-5}
suite_kernel wire "${1:-}"

# A guest runs up to 67 cases (25 on each of 2 mixed pairs, some of them
# skipped, the 9 brief ones on the baseline, the 8 ULP cases on
# softhca/softhca) in 20 to 30 minutes; a case that fails by timing out
# takes 2, and a peer that is gone fails the rest at once.  Allow for twice the time under contention and a
# dozen cases timing out.
guest_timeout=3600

share=$(run_dir "wire${bench:+-bench}-$rel")
mkdir -p "$share/a" "$share/b" "$share/rendezvous"
read -r port_a port_b <<<"$(free_ports)"

# guest ROLE MY_PORT PEER_PORT MAC: one guest's whole run; its exit status
# is run.sh's.
guest() {
	SOFTHCA_RESULTS=$share/$1/results \
		SOFTHCA_RENDEZVOUS=$share/rendezvous SOFTHCA_WIRE_BRIEF=$brief \
		SOFTHCA_WIRE_BENCH=$bench \
		"$top/scripts/vm/run.sh" --timeout "$guest_timeout" --mem 1G \
		--share "$share" --log "$share/$1/console.log" \
		--wire "$2:$3:$4" "$kernel" -- \
		"$top/scripts/tests/wire-guest.sh" "$1" "$4" "$top/build/$rel" \
		"$top/build/userspace/libsofthca" >/dev/null
}

start=$SECONDS
guest a "$port_a" "$port_b" 52:54:00:12:34:01 &
pid_a=$!
guest b "$port_b" "$port_a" 52:54:00:12:34:02 &
pid_b=$!
declare -A rc
wait "$pid_a"
rc[a]=$?
wait "$pid_b"
rc[b]=$?
say "wire ($rel): both guests ran in $((SECONDS - start)) s; logs in $share"

if [ -n "$bench" ]; then
	ok=0
	cat "$share/b/bench.raw" >"$bench_raw" 2>/dev/null || : >"$bench_raw"
	# What failed, and where its logs are.
	for g in a b; do
		[ "${rc[$g]}" = 0 ] ||
			{ say "wire bench: guest $g: harness exit ${rc[$g]}" && ok=1; }
		[ ! -f "$share/$g/results" ] ||
			sed -n "s/^FAIL /wire bench: failed: /p" "$share/$g/results" >&2
	done
	[ "$ok" = 0 ] || say "wire bench: see $share"
	exit "$ok"
fi

for g in a b; do
	[ "$prefix" = wire ] || [ ! -f "$share/$g/results" ] ||
		sed -i "s# wire/# $prefix/#" "$share/$g/results"
	replay_results "$share/$g/results"
done
# The figures each side recorded (pingpong rates, ib_write_bw's line).
for g in a b; do
	[ ! -f "$share/$g/wire.log" ] || sed "s/^/$prefix: /" "$share/$g/wire.log"
done
# A guest that crashed or hung (run.sh's 91, 92) fails here, whatever
# cases it reported.
for g in a b; do
	if [ "${rc[$g]}" = 0 ]; then
		pass "$prefix/kernel-log-clean-$g"
	else
		fail "$prefix/kernel-log-clean-$g" "harness exit ${rc[$g]}; see $share/$g"
	fi
done
