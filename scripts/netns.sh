#!/bin/bash
# netns.sh [--brief | --interop] [KDIR]
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
# other.  --brief: the brief tests only.  --interop: of those, only the
# cases between softhca and rdma_rxe (and the end of a namespace).
# --bench REPS RAW: figures
# instead, for `make bench`: REPS interleaved repetitions of perftest over
# the veth and over softhca's loopback, in one boot, into RAW as "DEV
# FIGURE VALUE" lines (DEV softhca-ns or softhca-loop).  SOFTHCA_NSWIRE_ONLY=REGEX and
# SOFTHCA_NSWIRE_REPEAT=N pick wire cases and repeat them (netns-guest.sh).
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

brief=
interop=
bench=
case ${1:-} in
--brief) brief=1 && shift ;;
--interop) brief=1 interop=1 && shift ;;
--bench)
	[ $# -ge 3 ] || die "usage: netns.sh --bench REPS RAW [KDIR]"
	bench=$2 bench_raw=$3 && shift 3 ;;
esac
suite_kernel nswire "${1:-}"

share=$(run_dir "netns-$rel")
read -r port_a port_b <<<"$(free_ports)"
mac=52:54:00:12:34:0c
start=$SECONDS
SOFTHCA_RESULTS=$share/results SOFTHCA_NSWIRE_BRIEF=$brief \
	SOFTHCA_NSWIRE_INTEROP=$interop \
	SOFTHCA_NSWIRE_BENCH=$bench \
	"$top/scripts/vm/run.sh" --timeout 1800 --mem 1G \
	--share "$share" --log "$share/console.log" \
	--wire "$port_a:$port_b:$mac" "$kernel" -- \
	"$top/scripts/tests/netns-guest.sh" "$top/build/$rel" \
	"$top/build/userspace/libsofthca" "$mac" >/dev/null
rc=$?
say "netns ($rel): guest run took $((SECONDS - start)) s; logs in $share"
if [ -n "$bench" ]; then
	cat "$share/bench.raw" >"$bench_raw" 2>/dev/null || : >"$bench_raw"
	[ "$rc" = 0 ] || say "netns bench: harness exit $rc; see $share"
	exit "$rc"
fi
[ "$prefix" = nswire ] || sed -i "s# nswire/# $prefix/#" "$share/results"
replay_results "$share/results"
[ ! -f "$share/nswire.log" ] ||
	sed "s#^nswire/#$prefix/#; t; s#^#$prefix: #" "$share/nswire.log"

# The wire cases' traffic as the guest captured it on va, whole frames
# but netem's corrupted ones, through tshark's InfiniBand dissector:
# every RoCEv2 packet dissected, none malformed or with an error
# (RoCEv2's zero UDP checksum over IPv6, which RFC 6936 allows a tunnel
# whose payload has its own check, the ICRC, is no error, as rdma_rxe
# sends it too); and each IPv4
# packet through Scapy's ICRC (pcap-icrc.py).  The captures are deleted
# when both pass.
conformance() {
	local pcaps=("$share"/cases/*.pcapng) f ib=0 bad=0 n h
	local tsh=(tshark -o udp.ignore_ipv6_zero_checksum:TRUE)
	# The test programs' payloads are no ULP's: tshark's guesses at one
	# (RPC over RDMA, SMB Direct, NVMe, ...) would find them malformed.
	# (ethertype is Ethernet's own.)
	for h in $(tshark -G heuristic-decodes 2>/dev/null |
		awk '$1 == "infiniband.payload" && $2 != "ethertype" { print $2 }'); do
		tsh+=(--disable-protocol "$h")
	done
	if [ -n "$interop" ]; then
		skip "$prefix/conformance-dissector" "captures are of softhca against itself, not in the interoperation run"
		skip "$prefix/conformance-icrc" "no capture in the interoperation run"
		return
	fi
	if [ ! -s "${pcaps[0]}" ] || ! command -v tshark >/dev/null; then
		skip "$prefix/conformance-dissector" "no capture, or no tshark: scripts/setup.sh installs it"
		skip "$prefix/conformance-icrc" "no capture"
		return
	fi
	: >"$share/conformance.bad"
	for f in "${pcaps[@]}"; do
		n=$("${tsh[@]}" -r "$f" -Y infiniband 2>/dev/null | wc -l)
		ib=$((ib + n))
		"${tsh[@]}" -r "$f" -Y '_ws.malformed || _ws.expert.severity >= 0x00800000' \
			2>/dev/null | sed "s#^#${f##*/}: #" >>"$share/conformance.bad"
	done
	bad=$(wc -l <"$share/conformance.bad")
	say "$prefix: conformance: ${#pcaps[@]} captures, $ib RoCEv2 packets dissected, $bad malformed or in error"
	# What dumpcap could not keep up with (under TCG, on a busy host).
	cat "$share"/cases/*.pcapng.log 2>/dev/null | awk -v t="$prefix" \
		'/received\/dropped/ { for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, a, "/"); r += a[1]; d += a[2] } }
		END { printf "%s: conformance: the captures kept %d frames, dropped %d\n", t, r, d }' >&2
	for f in "${pcaps[@]}"; do
		"${tsh[@]}" -r "$f" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null
	done | sort -n | uniq -c | awk -v t="$prefix" \
		'{ s = s " " $2 "x" $1 } END { print t ": conformance: opcodes (opcode x packets):" s }'
	if [ "$ib" -gt 0 ] && [ "$bad" = 0 ]; then
		pass "$prefix/conformance-dissector"
	else
		fail "$prefix/conformance-dissector" "$ib dissected, $bad bad: see $share/conformance.bad"
	fi
	if "$top/scripts/pcap-icrc.py" "${pcaps[@]}" >"$share/icrc.log" 2>&1; then
		pass "$prefix/conformance-icrc"
		[ "$bad" != 0 ] || rm -f "${pcaps[@]}"
	else
		fail "$prefix/conformance-icrc" "see $share/icrc.log"
	fi
	sed "s/^/$prefix: ICRC: /" "$share/icrc.log" | head -n 20
}
conformance

if [ $rc = 0 ]; then
	pass "$prefix/kernel-log-clean"
else
	fail "$prefix/kernel-log-clean" "harness exit $rc; see $share"
fi
