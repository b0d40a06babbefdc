#!/bin/bash
# ulp-wire.sh serve|connect ULP ADDR DEV
#
# One side of a kernel ULP between two hosts, for the wire suite's ULP
# cases (wire-cases.sh): the target or server on the device that holds
# ADDR (serve), or its host or client (connect), ADDR being the server's.
# ULP is nvme (nvmet-rdma and nvme-rdma: fio writes with crc32c and reads
# back through the target, two I/O queues), nfs (nfsd on port 20049
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

usage="usage: ulp-wire.sh serve|connect nvme|nfs|smc ADDR DEV"
[ $# = 4 ] || die "$usage"
side=$1 ulp=$2 addr=$3 dev=$4
done_file=${SOFTHCA_RENDEZVOUS:?the rendezvous directory}/ulp-$ulp.done

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
