// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials (kernel-crate/src/cred.rs).
 */
#include <linux/cred.h>
#include <linux/fs.h>

#include "helpers.h"

const struct cred *rust_helper_file_get_cred(struct file *file)
{
	return get_cred(file->f_cred);
}

void rust_helper_put_cred(const struct cred *cred)
{
	put_cred(cred);
}

unsigned int rust_helper_cred_euid(const struct cred *cred)
{
	return from_kuid(current_user_ns(), cred->euid);
}
