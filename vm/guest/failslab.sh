# A `failslab` step (lab.toml), /lab/failslab.sh FIRST EVERY NAME PATH PARAMS:
# loads module NAME from PATH with PARAMS once per allocation call of its
# init, from call FIRST on every EVERY-th, that call failing (failnth.c).
# Only the debug kernel has failslab.
F=/sys/kernel/debug/failslab
[ -d $F ] || { echo 'failslab: this kernel has none (checker lab --kernel debug)'; exit 1; }
# Fail sleeping allocations too, only in the caches slub_debug=A marked
# (kmalloc's), and print every failure.
echo N >$F/ignore-gfp-wait
echo Y >$F/cache-filter
echo 0 >$F/verbose_ratelimit_interval_ms
/lab/failnth -f "$1" -e "$2" "$3" "$4" "$5" 2>/tmp/failnth.err
s=$?
echo Y >$F/ignore-gfp-wait
echo N >$F/cache-filter
# The numbers are for the console log, not the snapshot.
cat /tmp/failnth.err >/dev/kmsg
dmesg -c >/dev/null
[ $s = 0 ] || cat /tmp/failnth.err
exit $s
