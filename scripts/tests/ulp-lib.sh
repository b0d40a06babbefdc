# shellcheck shell=bash
# Sourced by ulp-guest.sh, ulp-wire.sh and bench-guest.sh: the NVMe-oF
# target and the NFS server over RDMA on the device that holds $addr (one
# at a time), and their hosts' side.  Uses lib.sh's wait_for.

addr=192.0.2.1	# TEST-NET-1: documentation range, never leaves the guest
nqn=nqn.2026-12.org.softhca:ulp
nvmet=/sys/kernel/config/nvmet
export=/srv/ulp-nfs
mnt=/mnt/ulp-nfs

# --- NVMe-oF ---------------------------------------------------------------

# The target: its subsystem, one namespace on a RAM disk, and its port.
nvme_target() {
	nvme_subsystem && nvme_port_add
}

# The subsystem, once: a second call finds it made.
nvme_subsystem() {
	local s=$nvmet/subsystems/$nqn
	[ ! -d "$s" ] || return 0
	# One RAM disk of 160 MiB (brd's rd_size is in KiB).
	modprobe brd rd_nr=1 rd_size=163840 &&
		modprobe -a nvmet nvmet-rdma nvme-rdma || return 1
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return 1
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" &&
		echo /dev/ram0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable"
}

# The target's RDMA port on $addr, serving the subsystem.
nvme_port_add() {
	local p=$nvmet/ports/1
	mkdir "$p" && echo rdma >"$p/addr_trtype" &&
		echo ipv4 >"$p/addr_adrfam" && echo "$addr" >"$p/addr_traddr" &&
		echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$nvmet/subsystems/$nqn" "$p/subsystems/$nqn"
}

# The port taken away as its admin would: nvmet deletes the controllers
# it serves, and their queues' connections go.
nvme_port_remove() {
	rm "$nvmet/ports/1/subsystems/$nqn" && rmdir "$nvmet/ports/1"
}

# nvme_host [OPTION...]: the host connected to the target on $addr,
# with nvme-cli's OPTIONs, its namespace's block device there within 30 s.
nvme_host() {
	modprobe nvme-rdma &&
		nvme connect -t rdma -a "$addr" -s 4420 -n "$nqn" "$@" &&
		wait_for 30 nvme_disk >/dev/null
}

# The namespace block device of the subsystem $nqn, once it has a size:
# the multipath head (its device is the subsystem) or, without native
# multipath, the controller's namespace (its device is the controller).
nvme_disk() {
	local b
	for b in /sys/block/nvme*n*; do
		case ${b##*/} in nvme*c*n*) continue ;; esac
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$nqn" ] &&
			[ "$(cat "$b/size")" -gt 0 ] && [ -b "/dev/${b##*/}" ] &&
			echo "/dev/${b##*/}" && return 0
	done
	return 1
}

# nvme_ctrl_state STATE: the host's controller of $nqn is in STATE.
nvme_ctrl_state() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nqn" ] &&
			[ "$(cat "$c/state")" = "$1" ] && return 0
	done
	return 1
}

# Writes completed so far on NVMe block devices, paths included (6.1's
# multipath head counts none of its own): the 5th field of their stat.
nvme_writes() {
	local b stat sum=0
	for b in /sys/block/nvme*; do
		[ -e "$b/stat" ] || continue
		read -ra stat <"$b/stat" && sum=$((sum + stat[4]))
	done
	echo $sum
}

nvme_writes_above() {
	[ "$(nvme_writes)" -gt "$1" ]
}

# --- NFS over RDMA -----------------------------------------------------------

nfs_server() {
	modprobe -a nfsd rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd ||
		return 1
	mkdir -p "$export" "$mnt" /run/rpcbind /var/lib/nfs/rpc_pipefs &&
		{ mountpoint -q "$export" || mount -t tmpfs tmpfs "$export"; } &&
		rpcbind -w && rpc.mountd &&
		exportfs -o rw,no_root_squash,fsid=1,insecure \
			"${addr%.*}.0/24:$export" &&
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

# tree_new: a new tree in $tree, its checksums kept in $tree_sums for
# tree_same.  A suite whose tree must not replace NFS's (which later
# cases read back) makes both variables its own, local.
tree=/tmp/ulp-tree
tree_sums=/tmp/ulp-tree.sum
tree_new() {
	rm -rf "$tree" && nfs_tree "$tree" &&
		(cd "$tree" && find . -type f -print0 | sort -z |
			xargs -0 sha256sum) >"$tree_sums"
}

# tree_same DIR: DIR holds the tree tree_new made, by checksum.
tree_same() {
	(cd "$1" && sha256sum --quiet -c "$tree_sums")
}
