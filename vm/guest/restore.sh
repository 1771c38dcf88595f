# A saved guest's wait for its run (vm/src/snapshot.rs), sourced by /init
# before the steps. The host boots this guest once, saves it (QEMU
# migration to a file) once it says it is ready, and starts every fast
# run from that file; the run's files (modules, programs, steps, runner)
# are on the virtio disk /dev/vda, written by the host after the save:
# a 64 KiB header `MAGIC TOKEN SEED BLOCKS EPOCH`, then BLOCKS blocks of
# 64 KiB holding a newc cpio of them.
sh /lab/restore/load.sh
rm -rf /lab/restore /lab/restore.sh
echo "checker: saved guest ready" >/dev/ttyS1
# Saved here. The disk was read once already (the kernel's partition scan):
# drop those cached zeroes before each look.
while :; do
  blockdev --flushbufs /dev/vda
  read -r -n 120 magic token seed blocks epoch </dev/vda
  [ "$magic" = RKLPAYLD1 ] && break
  usleep 10000
done
# Restored. The host's seed joins the random pool (the guest's own is the
# same in every run until QEMU's vmgenid makes the kernel reseed).
echo "$seed" >/dev/urandom
# The clock said the time of the save: the host's time now.
date -s "@$epoch" >/dev/null 2>&1
cd / && dd if=/dev/vda bs=64k skip=1 count="$blocks" 2>/dev/null | cpio -i -d 2>/dev/console
cd /
# The token goes where a cold boot's initramfs has it; its copy on the
# disk is overwritten first.
dd if=/dev/zero of=/dev/vda bs=512 count=1 conv=fsync 2>/dev/null
(umask 077; echo "$token" >/lab/token)
