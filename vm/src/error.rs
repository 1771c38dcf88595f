//! The crate's error: what a caller tells apart (Ctrl-C, QEMU, the guest
//! kernel and its modules, a guest that cannot be made, a file or a host
//! tool), each with the sentence for people; `{:#}` through `anyhow`
//! prints the whole chain, as before.

use std::fmt;
use std::io;

/// A result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong.
#[derive(Debug)]
pub enum Error {
    /// Ctrl-C stopped the run: QEMU was killed (exit status 130).
    Interrupted,
    /// QEMU would not start, or its guest did not behave (the shell).
    Qemu(String),
    /// The guest kernel, its image's modules or the debug kernel's build.
    Kernel(String),
    /// What the guest was to hold cannot be made: busybox, a disk, an
    /// accelerator's name.
    Guest(String),
    /// Reading or writing a file, or running a host tool.
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: io::Error,
    },
    /// An error of this crate, and what was being done.
    Context {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: Box<Error>,
    },
    /// An error from elsewhere (the Ctrl-C handler, a caller's set-up).
    Other {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// Ctrl-C stopped it, however deep in the chain.
    pub fn is_interrupted(&self) -> bool {
        match self {
            Error::Interrupted => true,
            Error::Context { source, .. } => source.is_interrupted(),
            _ => false,
        }
    }

    /// `source` from elsewhere, while doing `what`.
    pub fn other(
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error::Other {
            what: what.into(),
            source: source.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Interrupted => f.write_str("interrupted"),
            Error::Qemu(s) | Error::Kernel(s) | Error::Guest(s) => f.write_str(s),
            Error::Io { what, .. } | Error::Context { what, .. } | Error::Other { what, .. } => {
                f.write_str(what)
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Context { source, .. } => Some(&**source),
            Error::Other { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    /// An I/O error with nothing to say what was being done: prefer
    /// [`Context::context`].
    fn from(source: io::Error) -> Error {
        Error::Io {
            what: "input/output".into(),
            source,
        }
    }
}

/// Returns `Error::$kind` with a formatted sentence, as `anyhow::bail!`.
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::Error::$kind(format!($($arg)*)))
    };
}
pub(crate) use bail;

/// `.context(...)` for this crate's results and for I/O, as `anyhow`'s.
pub trait Context<T> {
    /// The error, with what was being done.
    fn context(self, what: impl Into<String>) -> Result<T>;

    /// The error, with what was being done (computed only on an error).
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T>;
}

impl<T> Context<T> for io::Result<T> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|source| Error::Io {
            what: what.into(),
            source,
        })
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|source| Error::Io {
            what: what().into(),
            source,
        })
    }
}

impl<T> Context<T> for Result<T> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|source| Error::Context {
            what: what.into(),
            source: Box::new(source),
        })
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|source| Error::Context {
            what: what().into(),
            source: Box::new(source),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ctrl-C is found under any context, and the chain reads as
    /// `anyhow` printed it before.
    #[test]
    fn interrupted_under_context_and_the_chain() {
        let e = Err::<(), _>(Error::Interrupted)
            .context("boot")
            .unwrap_err();
        assert!(e.is_interrupted());
        assert!(!Error::Qemu("x".into()).is_interrupted());
        let io = Err::<(), _>(io::Error::from(io::ErrorKind::NotFound))
            .with_context(|| "cannot read /x")
            .unwrap_err();
        assert!(matches!(io, Error::Io { .. }));
        assert_eq!(
            format!("{:#}", anyhow::Error::from(io)),
            "cannot read /x: entity not found"
        );
    }
}
