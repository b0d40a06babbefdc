#!/bin/bash
# ulp-guest.sh ULP...
#
# Guest side of scripts/ulp.sh: the kernel's own RDMA consumers on one
# softhca device talking to itself, each with its data checked end to
# end.  ULPs: nvme (nvmet-rdma target, nvme-rdma host through nvme-cli,
# fio's crc32c verify, also across the target's port removed and added
# back), nfs (nfsd on port 20049, a tree written and read
# back by checksum), iser (LIO's isert through targetcli, open-iscsi's
# iser interface, fio), srp (ib_srpt on an rdma_cm port, ib_srp's
# add_target, fio), rds (tests/rds-check: messages over RDS_TRANS_IB,
# checked), smb (ksmbd and cifs over SMB Direct, a tree written and read
# back by checksum; cifs and ksmbd with SMB Direct, which ulp.sh builds
# for Debian's kernels), flap (the carrier lost
# and back mid-I/O; after nvme and nfs), removal (softhca0 deleted, then
# softhca unloaded, under a connected NVMe-oF host and NFS mount: after
# nvme and nfs, last).  Results are named ulp/...
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

# shellcheck source=SCRIPTDIR/ulp-lib.sh
. "$(dirname "$0")/ulp-lib.sh"
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
		ls /sys/block
		nvme list-subsys
	} >>"$out/state.log" 2>&1
	return 1
}

link_add() {
	rdma link add softhca0 type softhca netdev shv0 &&
		wait_for 20 link_active && wait_for 20 ipv4_gid
}

setup() {
	mount --bind "$SOFTHCA_MODTREE" "/lib/modules/$(uname -r)" &&
		modprobe softhca &&
		ip link add shv0 type veth peer name shv1 &&
		ip link set shv0 up && ip link set shv1 up &&
		ip addr add "$addr/24" dev shv0 && link_add
}

# rdma_cm's RC QPs on softhca0 in RTS: a connected ULP's queues.
rdma_cm_qps() {
	rdma resource show qp link softhca0/1 |
		grep -c 'type RC state RTS .*comm \[rdma_cm\]'
}

# --- NVMe-oF ---------------------------------------------------------------

# nvme_connect [OPTION...]: the host connected, with two I/O queues and
# nvme-cli's OPTIONs.
nvme_connect() {
	nvme_host -i 2 "$@" || keep_state "nvme connect"
}

nvme_disconnect() {
	nvme disconnect -n "$nqn" | grep -q 'disconnected 1 controller' ||
		keep_state "nvme disconnect"
}

# fio_verify DISK MIB MODE...: crc32c-verified I/O on DISK; mixed block
# sizes, queue depth 32, two jobs (two queues), each on MIB MiB of its
# own half.  Given 300 s; I/O that hangs leaves fio behind, and the
# state kept.
fio_verify() {
	local disk=$1 mib=$2 pid
	shift 2
	fio --name=ulp --filename="$disk" --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=2 --size="${mib}M" \
		--offset_increment="$((mib + mib / 3))M" \
		--bsrange=4k-128k --verify=crc32c --verify_fatal=1 \
		--randseed=4242 --group_reporting "$@" \
		>>"$out/fio.log" 2>&1 &
	pid=$!
	if ! wait_for 300 eval "! kill -0 $pid 2>/dev/null"; then
		keep_state "fio $disk $*: still running after 300 s"
		return
	fi
	wait $pid || keep_state "fio $disk $*"
}

nvme_fio() {
	local disk
	disk=$(nvme_disk) && fio_verify "$disk" 48 "$@"
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

# The target's port removed while fio writes and verifies, and added
# back 3 s later: the host, connected to try again every second, loses
# its controller (connecting), gets it back (live) once the port is
# there, and fio's writes, held meanwhile, complete and read back right.
nvme_port_removal() {
	local disk writes pid
	nvme_disconnect && nvme_connect --reconnect-delay=1 \
		--ctrl-loss-tmo=120 && disk=$(nvme_disk) || return 1
	writes=$(nvme_writes)
	fio_verify "$disk" 48 --rw=randwrite --do_verify=1 --randseed=99 &
	pid=$!
	if ! { wait_for 30 nvme_writes_above "$writes" && nvme_port_remove &&
		wait_for 30 nvme_ctrl_state connecting && sleep 3 &&
		nvme_ctrl_state connecting && nvme_port_add &&
		wait_for 60 nvme_ctrl_state live; }; then
		keep_state "nvme port removal"
		wait $pid
		return 1
	fi
	wait $pid
}

nvme_suite() {
	must ulp/nvme-target nvme_target || return 0
	must ulp/nvme-connect nvme_connect || return 0
	check ulp/nvme-fio-verify nvme_write_verify
	check ulp/nvme-reconnect-verify nvme_reconnect_verify
	check ulp/nvme-queues-on-softhca nvme_queues_on_softhca
	check ulp/nvme-port-removal nvme_port_removal
	check ulp/nvme-disconnect nvme_disconnect
}

# --- NFS over RDMA -----------------------------------------------------------

# tree_write_read MNT EXPORT MOUNT...: the tree written through the mount
# MNT, read back through it and on the server's side, EXPORT; then MNT
# unmounted, mounted again by MOUNT... and the tree read back through the
# fresh mount.  What is copied is the tree's entries: the mount's root
# keeps its own times, which ksmbd does not let an SMB user change.
tree_write_read() {
	local mnt=$1 export=$2
	shift 2
	tree_new && cp -a "$tree"/* "$mnt/" && sync &&
		tree_same "$mnt" && tree_same "$export" &&
		umount "$mnt" && "$@" && tree_same "$mnt"
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
	check ulp/nfs-write-read tree_write_read "$mnt" "$export" nfs_mount
	check ulp/nfs-over-rdma nfs_over_rdma
	check ulp/nfs-umount umount "$mnt"
}

# A SCSI LUN's disk: the block device under the sysfs directory $1 of an
# iSCSI session, or of a SCSI host (then under its remote port).
scsi_disk() {
	local b
	for b in "$1"/device/target*/*/block/* \
		"$1"/device/*/target*/*/block/*; do
		[ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}

# scsi_fio ULP: fio's verify on the LUN the SCSI ULP (iser, srp) logged in
# to, 64 MiB.
scsi_fio() {
	local disk
	disk=$("$1_disk") && fio_verify "$disk" 32 --rw=randwrite --do_verify=1
}

# scsi_suite ULP: a SCSI ULP's target, the initiator's login, fio, its
# connection on softhca's QPs, and the logout: results ulp/ULP-<step>.
scsi_suite() {
	must "ulp/$1-target" "$1_target" || return 0
	must "ulp/$1-login" "$1_login" || return 0
	check "ulp/$1-fio-verify" scsi_fio "$1"
	check "ulp/$1-on-softhca" "$1_on_softhca"
	check "ulp/$1-logout" "$1_logout"
}

# --- iSER --------------------------------------------------------------------

iqn=iqn.2026-12.org.softhca:ulp
portal=$addr:3260

# LIO's iSCSI target on an 80 MiB RAM disk of its own, its portal on
# softhca's address with iSER on, any initiator let in (targetcli).
# targetcli asks the system bus for tcmu-runner's handlers and fails
# without one: it gets a private bus, empty.
iser_target() {
	local t=/iscsi/$iqn/tpg1 c
	modprobe -a target_core_mod iscsi_target_mod ib_isert sd_mod ib_iser ||
		return 1
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return 1
	dbus-daemon --session --fork --address=unix:path=/run/ulp-bus ||
		return 1
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/ulp-bus
	for c in "/backstores/ramdisk create name=ulp size=80M" \
		"/iscsi create $iqn" \
		"$t/portals delete 0.0.0.0 3260" \
		"$t/portals create $addr 3260" \
		"$t/portals/$portal enable_iser true" \
		"$t/luns create /backstores/ramdisk/ulp" \
		"$t set attribute authentication=0 generate_node_acls=1 demo_mode_write_protect=0 cache_dynamic_acls=1"; do
		# shellcheck disable=SC2086 # one targetcli command, its words
		targetcli $c >>"$out/targetcli.log" 2>&1 || {
			echo "targetcli $c: failed"
			return 1
		}
	done
	[ "$(cat "/sys/kernel/config/target/iscsi/$iqn/tpgt_1/np/$portal/iser")" = 1 ]
}

iser_session() {
	local s
	for s in /sys/class/iscsi_session/session*; do
		[ "$(cat "$s/targetname" 2>/dev/null)" = "$iqn" ] && echo "$s" &&
			return 0
	done
	return 1
}

iser_disk() {
	local s
	s=$(iser_session) && scsi_disk "$s"
}

# open-iscsi's initiator, through its built-in iser interface.
iser_login() {
	{ mkdir -p /run/lock/iscsi && iscsid &&
		iscsiadm -m node -o new -T "$iqn" -p "$portal" -I iser >/dev/null &&
		iscsiadm -m node -T "$iqn" -p "$portal" -I iser --login &&
		wait_for 30 iser_disk >/dev/null; } || keep_state "iscsi login"
}

# The session's transport is iSER, its connection softhca's QPs.
iser_on_softhca() {
	iscsiadm -m session | tee -a "$out/iscsi.log" | grep -q "^iser: " &&
		[ "$(rdma_cm_qps)" -ge 2 ]
}

iser_logout() {
	iscsiadm -m node -T "$iqn" -p "$portal" --logout &&
		! iser_session >/dev/null
}

# --- SRP ---------------------------------------------------------------------

srpt=/sys/kernel/config/target/srpt
srp_port=5555

# ib_srpt on an 80 MiB RAM disk of LIO's, through configfs, listening on
# rdma_cm port $srp_port; its target port is named for softhca0's GID,
# and lets in the initiator by the address it logs in from.
srp_target() {
	local core=/sys/kernel/config/target/core/rd_mcp_1/ulp-srp id tpg
	modprobe -a target_core_mod ib_srpt ib_srp sd_mod || return 1
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return 1
	id=$(sed 's/^fe80:0000:0000:0000://' \
		/sys/class/infiniband/softhca0/ports/1/gids/0)
	tpg=$srpt/$id/$id
	mkdir -p "$core" && echo "rd_pages=$((80 * 256))" >"$core/control" &&
		echo 1 >"$core/enable" &&
		mkdir -p "$srpt" &&
		echo $srp_port >"$srpt/discovery_auth/rdma_cm_port" &&
		mkdir "$srpt/$id" "$tpg" "$tpg/lun/lun_0" &&
		ln -s "$core" "$tpg/lun/lun_0/ulp" &&
		mkdir "$tpg/acls/$addr" "$tpg/acls/$addr/lun_0" &&
		ln -s "$tpg/lun/lun_0" "$tpg/acls/$addr/lun_0/lun_0" &&
		echo 1 >"$tpg/enable"
}

# The SCSI host ib_srp made for the target.
srp_host() {
	local h
	for h in /sys/class/scsi_host/host*; do
		[ -e "$h/orig_dgid" ] && echo "$h" && return 0
	done
	return 1
}

srp_disk() {
	local h
	h=$(srp_host) && scsi_disk "$h"
}

srp_login() {
	local guid gid
	guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
	gid=$(tr -d : </sys/class/infiniband/softhca0/ports/1/gids/0)
	{ echo "id_ext=$guid,initiator_ext=${gid:0:16},ioc_guid=$guid,src=$addr,dest=$addr:$srp_port" \
		>/sys/class/infiniband_srp/srp-softhca0-1/add_target &&
		wait_for 30 srp_disk >/dev/null; } || keep_state "srp add_target"
}

# ib_srp's channels and ib_srpt's are softhca's QPs (rdma_cm's, RC).
srp_on_softhca() {
	echo "rdma_cm's QPs: $(rdma_cm_qps)"
	[ "$(rdma_cm_qps)" -ge 2 ]
}

srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		echo 1 >"$p/delete" || return 1
	done
	wait_for 30 eval '! srp_host >/dev/null'
}

# --- RDS over RDMA -----------------------------------------------------------

# tap_results PREFIX CMD...: each check of CMD's TAP output a result,
# PREFIX-<check>; CMD's failing with no check failed is one more.
tap_results() {
	local prefix=$1 line what failed=0 rc
	shift
	"$@" >"$out/tap.log" 2>&1
	rc=$?
	while IFS= read -r line; do
		what=${line#*ok [0-9]* - }
		case $line in
		"ok "*) pass "$prefix-${what%%:*}" "${what#*: }" ;;
		"not ok "*)
			fail "$prefix-${what%%:*}" "${what#*: }"
			failed=1
			;;
		esac
	done <"$out/tap.log"
	cat "$out/tap.log" >>"$out/$(basename "$1").log"
	[ $rc = 0 ] || [ $failed = 1 ] || fail "$prefix" "$1: exit $rc"
}

# The project's own client (rds-tools is not packaged): two sockets on
# softhca's address, RDS_TRANS_IB forced; messages of many sizes and an
# RDMA WRITE into a registered buffer, checked; RDS's own view of the
# connection.
rds_suite() {
	if [ -e /proc/lockdep ]; then
		skip ulp/rds "on a lockdep kernel RDS's first connection reports a possible deadlock of RDS's own (rds_trans_sem taken under rdma_cm's handler_mutex by its connect handler, the reverse by sendmsg), whatever the device: the run would fail; RDS runs on Debian's kernels"
		return 0
	fi
	must ulp/rds-modules modprobe rds_rdma || return 0
	tap_results ulp/rds "$top/build/userspace/tests/rds-check" "$addr"
}

# --- SMB Direct --------------------------------------------------------------

smb_share=/srv/ulp-smb
smb_mnt=/mnt/ulp-smb

# Both ends need SMB Direct built in: Debian's kernels have neither
# (CONFIG_CIFS_SMB_DIRECT, CONFIG_SMB_SERVER_SMBDIRECT).
smb_direct_built() {
	grep -qw smbd_get_connection /proc/kallsyms &&
		grep -qw ksmbd_rdma_init /proc/kallsyms
}

# The hashes and ciphers SMB 3.1.1 needs, loaded (and their self-tests
# run) before a client negotiates: on the debug kernel, ksmbd loading
# sha512 on the first negotiate took 5 s, and cifs gave the server up.
smb_crypto="aes_generic ecb ctr ccm gcm cmac hmac md5 sha256_generic sha512_generic"

smb_server() {
	# shellcheck disable=SC2086 # module names
	modprobe -a $smb_crypto || return 1
	# ksmbd acts on a share as the local account of the SMB user's name:
	# the share is that account's.
	{ id ulp >/dev/null 2>&1 || useradd -M ulp; } &&
		mkdir -p "$smb_share" "$smb_mnt" /etc/ksmbd &&
		mount -t tmpfs -o uid=ulp,gid=ulp tmpfs "$smb_share" &&
		printf '[global]\n\tbind interfaces only = no\n[ulp]\n\tpath = %s\n\tread only = no\n\tvalid users = ulp\n' \
			"$smb_share" >/etc/ksmbd/ksmbd.conf &&
		ksmbd.adduser -a ulp -p ulp-pass >/dev/null || return 1
	# ksmbd's user-space daemon in the foreground, verbose, its log in
	# the run directory: cifs often gets BAD_NETWORK_NAME for IPC$, over
	# TCP too, and more often with the daemon detached and quiet
	# (docs/testing.md).
	stdbuf -oL ksmbd.mountd -n -v >"$out/ksmbd.log" 2>&1 &
	wait_for 20 smb_listening
}

# ksmbd listens on TCP port 445 and, with SMB Direct, on rdma_cm's 445
# (SMB Direct's port on RoCE).
smb_listening() {
	[ -n "$(ss -Hltn 'sport = :445')" ] &&
		{ ! smb_direct_built ||
			rdma resource show cm_id src-port 445 2>/dev/null |
			grep -q LISTEN; }
}

# smb_mount rdma|tcp: the share, over SMB Direct or over TCP.
smb_mount() {
	local opts=vers=3.1.1,username=ulp,password=ulp-pass line
	[ "$1" = tcp ] || opts=$1,$opts
	mount -t cifs "//$addr/ulp" "$smb_mnt" -o "$opts" &&
		line=$(grep " $smb_mnt cifs " /proc/mounts) &&
		{ [ "$1" = tcp ] || [[ $line == *rdma* ]]; }
}

# The share mounts over TCP: what SMB Direct's case then adds is the
# transport's.
smb_over_tcp() {
	{ smb_mount tcp && umount "$smb_mnt"; } || keep_state "SMB over TCP"
}

smb_on_softhca() {
	grep -q "SMBDirect (in hex) protocol version" /proc/fs/cifs/DebugData &&
		[ "$(rdma_cm_qps)" -ge 2 ]
}

smb_suite() {
	# Its own tree: flap and removal read NFS's back afterwards.
	local tree=/tmp/ulp-smb-tree tree_sums=/tmp/ulp-smb-tree.sum
	must ulp/smb-modules modprobe -a cifs ksmbd || return 0
	must ulp/smb-server smb_server || return 0
	must ulp/smb-over-tcp smb_over_tcp || return 0
	if ! smb_direct_built; then
		skip ulp/smb-direct "this kernel's cifs or ksmbd lacks SMB Direct (CONFIG_CIFS_SMB_DIRECT, CONFIG_SMB_SERVER_SMBDIRECT)"
		return 0
	fi
	must ulp/smb-mount smb_mount rdma || return 0
	check ulp/smb-write-read tree_write_read "$smb_mnt" "$smb_share" \
		smb_mount rdma
	check ulp/smb-on-softhca smb_on_softhca
	check ulp/smb-umount umount "$smb_mnt"
}

# --- Carrier lost and back under connected ULPs ----------------------------

carrier() {
	ip link set shv1 "$1" &&
		wait_for 20 eval "rdma link show softhca0/1 | grep -q ' state $2 '"
}

# NVMe-oF connected with fio writing and verifying, an NFS mount copying
# a tree: the netdev's carrier drops for 5 s mid-I/O (softhca0's port goes
# DOWN), then comes back; the ULPs recover by themselves and finish, and
# what they wrote reads back right.
flap_io() {
	local disk pid
	nvme_connect && nfs_mount && disk=$(nvme_disk) || return 1
	fio_verify "$disk" 48 --rw=randwrite --do_verify=1 --randseed=77 &
	pid=$!
	sleep 2
	if ! { carrier down DOWN && sleep 5 && carrier up ACTIVE; }; then
		wait $pid
		return 1
	fi
	wait $pid && tree_same "$mnt" &&
		nvme_disconnect && umount "$mnt"
}

# The NVMe-oF and NFS targets the nvme and nfs suites set up, which flap
# and removal use.
targets_set_up() {
	if [ ! -d "$nvmet/ports/1" ] || [ ! -d "$export" ]; then
		echo "no targets: run the nvme and nfs suites first"
		return 1
	fi
}

flap_suite() {
	must ulp/flap-targets targets_set_up || return 0
	check ulp/flap-carrier-mid-io flap_io
}

# --- The device removed under connected ULPs ------------------------------

# NVMe-oF connected with fio writing, NFS mounted over RDMA (the targets
# the nvme and nfs suites set up); a removal must not wait on I/O that
# will never complete: every ULP gets DEVICE_REMOVAL and lets go.
removal_connect() {
	local disk writes
	nvme_connect && nfs_mount && disk=$(nvme_disk) || return 1
	writes=$(nvme_writes)
	fio --name=removal --filename="$disk" --direct=1 --ioengine=libaio \
		--iodepth=32 --rw=randwrite --bs=64k --size=64M \
		--time_based --runtime=600 >>"$out/fio-removal.log" 2>&1 &
	removal_fio=$!
	# Writes completing on the namespace: the I/O is in flight.
	wait_for 30 nvme_writes_above "$writes" && kill -0 $removal_fio
}

no_link() {
	! rdma link show softhca0/1 >/dev/null 2>&1 &&
		[ ! -e /sys/class/infiniband/softhca0 ]
}

# $1 (`rdma link delete softhca0` or `rmmod softhca`) returns within
# 60 s, the device gone; fio ends (its I/O fails) instead of hanging, and
# nvme-rdma deleted the controller.
removal_by() {
	# shellcheck disable=SC2086 # the command's words
	{ timeout 60 $1 && no_link &&
		wait_for 60 eval "! kill -0 $removal_fio 2>/dev/null" &&
		wait_for 30 eval '! nvme_disk >/dev/null'; } ||
		keep_state "$1 under connected ULPs"
}

# The link back, the targets listening again as their admin would have
# them (nvmet's port, bound to softhca's address, lost its listener with
# the device and is re-enabled; nfsd's, on the wildcard address, gets
# the new device by itself), the old mount lazily unmounted: NVMe-oF and
# NFS work on the new device.
removal_again() {
	local p=$nvmet/ports/1
	umount -f -l "$mnt"
	{ link_add && rm "$p/subsystems/$nqn" &&
		ln -s "$nvmet/subsystems/$nqn" "$p/subsystems/$nqn" &&
		nvme_connect && nvme_fio --rw=randwrite --do_verify=1 &&
		nfs_mount &&
		tree_same "$mnt" && nvme_disconnect && umount "$mnt"; } ||
		keep_state "ULPs on the link added back"
}

# An NVMe-oF host trying to reconnect through softhca0 (its target's
# port gone, each connect rejected) when the link is deleted: `rdma link
# delete` returns within 60 s, the device gone, and the controller can be
# deleted; then the link and the port are back.  A delete still blocked
# leaves its kernel stack, and the blocked tasks' (sysrq w), in the state.
removal_reconnecting() {
	local pid
	nvme_connect --reconnect-delay=1 --ctrl-loss-tmo=600 &&
		nvme_port_remove && wait_for 30 nvme_ctrl_state connecting ||
		return 1
	sleep 3
	rdma link delete softhca0 &
	pid=$!
	if ! wait_for 60 eval "! kill -0 $pid 2>/dev/null"; then
		{
			echo "== rdma link delete still blocked after 60 s:"
			cat "/proc/$pid/stack"
			echo w >/proc/sysrq-trigger
		} >>"$out/state.log" 2>&1
		keep_state "link delete under a reconnecting host"
		return 1
	fi
	{ wait $pid && no_link && nvme_disconnect && link_add &&
		nvme_port_add; } || keep_state "link delete under a reconnecting host"
}

removal_suite() {
	must ulp/removal-targets targets_set_up || return 0
	must ulp/removal-connected removal_connect || return 0
	check ulp/removal-link-delete removal_by "rdma link delete softhca0"
	must ulp/removal-link-again removal_again || return 0
	must ulp/removal-reconnecting removal_reconnecting || return 0
	must ulp/removal-connected-again removal_connect || return 0
	check ulp/removal-rmmod removal_by "rmmod softhca"
}

must ulp/setup setup || exit 0
for ulp in "$@"; do
	case $ulp in
	nvme | nfs | rds | smb | flap | removal) "${ulp}_suite" ;;
	iser | srp) scsi_suite "$ulp" ;;
	*) fail "ulp/$ulp" "no such ULP suite" ;;
	esac
done
