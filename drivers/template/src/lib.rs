//! A misc device, `/dev/my_driver`, that keeps the last message written to
//! it: a write replaces the message with its bytes (`EFBIG` for more than
//! [`CAPACITY`]), a read returns the message from the file position. The starting
//! point of a driver of your own: rename it, then grow it.

#![no_std]

use core::pin::Pin;

use kernel::file::{File, FileOperations};
use kernel::miscdev;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::user::{UserSliceReader, UserSliceWriter};
use kernel::{c_str, new_mutex};

module! {
    type: MyDriver,
    name: "my_driver",
    author: "You",
    description: "A misc device that keeps the last message written to it",
    license: "GPL",
}

/// The longest message kept.
const CAPACITY: usize = 256;

/// The message, shared by every open.
struct Message {
    bytes: [u8; CAPACITY],
    len: usize,
}

/// One open of the device.
struct MessageFile {
    message: Arc<Mutex<Message>>,
}

#[vtable]
impl FileOperations for MessageFile {
    type OpenData = Arc<Mutex<Message>>;

    fn open(message: &Self::OpenData, _file: &File) -> Result<Self> {
        Ok(MessageFile {
            message: message.clone(),
        })
    }

    fn read(&self, _file: &File, writer: &mut UserSliceWriter, offset: u64) -> Result<usize> {
        let message = self.message.lock();
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(message.len);
        let n = writer.len().min(message.len - start);
        writer.write_slice(&message.bytes[start..start + n])?;
        Ok(n)
    }

    fn write(&self, _file: &File, reader: &mut UserSliceReader, _offset: u64) -> Result<usize> {
        let n = reader.len();
        if n > CAPACITY {
            return Err(EFBIG);
        }
        // Copy first, then replace: a bad pointer leaves the old message.
        let mut bytes = [0u8; CAPACITY];
        reader.read_slice(&mut bytes[..n])?;
        let mut message = self.message.lock();
        message.bytes = bytes;
        message.len = n;
        Ok(n)
    }
}

struct MyDriver {
    _dev: Pin<KBox<miscdev::Registration<MessageFile>>>,
}

impl kernel::Module for MyDriver {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let empty = Message {
            bytes: [0; CAPACITY],
            len: 0,
        };
        let message = Arc::pin_init(new_mutex!(empty, "Message"), GFP_KERNEL)?;
        let dev = miscdev::Registration::new_pinned(c_str!("my_driver"), message)?;
        pr_info!("registered /dev/my_driver\n");
        Ok(MyDriver { _dev: dev })
    }
}

impl Drop for MyDriver {
    fn drop(&mut self) {
        pr_info!("unregistered /dev/my_driver\n");
    }
}
