# shellcheck shell=bash
# Sourced by integration-guest.sh: the user-space provider, proven with the
# field's own clients on softhca0 talking to itself (the rdma-core examples
# with their data checks, perftest, rdma-core's python suite) and with
# processes that attack their own rings and the driver ABI.  Uses that
# script's helpers (check, wait_for).

# The provider's test programs, built beside it (userspace/Makefile).
guest_tests=$(dirname "$RDMAV_DRIVERS")/tests

# Where the figures go for scripts/integration.sh to show.
provider_log() {
	if [ -n "${SOFTHCA_RESULTS:-}" ]; then
		cat >>"$(dirname "$SOFTHCA_RESULTS")/$1.log"
	else
		cat >/dev/null
	fi
}

listening() {
	ss -Hltn "sport = :$1" | grep -q .
}

# client_server PORT LOG CMD...: CMD as a server in the background, then,
# once it listens on TCP PORT, as a client of $server_addr (default
# 127.0.0.1); both outputs go to LOG.  Passes when both sides exit 0.
client_server() {
	local port=$1 log=$2 pid rc_s rc_c
	shift 2
	ip link set lo up
	timeout 180 "$@" >"$log.server" 2>&1 &
	pid=$!
	if wait_for 20 listening "$port"; then
		timeout 180 "$@" "${server_addr:-127.0.0.1}" >"$log.client" 2>&1
		rc_c=$?
	else
		echo "$1: server not listening" >"$log.client"
		kill "$pid"
		rc_c=1
	fi
	wait "$pid"
	rc_s=$?
	sed "s/^/$1 server: /" "$log.server"
	sed "s/^/$1 client: /" "$log.client"
	echo "$*: server exit $rc_s, client exit $rc_c"
	[ "$rc_s" = 0 ] && [ "$rc_c" = 0 ]
}

# pingpong PROG [ARG...]: an rdma-core example with the data checked (-c)
# and the extra ARGs (-e: sleep on completion events).
pingpong() {
	local log rc
	log=$(mktemp) || return 1
	client_server 18515 "$log" "$1" -d softhca0 -g 1 -c -n 200 "${@:2}"
	rc=$?
	grep -h "iters in\|bytes in" "$log.server" "$log.client" |
		sed "s/^/$1 ${*:2}: /" | provider_log pingpong
	rm -f "$log" "$log.server" "$log.client"
	return $rc
}

# perftest TOOL ARG...: one perftest tool on softhca0 (GID index 1, the
# IPv4 one), its figures' line next to the results.  perftest times in
# CPU cycles, calibrated against the clock after the traffic; with the
# guest's vCPUs starved by the host (other guests), the calibration can
# fail after the traffic (report_lost, in lib.sh): the run passes,
# without figures, and says why; it is never run again.
perftest() {
	local log rc note
	log=$(mktemp) || return 1
	client_server 18516 "$log" "$1" -d softhca0 -x 1 -p 18516 "${@:2}"
	rc=$?
	if [ "$rc" != 0 ] && note=$(report_lost "$log.server" "$log.client")
	then
		echo "$*: $note" | provider_log perftest
		rc=0
	fi
	# The client's figures: the line after the column headings.
	awk -v t="$*" 'h && NF { print t ": " $0; exit } /#bytes/ { h = 1 }' \
		"$log.client" | provider_log perftest
	rm -f "$log" "$log.server" "$log.client"
	return $rc
}

# write_bw_client [CMD...]: a 10,000-WRITE ib_write_bw client under CMD
# (none, or e.g. strace), with its server; prints the client's PID.
# $post (the caller's): perftest's post path option, if any.
write_bw_client() {
	local pid
	ip link set lo up
	timeout 180 ib_write_bw -d softhca0 -x 1 -p 18517 -n 10000 -s 64 \
		"${post[@]}" >/dev/null 2>&1 &
	wait_for 20 listening 18517 || return 1
	"$@" ib_write_bw -d softhca0 -x 1 -p 18517 -n 10000 -s 64 \
		"${post[@]}" 127.0.0.1 >/dev/null 2>&1 &
	pid=$!
	echo "$pid"
	wait "$pid" && wait
}

# doorbells_asked PID DOORBELL_HIST WANTED_HIST: for each send queue PID
# rang, its doorbells and the times the kernel asked for one, from the
# histograms of softhca_doorbell (keys common_pid,qpn,send) and
# softhca_doorbell_wanted (keys qpn,send); fails when a queue rang more
# often than it was asked, or when PID rang none.
doorbells_asked() {
	awk -v p="$1" '
		{ gsub(/[{},:]/, " ") }
		FILENAME == ARGV[1] && $1 == "common_pid" && $2 == p &&
			$6 == 1 { rung[$4] += $8 }
		FILENAME == ARGV[2] && $1 == "qpn" && $4 == 1 { asked[$2] += $6 }
		END {
			for (q in rung) {
				printf "QP %u: %u doorbells, %u asked for\n",
					q, rung[q], asked[q]
				if (rung[q] > asked[q])
					bad = 1
				n++
			}
			if (!n)
				print "no doorbell"
			exit bad || !n
		}' "$2" "$3"
}

# syscall_ratio [PERFTEST_OPTION]: the doorbell protocol under a
# streaming poster, an ib_write_bw client making 10,000 WRITEs.  The
# kernel counts, with tracepoint histograms that cost the process
# nothing, the client's system calls, its doorbells, and the times the
# engine asked for one; strace -c -f counts again while stopping the
# process at every call, so that the engine goes idle between posts and
# each post rings.  perftest posts through ibv_wr_* by default and
# through ibv_post_send with --use_old_post_send.  The provider's only
# fast-path system call is the doorbell, an ioctl; perftest's own clock
# reads are system calls too in a guest whose clocksource has no vDSO
# path.  How many WRITEs ring is printed, not judged: it depends on
# whether the engine's worker has a CPU beside the poster, which the
# host decides (a few dozen on a quiet host, thousands on a busy one).
# Passes when both clients complete (a doorbell lost stalls them) and
# the client rang, never more often than the engine asked it to.
syscall_ratio() {
	local trace=/sys/kernel/tracing ev db want log pid calls ioctls scalls
	local post=("$@") path='ibv_wr_*' rc=0
	[ $# = 0 ] || path=ibv_post_send
	ev=$trace/events/raw_syscalls/sys_enter
	db=$trace/events/softhca/softhca_doorbell
	want=$trace/events/softhca/softhca_doorbell_wanted
	[ -d "$trace/events" ] || mount -t tracefs nodev "$trace" || return 1
	echo 'hist:keys=common_pid,id' >"$ev/trigger" &&
		echo 'hist:keys=common_pid,qpn,send' >"$db/trigger" &&
		echo 'hist:keys=qpn,send' >"$want/trigger" || return 1
	pid=$(write_bw_client) || rc=1
	# Lines: { common_pid: PID, id: NR } hitcount: N
	awk -v p="$pid," '$3 == p' "$ev/hist" | sort -n -k 8 | tail -n 3 |
		sed 's/^/busiest system calls: /'
	calls=$(awk -v p="$pid," '$3 == p { n += $8 } END { print n + 0 }' \
		"$ev/hist")
	ioctls=$(awk -v p="$pid," '$3 == p && $5 == 16 { n += $8 }
		END { print n + 0 }' "$ev/hist")
	doorbells_asked "$pid" "$db/hist" "$want/hist" | tee /dev/stderr |
		sed "s/^/ib_write_bw client ($path): /" | provider_log syscalls
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	echo '!hist:keys=common_pid,id' >"$ev/trigger"
	echo '!hist:keys=common_pid,qpn,send' >"$db/trigger"
	echo '!hist:keys=qpn,send' >"$want/trigger"
	log=$(mktemp) || return 1
	write_bw_client timeout 300 strace -c -f -o "$log" >/dev/null || rc=1
	scalls=$(awk '$NF == "total" { print $(NF - 2) }' "$log")
	sed 's/^/strace: /' "$log"
	rm -f "$log"
	{
		echo "ib_write_bw -n 10000 -s 64 client ($path), kernel count:" \
			"$ioctls ioctls (doorbells and setup)," \
			"$(awk -v c="$ioctls" 'BEGIN { printf "%.4f", c / 10000 }') per WR;" \
			"$calls system calls in all"
		echo "ib_write_bw -n 10000 -s 64 client ($path), strace -c -f:" \
			"${scalls:-?} system calls," \
			"$(awk -v c="${scalls:-0}" 'BEGIN { printf "%.3f", c / 10000 }') per WR"
	} | tee /dev/stderr | provider_log syscalls
	return $rc
}

# send_stream_polls: send-stream, every message checked, with a
# tracepoint histogram of the runs of its process's doorbell worker
# (softhca_uctx_run, keys polls, values taken).  Its sender and its
# busy-polling receiver fill the guest's two vCPUs, so the worker has no
# CPU of its own while the sender streams: it must have polled the
# sender (uctx.c, shca_uctx_streams()), runs that took WQEs that no
# doorbell asked for.  Prints those runs and the WQEs they took.
send_stream_polls() {
	local trace=/sys/kernel/tracing ev polled rc=0
	ev=$trace/events/softhca/softhca_uctx_run
	[ -d "$trace/events" ] || mount -t tracefs nodev "$trace" || return 1
	echo 'hist:keys=polls:vals=taken' >"$ev/trigger" || return 1
	"$guest_tests/send-stream" softhca0 1 || rc=1
	# Lines: { polls: 1 } hitcount: N taken: M
	polled=$(awk '$1 == "{" && $2 == "polls:" && $3 == 1 {
		print $6, $8 }' "$ev/hist")
	echo '!hist:keys=polls:vals=taken' >"$ev/trigger"
	echo "send-stream: ${polled% *} polling runs took ${polled#* } WQEs" |
		tee /dev/stderr | provider_log syscalls
	[ -n "$polled" ] && [ "${polled#* }" -gt 0 ] || rc=1
	return $rc
}

# The device's resource counts (pd, cq, qp, ...), for leak checks.
resources() {
	rdma resource show softhca0 | sed 's/^[0-9]*: //'
}

# hostile-abi refuses every malformed command and leaks nothing: no
# object, and no membership of the multicast group (239.1.2.3) its QP
# was left attached to at its end.
hostile_abi() {
	local before
	before=$(resources)
	"$guest_tests/hostile-abi" softhca0 &&
		[ "$(resources)" = "$before" ] &&
		! ip maddr show | grep -qw 239.1.2.3
}

# hostile-ring breaks only its own objects: another process's pingpong,
# running meanwhile, passes with its data checked; nothing leaks.
hostile_ring() {
	local before log rc_h rc_p pid
	before=$(resources)
	log=$(mktemp) || return 1
	client_server 18515 "$log" ibv_rc_pingpong -d softhca0 -g 1 -c \
		-n 50000 >/dev/null &
	pid=$!
	sleep 2
	"$guest_tests/hostile-ring" softhca0 1
	rc_h=$?
	wait "$pid"
	rc_p=$?
	grep -h "iters in" "$log.client" | sed 's/^/bystander: /'
	rm -f "$log" "$log.server" "$log.client"
	echo "hostile-ring exit $rc_h, bystander pingpong exit $rc_p"
	[ "$rc_h" = 0 ] && [ "$rc_p" = 0 ] && [ "$(resources)" = "$before" ]
}

# pyverbs_run DEV OUT: rdma-core's own test suite (python3-pyverbs) on DEV;
# OUT gets each test's outcome (pyverbs-record.py).  Passes with no
# failure and no error.  Tests of what DEV does not offer skip themselves.
pyverbs_run() {
	local dev=$1 out=$2 dir log summary rc
	dir=$(mktemp -d) && log=$dir/log || return 1
	cp -r /usr/share/doc/rdma-core/tests "$dir/" &&
		find "$dir/tests" -name '*.gz' -exec gunzip {} + &&
		cp "$(dirname "${BASH_SOURCE[0]}")/pyverbs-record.py" \
			"$dir/tests/" || return 1
	(cd "$dir" && PYVERBS_RECORD=$out timeout 900 /usr/bin/python3 \
		tests/pyverbs-record.py --dev "$dev" --gid 1 -v) >"$log" 2>&1
	# Each failure's traceback, as unittest reports them at the end.
	sed -n '/^======/,/^Ran [0-9]* tests/p' "$log" | head -n 200 |
		sed "s/^/$dev: /"
	# unittest's verdict: "OK (skipped=N)" or "FAILED (failures=N, ...)".
	summary="$(grep -E '^Ran [0-9]+ tests' "$log"): $(grep -E '^(OK|FAILED)' "$log")"
	echo "pyverbs $dev: $summary"
	echo "$dev: $summary" | provider_log pyverbs
	grep -q '^OK' "$log"
	rc=$?
	rm -rf "$dir"
	return $rc
}

# Tests rdma_rxe passes that softhca does not yet, one per line with the
# reason; a test listed here that softhca passes fails the check, so the
# list only shrinks.
pyverbs_gaps=$(dirname "${BASH_SOURCE[0]}")/pyverbs-gaps
# The tests softhca passes, exactly.
pyverbs_passes=$(dirname "${BASH_SOURCE[0]}")/pyverbs-passes

# pyverbs_listed FILE: the test ids FILE lists, sorted.
pyverbs_listed() {
	grep -v '^#' "$1" | awk 'NF { print $1 }' | sort
}

# pyverbs_each WHAT: "pyverbs: WHAT: TEST" for each test id on stdin;
# fails if there was one.
pyverbs_each() {
	local t n=0
	while read -r t; do
		echo "pyverbs: $1: $t"
		n=$((n + 1))
	done
	[ "$n" = 0 ]
}

# The suite on softhca0, then on rdma_rxe in the same boot: softhca passes
# it with no failure and no error, passes exactly the tests pyverbs-passes
# lists, and every test rdma_rxe passes but those pyverbs-gaps lists.
# SOFTHCA_PYVERBS_BRIEF (integration.sh --brief): softhca0 alone.  The
# guest reserves 2 MiB huge pages for the run: the suite's ODP tests on
# huge pages (IBV_ACCESS_HUGETLB) skip without them.
pyverbs() {
	local dir ok=0 t huge=/proc/sys/vm/nr_hugepages huge0
	dir=$(mktemp -d) || return 1
	read -r huge0 <"$huge"
	echo 32 >"$huge"
	pyverbs_run softhca0 "$dir/softhca" || ok=1
	awk '$2 == "ok" { print $1 }' "$dir/softhca" >"$dir/softhca.ok"
	pyverbs_listed "$pyverbs_passes" >"$dir/listed"
	comm -23 "$dir/listed" "$dir/softhca.ok" |
		pyverbs_each "listed in pyverbs-passes, does not pass" || ok=1
	comm -13 "$dir/listed" "$dir/softhca.ok" |
		pyverbs_each "passes, not listed in pyverbs-passes" || ok=1
	if [ -n "${SOFTHCA_PYVERBS_BRIEF:-}" ]; then
		echo "$huge0" >"$huge"
		rm -rf "$dir"
		return $ok
	fi
	if rxe_up; then
		pyverbs_run rxe0 "$dir/rxe"
		rxe_down || ok=1
	else
		echo "pyverbs: cannot set up rxe0"
		ok=1
	fi
	echo "$huge0" >"$huge"
	awk '$2 == "ok" { print $1 }' "$dir/rxe" >"$dir/rxe.ok"
	pyverbs_listed "$pyverbs_gaps" >"$dir/gaps"
	for t in softhca rxe; do
		t="$t: $(awk '{ print $2 }' "$dir/$t" | sort | uniq -c |
			awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')"
		echo "pyverbs outcomes on $t"
		echo "$t" | provider_log pyverbs
	done
	while read -r t; do
		if grep -qxF "$t" "$dir/gaps"; then
			echo "pyverbs: known gap: $t"
		else
			echo "pyverbs: rdma_rxe passes, softhca does not: $t"
			ok=1
		fi
	done < <(comm -23 "$dir/rxe.ok" "$dir/softhca.ok")
	comm -12 "$dir/gaps" "$dir/softhca.ok" |
		pyverbs_each "listed as a gap but passes" || ok=1
	comm -13 "$dir/rxe.ok" "$dir/softhca.ok" |
		sed 's/^/pyverbs: softhca passes, rdma_rxe does not: /'
	rm -rf "$dir"
	return $ok
}

# rdma_cm multicast on one device (mckey, over UD): a sender of 50
# messages and a receiver of all 50, both on softhca0 at ADDR, the IP
# stack's multicast loopback bringing the sender's back to the same
# netdev.  mckey's sender destroys its AH, then its QP, right after
# posting, waiting for no completion: softhca sends what was posted
# before either (KUnit: shca_data_ud_destroy_ah, _qp).
mckey_loop() {
	local log rc pid group=239.1.1.2
	log=$(mktemp) || return 1
	timeout 60 stdbuf -oL mckey -m "$group" -b "$1" -C 50 -S 1024 \
		>"$log.server" 2>&1 &
	pid=$!
	if wait_for 20 eval "ip maddr show | grep -qw $group"; then
		timeout 60 stdbuf -oL mckey -m "$group" -b "$1" -C 50 -S 1024 -s \
			>"$log.client" 2>&1
		rc=$?
	else
		echo "the receiver did not join" >"$log.client"
		rc=1
	fi
	wait "$pid" || rc=1
	sed "s/^/mckey receiver: /" "$log.server"
	sed "s/^/mckey sender: /" "$log.client"
	grep -q "data transfers complete" "$log.server" || rc=1
	[ "$rc" = 0 ] || rdma statistic show link softhca0/1 | sed "s/^/mckey: /"
	rm -f "$log" "$log.server" "$log.client"
	return $rc
}

# FLUSH through softhca's rings (rdma-core 44 has no verb for it): taken
# through from 6.2 on, refused before (ib_core has no FLUSH access flags).
flush_raw() {
	local opt=()
	[ "$(printf '%s\n' 6.2 "$(uname -r)" | sort -V | head -n 1)" = 6.2 ] ||
		opt=(--refused)
	"$guest_tests/flush-raw" softhca0 1 "${opt[@]}"
}

provider_tests() {
	local t
	for t in rc uc ud srq; do
		check "integ/$t-pingpong" pingpong "ibv_${t}_pingpong"
		check "integ/$t-pingpong-events" pingpong "ibv_${t}_pingpong" -e
	done
	for t in "ib_send_bw -s 64" "ib_send_bw -s 65536" \
		"ib_send_bw -q 2 -s 4096" "ib_write_bw -s 64" \
		"ib_write_bw -s 65536" "ib_write_bw -q 4 -s 4096" \
		"ib_read_bw -s 64" "ib_read_bw -s 65536" \
		"ib_read_bw -q 4 -s 4096" "ib_atomic_bw" \
		"ib_atomic_bw -A CMP_AND_SWAP"; do
		# shellcheck disable=SC2086
		check "integ/perftest-${t// /}" perftest $t -n 1000
	done
	for t in "ib_send_lat -s 2" "ib_send_lat -s 4096" \
		"ib_write_lat -s 2" "ib_write_lat -s 4096" \
		"ib_read_lat -s 2" "ib_atomic_lat"; do
		# shellcheck disable=SC2086
		check "integ/perftest-${t// /}" perftest $t -n 200
	done
	check integ/syscalls-per-wr syscall_ratio
	check integ/syscalls-per-wr-old-post syscall_ratio --use_old_post_send
	# shellcheck disable=SC2154 # integration-guest.sh's address
	check integ/mckey-loopback mckey_loop "$addr"
	check integ/hostile-abi hostile_abi
	check integ/hostile-ring hostile_ring
	check integ/wr-api "$guest_tests/wr-api" softhca0 1
	check integ/send-stream send_stream_polls
	check integ/qp-spread "$guest_tests/qp-spread" softhca0 1
	check integ/odp-churn "$guest_tests/odp-churn" softhca0 1
	check integ/flush-raw flush_raw
	check integ/pyverbs-suite pyverbs
}
