# shellcheck shell=bash
# Shared by the softhca scripts: where things live and how to report.
# Sourced, never run.

# shellcheck disable=SC2034 # for the scripts that source this
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
cache=${SOFTHCA_CACHE:-${XDG_CACHE_HOME:-$home/.cache}/softhca}
mkdir -p "$cache"

say() { printf '%s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# Run "$@" holding an exclusive lock on $cache/$1.lock, so that two
# builds of the same cached artefact never race.
with_lock() {
	local name=$1
	shift
	(
		flock 9
		"$@"
	) 9>"$cache/$name.lock"
}

# Test results.  Every suite reports each test with pass/fail/skip; the
# lines go to stdout and, when SOFTHCA_RESULTS names a file, are appended to
# it so that scripts/check.sh can add them up.  The same file works inside
# a guest: the harness mounts its share at the same path there.
report() {
	local status=$1 name=$2
	shift 2
	printf '%-4s %s%s\n' "$status" "$name" "${*:+ ($*)}"
	[ -z "${SOFTHCA_RESULTS:-}" ] || echo "$status $name" >>"$SOFTHCA_RESULTS"
}
pass() { report PASS "$@"; }
fail() { report FAIL "$@"; }
skip() { report SKIP "$@"; }

# verdict NAME WHY: one test that passes when WHY, what went wrong, is
# empty, and fails saying WHY otherwise.
verdict() {
	if [ -z "$2" ]; then pass "$1"; else fail "$1" "$2"; fi
}

# check NAME CMD...: one test that passes when CMD exits 0.
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "exit $?"; fi
}

# Replay the results a guest wrote into its share, counting them here.
replay_results() {
	local status name
	[ -f "$1" ] || return 0
	# Replaying a file into itself would never end.
	! [ "$1" -ef "${SOFTHCA_RESULTS:-/dev/null}" ] || return 0
	while read -r status name; do
		report "$status" "$name"
	done <"$1"
}

# wait_for SECONDS CMD...: poll until CMD succeeds.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

# roce_v2_gid DEV INDEX ADDR [PREFIX...]: DEV's GID INDEX (port 1) is
# IPv4 address ADDR, mapped, as a RoCE v2 GID, as sysfs shows it (PREFIX
# runs grep: ip netns exec NS).
roce_v2_gid() {
	local port=/sys/class/infiniband/$1/ports/1 index=$2 o1 o2 o3 o4
	IFS=. read -r o1 o2 o3 o4 <<<"$3"
	shift 3
	"$@" grep -qx "$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
		"$o1" "$o2" "$o3" "$o4")" "$port/gids/$index" 2>/dev/null &&
		"$@" grep -qx "RoCE v2" "$port/gid_attrs/types/$index"
}

# report_lost LOG...: perftest ran its traffic to the end on every side
# (none stopped at an error: a run loop that failed, a completion in
# error, a post refused), and then a side could not produce its report;
# says so.  perftest times its run with the CPU's cycle counter,
# calibrated against gettimeofday() after the traffic: 200 busy waits of
# 0.1 to 2 ms each, whose fit must reach r^2 0.9.  Under TCG, a vCPU
# that the host descheduled in the middle spoils the fit, and perftest
# prints "Can't produce a report" instead of its figures and exits 1,
# and its peer fails the report's exchange.  It does so only after its
# run loop returned, every WR completed with success: what a test of
# the device asks of perftest passed, and the run passes without
# figures.  Not a rerun: the calibration is not part of the verdict.
# The latency tools print the same failure as figures of "inf", and exit
# 0 (side_verdict, wire-cases.sh, takes that for a failure first).
report_lost() {
	grep -Eqs -e "Can't produce a report" -e '^ *[0-9]+ +[0-9]+ +inf ' "$@" &&
		! grep -qs -e 'Failed to complete run_iter' \
			-e 'Completion with error' -e "Couldn't post" "$@" &&
		echo "perftest's traffic completed; its report did not (its clock calibration failed on a starved vCPU): no figures"
}

# rxe_modprobe: load rdma_rxe with the faster CRC-32 of a guest under TCG.
# rdma_rxe computes its ICRC with the crypto API's crc32, and its first
# use loads crc32-pclmul, which TCG emulates in C: in a 6.1 guest that
# cost rdma_rxe 40% of its 64 KiB WRITE rate over the veth against
# crc32-generic (docs/performance.md).  On hardware crc32-pclmul is the
# fast one; here crc32-generic is, and softhca chooses it for itself
# (icrc.c), so rdma_rxe gets it too.  crc32-pclmul stays if a loaded
# softhca holds it (both on one guest: no figures are taken then).
rxe_modprobe() {
	modprobe -r crc32_pclmul 2>/dev/null
	modprobe crc32_generic && modprobe rdma_rxe
}

# ibloop_field LINE KEY: the value of KEY= in a line of key=value pairs
# (an ibloop result, drivers/ibloop).
ibloop_field() {
	tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"
}

# median RAW DEV FIGURE: of the repetitions in the file RAW, lines
# "DEV FIGURE VALUE" (scripts/bench.sh, scripts/bench-plot.sh).
median() {
	awk -v d="$2" -v f="$3" '$1 == d && $2 == f { print $3 }' "$1" \
		2>/dev/null | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# bench_gated FIGURE: the performance gate (scripts/bench-floors) names
# FIGURE, a Debian kernel's (or FIGURE_typ or FIGURE_p99, a latency's two
# columns): the figures a smoke run of make bench measures.
bench_gated() {
	sed 's/#.*//' "$top/scripts/bench-floors" | awk -v f="$1" \
		'$1 == f || $1 == f "_typ" || $1 == f "_p99" { g = 1 }
		END { exit !g }'
}

# Two UDP ports free on 127.0.0.1, below the ephemeral range, so that no
# socket the kernel binds on its own takes one before QEMU does: a NIC's
# two ends (run.sh --wire).
free_ports() {
	local used p ports=()
	used=$(ss -Huan | awk '{ n = split($4, a, ":"); print a[n] }')
	while [ ${#ports[@]} -lt 2 ]; do
		p=$((20000 + RANDOM % 10000))
		grep -qx "$p" <<<"$used" || [ "${ports[0]:-}" = "$p" ] ||
			ports+=("$p")
	done
	echo "${ports[@]}"
}

# The release a kernel build tree was configured for.
kdir_release() {
	sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' \
		"$1/include/generated/utsrelease.h"
}

# default_kdir: the kernel `make` builds for when given no KDIR (Debian's
# 6.1), whatever KDIR this script's make had on its command line: make
# hands that on to its commands, in the environment and in MAKEFLAGS.
default_kdir() {
	env -u KDIR -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS \
		make -s -C "$top" print-kdir
}

# suite_kernel NAME [KDIR]: for a suite that boots Debian's kernel of the
# headers in KDIR (default: the kernel `make` builds for, Debian's 6.1):
# sets $kdir, $rel, $kernel (debian-kernel.sh's directory) and $prefix,
# the suite's result prefix (NAME for the default kernel,
# NAME-<major.minor> for another), and builds softhca for it and the
# provider.  Dies when it cannot.
suite_kernel() {
	local default
	default=$(default_kdir)
	kdir=${2:-$default}
	rel=$(kdir_release "$kdir")
	prefix=$1
	[ "$kdir" -ef "$default" ] || prefix=$1-$(cut -d. -f1-2 <<<"$rel")
	kernel=$("$top/scripts/kernel/debian-kernel.sh" "$rel") ||
		die "no kernel $rel"
	suite_build "$kdir"
}

# suite_debug_kernel PREFIX: as suite_kernel, for the debug kernel; its
# results are named PREFIX-debug/...
suite_debug_kernel() {
	kernel=$("$top/scripts/kernel/debug-kernel.sh") || die "no debug kernel"
	rel=$(cat "$kernel/release")
	prefix=$1-debug
	suite_build "$kernel/build"
}

# suite_build KDIR: the modules for the kernel of KDIR, and the provider.
suite_build() {
	make -s -C "$top" KDIR="$1" modules >/dev/null ||
		die "module build failed"
	make -s -C "$top" userspace >/dev/null || die "provider build failed"
}

# guest_verdict NAME RC DIR: the end of a one-guest suite whose guest
# wrote its results into DIR/results as NAME/...: renamed for $prefix
# (suite_kernel), replayed here, and the guest run's own verdict from the
# harness's exit RC, $prefix/kernel-log-clean-$rel.
guest_verdict() {
	[ "$prefix" = "$1" ] || sed -i "s# $1/# $prefix/#" "$3/results"
	replay_results "$3/results"
	if [ "$2" = 0 ]; then
		pass "$prefix/kernel-log-clean-$rel"
	else
		fail "$prefix/kernel-log-clean-$rel" "harness exit $2; see $3"
	fi
}

# softhca_modtree DIR: Debian's module tree for $rel and $kernel
# (suite_kernel), as symlinks under DIR/modroot, with softhca in updates/,
# and the modules $modtree_extra names (a suite's, e.g. smbdirect.sh's),
# which take precedence over Debian's of the same name there; indexed
# here (depmod over 9p under TCG takes minutes, natively a second);
# prints its path, for a guest to bind-mount over its /lib/modules/$rel
# so that modprobe and `rdma link add` find softhca.
modtree_extra=()
softhca_modtree() {
	local tree=$1/modroot/lib/modules/$rel
	mkdir -p "$(dirname "$tree")" &&
		cp -as "$kernel/root/lib/modules/$rel" "$(dirname "$tree")/" &&
		mkdir -p "$tree/updates" &&
		cp "$top/build/$rel/drivers/softhca/softhca.ko" \
			"${modtree_extra[@]}" "$tree/updates/" &&
		depmod -b "$1/modroot" "$rel" && echo "$tree"
}

# softhca_guest NAME TIMEOUT SCRIPT [ARG...]: one guest of $kernel
# (suite_kernel) running SCRIPT ARG..., softhca in its module tree
# (SOFTHCA_MODTREE), its results in $share/results; sets $share and $rc.
softhca_guest() {
	local name=$1 timeout=$2 modtree start
	shift 2
	share=$(run_dir "$name-$rel")
	modtree=$(softhca_modtree "$share") || die "cannot index modules"
	start=$SECONDS
	SOFTHCA_RESULTS=$share/results SOFTHCA_MODTREE=$modtree \
		"$top/scripts/vm/run.sh" --timeout "$timeout" \
		--share "$share" --log "$share/console.log" "$kernel" -- \
		"$@" >/dev/null
	rc=$?
	say "$name ($rel): guest run took $((SECONDS - start)) s"
}

# The headers of Debian 12's other LTS kernel line (6.12), the newest
# installed, or nothing.
kdir_lts612() {
	find /usr/src -maxdepth 1 -name 'linux-headers-6.12.*+deb12-amd64' |
		sort -V | tail -n 1
}

# A fresh directory for one run's logs and results.
run_dir() {
	mkdir -p "$cache/runs"
	mktemp -d "$cache/runs/$1.XXXXXX"
}
