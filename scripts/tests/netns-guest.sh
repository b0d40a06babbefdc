#!/bin/bash
# netns-guest.sh BUILD PROVIDER MAC
#
# Guest side of scripts/netns.sh: RoCEv2 over a real wire inside one
# guest.  Two network namespaces, nsa and nsb, joined by a veth pair (va,
# vb), each have a softhca device on their end (sha, shb), created from
# inside the namespace (`ip netns exec nsa rdma link add ...`); ib_core
# shares the devices with every namespace (its default, shared mode).
# Every packet goes through softhca's transmit path, the kernel's IP
# stack and the veth: devices of two namespaces are not loopback peers,
# which every case proves from the counters (both devices' tx_packets
# and the veth's packets move).  BUILD is this kernel's build directory,
# PROVIDER softhca's rdma-core provider, MAC the address of the guest's
# NIC (run.sh --wire, a wire to nowhere), which the namespace lifecycle
# case moves into a namespace and out.
#
# Results are named nswire/...; netns.sh renames them for a kernel other
# than the default.  SOFTHCA_NSWIRE_BRIEF=1 runs the brief tests only
# (wire-cases.sh), the others reported as skipped.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=SCRIPTDIR/wire-cases.sh
. "$(dirname "$0")/wire-cases.sh"

build=$1
export RDMAV_DRIVERS=$2
mac=$3
ko=$build/drivers/softhca/softhca.ko
mydir=$(dirname "${SOFTHCA_RESULTS:?SOFTHCA_RESULTS names the results file}")
brief=${SOFTHCA_NSWIRE_BRIEF:-}
server_addr=10.74.0.1
client_addr=10.74.0.2
in_a=(ip netns exec nsa)
in_b=(ip netns exec nsb)

# This run's figures (pingpong rates, perftest lines, counters), for
# netns.sh to show.
figures() {
	cat >>"$mydir/nswire.log"
}

# gid_is DEV INDEX ADDR: DEV's GID INDEX is ADDR IPv4-mapped, RoCE v2.
gid_is() {
	local port=/sys/class/infiniband/$1/ports/1 o1 o2 o3 o4
	IFS=. read -r o1 o2 o3 o4 <<<"$3"
	grep -qx "$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
		"$o1" "$o2" "$o3" "$o4")" "$port/gids/$2" 2>/dev/null &&
		grep -qx "RoCE v2" "$port/gid_attrs/types/$2"
}

# counter DEV NAME: one of DEV's hardware counters.
counter() {
	local v
	read -r v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2" && echo "$v"
}

# packets NS NIC: the packets NIC sent, in namespace NS.
packets() {
	ip -n "$1" -s -j link show dev "$2" |
		sed -n 's/.*"tx":{"bytes":[0-9]*,"packets":\([0-9]*\).*/\1/p'
}

# The two namespaces, their veth, a device on each end, from inside.
setup() {
	modprobe -a ib_uverbs rdma_ucm udp_tunnel ip6_udp_tunnel &&
		insmod "$ko" || return 1
	ip netns add nsa && ip netns add nsb &&
		ip link add va netns nsa type veth peer name vb netns nsb &&
		ip -n nsa addr add "$server_addr/24" dev va &&
		ip -n nsb addr add "$client_addr/24" dev vb &&
		ip -n nsa link set lo up && ip -n nsb link set lo up &&
		ip -n nsa link set va up && ip -n nsb link set vb up || return 1
	"${in_a[@]}" rdma link add sha type softhca netdev va &&
		"${in_b[@]}" rdma link add shb type softhca netdev vb &&
		wait_for 30 gid_is sha 1 "$server_addr" &&
		wait_for 30 gid_is shb 1 "$client_addr"
}

# netem_on NETEM SPARE_ACKS: NETEM on both ends' egress.  With
# SPARE_ACKS, RC ACK packets (BTH opcode 0x11, at byte 28 of an IPv4
# RoCEv2 packet) bypass it: see the comment at rc_loss below.
# shellcheck disable=SC2086 # netem's words, $1
netem_on() {
	local ns dev
	for ns in nsa nsb; do
		dev=v${ns#ns}
		if [ -z "$2" ]; then
			tc -n "$ns" qdisc add dev "$dev" root netem $1 || return 1
			continue
		fi
		tc -n "$ns" qdisc add dev "$dev" root handle 1: prio bands 2 \
			priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
			tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: \
				netem $1 &&
			tc -n "$ns" filter add dev "$dev" parent 1: protocol ip \
				prio 1 u32 match ip dport 4791 0xffff \
				match u8 0x11 0xff at 28 flowid 1:2 || return 1
	done
}

netem_off() {
	tc -n nsa qdisc del dev va root && tc -n nsb qdisc del dev vb root
}

# Losing the last ACK of an ibv_rc_pingpong run fails the run whatever
# the devices do: a side exits, and destroys its QP, as soon as its own
# last SEND is acknowledged and its last receive is done, which may be
# before its ACK of the peer's last SEND arrived.  If that ACK is lost,
# the peer resends to a QP that is gone and fails with a retry error
# (rdma_rxe on 6.12 retries for ever).  The two-guest suite ran such a
# case again; here the pingpongs' lossy cases lose data packets only,
# and ACK loss is tested by rping_loss, whose every exchange is a round
# trip the test program waits for.
spares_acks() {
	case $1 in
	rc_loss | rc_corrupt) return 0 ;;
	*) return 1 ;;
	esac
}

# reap PID LOG: wait for a server whose client has ended, 20 s at most,
# then end it, saying so in LOG.
lingered="server still running 20 s after the client ended"
reap() {
	if ! wait_for 20 eval "! kill -0 $1 2>/dev/null"; then
		echo "$lingered" >>"$2"
		kill "$1"
	fi
	wait "$1"
}

# run_case NAME TEST [NETEM...]: TEST's server in nsa on sha, its client
# in nsb on shb.
run_case() {
	local name=$1 test=$2 netem=${*:3} result=nswire/$1 log why=
	local pid src crc tx_a tx_b pk_a start=$SECONDS
	if [ -n "$brief" ] && [[ $wire_brief_tests != *" $name "* ]]; then
		skip "$result" "not in the brief run; netns.sh without --brief runs it"
		return
	fi
	log=$mydir/cases/$name
	mkdir -p "${log%/*}"
	echo "== $result${netem:+ (netem $netem)}"
	tx_a=$(counter sha tx_packets) tx_b=$(counter shb tx_packets)
	pk_a=$(packets nsa va)
	if [ -n "$netem" ] && ! netem_on "$netem" "$(spares_acks "$name" && echo 1)"; then
		fail "$result" "netem setup"
		return
	fi
	side_cmd "$test" sha server
	"${in_a[@]}" timeout "$run_timeout" stdbuf -oL -eL "${cmd[@]}" \
		>"$log.server" 2>&1 </dev/null &
	pid=$!
	if wait_for 30 listening "${in_a[@]}"; then
		side_cmd "$test" shb client
		"${in_b[@]}" timeout "$run_timeout" stdbuf -oL -eL "${cmd[@]}" \
			>"$log.client" 2>&1 </dev/null
		side_verdict "$test" "$log.client" $?
		crc=$?
		reap "$pid" "$log.server"
		side_verdict "$test" "$log.server" $?
		src=$?
		# rping: the client compared every ping; the server may wait
		# for a disconnect request the client's CM ID took with it.
		if [[ $test == rping* ]] && [ "$crc" = 0 ] &&
			[ "$(tail -n 1 "$log.server")" = "$lingered" ]; then
			src=0
		fi
		[ "$src $crc" = "0 0" ] || why="server exit $src, client exit $crc"
	else
		kill "$pid" 2>/dev/null
		wait "$pid"
		why="server not listening after 30 s"
	fi
	[ -z "$netem" ] || netem_off || why="${why:+$why; }netem teardown"
	# The wire, not loopback: both devices and the veth sent.
	if [ -z "$why" ] && { [ "$(counter sha tx_packets)" = "$tx_a" ] ||
		[ "$(counter shb tx_packets)" = "$tx_b" ] ||
		[ "$(packets nsa va)" = "$pk_a" ]; }; then
		why="a device or the veth sent nothing: not over the wire"
	fi
	sed "s/^/server: /" "$log.server"
	sed "s/^/client: /" "$log.client" 2>/dev/null
	awk -v t="$result" '/iters in|bytes in/ { print t ": " $0 }' \
		"$log.client" 2>/dev/null | figures
	perftest_line "$log.client" 2>/dev/null |
		awk -v t="$result" '{ print t ": " $0 }' | figures
	echo "$result: $((SECONDS - start)) s, sha sent $(($(counter sha tx_packets) - tx_a)), shb $(($(counter shb tx_packets) - tx_b))" | figures
	if [ -z "$why" ]; then pass "$result"; else fail "$result" "$why"; fi
}

# Devices of two namespaces never meet by loopback, even with each
# other's GIDs at hand: with RoCEv2 dropped at vb's ingress, an RC client
# on sha (nsa) whose server is on shb (nsb) runs out of retries, the
# filter counts its packets, and shb receives nothing.
no_loopback() {
	local rx pid out=$mydir/cases/no_loopback why=
	if ! { tc -n nsb qdisc add dev vb ingress &&
		tc -n nsb filter add dev vb ingress protocol ip u32 \
			match ip dport 4791 0xffff action drop; }; then
		fail nswire/no-loopback-across-netns "tc setup"
		return
	fi
	rx=$(counter shb rx_packets)
	"${in_b[@]}" timeout 60 ibv_rc_pingpong -d shb -g 1 -n 10 \
		>"$out.server" 2>&1 </dev/null &
	pid=$!
	port=18515
	if wait_for 30 listening "${in_b[@]}"; then
		"${in_a[@]}" timeout 60 ibv_rc_pingpong -d sha -g 1 -n 10 \
			"$client_addr" >"$out.client" 2>&1 </dev/null
		grep -q "retry counter exceeded" "$out.client" ||
			why="the client did not run out of retries"
	else
		why="server not listening"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid"
	tc -n nsb -s filter show dev vb ingress | grep -q "dropped [1-9]" ||
		why="${why:+$why; }the filter dropped nothing"
	[ "$(counter shb rx_packets)" = "$rx" ] ||
		why="${why:+$why; }shb received packets"
	tc -n nsb qdisc del dev vb ingress
	cat "$out.client"
	if [ -z "$why" ]; then
		pass nswire/no-loopback-across-netns
	else
		fail nswire/no-loopback-across-netns "$why"
	fi
}

# rdma_rxe binds UDP 4791 in the initial namespace only: it loads beside
# softhca's devices of other namespaces, and softhca's link in the
# initial namespace is then refused, saying why.
beside_rxe() {
	local why=
	modprobe rdma_rxe || why="rdma_rxe did not load"
	if [ -z "$why" ]; then
		ip link add vx type veth peer name vy &&
			! rdma link add shx type softhca netdev vx 2>/dev/null ||
			why="a link in the initial namespace was not refused"
		dmesg | tail -n 20 | grep -q "UDP port 4791 is taken" ||
			why="${why:+$why; }no word of the port"
		ip link del vx
		wait_for 10 eval "! grep -q '^rdma_rxe ' /proc/modules || rmmod rdma_rxe"
	fi
	if [ -z "$why" ]; then pass nswire/beside-rxe; else fail nswire/beside-rxe "$why"; fi
}

nic_by_mac() {
	local d
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address")" = "$mac" ] && nic=${d##*/} && return 0
	done
	return 1
}

gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}

# A physical NIC's namespace ends with its device open: the NIC goes back
# to the initial namespace and the device is removed (its user context
# disassociated), and the NIC takes a new device there.
nic_returns() {
	local why='' pid
	if ! { modprobe virtio_net && wait_for 10 nic_by_mac; }; then
		fail nswire/netns-end-nic-returns "no NIC $mac"
		return
	fi
	ip netns add nsc && ip link set "$nic" netns nsc &&
		ip -n nsc addr add 10.75.0.1/24 dev "$nic" &&
		ip -n nsc link set "$nic" up &&
		ip netns exec nsc rdma link add shc type softhca netdev "$nic" &&
		wait_for 30 gid_is shc 1 10.75.0.1 || why="setup in nsc"
	# A user of the device, outside nsc so that nsc can end.
	ibv_rc_pingpong -d shc -g 1 -p 18519 >/dev/null 2>&1 </dev/null &
	pid=$!
	sleep 2
	[ -n "$why" ] || ip netns del nsc || why="netns del"
	[ -n "$why" ] || wait_for 20 gone shc || why="shc still there after 20 s"
	[ -n "$why" ] || wait_for 20 test -e "/sys/class/net/$nic" ||
		why="$nic not back in the initial namespace"
	kill "$pid" 2>/dev/null
	wait "$pid"
	if [ -z "$why" ]; then
		ip link set "$nic" up && rdma link add shd type softhca netdev "$nic" &&
			wait_for 30 test -e /sys/class/infiniband/shd/ports/1/gids/0 &&
			rdma link delete shd || why="no new device on $nic"
	fi
	if [ -z "$why" ]; then
		pass nswire/netns-end-nic-returns
	else
		fail nswire/netns-end-nic-returns "$why"
	fi
}

main() {
	local t
	if setup; then
		pass nswire/link-add-in-netns
	else
		fail nswire/link-add-in-netns "setup"
		return 1
	fi
	rdma link show | figures
	for t in "${wire_tests[@]}"; do
		# shellcheck disable=SC2086 # NAME TEST [NETEM...]
		run_case $t
	done
	no_loopback
	beside_rxe
	# The end of a namespace takes its devices: nsa's veth takes nsb's.
	if ip netns del nsa && wait_for 20 gone sha && wait_for 20 gone shb; then
		pass nswire/netns-end-removes-devices
	else
		fail nswire/netns-end-removes-devices "a device outlived its netdev's namespace by 20 s"
	fi
	ip netns del nsb
	nic_returns
	if wait_for 10 eval "! grep -q '^softhca ' /proc/modules || rmmod softhca"; then
		pass nswire/module-unload
	else
		fail nswire/module-unload "softhca still in use"
	fi
}

main
