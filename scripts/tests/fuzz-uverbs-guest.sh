#!/bin/bash
# Guest side of scripts/fuzz-uverbs.sh: softhca0 on one end of a veth,
# softhca1 on the other end, in a namespace of its own (so that the two
# reach each other over the veth, not by loopback); then the regression
# cases (userspace/tests/fuzz-uverbs.seeds: campaigns that once found a
# bug, run again as they were, on softhca0 alone) and one campaign of
# userspace/tests/fuzz-uverbs on softhca0, whose odd workers run their
# traffic to softhca1 over the wire (--peer).  Each must pass, and the
# devices' resource counts (rdma resource show) must be back to what they
# were before; the module must unload.  The workers' logs go to
# $SOFTHCA_SHARE.
#
# $1: this kernel's build directory; $2: the provider library; $3: seconds;
# $4: seed; $5: worker processes; $6: operations (all workers together);
# $7: the percentage of softhca's allocations to fail (fuzz-uverbs --fail).
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

build=$1
export RDMAV_DRIVERS=$2
seconds=$3
seed=$4
procs=$5
ops=$6
fail=$7
fuzz=$(dirname "$RDMAV_DRIVERS")/tests/fuzz-uverbs
seeds=$top/userspace/tests/fuzz-uverbs.seeds
# resources: the device's counts, as the provider's suites take them.
# shellcheck source=SCRIPTDIR/provider.sh
. "$(dirname "$0")/provider.sh"

# device_up DEV HOST: DEV is up once its port is and its IPv4 GID,
# 192.0.2.HOST, is there (PREFIX: ip netns exec NS, whose sysfs it is).
device_up() {
	local dev=$1 host=$2
	shift 2
	for _ in $(seq 100); do
		"$@" grep -q ACTIVE "/sys/class/infiniband/$dev/ports/1/state" \
			2>/dev/null && "$@" grep -qx \
			"0000:0000:0000:0000:0000:ffff:c000:020$host" \
			"/sys/class/infiniband/$dev/ports/1/gids/1" \
			2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

setup() {
	# Built in on the debug kernel; modules on Debian's.
	modprobe -a -q ib_uverbs udp_tunnel ip6_udp_tunnel
	insmod "$build/drivers/softhca/softhca.ko" &&
		ip netns add fzpeer &&
		ip link add shv0 type veth peer name shv1 netns fzpeer &&
		ip link set shv0 up && ip addr add 192.0.2.1/24 dev shv0 &&
		ip netns exec fzpeer ip link set shv1 up &&
		ip netns exec fzpeer ip addr add 192.0.2.2/24 dev shv1 &&
		rdma link add softhca0 type softhca netdev shv0 &&
		ip netns exec fzpeer rdma link add softhca1 type softhca \
			netdev shv1 &&
		device_up softhca0 1 && device_up softhca1 2 ip netns exec fzpeer
}

# The wire carried the campaign's traffic: softhca1's end of the veth
# sent packets.
wire_used() {
	local n
	n=$(ip netns exec fzpeer cat /sys/class/net/shv1/statistics/tx_packets)
	echo "fuzz-uverbs: softhca1's end of the veth sent $n packets"
	[ "$n" -gt 0 ]
}

# campaign NAME ARG...: one run of the fuzzer, its logs in the share under
# NAME; its summary lines on the console.
campaign() {
	local dir=$SOFTHCA_SHARE/$1
	shift
	echo "fuzz-uverbs: $(uptime_s) s after boot: $*"
	mkdir -p "$dir" && "$fuzz" --log "$dir" "$@"
}

uptime_s() {
	cut -d' ' -f1 /proc/uptime
}

# Both devices' resource counts.
counts() {
	resources
	rdma resource show softhca1 | sed 's/^[0-9]*: //'
}

# Counts may take a moment to fall: a closed file's objects go with it,
# but its last QPs' work may still be draining.
baseline() {
	for _ in $(seq 50); do
		[ "$(counts)" = "$before" ] && return 0
		sleep 0.2
	done
	echo "before: $before"
	echo "after:  $(counts)"
	return 1
}

check fuzz/uverbs-setup setup || exit 1
# A worker that crashes leaves its core beside its log, for gdb on the host.
ulimit -c unlimited
echo "$SOFTHCA_SHARE/core.%e.%p" >/proc/sys/kernel/core_pattern
before=$(counts)
echo "fuzz-uverbs: baseline: $before"
if [ -f "$seeds" ]; then
	while read -r s p n v; do
		case $s in '' | '#'*) continue ;; esac
		check "fuzz/uverbs-regress-$s" campaign "regress-$s" \
			--seed "$s" --procs "$p" --ops "$n" --table "$v"
	done <"$seeds"
fi
check fuzz/uverbs campaign campaign --seed "$seed" --procs "$procs" \
	--ops "$ops" --seconds "$seconds" --fail "$fail" --peer softhca1
check fuzz/uverbs-over-the-wire wire_used
check fuzz/uverbs-resources-baseline baseline
check fuzz/uverbs-unload eval 'rdma link delete softhca1 &&
	rdma link delete softhca0 && ip netns del fzpeer && rmmod softhca'
echo "fuzz-uverbs: $(uptime_s) s after boot: done"
