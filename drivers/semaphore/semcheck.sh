#!/bin/sh
# semcheck MODULE CHECK: one check of the semaphore driver MODULE
# (rust_semaphore or its C twin rust_semaphore_c), run in the guest by lab
# 08's steps. The output names neither the module nor its device, and is
# also saved in /tmp/MODULE/CHECK: the last step compares the two drivers'
# directories, which must be identical.
mod=$1
check=$2
dev=/dev/$mod
t=/lab/devtest
mkdir -p /tmp/$mod
{
case $check in
load)
	insmod /lab/$mod.ko && test -c $dev && echo "device node: ok" ;;
write-read)
	# Three writes add 1 + 2 + 3 to the count; six reads take it to 0.
	printf x > $dev; printf xy > $dev; printf xyz > $dev
	for i in 1 2 3 4 5 6; do head -c 1 $dev | od -An -tx1; done ;;
blocking)
	# A reader blocks on an empty semaphore until a writer comes; so does
	# a poller, which the write must wake long before its time-out.
	( head -c 1 $dev > /dev/null; echo "reader: woke up" ) &
	sleep 1; echo "writer: writing"; printf x > $dev; wait
	$t poll $dev 5000 &
	sleep 1; echo "writer: writing again"; printf x > $dev; wait
	head -c 1 $dev | od -An -tx1 ;;
ioctl)
	# _IOR('c', 1, u64) = 0x80086301, _IOW('c', 1, u64) = 0x40086301.
	$t ioctl-u64 $dev 0x80086301
	$t ioctl $dev 0x6302
	$t ioctl-fault $dev 0x80086301
	$t ioctl-fault $dev 0x40086301
	# SET then GET on one open, GET after reads, and a second open's own count.
	$t ioctl-roundtrip $dev ;;
bad-pointers)
	$t write-fault $dev
	printf x > $dev; $t read-fault $dev
	# The count the failed read did not take is still there.
	head -c 1 $dev | od -An -tx1
	$t huge $dev ;;
concurrent)
	$t sem $dev 4 200 ;;
fileops)
	# Every other file operation, hostile arguments included: lseek is
	# ESPIPE in every form, O_NONBLOCK gives EAGAIN, poll sees the count.
	$t fileops $dev ;;
busy)
	$t hold $dev "rmmod $mod 2>/dev/null; echo rmmod while open: \$?" ;;
unload)
	rmmod $mod && echo "rmmod after close: $?" ;;
*)
	echo "semcheck: unknown check $check"; exit 2 ;;
esac
} 2>&1 | tee /tmp/$mod/$check
