#!/bin/bash
# check.sh [--full]
#
# `make check`: every softhca suite, one line per test, and the totals as
# the last line ("N passed, N failed, N skipped").  Exits non-zero when any
# test failed.  Installs what is missing and builds what is not cached.
# --full (`make check-full`): every wire case on both kernels, where
# `make check` runs the brief ones (one case of each kind of traffic, the
# others reported as skipped) on the one-guest wire of both kernels and
# on the two-guest wire of Debian's 6.1; and the Debian packages' install
# test, on both kernels, which make check leaves out.
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

brief=(--brief)
interop=(--interop)
case ${1:-} in
'') ;;
--full) brief=() interop=() ;;
*) die "usage: check.sh [--full]" ;;
esac

run=$(run_dir check)
export SOFTHCA_RESULTS=$run/results
: >"$SOFTHCA_RESULTS"

# suite NAME CMD...: run one suite and print how long it took.
suite() {
	local name=$1 start=$SECONDS
	shift
	say "== $name"
	"$@" || fail "$name/suite" "exit $?"
	say "== $name: $((SECONDS - start)) s"
}

# The debug kernel (built once, then cached) and the provider; the module
# for each kernel is the lint's build (lint/w1-sparse-...), which the
# suites after it use.
build() {
	"$top/scripts/kernel/debug-kernel.sh" >/dev/null || return 1
	check build/userspace make -s -C "$top" userspace
	check build/userspace-layout make -s -C "$top/userspace" check
}

total_start=$SECONDS
suite setup "$top/scripts/setup.sh"
suite build build
suite lint "$top/scripts/lint.sh"
suite harness-selftest "$top/scripts/selftest/run.sh"
suite kunit "$top/scripts/kunit.sh"
# The fuzzers (docs/fuzzing.md), a short campaign of each on the debug
# kernel, their seeds printed; `make fuzz` runs the long ones.  The
# wire's: 20,000 frames (at most 100 s).  The uverbs and rings one: 60 s
# of 4 processes, after its kept regression seeds.
suite fuzz "$top/scripts/fuzz.sh" --frames 20000 --seconds 100
suite fuzz-uverbs "$top/scripts/fuzz-uverbs.sh" --seconds 60
# on_612 PREFIX CMD...: CMD for Debian 12's other LTS kernel (6.12), its
# headers' directory the last argument; without them, PREFIX/suite is
# skipped.  Its results are named PREFIX/...
on_612() {
	local prefix=$1 kdir
	shift
	kdir=$(kdir_lts612)
	if [ -z "$kdir" ]; then
		skip "$prefix/suite" "no linux-headers-6.12.*+deb12-amd64"
		return 0
	fi
	"$@" "$kdir"
}
# On 6.1, rdma-core's python suite runs on softhca and on rdma_rxe in the
# same boot; on 6.12, make check's runs on softhca alone, against the
# tests that pass on 6.1 (scripts/tests/pyverbs-passes), check-full's on
# both.
suite integration "$top/scripts/integration.sh"
suite integration-6.12 on_612 integ-6.12 "$top/scripts/integration.sh" \
	"${brief[@]}"
# The kernel's RDMA consumers over one softhca device (ulp/...): make
# check's are NVMe-oF with fio's verify and NFS over RDMA on Debian's 6.1
# (about 1 minute); check-full adds iSER, SRP, RDS, the carrier lost and
# the device removed under ULPs, and runs them all on 6.12 and on the
# debug kernel, under its checkers.
suite ulp "$top/scripts/ulp.sh" "${brief[@]}"
if [ ${#brief[@]} = 0 ]; then
	suite ulp-6.12 on_612 ulp-6.12 "$top/scripts/ulp.sh"
	suite ulp-debug "$top/scripts/ulp.sh" --debug
else
	skip ulp-6.12/suite "the ULPs on 6.12 run in make check-full"
	skip ulp-debug/suite "the ULPs on the debug kernel run in make check-full"
fi
# The persistent link's systemd unit, in a guest systemd boots (Debian's
# 6.1; about a minute).
suite systemd "$top/scripts/systemd.sh"
# The Debian packages as the README installs them, DKMS building the
# module in the guest (about 8 minutes a kernel, most of it DKMS
# compiling under TCG): make check on Debian's 6.1, check-full on 6.12
# too.
suite deb "$top/scripts/deb.sh"
if [ ${#brief[@]} = 0 ]; then
	suite deb-6.12 on_612 deb-6.12 "$top/scripts/deb.sh"
else
	skip deb-6.12/suite "the packages' install on 6.12 runs in make check-full"
fi
# RoCEv2 over a real wire in one guest, on both kernels (nswire/... and
# nswire-6.12/...): softhca against itself between two network
# namespaces joined by a veth pair, and against rdma_rxe both ways, clean
# and under netem; and the namespaces' own cases.  make check has the
# brief cases (and 4 of the 36 bulk cases, 4 MiB under loss), on 6.12
# only those between softhca and rdma_rxe; check-full all of them.
suite netns "$top/scripts/netns.sh" "${brief[@]}"
suite netns-6.12 on_612 nswire-6.12 "$top/scripts/netns.sh" "${interop[@]}"
# RoCEv2 between two guests joined by a wire over the host's loopback,
# on both kernels (wire/... and wire-6.12/...): interoperation, UD, RC
# and rdma_cm between softhca and rdma_rxe both ways, and rdma_rxe
# against itself as the harness's baseline.  For make check's time, one
# case of each kind of traffic (--brief, about 4 minutes a kernel), the
# others reported as skipped; --full runs every case.
suite wire "$top/scripts/wire.sh" "${brief[@]}"
# On 6.12, netns-6.12 has the interoperation with rdma_rxe, in one guest;
# the two-guest wire, the QEMU socket between two NICs, is check-full's.
if [ ${#brief[@]} = 0 ]; then
	suite wire-6.12 on_612 wire-6.12 "$top/scripts/wire.sh"
else
	skip wire-6.12/suite "the two-guest wire on 6.12 runs in make check-full"
fi
# make bench's smoke: the figures the performance gate names, one
# repetition with few iterations on Debian's 6.1, softhca beside
# rdma_rxe; and the gate (scripts/bench-floors).
suite bench-smoke "$top/scripts/bench.sh" --smoke
say "== total: $((SECONDS - total_start)) s; results in $run"

passed=$(grep -c '^PASS ' "$SOFTHCA_RESULTS")
failed=$(grep -c '^FAIL ' "$SOFTHCA_RESULTS")
skipped=$(grep -c '^SKIP ' "$SOFTHCA_RESULTS")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
