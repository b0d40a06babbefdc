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

# pair PORT CMD...: CMD as a server, then as its client on this host
# (softhca0 talking to itself), each echoed with its output.
pair() {
	local port=$1 pid
	shift
	echo "# $* &"
	"$@" >/tmp/server.out 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.2
	done
	show "$@" 127.0.0.1
	wait "$pid"
	echo "# (the server's output)"
	cat /tmp/server.out
	echo
}

demo() {
	show uname -r
	modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
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
	ip link set lo up
	# Traffic through the user-space provider, its data checked (-c).
	pair 18515 ibv_rc_pingpong -d softhca0 -g 1 -c -n 1000 -s 4096
	pair 18516 ib_write_bw -d softhca0 -x 1 -p 18516 -s 65536 -n 2000
	show rdma link delete softhca0
	show rmmod softhca
}

demo 2>&1 | tee "$SOFTHCA_SHARE/demo.out"
