// SPDX-License-Identifier: GPL-2.0
/*
 * KASAN's entry points for the memory intrinsics of the Rust code.
 *
 * rust-module.mk builds the Rust code of a KASAN kernel with
 * -asan-kernel-mem-intrinsic-prefix, so that an aggregate copy (which LLVM
 * would otherwise inline as plain moves, unchecked) becomes a call to
 * __asan_memcpy, __asan_memmove or __asan_memset. Kernels from 6.3 define
 * them (mm/kasan/shadow.c); 6.1 does not, but its memcpy and friends are
 * the checked ones when called from instrumented code (this file is, as
 * every C file of a module on a KASAN kernel), so these forward to them.
 * They are __visible: rust-module.mk compiles the helpers with
 * -fwhole-program.
 */
#include <linux/version.h>

#if defined(CONFIG_KASAN_GENERIC) && LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#include <linux/string.h>

void *__asan_memcpy(void *dest, const void *src, size_t len);
void *__asan_memmove(void *dest, const void *src, size_t len);
void *__asan_memset(void *addr, int c, size_t len);

__visible void *__asan_memcpy(void *dest, const void *src, size_t len)
{
	return memcpy(dest, src, len);
}

__visible void *__asan_memmove(void *dest, const void *src, size_t len)
{
	return memmove(dest, src, len);
}

__visible void *__asan_memset(void *addr, int c, size_t len)
{
	return memset(addr, c, len);
}
#endif
