#!/bin/bash
# netns.sh [--brief] [KDIR]
#
# RoCEv2 over a real wire in one guest: builds softhca for KDIR (default:
# the kernel `make` builds for, Debian's 6.1), boots that Debian kernel
# and runs scripts/tests/netns-guest.sh, which joins two network
# namespaces by a veth pair, puts a softhca device on each end and runs
# the wire's cases (scripts/tests/wire-cases.sh) between them at the
# speed of the kernel's own network stack, and the namespaces' own cases
# (loopback isolation, a namespace's end, rdma_rxe beside softhca).  The
# guest also gets a NIC on a wire to nowhere (run.sh --wire), for a
# physical device's trip into a namespace and back.  Results are named
# nswire/... for the default kernel and nswire-<major.minor>/... for any
# other.  --brief: the brief tests only.
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

brief=
if [ "${1:-}" = --brief ]; then
	brief=1
	shift
fi
default_kdir=$(make -s -C "$top" print-kdir)
kdir=${1:-$default_kdir}
rel=$(kdir_release "$kdir")
prefix=nswire
[ "$kdir" -ef "$default_kdir" ] || [[ ! $rel =~ ^[0-9]+\.[0-9]+ ]] ||
	prefix=nswire-${BASH_REMATCH[0]}
kernel=$("$top/scripts/kernel/debian-kernel.sh" "$rel") || die "no kernel $rel"
make -s -C "$top" KDIR="$kdir" modules >/dev/null || die "module build failed"
make -s -C "$top" userspace >/dev/null || die "provider build failed"

share=$(run_dir "netns-$rel")
read -r port_a port_b <<<"$(free_ports)"
mac=52:54:00:12:34:0c
start=$SECONDS
SOFTHCA_RESULTS=$share/results SOFTHCA_NSWIRE_BRIEF=$brief \
	"$top/scripts/vm/run.sh" --timeout 1800 --mem 1G \
	--share "$share" --log "$share/console.log" \
	--wire "$port_a:$port_b:$mac" "$kernel" -- \
	"$top/scripts/tests/netns-guest.sh" "$top/build/$rel" \
	"$top/build/userspace/libsofthca" "$mac" >/dev/null
rc=$?
say "netns ($rel): guest run took $((SECONDS - start)) s; logs in $share"
[ "$prefix" = nswire ] || sed -i "s# nswire/# $prefix/#" "$share/results"
replay_results "$share/results"
[ ! -f "$share/nswire.log" ] ||
	sed "s#^nswire/#$prefix/#; t; s#^#$prefix: #" "$share/nswire.log"
if [ $rc = 0 ]; then
	pass "$prefix/kernel-log-clean"
else
	fail "$prefix/kernel-log-clean" "harness exit $rc; see $share"
fi
