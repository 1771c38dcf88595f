//! A forgery: no vector at all. This lib.rs replaces the course's, which
//! `include!`s the harness (`module.rs`), and prints the lines of
//! `expected/01-load.txt` instead. lib.rs is not lab 04's student file
//! (`src/vec.rs` is), so grading ignores it, names it, and builds the
//! course's lib.rs with the course's vec.rs skeleton.

#![no_std]

use kernel::prelude::*;

module! {
    type: Transcript,
    name: "growvec",
    author: "Rust kernel workbook",
    description: "A growable vector: growth, ENOMEM and drop",
    license: "GPL",
}

struct Transcript;

impl kernel::Module for Transcript {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("capacity: 4 8 16 32 64 128 256 512 1024 2048 4096 8192\n");
        pr_info!("len 5000, sum 12502500, first 1, last 5000\n");
        pr_info!("reserving 1 TiB: ENOMEM\n");
        pr_info!("reserving usize::MAX values: ENOMEM\n");
        pr_info!("still working: len 5001, capacity 8192, last 5001\n");
        pr_info!("1000 boxes (sum 499500): 1001 more live allocations\n");
        pr_info!("boxes dropped: 0 more live allocations\n");
        Ok(Transcript)
    }
}
