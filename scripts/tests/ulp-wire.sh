#!/bin/bash
# ulp-wire.sh serve|connect ULP ADDR DEV
#
# One side of a kernel ULP between two hosts, for the wire suite's ULP
# cases (wire-cases.sh): the target or server on the device that holds
# ADDR (serve), or its host or client (connect), ADDR being the server's.
# ULP is nvme (nvmet-rdma and nvme-rdma: fio writes with crc32c and reads
# back through the target, two I/O queues), nvme_remove and nvme_unplug
# (the same, the target's device deleted and added back under the host's
# I/O: see nvme_removal_serve), nfs (nfsd on port 20049
# and a mount over RDMA: a tree written, then read back through a fresh
# mount by checksum) or smc (SMC-Rv2: tests/smc-check's connection on
# TCP port 18600, 64 MiB each way checked, and SMC's diagnostics saying
# it is SMC-Rv2 over DEV, this side's RDMA device).  The server keeps
# serving until the client says it is done, by a file of the rendezvous
# directory both hosts share ($SOFTHCA_RENDEZVOUS, wire-guest.sh's),
# then takes its target down; it exits 0 when it served.  The client
# exits 0 when its data checked.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=SCRIPTDIR/ulp-lib.sh
. "$(dirname "$0")/ulp-lib.sh"

usage="usage: ulp-wire.sh serve|connect nvme|nvme_remove|nvme_unplug|nfs|smc ADDR DEV"
[ $# = 4 ] || die "$usage"
side=$1 ulp=$2 addr=$3 dev=$4
done_file=${SOFTHCA_RENDEZVOUS:?the rendezvous directory}/ulp-$ulp.done
# The host of nvme_remove or nvme_unplug says its writes flow.
io_file=$SOFTHCA_RENDEZVOUS/ulp-$ulp.io

# served: the client said it is done, within the case's time.
served() {
	wait_for 600 test -f "$done_file"
}

serve_nvme() {
	nvme_subsystem && nvme_port_add || return 1
	undo+=(nvme_port_remove)
	echo "nvmet: $nqn on $addr:4420"
	served
}

# The port gone, if it is there, for an exit handler.
nvme_port_gone() {
	[ ! -d "$nvmet/ports/1" ] || nvme_port_remove
}

# The target's device deleted under the host's I/O and added back, the
# host connected to try again (nvme_removal_connect).  Once its writes
# flow: for nvme_remove, the port is taken away first (nvmet deletes the
# controller; the host's connects are rejected), as stop 36 saw `rdma
# link delete` block (over 120 s) on a target whose host kept
# reconnecting across the wire; for nvme_unplug, the link goes with the
# port listening and the host's queues connected.  The delete must
# return within 60 s (else its kernel stack and the blocked tasks' go
# to the log); the host's connects then go unanswered; then the link
# comes back, and the port, re-enabled (its listener went with the
# device), for the host to reconnect to.
nvme_removal_serve() {
	local nic pid
	rm -f "$io_file"
	nic=$(rdma link show "$dev/1" | awk '{ for (i = 1; i < NF; i++)
		if ($i == "netdev") print $(i + 1) }')
	[ -n "$nic" ] || return 1
	nvme_subsystem && nvme_port_add || return 1
	undo+=(nvme_port_gone)
	echo "nvmet: $nqn on $addr:4420, $dev on $nic"
	wait_for 120 test -f "$io_file" || return 1
	if [ "$1" = nvme_remove ]; then
		nvme_port_remove || return 1
		echo "nvmet: port removed"
		sleep 3
	fi
	rdma link delete "$dev" &
	pid=$!
	if ! wait_for 60 eval "! kill -0 $pid 2>/dev/null"; then
		echo "rdma link delete $dev still blocked after 60 s:"
		cat "/proc/$pid/stack"
		echo w >/proc/sysrq-trigger
		dmesg | tail -n 300
		return 1
	fi
	wait "$pid" || return 1
	echo "$dev deleted"
	sleep 3
	rdma link add "$dev" type "${dev%0}" netdev "$nic" &&
		wait_for 30 roce_v2_gid "$dev" 1 "$addr" || return 1
	nvme_port_gone && nvme_port_add || return 1
	echo "$dev and the port back"
	served
}

serve_nvme_remove() {
	nvme_removal_serve nvme_remove
}

serve_nvme_unplug() {
	nvme_removal_serve nvme_unplug
}

serve_nfs() {
	if ! mountpoint -q "$export"; then
		nfs_server || return 1
	else
		rpc.nfsd 4 && echo "rdma 20049" >/proc/fs/nfsd/portlist ||
			return 1
	fi
	# nfsd stopped, its listeners with it, so that the next case's
	# server is the one listening.
	undo+=(nfsd_stop)
	echo "nfsd: $export on $addr:20049"
	served
}

# SMC-Rv2 needs a user EID both sides have (smc-tools' `smcr ueid add`).
smc_check=$top/build/userspace/tests/smc-check
smc_bytes=$((64 << 20))
smc_ready() {
	modprobe -a smc smc_diag && "$smc_check" ueid SOFTHCA-WIRE
}

serve_smc() {
	smc_ready && "$smc_check" serve "$addr" 18600 "$smc_bytes" "$dev"
}

nfsd_stop() {
	rpc.nfsd 0
}

nvme_let_go() {
	nvme disconnect -n "$nqn"
}

nfs_let_go() {
	! mountpoint -q "$mnt" || umount -f -l "$mnt"
}

connect_nvme() {
	local disk
	undo+=(nvme_let_go)
	nvme_host -i 2 && disk=$(nvme_disk) || return 1
	echo "nvme-rdma: $disk"
	# 8 MiB on each of the two halves, block sizes from 4 KiB to
	# 128 KiB, queue depth 32; O_DIRECT, so the reads come from the
	# target's RAM disk.
	fio --name=wire --filename="$disk" --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=2 --size=8M --offset_increment=64M \
		--bsrange=4k-128k --rw=randwrite --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --randseed=4343 --group_reporting
}

# nvme_removal_connect DELAY: the host of nvme_removal_serve, connected
# to try again every DELAY seconds for 2 minutes.  It writes with
# crc32c, at 1 MiB/s for 16 s, so that the target's removal falls amid
# its writes; its controller is seen reconnecting and live again, and
# fio's writes, held meanwhile, complete and read back right.
nvme_removal_connect() {
	local disk writes pid rc=0
	undo+=(nvme_let_go)
	nvme_host -i 2 --reconnect-delay="$1" --ctrl-loss-tmo=120 &&
		disk=$(nvme_disk) || return 1
	echo "nvme-rdma: $disk"
	writes=$(nvme_writes)
	fio --name=wire --filename="$disk" --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=2 --size=8M --offset_increment=64M \
		--bs=16k --rw=randwrite --rate=512k --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --randseed=4344 \
		--group_reporting &
	pid=$!
	if wait_for 30 nvme_writes_above "$writes"; then
		touch "$io_file"
		if wait_for 60 nvme_ctrl_state connecting; then
			echo "nvme-rdma: reconnecting"
		else
			echo "nvme-rdma: the controller never lost its target"
			rc=1
		fi
		if wait_for 120 nvme_ctrl_state live; then
			echo "nvme-rdma: live again"
		else
			echo "nvme-rdma: not reconnected in 120 s"
			rc=1
		fi
	else
		echo "nvme-rdma: no write completed in 30 s"
		rc=1
	fi
	wait "$pid" && return $rc
}

connect_nvme_remove() {
	nvme_removal_connect 1
}

# Not every second: a host whose connect reaches a target between
# nvmet-rdma's removal of its queues and rdma_cm's removal of its
# listener gets a queue nvmet-rdma never lets go, and the delete blocks
# for as long as that host stays connected, whatever the device
# (docs/testing.md, "The device removed under a live NVMe-oF target").
# With a RAM disk that window is under a second here; 10 s keeps this
# host out of it even behind a disk that takes 3 s an I/O, so that the
# case tests the device, not that race.
connect_nvme_unplug() {
	nvme_removal_connect 10
}

connect_smc() {
	smc_ready && "$smc_check" connect "$addr" 18600 "$smc_bytes" "$dev"
}

connect_nfs() {
	modprobe -a nfs rpcrdma && mkdir -p "$mnt" && nfs_mount || return 1
	undo+=(nfs_let_go)
	{ rm -rf "${mnt:?}"/* && tree_new && cp -a "$tree/." "$mnt/" &&
		umount "$mnt" && nfs_mount && tree_same "$mnt"; } || return 1
	echo "nfs: the tree read back through a fresh mount"
}

# What a side set up, undone when it exits, also when its timeout
# ended it (TERM): the target taken down, the controller let go (left
# behind, it would try to reconnect for 10 minutes, into the next cases),
# the mount gone; then a client says it is done.
undo=()
at_exit() {
	local c
	for c in "${undo[@]}"; do
		"$c"
	done
	[ "$side" != connect ] || touch "$done_file"
}
trap at_exit EXIT
trap 'exit 143' TERM
case $side in
serve)
	rm -f "$done_file"
	"serve_$ulp"
	;;
connect)
	"connect_$ulp"
	;;
*) die "$usage" ;;
esac
