#!/bin/bash
# Guest side of scripts/integration.sh, on Debian's own kernel: what an
# administrator does with softhca, checked with the field's tools (rdma,
# ibv_devinfo).  $1: this kernel's build directory; $2: the provider library.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

build=$1
export RDMAV_DRIVERS=$2
ko=$build/drivers/softhca/softhca.ko
addr=192.0.2.1	# TEST-NET-1: documentation range, never leaves the guest

# The user-space provider's suites: provider_tests.
. "$(dirname "$0")/provider.sh"

veth_pair() {
	ip link add "$1" type veth peer name "$2" &&
		ip link set "$1" up && ip link set "$2" up
}

link_state() {
	rdma link show "$1/1" 2>/dev/null | grep -q " state $2 "
}

no_device() {
	! rdma link show "$1/1" >/dev/null 2>&1 &&
		[ ! -e "/sys/class/infiniband/$1" ]
}

gid_is() {
	grep -qx "$3" "/sys/class/infiniband/$1/ports/1/gids/$2" 2>/dev/null
}

load_module() {
	modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel && insmod "$ko"
}

add_link() {
	veth_pair shv0 shv1 && ip addr add "$addr/24" dev shv0 &&
		rdma link add softhca0 type softhca netdev shv0
}

sysfs_ipv4_gid() {
	wait_for 20 gid_is softhca0 1 "0000:0000:0000:0000:0000:ffff:c000:0201" &&
		grep -qx "RoCE v2" \
			/sys/class/infiniband/softhca0/ports/1/gid_attrs/types/1
}

uverbs_node() {
	grep -lx softhca0 /sys/class/infiniband_verbs/uverbs*/ibdev
}

# devinfo_field DEV FIELD: a decimal field of ibv_devinfo -v.
devinfo_field() {
	ibv_devinfo -v -d "$1" | awk -v f="$2:" '$1 == f { print $2; exit }'
}

# What the kernel's ULPs look for before they use a device (the KUnit
# case shca_attr_ulp_caps checks the kernel's side): fast registration,
# RNR NAKs, the system image GUID, one completion vector per online CPU.
ulp_caps() {
	local caps flag vectors
	caps=$(ibv_devinfo -v -d softhca0 |
		sed -n '/device_cap_flags:/,/^[[:space:]]*[a-z_]*:/p')
	for flag in MEM_MGT_EXTENSIONS RC_RNR_NAK_GEN SYS_IMAGE_GUID; do
		grep -qw "$flag" <<<"$caps" || { echo "no $flag"; return 1; }
	done
	vectors=$(/usr/bin/python3 -c 'import pyverbs.device as d
print(d.Context(name="softhca0").num_comp_vectors)')
	echo "num_comp_vectors $vectors, online CPUs $(nproc)"
	[ "$vectors" = "$(nproc)" ]
}

# rdma_rxe binds UDP port 4791 when its module loads, softhca when its
# first link is added: the two take turns.  softhca0 is deleted for the
# time rdma_rxe is loaded (rxe_load ... rxe_unload), then added again.
softhca0_add() {
	rdma link add softhca0 type softhca netdev shv0 &&
		wait_for 10 link_state softhca0 ACTIVE
}

rxe_load() {
	rdma link delete softhca0 && modprobe rdma_rxe
}

rxe_unload() {
	rmmod rdma_rxe && softhca0_add
}

# With rdma_rxe holding the port, `rdma link add` fails, and says why.
port_taken() {
	local out ok=1
	rxe_load || return 1
	out=$(rdma link add softhca9 type softhca netdev shv1 2>&1)
	echo "rdma link add: $out"
	no_device softhca9 &&
		dmesg | grep -q "UDP port 4791 is taken (is rdma_rxe loaded?" &&
		ok=0
	rxe_unload && return $ok
}

# softhca advertises at least what rdma_rxe does, on the same kernel; but
# for max_pkeys, which RoCE has no use for beyond the default P_Key.
limits_cover_rxe() {
	local f rxe short=0
	local -A mine
	local fields=(max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd
		max_qp_rd_atom max_qp_init_rd_atom max_srq max_srq_wr
		max_srq_sge max_ah max_mcast_grp max_mcast_qp_attach
		max_total_mcast_qp_attach)
	for f in "${fields[@]}"; do
		mine[$f]=$(devinfo_field softhca0 "$f")
	done
	rxe_load && rdma link add rxe0 type rxe netdev shv1 || return 1
	for f in "${fields[@]}"; do
		rxe=$(devinfo_field rxe0 "$f")
		echo "$f: softhca0 ${mine[$f]}, rxe0 $rxe"
		[ -n "$rxe" ] && [ "${mine[$f]:-0}" -ge "$rxe" ] || short=1
	done
	rdma link delete rxe0
	rxe_unload || return 1
	return $short
}

# ibloop (drivers/ibloop): an in-kernel client of ib_core's verbs moving
# data between two QPs of one device, checking every byte.  Each run's
# result line goes to the output and, for scripts/integration.sh to show,
# next to the results file.
ibloop_ko=$build/drivers/ibloop/ibloop.ko
ibloop_ctl=/sys/kernel/debug/ibloop/run
ibloop_iters=2000
rxe_addr=192.0.2.2	# on shv1; /32: no second route to softhca0's subnet

# ibloop_run DEV OP MODE [CTX]: one run; passes when every message
# completed with the right data and no error, and, given CTX, every verb
# of the data path was called from that context.
ibloop_run() {
	local line ctx=${4:-}
	echo "dev=$1 op=$2 mode=$3 size=4096 iters=$ibloop_iters${ctx:+ ctx=$ctx}" \
		>"$ibloop_ctl"
	line=$(cat "$ibloop_ctl")
	echo "ibloop: $line"
	[ -z "${SOFTHCA_RESULTS:-}" ] ||
		echo "$line" >>"$(dirname "$SOFTHCA_RESULTS")/ibloop.log"
	[ "$(ibloop_field "$line" dev)" = "$1" ] &&
		[ "$(ibloop_field "$line" op)" = "$2" ] &&
		[ "$(ibloop_field "$line" mode)" = "$3" ] &&
		[ "$(ibloop_field "$line" status)" = 0 ] &&
		[ "$(ibloop_field "$line" completed)" = $ibloop_iters ] &&
		[ "$(ibloop_field "$line" mismatches)" = 0 ] &&
		{ [ -z "$ctx" ] ||
			{ [ "$(ibloop_field "$line" ctx)" = "$ctx" ] &&
			[ "$(ibloop_field "$line" ctx_violations)" = 0 ]; }; }
}

# ibloop_suite DEV NAME: every op in both completion modes.
ibloop_suite() {
	local op mode
	for op in send write read; do
		for mode in handler poll; do
			if [ "$2-$mode" = rxe-handler ] && rxe_handler_locked; then
				skip "integ/ibloop-$2-$op-$mode" \
					"rdma_rxe calls the handler under its CQ lock"
				continue
			fi
			check "integ/ibloop-$2-$op-$mode" ibloop_run "$1" $op $mode
		done
	done
}

# ibloop_cq_suite DEV NAME: sends and writes with immediate (completions
# on both QPs' CQs) on each kind of CQ ULPs take from ib_core, whose
# poller calls each WR's ib_cqe: IB_POLL_DIRECT (polled by the run
# thread), SOFTIRQ, WORKQUEUE, UNBOUND_WORKQUEUE, and the shared pool
# (ib_cq_pool_get()); each run ends as ULPs do, with ib_drain_qp().
ibloop_cq_suite() {
	local op mode
	for mode in direct softirq workqueue unbound pool; do
		for op in send write_imm; do
			check "integ/ibloop-$2-cq-$mode-$op" \
				ibloop_run "$1" $op $mode
		done
	done
}

# Since 6.5, rdma_rxe calls the completion handler with its CQ lock held:
# a handler that polls its own CQ, as ibloop's does, locks up the CPU.
rxe_handler_locked() {
	local v
	v=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
	# shellcheck disable=SC2086
	set -- $v
	[ "$1" -gt 6 ] || { [ "$1" = 6 ] && [ "$2" -ge 5 ]; }
}

# has_roce_v2_gid DEV GID: port 1 of DEV has GID, as a RoCE v2 GID.
has_roce_v2_gid() {
	local port=/sys/class/infiniband/$1/ports/1 found f
	# No process substitution: the guest has no /dev/fd.
	found=$(grep -lx "$2" "$port"/gids/*) || return 1
	while read -r f; do
		grep -qx "RoCE v2" "$port/gid_attrs/types/${f##*/}" && return 0
	done <<<"$found"
	return 1
}

# rxe0 on shv1 (softhca0 has shv0), with an IPv4 address for the RoCE v2
# GID that ibloop picks: rxe loops back what it sends to its own MAC.
rxe_up() {
	rxe_load && ip addr add "$rxe_addr/32" dev shv1 &&
		rdma link add rxe0 type rxe netdev shv1 &&
		wait_for 20 has_roce_v2_gid rxe0 \
			0000:0000:0000:0000:0000:ffff:c000:0202
}

rxe_down() {
	rdma link delete rxe0
	ip addr del "$rxe_addr/32" dev shv1
	rxe_unload
}

# ibloop_ctx_suite DEV NAME: sends in both completion modes, and writes,
# with every post, poll and arm issued from hard-irq, softirq and with IRQs
# off: the contract that post and poll are atomic-safe.  Not for rdma_rxe,
# which takes spin_lock_bh() inside post_send.
ibloop_ctx_suite() {
	local ctx mode
	for ctx in hardirq softirq irqsoff; do
		for mode in handler poll; do
			check "integ/ibloop-$2-$ctx-$mode" \
				ibloop_run "$1" send $mode $ctx
		done
		check "integ/ibloop-$2-$ctx-write-handler" \
			ibloop_run "$1" write handler $ctx
	done
}

ibloop_tests() {
	modprobe ib_core && insmod "$ibloop_ko" ||
		echo "ibloop: cannot load $ibloop_ko"
	rxe_up || echo "ibloop: cannot set up rxe0"
	ibloop_suite rxe0 rxe
	ibloop_cq_suite rxe0 rxe
	rxe_down || echo "ibloop: cannot bring softhca0 back"
	ibloop_suite softhca0 softhca
	ibloop_cq_suite softhca0 softhca
	ibloop_ctx_suite softhca0 softhca
	rmmod ibloop
}

duplicate_refused() {
	! rdma link add softhca1 type softhca netdev shv0 2>/dev/null &&
		no_device softhca1
}

carrier() {
	ip link set shv1 "$1" && wait_for 10 link_state softhca0 "$2"
}

netdev_removal() {
	rdma link add softhca0 type softhca netdev shv0 &&
		ip link del shv0 && wait_for 10 no_device softhca0
}

rmmod_with_device() {
	veth_pair shv2 shv3 &&
		rdma link add softhca2 type softhca netdev shv2 &&
		rmmod softhca && no_device softhca2 && ip link del shv2
}

# `rdma link add` loads the module through its rdma-link-softhca alias,
# from the module tree scripts/integration.sh prepared with softhca in it.
autoload() {
	mount --bind "$SOFTHCA_MODTREE" "/lib/modules/$(uname -r)" &&
		veth_pair shv4 shv5 &&
		rdma link add softhca4 type softhca netdev shv4 &&
		link_state softhca4 ACTIVE &&
		rdma link delete softhca4 && rmmod softhca
}

# `rdma -dd resource show qp`: an RC QP's engine state, as the driver
# reports it (fill_res_qp_entry), for a QP an ibv_rc_pingpong server
# created and left in INIT while it waits for its client.
qp_driver_details() {
	local pid out rc=0
	ibv_rc_pingpong -d softhca0 -g 1 -p 18600 >/dev/null 2>&1 &
	pid=$!
	wait_for 10 eval 'rdma resource show qp link softhca0/1 | grep -q "type RC"' ||
		rc=1
	out=$(rdma -dd resource show qp link softhca0/1 type RC 2>&1)
	kill "$pid" && wait "$pid"
	echo "$out"
	[ $rc = 0 ] &&
		grep -q 'drv_waiting 0 drv_sq_psn 0x[0-9a-f]* drv_inflight 0 .*drv_rx_queued 0 ' <<<"$out" &&
		grep -q ' drv_epsn 0x[0-9a-f]* drv_msn 0 drv_nak_sent 0 ' <<<"$out"
}

# A process holding a context (userspace/tests/held-context) does not
# hold the device up.  held_context HOW: softhca6 on a veth pair of its
# own, held, then removed HOW (link-delete, netdev-removal or rmmod): the
# removal completes within 10 s, the process gets IBV_EVENT_DEVICE_FATAL
# and EIO and exits, and the module unloads.  A process left waiting is
# killed after that, so a failure cannot hang the suite.
held_remove() {
	case $1 in
	link-delete) rdma link delete softhca6 ;;
	netdev-removal) ip link del shv6 ;;
	rmmod) rmmod softhca ;;
	esac
}

# softhca6 on a veth pair of its own, up.
softhca6_up() {
	{ lsmod | grep -q '^softhca ' || load_module; } &&
		veth_pair shv6 shv7 &&
		rdma link add softhca6 type softhca netdev shv6 &&
		wait_for 10 link_state softhca6 ACTIVE
}

# remove_within HOW PID: softhca6 removed HOW; the removal and process
# PID (its user, which must then end) done within 10 s each, else PID is
# killed.  Then the device must be gone; its netdev goes too.
remove_within() {
	local rpid user=$2 rc=0 start=$SECONDS
	held_remove "$1" &
	rpid=$!
	# shellcheck disable=SC2016 # eval expands them
	if ! wait_for 10 eval '! kill -0 $rpid 2>/dev/null' ||
		! wait_for 10 eval '! kill -0 $user 2>/dev/null'; then
		echo "$1: not done after $((SECONDS - start)) s"
		kill "$user"
		rc=1
	fi
	wait "$rpid" || rc=1
	echo "$1: done in $((SECONDS - start)) s"
	no_device softhca6 || rc=1
	ip link del shv6 2>/dev/null
	return $rc
}

held_context() {
	local ready pid rc=0
	ready=$(mktemp -u)
	softhca6_up || return 1
	"$guest_tests/held-context" softhca6 "$ready" &
	pid=$!
	wait_for 20 test -e "$ready" || rc=1
	remove_within "$1" $pid || rc=1
	wait "$pid" || rc=1
	rm -f "$ready"
	! lsmod | grep -q '^softhca ' || rmmod softhca || rc=1
	return $rc
}

# pp_alive LOG PID...: each pingpong PID still runs; else the check
# fails, with their output (LOG.0, LOG.1, ...) printed.
pp_alive() {
	local log=$1 pid i=0 rc=0
	shift
	for pid in "$@"; do
		kill -0 "$pid" 2>/dev/null ||
			{ echo "busy-remove: pingpong $i ended:"; rc=1; }
		i=$((i + 1))
	done
	[ $rc = 0 ] || pp_output "$log"
	return $rc
}

pp_output() {
	sed "s/^/pingpong 0: /" "$1.0"
	sed "s/^/pingpong 1: /" "$1.1"
}

# The device goes while kernel and user QPs stream traffic on it.
# busy_remove HOW: softhca6 carries an ibloop run (kernel QPs: 64 KiB
# WRITEs, 64 in flight, completion handler) and an ibv_rc_pingpong pair
# (user QPs: 64 KiB SENDs), both endless, when it is removed HOW (as
# held_context).  The pingpongs must still be running then; the removal
# completes within 10 s; ibloop, an ib_client, is told and ends its run
# with -ENODEV (19) after completing messages with no data mismatch; the
# pingpongs, whose rings are gone, are killed and exit; the module
# unloads.
busy_remove() {
	local pids ipid rc=0 line log pp
	softhca6_up && insmod "$ibloop_ko" || return 1
	log=$(mktemp) || return 1
	# Its write fails with ENODEV, as it should: the result line says so.
	{ echo "dev=softhca6 op=write size=65536 depth=64 iters=4000000000" \
		>"$ibloop_ctl"; } 2>/dev/null &
	ipid=$!
	pp=(ibv_rc_pingpong -d softhca6 -g 0 -p 18610 -s 65536 -n 1000000000)
	"${pp[@]}" >"$log.0" 2>&1 &
	pids=$!
	wait_for 30 listening 18610 || echo "busy-remove: no pingpong server"
	"${pp[@]}" localhost >"$log.1" 2>&1 &
	pids="$pids $!"
	# Four RC QPs in RTS: ibloop's two and the pingpongs'.  30 s: the
	# pingpongs took over 10 s to connect once, under TCG with two
	# other guests on the host's two CPUs (2026-12-04).
	# shellcheck disable=SC2016 # eval expands it
	if ! wait_for 30 eval '[ "$(rdma resource show qp link softhca6/1 |
		grep -c "type RC state RTS")" = 4 ]'; then
		echo "busy-remove: not 4 RC QPs in RTS after 30 s:"
		rdma resource show qp link softhca6/1
		pp_output "$log"
		rc=1
	fi
	sleep 2
	# shellcheck disable=SC2086
	pp_alive "$log" $pids || rc=1
	remove_within "$1" $ipid || rc=1
	wait "$ipid"
	line=$(cat "$ibloop_ctl")
	echo "ibloop: $line"
	[ "$(ibloop_field "$line" status)" = -19 ] &&
		[ "$(ibloop_field "$line" completed)" -gt 0 ] &&
		[ "$(ibloop_field "$line" mismatches)" = 0 ] || rc=1
	# shellcheck disable=SC2086
	kill $pids 2>/dev/null
	# shellcheck disable=SC2086
	wait $pids
	rm -f "$log" "$log.0" "$log.1"
	rmmod ibloop || { echo "busy-remove: rmmod ibloop failed"; rc=1; }
	! lsmod | grep -q '^softhca ' || rmmod softhca ||
		{ echo "busy-remove: rmmod softhca failed"; rc=1; }
	return $rc
}

check integ/module-load load_module
check integ/link-add add_link
check integ/port-active wait_for 10 link_state softhca0 ACTIVE
check integ/uverbs-node uverbs_node
check integ/sysfs-ipv4-gid sysfs_ipv4_gid
check integ/ibv-devinfo "$top/userspace/tests/devinfo-check.sh" softhca0
check integ/limits-cover-rxe limits_cover_rxe
check integ/ulp-caps ulp_caps
check integ/udp-port-taken-by-rxe port_taken
ibloop_tests
provider_tests
check integ/qp-driver-details qp_driver_details
check integ/duplicate-refused duplicate_refused
check integ/carrier-down carrier down DOWN
check integ/carrier-up carrier up ACTIVE
check integ/link-delete rdma link delete softhca0
check integ/link-gone no_device softhca0
check integ/netdev-removal netdev_removal
check integ/rmmod-with-device rmmod_with_device
check integ/autoload-by-link-type autoload
for how in link-delete netdev-removal rmmod; do
	check "integ/held-context-$how" held_context $how
	check "integ/busy-remove-$how" busy_remove $how
done
