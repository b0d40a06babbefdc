#!/bin/bash
# deb-guest.sh INSTALL_CMDS REMOVE_CMDS
#
# Guest side of scripts/deb.sh, in the repository's top directory, where
# `make deb` left the packages in build/deb/.  INSTALL_CMDS and
# REMOVE_CMDS are files of shell commands, the README's install and
# uninstall blocks as written but for their first `make deb`, which the
# host ran.  The guest's only netdev is a veth named eth0, the name the
# README uses.
#
# Checks that installing builds softhca with DKMS for this kernel, that
# modprobe brings in what it needs and `rdma link add` loads it, that
# ibv_* traffic runs through the installed provider (no RDMAV_DRIVERS),
# and that the uninstall leaves the kernel's module tree, DKMS's tree and
# libibverbs' directories as they were.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

install_cmds=$1
remove_cmds=$2
: "${SOFTHCA_RESULTS:?SOFTHCA_RESULTS names the results file}"
: "${SOFTHCA_SHARE:?SOFTHCA_SHARE names the share}"
rel=$(uname -r)
# What softhca needs loaded, beside itself.
deps=(ib_core ib_uverbs udp_tunnel ip6_udp_tunnel)
# Where the packages install or DKMS builds, and whatever records them.
watched=(/var/lib/dkms /etc/libibverbs.d /usr/lib/x86_64-linux-gnu/libibverbs
	/lib/systemd/system /etc/modprobe.d)
# What the kernel's module tree holds at its top (depmod's indexes) and
# beside Debian's modules, which no package here touches: their list is
# enough, a checksum of each over 9p under TCG takes minutes.
modtree=/lib/modules/$rel
dkms_key=' /var/lib/dkms/mok\.\(key\|pub\)$'

# Every file, directory and link under the watched trees and the module
# tree but DKMS's signing key (mok.key, mok.pub: DKMS makes it on its
# first build and keeps it for every module it signs, since a Secure Boot
# host's firmware trusts it once enrolled; not softhca's to remove),
# with its type and mode, and for a file outside the module tree's
# kernel/, its checksum (depmod's indexes must come back the same); the
# packages' source directories in /usr/src.
snapshot() {
	{
		find "${watched[@]}" "$modtree" -xdev \
			-path "$modtree/kernel" -prune -o -printf '%y %m %p\n'
		find "$modtree/kernel" -printf '%y %m %p %s\n'
		find /usr/src -maxdepth 1 -printf '%y %m %p\n'
	} 2>/dev/null | grep -v "$dkms_key" | while read -r type mode path; do
		if [ "$type" = f ] && [ "${path#"$modtree"/kernel/}" = "$path" ]; then
			echo "$type $mode $path $(md5sum <"$path" | cut -d' ' -f1)"
		else
			echo "$type $mode $path"
		fi
	done | sort -k3
}

# run_block NAME FILE: the commands in FILE, echoed and run one by one as
# a root shell would (apt's prompts answered yes); a test that passes when
# all of them succeed.
run_block() {
	local name=$1 line status why=
	while IFS= read -r line; do
		echo "# $line"
		# yes's own status is SIGPIPE's once the command is done.
		yes | bash -c "$line" 2>&1
		status=${PIPESTATUS[1]}
		[ "$status" = 0 ] || { why="\`$line\` failed: exit $status" && break; }
	done <"$2"
	verdict "$name" "$why"
}

loaded() {
	lsmod | awk '{ print $1 }' | grep -qx "$1"
}

# missing_deps: which of softhca's dependencies are not loaded.
missing_deps() {
	local m
	for m in "${deps[@]}"; do
		loaded "$m" || printf ' %s' "$m"
	done
}

gid_ready() {
	local gid
	gid=$(cat /sys/class/infiniband/softhca0/ports/1/gids/1 2>/dev/null)
	[ -n "$gid" ] && [ "$gid" != 0000:0000:0000:0000:0000:0000:0000:0000 ]
}

listening() {
	ss -Hltn "sport = :$1" | grep -q .
}

# ibv_rc_pingpong between two QPs of softhca0, the data checked (-c).
traffic() {
	local port=18515 pid status out=$SOFTHCA_SHARE/pingpong
	wait_for 30 gid_ready || { echo "softhca0 has no GID 1" && return 1; }
	ibv_rc_pingpong -d softhca0 -g 1 -c -n 200 -s 4096 -p $port \
		>"$out.server" 2>&1 &
	pid=$!
	wait_for 30 listening $port || { kill "$pid" && return 1; }
	ibv_rc_pingpong -d softhca0 -g 1 -c -n 200 -s 4096 -p $port \
		127.0.0.1 >"$out.client" 2>&1
	status=$?
	wait "$pid" || status=$?
	cat "$out.server" "$out.client"
	return $status
}

main() {
	local why module m
	if ! ip link add eth0 type veth peer name eth0-peer ||
		! ip link set eth0 up || ! ip link set eth0-peer up ||
		! ip addr add 192.0.2.1/24 dev eth0; then
		die "cannot set up eth0"
	fi
	# What Debian's headers package links: DKMS finds a kernel's headers
	# through it (this module tree is the harness's copy, without it).
	ln -sfn "/usr/src/linux-headers-$rel" "/lib/modules/$rel/build"
	# The host's /boot lists the host's kernels, for which DKMS would
	# build too (the newest of them); this guest has only its own.
	mount -t tmpfs boot /boot
	ip link set lo up
	for m in softhca "${deps[@]}"; do
		! loaded "$m" || die "$m is loaded before the install"
	done
	snapshot >"$SOFTHCA_SHARE/before"

	run_block deb/install-as-readme "$install_cmds"
	why=
	dkms status -m softhca -k "$rel" | grep -q ': installed' ||
		why="dkms status: $(dkms status -m softhca -k "$rel")"
	module=$(modinfo -n softhca 2>/dev/null)
	case $module in
	"/lib/modules/$rel/updates/dkms/softhca.ko"*) ;;
	*) why="${why:+$why; }modinfo finds softhca at '$module'" ;;
	esac
	[ -n "$(modinfo -F signer softhca 2>/dev/null)" ] ||
		why="${why:+$why; }softhca is not signed"
	verdict deb/dkms-built "$why"
	why=
	loaded softhca || why="rdma link add did not load softhca"
	[ -z "$(missing_deps)" ] ||
		why="${why:+$why; }not loaded with softhca:$(missing_deps)"
	verdict deb/link-add-loads-module "$why"

	why=
	# modprobe -r leaves a dependency another module holds (ib_core).
	rdma link delete softhca0 && modprobe -r softhca ib_uverbs ||
		why="cannot delete softhca0 and unload softhca and ib_uverbs"
	for m in softhca ib_uverbs; do
		! loaded "$m" || why="${why:+$why; }$m still loaded after modprobe -r"
	done
	[ -n "$why" ] || modprobe softhca || why="modprobe softhca failed"
	[ -n "$why" ] || [ -z "$(missing_deps)" ] ||
		why="not loaded by modprobe softhca:$(missing_deps)"
	verdict deb/modprobe-loads-dependencies "$why"

	why=
	[ -z "${RDMAV_DRIVERS:-}" ] || why="RDMAV_DRIVERS is set"
	[ -n "$why" ] || rdma link add softhca0 type softhca netdev eth0 ||
		why="rdma link add failed"
	[ -n "$why" ] || traffic || why="ibv_rc_pingpong failed"
	verdict deb/traffic-installed-provider "$why"

	run_block deb/purge-as-readme "$remove_cmds"
	snapshot >"$SOFTHCA_SHARE/after"
	why=$(diff "$SOFTHCA_SHARE/before" "$SOFTHCA_SHARE/after")
	verdict deb/nothing-left "${why:+left behind: $why}"
}

main
