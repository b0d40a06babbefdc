#!/bin/bash
# systemd-guest.sh UNIT MAC
#
# Guest side of scripts/systemd.sh, run twice (scripts/vm/run.sh
# --systemd).  SOFTHCA_SYSTEMD_PHASE=preboot, before systemd: softhca in
# the module tree (SOFTHCA_MODTREE), the template UNIT installed where a
# package puts it, the NIC named rdmanet0 by a .link file (its MAC is
# systemd.sh's), and `systemctl enable softhca@rdmanet0.service`, as an
# administrator would.  =booted, as a unit once systemd reached
# sysinit.target: the link came up by itself, the unit stops and starts
# it (also when stopped mid-start), takes its name from
# /etc/softhca/rdmanet0.conf, leaves alone a link that has the name
# already, and goes with the NIC.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

unit=$1
mac=$2
nic=rdmanet0
: "${SOFTHCA_RESULTS:?SOFTHCA_RESULTS names the results file}"

# link_on NAME NETDEV: the RDMA link NAME exists, bound to NETDEV.
link_on() {
	rdma link show "$1/1" 2>/dev/null | grep -qw "netdev $2"
}

no_link() {
	! rdma link show "$1/1" >/dev/null 2>&1
}

unit_inactive() {
	! systemctl is-active --quiet "softhca@$nic.service"
}

# up_at_boot: the unit finished its start (not still "activating") and
# its link is there.  The link exists a moment before the start ends.
up_at_boot() {
	systemctl is-active --quiet "softhca@$nic.service" &&
		link_on "softhca_$nic" "$nic"
}

preboot() {
	mkdir -p /etc/systemd/network &&
		printf '[Match]\nMACAddress=%s\n\n[Link]\nName=%s\n' \
			"$mac" "$nic" >/etc/systemd/network/10-softhca-test.link &&
		mount --bind "$SOFTHCA_MODTREE" "/lib/modules/$(uname -r)" &&
		install -m 644 "$unit" /lib/systemd/system/ &&
		systemctl enable "softhca@$nic.service"
}

booted() {
	local why check_status
	if wait_for 120 up_at_boot; then
		pass systemd/link-at-boot
	else
		fail systemd/link-at-boot "no softhca_$nic on $nic 120 s after sysinit.target"
		systemctl status "softhca@$nic.service" --no-pager
	fi
	rdma link show
	why=
	systemctl stop "softhca@$nic.service" && no_link "softhca_$nic" ||
		why="softhca_$nic outlived its unit's stop"
	systemctl start "softhca@$nic.service" && link_on "softhca_$nic" "$nic" ||
		why="${why:+$why; }no softhca_$nic after the unit's start"
	verdict systemd/stop-start "$why"
	# A stop while the start still runs (held in a slow ExecStartPost=
	# after the link was made) takes the link too.
	why=
	mkdir -p "/run/systemd/system/softhca@$nic.service.d" &&
		printf '[Service]\nExecStartPost=sleep 60\n' \
			>"/run/systemd/system/softhca@$nic.service.d/slow.conf" &&
		systemctl daemon-reload && systemctl stop "softhca@$nic.service" &&
		systemctl start --no-block "softhca@$nic.service" &&
		wait_for 30 link_on "softhca_$nic" "$nic" || why="no softhca_$nic from the slow start"
	if [ -z "$why" ]; then
		systemctl is-active --quiet "softhca@$nic.service" && why="the slow start was not slow"
		systemctl stop "softhca@$nic.service" && no_link "softhca_$nic" ||
			why="${why:+$why; }softhca_$nic outlived a stop during its start"
	fi
	rm -r "/run/systemd/system/softhca@$nic.service.d" && systemctl daemon-reload &&
		systemctl start "softhca@$nic.service" || why="${why:+$why; }no start after the slow one"
	verdict systemd/stop-while-starting "$why"
	mkdir -p /etc/softhca &&
		echo SOFTHCA_NAME=lan_rdma >"/etc/softhca/$nic.conf" &&
		systemctl restart "softhca@$nic.service" &&
		link_on lan_rdma "$nic" && no_link "softhca_$nic"
	check_status=$?
	if [ $check_status = 0 ]; then
		pass systemd/name-from-config
	else
		fail systemd/name-from-config "restart with SOFTHCA_NAME=lan_rdma: exit $check_status"
	fi
	rdma link show
	# A name another link has (on a veth): the start fails, and its stop
	# leaves that link alone.
	why=
	ip link add shca-t0 type veth peer name shca-t1 &&
		rdma link add taken type softhca netdev shca-t0 &&
		echo SOFTHCA_NAME=taken >"/etc/softhca/$nic.conf" || why="no link taken to begin with"
	if [ -z "$why" ]; then
		! systemctl restart "softhca@$nic.service" 2>/dev/null || why="the unit started on a taken name"
		link_on taken shca-t0 || why="${why:+$why; }the failed start deleted taken"
		no_link lan_rdma || why="${why:+$why; }lan_rdma outlived its unit's restart"
	fi
	ip link delete shca-t0
	echo SOFTHCA_NAME=lan_rdma >"/etc/softhca/$nic.conf" &&
		systemctl restart "softhca@$nic.service" ||
		why="${why:+$why; }no restart as lan_rdma after taken went"
	verdict systemd/failed-start-keeps-others "$why"
	# The NIC unplugged (its PCI function, the virtio device's parent):
	# its device unit goes, and BindsTo= stops ours.
	if ! link_on lan_rdma "$nic"; then
		fail systemd/netdev-removal-stops-unit "no link on $nic to begin with"
	elif echo 1 >"$(readlink -f "/sys/class/net/$nic/device/..")/remove" &&
		wait_for 30 no_link lan_rdma && wait_for 30 unit_inactive; then
		pass systemd/netdev-removal-stops-unit
	else
		fail systemd/netdev-removal-stops-unit "lan_rdma or its unit outlived $nic by 30 s"
	fi
}

case ${SOFTHCA_SYSTEMD_PHASE:-} in
preboot) preboot ;;
booted) booted ;;
*) die "SOFTHCA_SYSTEMD_PHASE is neither preboot nor booted: run by scripts/vm/run.sh --systemd" ;;
esac
