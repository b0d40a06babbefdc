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
# it, takes its name from /etc/softhca/rdmanet0.conf, and goes with the
# NIC.
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
	if wait_for 120 link_on "softhca_$nic" "$nic" &&
		systemctl is-active --quiet "softhca@$nic.service"; then
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
