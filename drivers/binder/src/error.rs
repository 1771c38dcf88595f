//! Why a transaction failed: the `BR_*` its sender reads, and the errno
//! behind it (C's `return_error` and `return_error_param`).

use core::fmt;

use kernel::alloc::AllocError;
use kernel::error::code::{ENOMEM, ESRCH};
use kernel::error::Error;
use kernel::uapi::binder::cmd::{BR_DEAD_REPLY, BR_FAILED_REPLY};

/// A failed transaction: `reply` is what the sender reads (or, for a
/// failed reply, whoever waits for it); `source` the error that caused
/// it, if one did (a refusal by the protocol has none).
pub(crate) struct BinderError {
    pub(crate) reply: u32,
    pub(crate) source: Option<Error>,
}

impl BinderError {
    /// Refused by the protocol: `BR_FAILED_REPLY`.
    pub(crate) fn new_failed() -> Self {
        BinderError {
            reply: BR_FAILED_REPLY,
            source: None,
        }
    }

    /// The target is dying or gone: `BR_DEAD_REPLY`.
    pub(crate) fn new_dead() -> Self {
        BinderError {
            reply: BR_DEAD_REPLY,
            source: None,
        }
    }

    /// The target's mapping failed us: `ESRCH` (its memory or its
    /// mapping is gone, C's "no vma") is `BR_DEAD_REPLY`, anything else
    /// `BR_FAILED_REPLY`.
    pub(crate) fn from_mapping(e: Error) -> Self {
        BinderError {
            reply: if e == ESRCH {
                BR_DEAD_REPLY
            } else {
                BR_FAILED_REPLY
            },
            source: Some(e),
        }
    }
}

impl From<Error> for BinderError {
    fn from(e: Error) -> Self {
        BinderError {
            reply: BR_FAILED_REPLY,
            source: Some(e),
        }
    }
}

impl From<AllocError> for BinderError {
    fn from(_: AllocError) -> Self {
        ENOMEM.into()
    }
}

impl fmt::Debug for BinderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reply = match self.reply {
            BR_DEAD_REPLY => "BR_DEAD_REPLY",
            BR_FAILED_REPLY => "BR_FAILED_REPLY",
            _ => "BR_?",
        };
        match self.source {
            Some(e) => write!(f, "{reply} ({e:?})"),
            None => f.write_str(reply),
        }
    }
}
