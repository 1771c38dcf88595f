//! The items nearly every module uses: `use kernel::prelude::*;`.

pub use crate::alloc::{flags::*, AllocError, KBox, KString, KVec};
pub use crate::error::{code::*, Error, Result};
pub use crate::module::{Module, ThisModule};
pub use crate::{kformat, pr_notice, pr_warn};
pub use crate::{module, pr_alert, pr_cont, pr_crit, pr_debug, pr_emerg, pr_err, pr_info, vtable};
