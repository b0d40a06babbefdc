#!/bin/bash
# wire-guest.sh ROLE MAC BUILD PROVIDER
#
# Guest side of scripts/wire.sh: one of two guests, ROLE a or b, joined by
# an Ethernet wire (run.sh --wire; this guest's NIC has address MAC).  a is
# 10.73.0.1/24 and runs the servers, b is 10.73.0.2/24 and runs the
# clients.  BUILD is this kernel's build directory, PROVIDER softhca's
# rdma-core provider.
#
# The two step through the cases in lock step by files in
# $SOFTHCA_RENDEZVOUS, a directory both guests reach straight through 9p
# (see wire.sh).  For each case, each side sets up its device on the NIC
# and says whether that worked ("ready", the case's barrier); a starts
# the server and says when it listens; b then runs the client; both say
# how their side ended ("done"), tear their device down and say whether
# that worked ("down").  Every wait for the peer is bounded
# ($sync_timeout); a peer that never answers fails the case, and every
# later one at once.  a reports each case; each side reports its own end
# of the wire coming up.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=SCRIPTDIR/wire-cases.sh
. "$(dirname "$0")/wire-cases.sh"

role=$1
mac=$2
build=$3
export RDMAV_DRIVERS=$4
ko=$build/drivers/softhca/softhca.ko
rv=${SOFTHCA_RENDEZVOUS:?SOFTHCA_RENDEZVOUS names the rendezvous directory}
# This guest's own directory: its results, its figures, its case logs.
mydir=$(dirname "${SOFTHCA_RESULTS:-$rv/$role/results}")
server_addr=10.73.0.1 client_addr=10.73.0.2
case $role in
a) me=10.73.0.1 peer=10.73.0.2 other=b ;;
b) me=10.73.0.2 peer=10.73.0.1 other=a ;;
*) die "usage: wire-guest.sh a|b MAC BUILD PROVIDER" ;;
esac

# The device pairs, A/B: the device a serves from and the one b connects
# from.  A mixed pair and its reverse are each a line, so that both
# directions are tested.  softhca against itself is tested in one guest
# (netns-guest.sh), over a veth between two namespaces, but for the
# kernel's ULPs, which listen in the initial namespace only: here it
# runs those (ulp_only), and is measured (SOFTHCA_WIRE_BENCH).  It runs
# here too the cases in $self_tests, whose timing the veth does not
# have: QEMU's wire brings an ACK and the peer's next SEND to a guest
# together, which is how send_lat_event found softhca completing them
# out of order (roce_rx.c).
pairs=(
	softhca/softhca
	rxe/rxe
	softhca/rxe
	rxe/softhca
)
ulp_only=softhca/softhca
self_tests=" send_lat_event "

# Cases that fail for a reason that is not softhca's: PAIR NAME REASON.
# They are reported as skipped, with the reason; the test stays for the
# other pairs.  rdma_rxe sends a lost tail of its window again only when
# its whole local ACK timeout passed, 2.1 s as rdma_cm sets it on RoCE
# (softhca's ACK timer adapts to the round trip: docs/design.md), and a
# ULP's traffic, many small exchanges, loses a tail at nearly every
# loss: at 2% loss NVMe-oF took about 5.5 minutes with rdma_rxe as its
# host, and did not finish in 5 with rdma_rxe on both ends, where
# softhca on both ends took 27 s (2026-12-05).
rxe_lossy="rdma_rxe waits its whole local ACK timeout (2.1 s) for each lost tail: too slow for the case's 5 minutes; softhca/softhca runs it"
known=(
	"softhca/rxe nvme_loss $rxe_lossy"
	"softhca/rxe nfs_loss $rxe_lossy"
	"rxe/softhca nvme_loss $rxe_lossy"
	"rxe/softhca nfs_loss $rxe_lossy"
	"softhca/rxe nvme_remove_loss $rxe_lossy"
	"rxe/softhca nvme_remove_loss $rxe_lossy"
	"rxe/rxe mckey rdma_rxe gets few of mckey's sends out before their AH goes (mckey_partial), and its server waits for all; softhca/rxe takes what it sends"
)
# SMC-R on 6.1 finds the RDMA device of the route's netdev through the
# device's get_netdev op (net/smc/smc_pnet.c, smc_ib.c), which rdma_rxe
# on 6.1 does not have: with no PNET ID configured, SMC on the rdma_rxe
# guest finds no device, declines (SMC_CLC_DECL_NOSMCDEV, 0x03030000, or
# NOSMCRDEV, 0x03030002) and both ends fall back to TCP.
if [[ $(uname -r) == 6.1.* ]]; then
	rxe_smc="SMC-R on 6.1 needs the device's get_netdev op, which rdma_rxe lacks there: SMC falls back to TCP"
	known+=("softhca/rxe smc $rxe_smc" "rxe/softhca smc $rxe_smc"
		"rxe/rxe smc $rxe_smc")
fi

# SOFTHCA_WIRE_ONLY, an extended regular expression, runs only the cases
# whose name (A-B/NAME, e.g. softhca-rxe/rc_loss) it matches; the others
# are not reported.
only=${SOFTHCA_WIRE_ONLY:-}

# The tests, each run on every pair (wire-cases.sh); NETEM goes on the NIC
# on both sides.
tests=("${wire_tests[@]}" "${wire_ulp_tests[@]}")
ulp_names=" $(printf '%s\n' "${wire_ulp_tests[@]}" | awk '{ print $1 }' |
	tr '\n' ' ')"

# SOFTHCA_WIRE_BRIEF=1 (wire.sh --brief, for time): only the brief tests
# run (wire-cases.sh); the others are reported as skipped.  rdma_rxe
# against itself, the baseline that shows the harness and its wire work,
# always runs these only, and in a brief run not their ULPs: on 6.1 its
# own NVMe-oF stalls until the host's I/O timeout and error recovery, and
# took from 19 s to 184 s a run.
brief_tests=$wire_brief_tests
brief=${SOFTHCA_WIRE_BRIEF:-}

# SOFTHCA_WIRE_BENCH=N (wire.sh --bench): figures rather than tests, N
# repetitions.  The wire's own rate (wire_cap), then softhca against
# itself, then rdma_rxe against itself, over the same wire in the same
# run, N times in turn: bandwidth at 64 KiB, latency at 2 bytes.  b
# writes each of its client's figures to bench.raw in its directory,
# "DEV FIGURE VALUE", a line a repetition; a reports each case as for
# the tests, NAME.R for repetition R.
bench=${SOFTHCA_WIRE_BENCH:-}
if [ -n "$bench" ]; then
	pairs=(softhca/softhca rxe/rxe)
	tests=(
		"write_bw_65536 write_bw"
		"read_bw_65536 read_bw"
		"send_lat_2 send_lat"
		"write_lat_2 write_lat"
	)
fi

# The longest a side waits for its peer at a rendezvous (the peer may be
# running a client meanwhile; a client runs up to $run_timeout, a ULP's
# is waited for as its server).
sync_timeout=150
peer_gone=
run_tag=

# post KEY VALUE: tell the peer VALUE under KEY.  Written aside and
# renamed, so that the peer never reads half of it.
post() {
	printf '%s\n' "$2" >"$rv/.$1.$role" && mv "$rv/.$1.$role" "$rv/$1.$role"
}

# await KEY: the peer's value for KEY, in $reply, waiting up to
# $sync_timeout s.  A peer that does not answer is gone: this and every
# later await fail at once.
await() {
	local f=$rv/$1.$other
	reply=
	[ -z "$peer_gone" ] || return 1
	if ! wait_for "$sync_timeout" test -f "$f"; then
		peer_gone="no word from $other at $1 in $sync_timeout s"
		echo "$peer_gone"
		return 1
	fi
	reply=$(<"$f")
}

# This guest's figures, for wire.sh to show.
figures() {
	cat >>"$mydir/wire.log"
}

pings() {
	busybox ping -c 1 -W 1 "$peer" >/dev/null 2>&1
}

# The NIC, addressed, up, and the peer answering ping (the host has no
# ping of its own; busybox-static is there for the harness's initrd).
wire_up() {
	modprobe virtio_net && wait_for 10 nic_by_mac || return 1
	echo "wire: $nic has $mac"
	ip addr add "$me/24" dev "$nic" && ip link set "$nic" up &&
		wait_for 90 pings
}

dev_name() {
	echo "${1}0"
}

# rdma_rxe binds UDP 4791 when it loads, softhca when its first link is
# added: the two are never loaded together.
unload() {
	! grep -q "^$1 " /proc/modules || rmmod "$1"
}

# unload_soon MODULE: a module may stay busy a moment after its last
# user exited; only the last attempt's complaint is shown.
unload_soon() {
	wait_for 10 unload "$1" 2>/dev/null || unload "$1"
}

# dev_up TYPE NETEM NAME: TYPE's device on the NIC, its RoCE v2 GID in
# place, and NETEM, if any, on the NIC, as case NAME wants it.
dev_up() {
	local dev
	dev=$(dev_name "$1")
	case $1 in
	rxe)
		unload softhca && rxe_modprobe ;;
	softhca)
		unload rdma_rxe &&
			modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel &&
			{ grep -q '^softhca ' /proc/modules ||
				insmod "$ko" dyndbg=+pt; } ;;
	*) false ;;
	esac || return 1
	rdma link add "$dev" type "$1" netdev "$nic" &&
		wait_for 30 roce_v2_gid "$dev" 1 "$me" || return 1
	[ -z "$2" ] || netem_add "$nic" "$2" "$(spares_acks "$3" && echo 1)"
}

# evidence NAME TYPE NETEM: what the device and netem counted (the
# device's non-zero hardware counters; netem's drops), into the figures.
evidence() {
	local counters
	counters=$(hw_counters "$(dev_name "$2")")
	echo "$1 $role counters:${counters:- none}" | figures
	[ -z "$3" ] ||
		tc -s qdisc show dev "$nic" | awk -v t="$1 $role netem" \
			'/^qdisc netem/ { n = 1 } n && /Sent/ { print t ":" $0; exit }' |
			figures
}

# dev_down TYPE NETEM: the NIC as it was, TYPE's module unloaded.
dev_down() {
	local rc=0
	[ -z "$2" ] || tc qdisc del dev "$nic" root || rc=1
	rdma link delete "$(dev_name "$1")" || rc=1
	case $1 in
	rxe) unload_soon rdma_rxe || rc=1 ;;
	softhca) unload_soon softhca || rc=1 ;;
	esac
	return $rc
}

# qp_state: the QPs of the devices here, with the driver's attributes
# (softhca: PSNs, the requester's verdict, the responder's ePSN), for the
# log of a run about to be ended: what each QP was waiting for.
qp_state() {
	echo "QPs before the run was ended:"
	rdma -dd resource show qp 2>&1
}

# What reap() says of a server it ends for outliving its client.
lingered="server still running 20 s after the client ended"

# reap PID LOG START [KEY]: wait for this side's server or client, PID,
# started at START (in $SECONDS).  Five seconds before its timeout kills
# it, its QPs' state goes to LOG.  Given KEY (a server's round), it is
# also ended, its QPs' state logged, once the other side has been done
# with the round for 20 s: a client that failed leaves the server waiting.
reap() {
	local end='' stall=$(($3 + run_for - 5))
	while kill -0 "$1" 2>/dev/null; do
		if [ -n "${4:-}" ] && [ -z "$end" ] &&
			[ -f "$rv/$4.done.$other" ]; then
			end=$((SECONDS + 20))
		elif [ -n "$end" ] && [ $SECONDS -ge "$end" ]; then
			qp_state >>"$2"
			echo "$lingered" >>"$2"
			kill "$1"
			break
		elif [ -n "$stall" ] && [ $SECONDS -ge "$stall" ]; then
			qp_state >>"$2"
			stall=
		fi
		sleep 0.2
	done
	wait "$1"
}

# serve KEY LOG: a's side of a round.  Start the server, tell b when it
# listens, and let it run (reap).
serve() {
	local pid start=$SECONDS
	timeout "$run_for" stdbuf -oL -eL "${cmd[@]}" >"$2" 2>&1 </dev/null &
	pid=$!
	if ! wait_for 30 listening; then
		echo "server not listening after 30 s" >>"$2"
		post "$1.listening" 1
		kill "$pid" 2>/dev/null
		wait "$pid"
		return 1
	fi
	post "$1.listening" 0
	reap "$pid" "$2" "$start" "$1"
}

# connect KEY LOG: b's side of a round: once a listens, the client (reap).
connect() {
	local pid start
	if ! await "$1.listening"; then
		echo "$peer_gone" >"$2"
		return 1
	elif [ "$reply" != 0 ]; then
		echo "the server did not start" >"$2"
		return 1
	fi
	start=$SECONDS
	timeout "$run_for" stdbuf -oL -eL "${cmd[@]}" >"$2" 2>&1 </dev/null &
	pid=$!
	reap "$pid" "$2" "$start"
}

# rping_end KEY LOG: rping's exit status does not tell all; $rc, the
# run's status, as it should be.  A client whose connection went away
# mid-way says what it waited for, and exits 0 all the same: a failure.
# A client that exits 0 otherwise has compared every ping (-V), and the
# server then waits for its disconnect request; but the client destroys
# its CM ID at once, which ends the CM's retries of the request, so that
# under loss the server may wait for ever: not a failure.
rping_end() {
	local status
	if [ "$role" = b ] && grep -q '^wait for' "$2"; then
		echo "the client stopped before its last ping" >>"$2"
		[ "$rc" != 0 ] || rc=1
	elif [ "$role" = a ] && [ "$(tail -n 1 "$2")" = "$lingered" ] &&
		read -r status _ <"$rv/$1.done.$other" && [ "$status" = 0 ]; then
		echo "the client compared every ping; its disconnect request was lost" >>"$2"
		rc=0
	fi
}

# round KEY TEST DEV LOG: the one run of TEST's server (a) or client
# (b), line-buffered so that a run killed by its timeout leaves its log;
# its status in $mine.  A case is never run again: one that fails fails.
round() {
	local rc
	mine=1
	if [ "$role" = a ]; then
		side_cmd "$2" "$3" server || return 1
		serve "$1" "$4"
	else
		side_cmd "$2" "$3" client || return 1
		connect "$1" "$4"
	fi
	side_verdict "$2" "$4" $?
	rc=$?
	[[ $2 != rping* ]] || rping_end "$1" "$4"
	[ "$rc" = 0 ] || kernel_tail >>"$4"
	mine=$rc
	echo "$role: ${cmd[*]}: exit $rc"
}

# mckey_rxe KEY DEV LOG: after a round of mckey from rdma_rxe (b) to
# softhca (a): b tells a what its device sent; a's server, which waited
# for every message, may have been ended for outliving the client, and if
# so is judged by its device's counters (mckey_partial), which this
# device's module, loaded for the case, began at 0.
mckey_rxe() {
	if [ "$role" = b ]; then
		post "$1.sent" "$(counter "$2" sent_pkts || echo 0)"
		return
	fi
	await "$1.sent" || return
	[ "$reply" -lt "$mckey_sends" ] && grep -qx "$lingered" "$3" || return
	mckey_partial "$reply" "$(counter "$2" rx_packets)" "$(dropped "$2")" >>"$3"
	mine=$?
}

# The figures of a run: the pingpongs' rates, and perftest's result line
# (the client's line after the column headings).
record() {
	local name=$1 log=$2
	awk -v t="$name $role" '/iters in|bytes in/ { print t ": " $0 }' \
		"$log" | figures
	[ "$role" = b ] || return 0
	perftest_line "$log" | awk -v t="$name" '{ print t ": " $0 }' | figures
}

# bench_record DEV NAME LOG: the figures of the client's perftest line
# in LOG, into bench.raw as "DEV FIGURE VALUE" (the lines bench.sh's
# guests write): a bandwidth's average (column 4), a latency's
# typical value and 99th percentile (columns 5 and 8).
bench_record() {
	local line
	line=$(perftest_line "$3")
	case $2 in
	*_lat_*) awk -v t="$1" -v f="$2" \
		'{ print t, f "_typ", $5; print t, f "_p99", $8 }' <<<"$line" ;;
	*) awk -v t="$1" -v f="$2" '{ print t, f, $4 }' <<<"$line" ;;
	esac | awk '$3 ~ /^[0-9]+(\.[0-9]+)?$/' >>"$mydir/bench.raw"
}

# run_case KEY PAIR NAME TEST [NETEM]: one case, both sides; $run_tag
# (a repetition's ".R") ends its result's name.
run_case() {
	local key=$1 pair=$2 name=$3 test=$4 netem=${5:-} type dev result
	local k up=0 down=0 peer_up peer_down mine='' theirs='' log why='' note
	local start=$SECONDS
	result=${pair/\//-}/$name$run_tag
	[ -z "$only" ] || [[ $result =~ $only ]] || return 0
	# softhca against itself: the ULPs and $self_tests only (see pairs).
	[ -n "$bench" ] || [ "$pair" != "$ulp_only" ] ||
		[[ $ulp_names$self_tests == *" $name "* ]] || return 0
	if [ -n "$brief" ] && [[ $brief_tests != *" $name "* ]]; then
		[ "$role" = b ] ||
			skip "wire/$result" "not in the brief run; wire.sh without --brief runs it"
		return 0
	fi
	if [ -z "$bench" ] && [ "$pair" = rxe/rxe ] &&
		[[ $brief_tests != *" $name "* ]]; then
		[ "$role" = b ] ||
			skip "wire/$result" "rdma_rxe against itself, the harness's baseline, runs the brief cases"
		return 0
	fi
	if [ -n "$brief" ] && [ "$pair" = rxe/rxe ] &&
		[[ $ulp_names == *" $name "* ]]; then
		[ "$role" = b ] ||
			skip "wire/$result" "rdma_rxe against itself runs the ULPs without --brief (its NVMe-oF on 6.1 waits out I/O timeouts)"
		return 0
	fi
	if [[ $pair == *rxe* ]] && rxe_unordered "$name"; then
		[ "$role" = b ] || skip "wire/$result" "$rxe_unordered_why"
		return
	fi
	for k in "${known[@]}"; do
		# shellcheck disable=SC2086 # PAIR NAME REASON
		set -- $k
		if [ "$1" = "$pair" ] && [ "$2" = "$name" ]; then
			[ "$role" = b ] || skip "wire/$result" "${*:3}"
			return
		fi
	done
	if [ -n "$peer_gone" ]; then
		[ "$role" = b ] || fail "wire/$result" "$peer_gone"
		return
	fi
	if [ "$role" = a ]; then type=${pair%/*}; else type=${pair#*/}; fi
	dev=$(dev_name "$type")
	log=$mydir/cases/$result.$role.log
	mkdir -p "${log%/*}"
	echo "== $result${netem:+ (netem $netem)}: $role is $dev"
	dev_up "$type" "$netem" "$name" || up=1
	post "$key.ready" "$up"
	await "$key.ready"
	peer_up=${reply:-gone}
	if [ "$up" = 0 ] && [ "$peer_up" = 0 ]; then
		round "$key.run" "$test" "$dev" "$log"
		[ "$test $pair" != "mckey softhca/rxe" ] || mckey_rxe "$key" "$dev" "$log"
		post "$key.run.done" "$mine"
		await "$key.run.done"
		theirs=${reply:-gone}
		record "$result" "$log"
		[ -z "$bench" ] || [ "$role" = a ] ||
			[ "$mine $theirs" != "0 0" ] ||
			bench_record "$dev" "$name" "$log"
		sed "s/^/$role: /" "$log"
	fi
	evidence "$result" "$type" "$netem"
	dev_down "$type" "$netem" || down=1
	post "$key.down" "$down"
	await "$key.down"
	peer_down=${reply:-gone}
	[ "$role" = a ] || return 0
	if [ "$test $pair $mine" = "mckey softhca/rxe 2" ]; then
		skip "wire/$result" "$(tail -n 1 "$log")"
		return
	fi
	if [ "$up $peer_up" != "0 0" ]; then
		why="device setup: a $up, b $peer_up"
	elif [ "$mine $theirs" != "0 0" ]; then
		note=$(report_lost "$log" \
			"${mydir%/*}/$other/cases/$result.$other.log") ||
			why="server exit $mine, client exit $theirs"
		[ -z "$note" ] ||
			echo "$result: $note (server exit $mine, client exit $theirs)" |
			figures
	fi
	[ "$down $peer_down" = "0 0" ] ||
		why="${why:+$why; }teardown: a $down, b $peer_down"
	echo "$result: $((SECONDS - start)) s" | figures
	if [ -z "$why" ]; then
		pass "wire/$result"
	else
		fail "wire/$result" "$why"
	fi
}

# pg FILE CMD...: pktgen commands, each written to FILE (/proc/net/pktgen).
pg() {
	local f=$1 c
	shift
	for c in "$@"; do
		echo "$c" >"$f" || return 1
	done
}

# wire_cap: the wire's own rate, the cap both devices' figures meet.  b's
# pktgen sends frames of a RoCEv2 packet's size at a 1 KiB path MTU
# (1,082 bytes: Ethernet, IPv4, UDP, BTH, 1,024 bytes of payload, ICRC)
# as fast as its NIC takes them, to a's MAC and an address a does not
# have, which a's stack drops without an answer; a counts the frames its
# NIC received over 3 s in the middle of that.  b records the payload
# they carry, in MiB/s, as the figure wire_cap_1024 of the device
# "wire", the limit of bench.sh's wire table.
wire_cap() {
	local key=cap$run_tag stats p0 p1 t0 t1 rate pid
	stats=/sys/class/net/$nic/statistics/rx_packets
	if [ "$role" = a ]; then
		post "$key.mac" "$(cat "/sys/class/net/$nic/address")"
		await "$key.sending" || return
		[ "$reply" = 0 ] || return 0
		sleep 1
		p0=$(<"$stats") t0=$(date +%s%N)
		sleep 3
		p1=$(<"$stats") t1=$(date +%s%N)
		post "$key.rate" "$(awk -v n=$((p1 - p0)) -v t=$((t1 - t0)) \
			'BEGIN { printf "%.2f", n * 1024 / (t / 1e9) / 1048576 }')"
		await "$key.done"
		return
	fi
	await "$key.mac" || return
	if ! modprobe pktgen ||
		! pg /proc/net/pktgen/kpktgend_0 rem_device_all \
			"add_device $nic" ||
		! pg "/proc/net/pktgen/$nic" "count 0" "pkt_size 1082" \
			"delay 0" "dst 10.73.0.99" "dst_mac $reply" \
			"udp_dst_min 4791" "udp_dst_max 4791"; then
		echo "wire_cap$run_tag: no pktgen" | figures
		post "$key.sending" 1
		return
	fi
	echo start >/proc/net/pktgen/pgctrl &
	pid=$!
	post "$key.sending" 0
	await "$key.rate"
	rate=$reply
	echo stop >/proc/net/pktgen/pgctrl
	wait "$pid"
	post "$key.done" 0
	echo "wire_cap$run_tag: $rate MiB/s" | figures
	[[ ! $rate =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
		echo "wire wire_cap_1024 $rate" >>"$mydir/bench.raw"
}

main() {
	local n=0 r reps=${bench:-1} pair t
	modprobe ib_uverbs
	modprobe rdma_ucm	# rping's rdma_cm, from user space
	mkdir -p "$mydir"
	if wire_up; then
		pass "wire/wire-up-$role"
		post hello "$nic"
		await hello || true
	else
		fail "wire/wire-up-$role" "no answer to ping from $peer"
		peer_gone="the wire is down"
	fi
	for ((r = 1; r <= reps; r++)); do
		[ "$reps" = 1 ] || run_tag=.$r
		[ -z "$bench" ] || wire_cap
		for pair in "${pairs[@]}"; do
			for t in "${tests[@]}"; do
				n=$((n + 1))
				# shellcheck disable=SC2086 # NAME TEST [NETEM...]
				set -- $t
				run_case "c$n" "$pair" "$1" "$2" "${*:3}"
			done
		done
	done
}

main
