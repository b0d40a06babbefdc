#!/bin/bash
# setup.sh [blktests | smbdirect]
#
# Install the Debian packages softhca's build, tests and demo need; a no-op
# when they are all there; with blktests, also what blktests' srp group
# runs (make blktests); with smbdirect, the source SMB Direct's modules
# are built from (the ULP suite on 6.12).  Debian 12 (bookworm), as root.
# Nothing they bring may start on this host (rdma-core has services that
# load RDMA modules; the guests share this host's root): a policy-rc.d
# that forbids every start is in place while apt runs, unless the host
# has its own.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgs=(
	# module and debug-kernel builds
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio kmod
	linux-headers-amd64 linux-source-6.1 sparse xz-utils python3
	# lint of the harness
	shellcheck
	# the VM harness
	qemu-system-x86 busybox-static
	# rdma-core 44 and its tools, for the provider and the integration tests
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev perftest
	rdmacm-utils python3-pyverbs iproute2 strace
	# the wire's conformance: captures, tshark's RoCE dissector, Scapy's
	# ICRC (netns.sh)
	tshark python3-scapy
	# the persistent link: systemd-analyze (lint), and systemd and udev
	# to boot a guest with (systemd.sh)
	systemd udev
	# the Debian packages (make deb) and their install test (deb.sh)
	debhelper dh-dkms dkms
	# make bench's plots
	gnuplot-nox
	# the kernel ULPs' suite (ulp.sh): NVMe-oF with fio's verify, NFS
	# over RDMA, iSER (LIO and open-iscsi; targetcli needs a D-Bus daemon),
	# SMB Direct; run in guests only
	nvme-cli fio nfs-kernel-server targetcli-fb dbus-daemon open-iscsi
	ksmbd-tools cifs-utils
)
# blktests itself (gawk), and its srp group: dm-multipath's daemon,
# sg_reset, mkfs.xfs.
[ "${1:-}" != blktests ] || pkgs+=(gawk multipath-tools sg3-utils xfsprogs)
# The 6.12 source, whose SMB client and server the ULP suite builds again
# with SMB Direct (scripts/kernel/smbdirect.sh).
[ "${1:-}" != smbdirect ] || pkgs+=(linux-source-6.12)

# Debian 12's other LTS kernel line: the newest 6.12 headers the archive
# lists (none before the package lists are there).
lts612_headers() {
	apt-cache search --names-only \
		'^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' 2>/dev/null |
		awk '{ print $1 }' | sort -V | tail -n 1
}
lts612=$(lts612_headers)
[ -z "$lts612" ] || pkgs+=("$lts612")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0

[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run as root"
say "setup: installing ${missing[*]}"
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# softhca setup.sh: no service starts here\nexit 101\n' \
		>"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
# The services running here (processes whose parent is init: a daemon
# forks away from whoever started it) and the modules loaded, to show apt
# left both alone; what else the host runs meanwhile is none of ours.
host_state() {
	ps -e -o ppid=,comm= | awk '$1 == 1 { print $2 }' | sort -u
	[ ! -r /proc/modules ] || awk '{ print "module " $1 }' /proc/modules
}
before=$(host_state)
apt-get update -qq
if [ -z "$lts612" ]; then
	lts612=$(lts612_headers)
	[ -z "$lts612" ] || missing+=("$lts612")
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"${missing[@]}" >/dev/null
after=$(host_state)
new=$(comm -13 <(echo "$before") <(echo "$after"))
[ -z "$new" ] || die "installing started or loaded on this host: ${new//$'\n'/ }"
