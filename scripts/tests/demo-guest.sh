#!/bin/bash
# Guest side of `make demo`: each command is echoed, then its output.
set -euo pipefail
build=$1
export RDMAV_DRIVERS=$2

show() {
	echo "# $*"
	"$@"
	echo
}

demo() {
	show uname -r
	modprobe ib_uverbs
	show insmod "$build/drivers/softhca/softhca.ko"
	ip link add va type veth peer name vb
	ip link set va up
	ip link set vb up
	show ip addr add 192.0.2.1/24 dev va
	show rdma link add softhca0 type softhca netdev va
	# ib_core fills the GID table from a work queue.
	for _ in $(seq 50); do
		[ -s /sys/class/infiniband/softhca0/ports/1/gids/1 ] &&
			! grep -q '^0000:0000:0000:0000:0000:0000:0000:0000$' \
				/sys/class/infiniband/softhca0/ports/1/gids/1 && break
		sleep 0.2
	done
	show rdma link show softhca0/1
	show ibv_devices
	show ibv_devinfo -v -d softhca0
	show rdma link delete softhca0
	show rmmod softhca
}

demo 2>&1 | tee "$SOFTHCA_SHARE/demo.out"
