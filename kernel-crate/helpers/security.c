// SPDX-License-Identifier: GPL-2.0
/*
 * Binder's LSM hooks (kernel-crate/src/security.rs). Only kernels that
 * export them (Debian's, with its Android patch) can load a module that
 * calls one; a module that does not is linked without this file.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/security.h>

#include "helpers.h"

int rust_helper_security_binder_set_context_mgr(const struct cred *mgr)
{
	return security_binder_set_context_mgr(mgr);
}

int rust_helper_security_binder_transaction(const struct cred *from,
					    const struct cred *to)
{
	return security_binder_transaction(from, to);
}

int rust_helper_security_binder_transfer_binder(const struct cred *from,
						const struct cred *to)
{
	return security_binder_transfer_binder(from, to);
}

int rust_helper_security_binder_transfer_file(const struct cred *from,
					      const struct cred *to,
					      struct file *file)
{
	return security_binder_transfer_file(from, to, file);
}
