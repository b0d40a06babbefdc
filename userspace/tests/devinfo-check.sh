#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Check, with the stock ibverbs-utils, that a softhca device is usable
# through the provider: ibv_devices lists it, and ibv_devinfo -v shows a
# RoCE device (transport InfiniBand, link layer Ethernet) with a port in
# PORT_ACTIVE that carries an IPv4-mapped RoCE v2 GID (::ffff:a.b.c.d).
# Meant for the test VM where the softhca module is loaded and linked to a
# netdev with an IPv4 address.
#
# Usage: devinfo-check.sh [-d DEVICE] [-l PROVIDER]
#   -d DEVICE    ib device name (default softhca0)
#   -l PROVIDER  provider without the "-rdmav34.so" suffix, absolute path
#                (default: $RDMAV_DRIVERS if set, else the build output
#                next to this checkout if present, else the installed one)
# Exit status: 0 if every check passed, 1 otherwise.

set -u

dev=softhca0
lib=${RDMAV_DRIVERS:-}
suffix=-rdmav34.so

while getopts d:l: opt; do
	case $opt in
	d) dev=$OPTARG ;;
	l) lib=$OPTARG ;;
	*) echo "usage: $0 [-d DEVICE] [-l /abs/path/libsofthca]" >&2; exit 1 ;;
	esac
done

fail() {
	echo "FAIL: $*"
	exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$lib" ] && [ -f "$here/../../build/userspace/libsofthca$suffix" ]; then
	lib=$(cd "$here/../../build/userspace" && pwd)/libsofthca
fi
if [ -n "$lib" ]; then
	case $lib in
	/*) ;;
	*) fail "provider path must be absolute (libibverbs ignores relative ones): $lib" ;;
	esac
	[ -f "$lib$suffix" ] || fail "$lib$suffix does not exist"
	RDMAV_DRIVERS=$lib
	export RDMAV_DRIVERS
	echo "info: provider $lib$suffix (RDMAV_DRIVERS)"
else
	unset RDMAV_DRIVERS
	echo "info: using the installed provider (/etc/libibverbs.d/softhca.driver)"
fi
# Let libibverbs say why a device got no provider.
IBV_SHOW_WARNINGS=1
export IBV_SHOW_WARNINGS

for tool in ibv_devices ibv_devinfo awk; do
	command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (apt install ibverbs-utils)"
done

# libibverbs lists only devices a provider claimed, so being listed proves
# the provider matched the kernel's driver id and uverbs ABI version.
# ibv_devices prints a header, then "    <name>\t<node guid>" per device.
out=$(ibv_devices 2>&1) || fail "ibv_devices failed:
$out"
echo "$out" | awk -v d="$dev" '$1 == d { found = 1 } END { exit !found }' ||
	fail "$dev not listed by ibv_devices (kernel module loaded? rdma link added? provider found?):
$out"
echo "ok:   ibv_devices lists $dev"

out=$(ibv_devinfo -v -d "$dev" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "ibv_devinfo -v -d $dev exited $rc:
$out"
echo "ok:   ibv_devinfo -v -d $dev opened and queried the device"

# ibv_devinfo layout (rdma-core 44 libibverbs/examples/devinfo.c): one
# "hca_id:\t<name>" line, "\ttransport:\t...<name> (<n>)", then per port
# "\t\tport:\t<n>" followed by tab-indented "state:", "link_layer:" and, with
# -v, "GID[  i]:\t\t<gid>[, RoCE v2]" lines.  A RoCE v2 GID is printed with
# inet_ntop(), so an IPv4-based one reads ::ffff:a.b.c.d; RoCE v1 GIDs are
# printed as eight hex groups instead.
report=$(echo "$out" | awk -v d="$dev" '
	function dotted_quad(s,    n, i, a) {
		n = split(s, a, ".")
		if (n != 4)
			return 0
		for (i = 1; i <= 4; i++)
			if (a[i] !~ /^[0-9]+$/ || a[i] + 0 > 255)
				return 0
		return 1
	}
	function end_port() {
		if (port == "")
			return
		if (state == "PORT_ACTIVE" && ll == "Ethernet") {
			good_port = port
			if (gid != "")
				good_gid = gid
		}
		summary = summary sprintf(" port %s: %s/%s%s", port, state,
					  ll, gid != "" ? " gid " gid : "")
	}
	$1 == "hca_id:" { hca = $2 }
	$1 == "transport:" { transport = $2 }
	$1 == "port:" { end_port(); port = $2; state = ll = gid = "" }
	port != "" && $1 == "state:" { state = $2 }
	port != "" && $1 == "link_layer:" { ll = $2 }
	port != "" && /GID\[/ && gid == "" {
		line = $0
		if (match(line, /::ffff:[0-9.]+/)) {
			cand = substr(line, RSTART, RLENGTH)
			if (dotted_quad(substr(cand, 8)))
				gid = cand
		} else if (line ~ /0000:0000:0000:0000:0000:ffff:/) {
			v1 = 1
		}
	}
	END {
		end_port()
		printf "hca=%s\ntransport=%s\nport=%s\ngid=%s\nv1=%d\nsummary=%s\n",
		       hca, transport, good_port, good_gid, v1, summary
	}')

get() { echo "$report" | sed -n "s/^$1=//p"; }

[ "$(get hca)" = "$dev" ] || fail "ibv_devinfo printed hca_id '$(get hca)', expected $dev:
$out"

case $(get transport) in
InfiniBand) echo "ok:   transport InfiniBand (RoCE: IB transport over Ethernet)" ;;
iWARP) fail "transport iWARP: the kernel registered node type RNIC; RoCEv2 needs RDMA_NODE_IB_CA" ;;
*) fail "unexpected transport '$(get transport)'" ;;
esac

port=$(get port)
[ -n "$port" ] || fail "no port that is PORT_ACTIVE with link_layer Ethernet:$(get summary)
(netdev up? carrier on?)"
echo "ok:   port $port is PORT_ACTIVE, link_layer Ethernet"

gid=$(get gid)
if [ -z "$gid" ]; then
	if [ "$(get v1)" = 1 ]; then
		fail "port $port has only RoCE v1 IPv4-mapped GIDs, no RoCE v2 (::ffff:a.b.c.d) one:$(get summary)"
	fi
	fail "port $port has no IPv4-mapped GID (::ffff:a.b.c.d); does the netdev have an IPv4 address?$(get summary)"
fi
echo "ok:   port $port GID $gid"

echo "devinfo-check: PASSED"
exit 0
