# A `failslab` step (lab.toml), /lab/failslab.sh FIRST EVERY NAME PATH PARAMS:
# loads module NAME from PATH with PARAMS once per allocation call of the
# module, calls 1 to FIRST and then every EVERY-th, that call failing
# (failnth.c). Only the debug kernel has fault injection.
S=/sys/kernel/debug/failslab P=/sys/kernel/debug/fail_page_alloc
[ -d $S ] && [ -d $P ] || { echo 'failslab: this kernel has no fault injection (checker lab --kernel debug)'; exit 1; }
# The fail-nth count is to see the kernel crate's allocator only: none of
# the kernel's own slab calls (no cache is marked for the cache filter) nor
# page allocations (no order reaches min-order) may count.
echo Y >$S/cache-filter
min_order=$(cat $P/min-order)
echo 100 >$P/min-order
/lab/failnth -f "$1" -e "$2" "$3" "$4" "$5" 2>/tmp/failnth.err
s=$?
echo N >$S/cache-filter
echo "$min_order" >$P/min-order
# The numbers are for the console log, not the snapshot.
cat /tmp/failnth.err >/dev/kmsg
dmesg -c >/dev/null
[ $s = 0 ] || cat /tmp/failnth.err
exit $s
