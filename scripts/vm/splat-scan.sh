#!/bin/bash
# splat-scan.sh [--kernel] LOGFILE...
#
# Looks for kernel "splats" (reports of a kernel bug by one of its checkers)
# in console logs or dmesg dumps.  Exit status: 0 none found, 1 found (the
# matching lines, with context, go to stderr), 2 usage error or unreadable log.
#
# --kernel: count only kernel messages, i.e. lines carrying a printk
#   timestamp ("[   12.345678] ", the harness boots with printk.time=1), plus
#   kmemleak's report, which the guest prints with cat.  This keeps a test
#   program that prints e.g. "WARNING:" itself from failing the run.
#
# Caveat: fault-injection tests make the kernel dump a stack on every
# injected failure ("FAULT_INJECTION: forcing a failure" + "Call Trace:").
# They must set /sys/kernel/debug/fail*/verbose=0 so that those intended
# dumps are not printed; any that are printed count as splats here.
set -euo pipefail

# One extended regular expression per checker report.
splats=(
	'BUG:'
	'WARNING:'
	'possible circular locking'
	'inconsistent lock state'
	'possible recursive locking'
	'INFO: possible irq lock inversion'
	'suspicious RCU usage'
	'sleeping function called from invalid context'
	'KASAN:'
	'UBSAN:'
	'Oops'
	'[Kk]ernel panic'
	'unreferenced object'
	'suspected memory leak'
	'INFO: task .* blocked for more than'
	'soft lockup'
	'Call Trace:'
	'general protection fault'
	'list_(add|del) corruption'
)

# Known-benign lines that match a pattern above; each needs a reason.
benign=(
)

join() {
	local IFS='|'
	echo "$*"
}

# scan FILE: print the splats in FILE with context; exit 1 if any.
scan() {
	awk -v splat="$(join "${splats[@]}")" -v benign="$(join "${benign[@]}")" \
		-v kernel="$kernel" -v file="$1" '
	{
		sub(/\r$/, "")
		line[NR] = $0
		if ($0 !~ splat || (benign != "" && $0 ~ benign))
			next
		if (kernel && $0 !~ /\[ *[0-9]+\.[0-9]+\] / &&
		    $0 !~ /^unreferenced object 0x/)
			next
		hit[NR] = 1
		nhits++
	}
	END {
		if (!nhits)
			exit 0
		printf "splat-scan: %s: %d splat line(s):\n", file, nhits
		last = 0
		for (i = 1; i <= NR; i++) {
			if (!hit[i])
				continue
			from = i - 3 > last ? i - 3 : last + 1
			if (from > last + 1)
				print "   ..."
			for (j = from; j <= i + 12 && j <= NR; j++) {
				printf "%s %6d  %s\n", hit[j] ? ">" : " ", j, line[j]
				last = j
			}
			i = last
		}
		exit 1
	}' "$1" >&2
}

kernel=0
if [ "${1:-}" = --kernel ]; then
	kernel=1
	shift
fi
[ $# -gt 0 ] || {
	echo "usage: splat-scan.sh [--kernel] LOGFILE..." >&2
	exit 2
}
found=0
for log; do
	[ -r "$log" ] || {
		echo "splat-scan: cannot read $log" >&2
		exit 2
	}
	scan "$log" || found=1
done
exit $found
