//! Commands and completions: the 64-byte submission queue entry and the
//! 16-byte completion queue entry (NVMe base specification 2.0, sections
//! 4.2 and 4.6), and the admin and I/O commands this driver sends.

/// A submission queue entry, as sixteen little-endian dwords.
pub(crate) type Sqe = [u32; 16];

/// Admin opcodes.
pub(crate) mod admin {
    /// Delete I/O submission queue.
    pub(crate) const DELETE_SQ: u8 = 0x00;
    /// Create I/O submission queue.
    pub(crate) const CREATE_SQ: u8 = 0x01;
    /// Delete I/O completion queue.
    pub(crate) const DELETE_CQ: u8 = 0x04;
    /// Create I/O completion queue.
    pub(crate) const CREATE_CQ: u8 = 0x05;
    /// Identify.
    pub(crate) const IDENTIFY: u8 = 0x06;
    /// Abort.
    pub(crate) const ABORT: u8 = 0x08;
    /// Doorbell buffer config: the shadow doorbell pages.
    pub(crate) const DOORBELL_BUFFER_CONFIG: u8 = 0x7c;
    /// Set features.
    pub(crate) const SET_FEATURES: u8 = 0x09;
}

/// I/O opcodes (NVM command set).
pub(crate) mod io {
    /// Flush the volatile write cache.
    pub(crate) const FLUSH: u8 = 0x00;
    /// Write.
    pub(crate) const WRITE: u8 = 0x01;
    /// Read.
    pub(crate) const READ: u8 = 0x02;
    /// Write zeroes: blocks set to zero without data.
    pub(crate) const WRITE_ZEROES: u8 = 0x08;
    /// Dataset management: with the AD attribute, deallocate ranges.
    pub(crate) const DSM: u8 = 0x09;
}

/// Dataset management's cdw11: deallocate (AD).
pub(crate) const DSM_DEALLOCATE: u32 = 1 << 2;
/// The most ranges of one dataset management command (as the C driver's
/// `NVME_DSM_MAX_RANGES`): 16 bytes each, one 4 KiB page.
pub(crate) const DSM_MAX_RANGES: u16 = 256;

/// Identify's CNS values.
pub(crate) mod cns {
    /// The namespace data structure of one namespace.
    pub(crate) const NAMESPACE: u32 = 0x00;
    /// The controller data structure.
    pub(crate) const CONTROLLER: u32 = 0x01;
    /// The active namespace ids, in order, after a given one.
    pub(crate) const ACTIVE_NAMESPACES: u32 = 0x02;
    /// The controller data of a command set (cdw11's CSI; 0: NVM).
    pub(crate) const CS_CONTROLLER: u32 = 0x06;
}

/// Feature identifiers.
pub(crate) mod feature {
    /// Number of queues.
    pub(crate) const NUM_QUEUES: u32 = 0x07;
}

/// A command being built.
#[derive(Clone, Copy)]
pub(crate) struct Command(pub(crate) Sqe);

impl Command {
    /// A command with `opcode`, everything else zero.
    pub(crate) fn new(opcode: u8) -> Self {
        let mut sqe = [0u32; 16];
        sqe[0] = u32::from(opcode);
        Command(sqe)
    }

    /// Sets the namespace id.
    pub(crate) fn nsid(mut self, nsid: u32) -> Self {
        self.0[1] = nsid;
        self
    }

    /// Sets the data pointer's two PRP entries.
    pub(crate) fn prp(mut self, prp1: u64, prp2: u64) -> Self {
        self.0[6] = prp1 as u32;
        self.0[7] = (prp1 >> 32) as u32;
        self.0[8] = prp2 as u32;
        self.0[9] = (prp2 >> 32) as u32;
        self
    }

    /// Sets command dword `n` (10 to 15).
    pub(crate) fn cdw(mut self, n: usize, value: u32) -> Self {
        if (10..16).contains(&n) {
            self.0[n] = value;
        }
        self
    }

    /// Sets the command identifier, which the completion carries back.
    pub(crate) fn with_cid(mut self, cid: u16) -> Self {
        self.0[0] = (self.0[0] & 0xffff) | (u32::from(cid) << 16);
        self
    }

    /// Identify: `cns`, for namespace `nsid`, into the page at `buffer`.
    pub(crate) fn identify(cns: u32, nsid: u32, buffer: u64) -> Self {
        Command::new(admin::IDENTIFY)
            .nsid(nsid)
            .prp(buffer, 0)
            .cdw(10, cns)
    }
}

/// A completion queue entry, read from the queue.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Completion {
    /// Command specific result (dword 0).
    pub(crate) result: u32,
    /// The submission queue's head when the controller wrote this entry.
    pub(crate) sq_head: u16,
    /// The command identifier.
    pub(crate) cid: u16,
    /// Status field without the phase bit: 0 for success.
    pub(crate) status: u16,
}

impl Completion {
    /// Decodes dwords 0, 2 and 3 of an entry.
    pub(crate) fn from_dwords(dw0: u32, dw2: u32, dw3: u32) -> Self {
        Completion {
            result: dw0,
            sq_head: dw2 as u16,
            cid: dw3 as u16,
            status: (dw3 >> 17) as u16,
        }
    }

    /// The phase tag of dword 3.
    pub(crate) fn phase_of(dw3: u32) -> bool {
        dw3 & (1 << 16) != 0
    }
}
