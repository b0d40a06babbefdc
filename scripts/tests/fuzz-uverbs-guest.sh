#!/bin/bash
# Guest side of scripts/fuzz-uverbs.sh: softhca0 on a veth, then the
# regression cases (userspace/tests/fuzz-uverbs.seeds: campaigns that once
# found a bug, run again as they were) and one campaign of
# userspace/tests/fuzz-uverbs, all in loopback on this one device.  Each
# must pass, and the device's resource counts (rdma resource show) must be
# back to what they were before; the module must unload.  The workers'
# logs go to $SOFTHCA_SHARE.
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

# The device is up once its port is and its IPv4 GID is there.
device_up() {
	for _ in $(seq 100); do
		grep -q ACTIVE /sys/class/infiniband/softhca0/ports/1/state \
			2>/dev/null && grep -qx \
			"0000:0000:0000:0000:0000:ffff:c000:0201" \
			/sys/class/infiniband/softhca0/ports/1/gids/1 \
			2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

setup() {
	# Built in on the debug kernel; modules on Debian's.
	modprobe -a -q ib_uverbs udp_tunnel ip6_udp_tunnel
	insmod "$build/drivers/softhca/softhca.ko" &&
		ip link add shv0 type veth peer name shv1 &&
		ip link set shv0 up && ip link set shv1 up &&
		ip addr add 192.0.2.1/24 dev shv0 &&
		rdma link add softhca0 type softhca netdev shv0 && device_up
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

# Counts may take a moment to fall: a closed file's objects go with it,
# but its last QPs' work may still be draining.
baseline() {
	for _ in $(seq 50); do
		[ "$(resources)" = "$before" ] && return 0
		sleep 0.2
	done
	echo "before: $before"
	echo "after:  $(resources)"
	return 1
}

check fuzz/uverbs-setup setup || exit 1
# A worker that crashes leaves its core beside its log, for gdb on the host.
ulimit -c unlimited
echo "$SOFTHCA_SHARE/core.%e.%p" >/proc/sys/kernel/core_pattern
before=$(resources)
echo "fuzz-uverbs: baseline: $before"
if [ -f "$seeds" ]; then
	while read -r s p n v; do
		case $s in '' | '#'*) continue ;; esac
		check "fuzz/uverbs-regress-$s" campaign "regress-$s" \
			--seed "$s" --procs "$p" --ops "$n" --table "$v"
	done <"$seeds"
fi
check fuzz/uverbs campaign campaign --seed "$seed" --procs "$procs" \
	--ops "$ops" --seconds "$seconds" --fail "$fail"
check fuzz/uverbs-resources-baseline baseline
check fuzz/uverbs-unload eval 'rdma link delete softhca0 && rmmod softhca'
echo "fuzz-uverbs: $(uptime_s) s after boot: done"
