#!/bin/bash
# Guest side of scripts/ulp.sh: the kernel's own RDMA consumers on one
# softhca device talking to itself, each with its data checked end to
# end.  NVMe-oF (nvmet-rdma target, nvme-rdma host through nvme-cli,
# fio's crc32c verify) and NFS over RDMA (nfsd on port 20049, a tree
# written and read back by checksum).  Results are named ulp/...
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

addr=192.0.2.1	# TEST-NET-1: documentation range, never leaves the guest
nqn=nqn.2026-12.org.softhca:ulp
nvmet=/sys/kernel/config/nvmet
export=/srv/ulp-nfs
mnt=/mnt/ulp-nfs
out=$(dirname "$SOFTHCA_RESULTS")

link_active() {
	rdma link show softhca0/1 2>/dev/null | grep -q ' state ACTIVE '
}

ipv4_gid() {
	grep -qx 0000:0000:0000:0000:0000:ffff:c000:0201 \
		/sys/class/infiniband/softhca0/ports/1/gids/1 2>/dev/null
}

# must NAME CMD...: check, and fail the caller when CMD failed, for
# steps the next ones need.
must() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "exit $?"; return 1; fi
}

# keep_state WHY: a failed step leaves the kernel's log and softhca's QPs
# in the share; fails.
keep_state() {
	{
		echo "== $1"
		dmesg | tail -n 60
		rdma resource show qp
	} >>"$out/state.log" 2>&1
	return 1
}

setup() {
	mount --bind "$SOFTHCA_MODTREE" "/lib/modules/$(uname -r)" &&
		modprobe softhca &&
		ip link add shv0 type veth peer name shv1 &&
		ip link set shv0 up && ip link set shv1 up &&
		ip addr add "$addr/24" dev shv0 &&
		rdma link add softhca0 type softhca netdev shv0 &&
		wait_for 20 link_active && wait_for 20 ipv4_gid
}

# rdma_cm's RC QPs on softhca0 in RTS: a connected ULP's queues.
rdma_cm_qps() {
	rdma resource show qp link softhca0/1 |
		grep -c 'type RC state RTS .*comm \[rdma_cm\]'
}

# --- NVMe-oF ---------------------------------------------------------------

nvme_target() {
	local s=$nvmet/subsystems/$nqn p=$nvmet/ports/1
	# One RAM disk of 160 MiB (brd's rd_size is in KiB).
	modprobe brd rd_nr=1 rd_size=163840 &&
		modprobe -a nvmet nvmet-rdma nvme-rdma || return 1
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return 1
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" &&
		echo /dev/ram0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable" &&
		mkdir "$p" && echo rdma >"$p/addr_trtype" &&
		echo ipv4 >"$p/addr_adrfam" && echo "$addr" >"$p/addr_traddr" &&
		echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$s" "$p/subsystems/$nqn"
}

# The namespace block device of the controller connected to $nqn.
nvme_disk() {
	local c n
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nqn" ] || continue
		[ "$(cat "$c/transport")" = rdma ] || continue
		for n in "$c"/nvme*n1 /sys/block/"$(basename "$c")"n1; do
			n=/dev/$(basename "$n")
			[ -b "$n" ] && blockdev --getsize64 "$n" >/dev/null &&
				echo "$n" && return 0
		done
	done
	return 1
}

nvme_connect() {
	{ nvme connect -t rdma -a "$addr" -s 4420 -n "$nqn" -i 2 &&
		wait_for 30 nvme_disk >/dev/null; } || keep_state "nvme connect"
}

nvme_disconnect() {
	nvme disconnect -n "$nqn" | grep -q 'disconnected 1 controller' ||
		keep_state "nvme disconnect"
}

# fio MODE...: crc32c-verified I/O on the connected namespace; mixed block
# sizes, queue depth 32, two jobs (two I/O queues), each on its own half.
# Given 300 s; I/O that hangs leaves fio behind, and the state kept.
nvme_fio() {
	local disk pid
	disk=$(nvme_disk) || return 1
	fio --name=ulp --filename="$disk" --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=2 --size=48M --offset_increment=64M \
		--bsrange=4k-128k --verify=crc32c --verify_fatal=1 \
		--randseed=4242 --group_reporting "$@" \
		>>"$out/fio.log" 2>&1 &
	pid=$!
	if ! wait_for 300 eval "! kill -0 $pid 2>/dev/null"; then
		keep_state "fio $*: still running after 300 s"
		return
	fi
	wait $pid || keep_state "fio $*"
}

nvme_write_verify() {
	nvme_fio --rw=randwrite --do_verify=1
}

# After a reconnect, the data the first connection wrote is read back.
nvme_reconnect_verify() {
	nvme_disconnect && ! nvme_disk >/dev/null && nvme_connect &&
		nvme_fio --rw=randwrite --verify_only
}

# The controller's queues are softhca's: an admin queue and two I/O
# queues, each an RC QP of the host's and one of the target's.
nvme_queues_on_softhca() {
	[ "$(rdma_cm_qps)" = 6 ]
}

nvme_suite() {
	must ulp/nvme-target nvme_target || return 0
	must ulp/nvme-connect nvme_connect || return 0
	check ulp/nvme-fio-verify nvme_write_verify
	check ulp/nvme-reconnect-verify nvme_reconnect_verify
	check ulp/nvme-queues-on-softhca nvme_queues_on_softhca
	check ulp/nvme-disconnect nvme_disconnect
}

# --- NFS over RDMA -----------------------------------------------------------

nfs_server() {
	modprobe -a nfsd rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd ||
		return 1
	mkdir -p "$export" "$mnt" /run/rpcbind /var/lib/nfs/rpc_pipefs &&
		mount -t tmpfs tmpfs "$export" &&
		rpcbind -w && rpc.mountd &&
		exportfs -o rw,no_root_squash,fsid=1,insecure \
			"192.0.2.0/24:$export" &&
		rpc.nfsd 4 &&
		echo "rdma 20049" >/proc/fs/nfsd/portlist
}

nfs_mount() {
	mount -t nfs -o vers=3,proto=rdma,port=20049,nolock \
		"$addr:$export" "$mnt" &&
		grep -q " $mnt nfs .*proto=rdma" /proc/mounts
}

# A tree of files of many sizes, from a few bytes to several MiB.
nfs_tree() {
	local i
	mkdir -p "$1/a/b" || return 1
	for i in 1 7 512 4095 4096 65537 1048576 5000000; do
		head -c "$i" /dev/urandom >"$1/f$i" &&
			head -c "$i" /dev/urandom >"$1/a/b/g$i" || return 1
	done
}

nfs_write_read() {
	local src=/tmp/ulp-tree
	rm -rf "$src" && nfs_tree "$src" &&
		(cd "$src" && find . -type f -print0 | sort -z |
			xargs -0 sha256sum) >/tmp/ulp-tree.sum &&
		cp -a "$src/." "$mnt/" && sync &&
		umount "$mnt" && nfs_mount &&
		(cd "$mnt" && sha256sum --quiet -c /tmp/ulp-tree.sum) &&
		(cd "$export" && sha256sum --quiet -c /tmp/ulp-tree.sum)
}

# The client's transport for the mount is RPC-over-RDMA, on softhca0:
# the client's QP and the server's.
nfs_over_rdma() {
	local xprt
	xprt=$(awk -v m="$mnt" '$1 == "device" { on = $5 == m }
		on && $1 == "xprt:" { print $2; exit }' /proc/self/mountstats)
	echo "mount's transport: $xprt; rdma_cm's QPs: $(rdma_cm_qps)"
	[ "$xprt" = rdma ] && [ "$(rdma_cm_qps)" -ge 2 ]
}

nfs_suite() {
	must ulp/nfs-server nfs_server || return 0
	must ulp/nfs-mount nfs_mount || return 0
	check ulp/nfs-write-read nfs_write_read
	check ulp/nfs-over-rdma nfs_over_rdma
	check ulp/nfs-umount umount "$mnt"
}

must ulp/setup setup || exit 0
nvme_suite
nfs_suite
