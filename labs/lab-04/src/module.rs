// The module itself, shared by the exercise (`src/lib.rs`) and the reference
// solution (its `lib.rs`, in the instructor's repository), which both
// `include!` it after declaring their own `vec` module. This file is
// complete: your work is in `src/vec.rs`.

use core::fmt::{self, Write};

use kernel::alloc::live_allocations;
use kernel::prelude::*;

use vec::LabVec;

module! {
    type: GrowVec,
    name: "growvec",
    author: "Rust kernel workbook",
    description: "A growable vector: growth, ENOMEM and drop",
    license: "GPL",
    params: {
        // The checker's differential step loads the module with other
        // counts too, the same for yours and the reference solution.
        pushes: u64 {
            default: 5000,
            permissions: 0o444,
            description: "How many values init pushes",
        },
    },
}

/// How many values `init` pushes by default (`pushes`).
const COUNT: u64 = 5000;

/// One tebibyte of `u64`s: far beyond what kmalloc can serve.
const ONE_TIB_OF_U64: usize = (1 << 40) / size_of::<u64>();

/// What the module keeps while it is loaded.
struct GrowVec {
    values: LabVec<u64>,
}

// ANCHOR: growth
/// Pushes `1..=count`, printing the capacity each time it changes.
fn fill(count: u64) -> Result<LabVec<u64>> {
    let mut values = LabVec::new();
    pr_info!("capacity:");
    for i in 1..=count {
        let before = values.capacity();
        values
            .push(i, GFP_KERNEL)
            .inspect_err(|e| pr_cont!(" push failed: {e}\n"))?;
        if values.capacity() != before {
            pr_cont!(" {}", values.capacity());
        }
    }
    pr_cont!("\n");
    Ok(values)
}
// ANCHOR_END: growth

// ANCHOR: enomem
/// Asks for far too much: the vector reports `ENOMEM` and stays usable.
fn too_much(values: &mut LabVec<u64>) -> Result {
    match values.reserve(ONE_TIB_OF_U64, GFP_KERNEL) {
        Ok(()) => pr_err!("reserving 1 TiB succeeded?\n"),
        Err(e) => pr_info!("reserving 1 TiB: {e}\n"),
    }
    match values.reserve(usize::MAX, GFP_KERNEL) {
        Ok(()) => pr_err!("reserving usize::MAX values succeeded?\n"),
        Err(e) => pr_info!("reserving usize::MAX values: {e}\n"),
    }
    // Nothing was lost: the vector keeps its values and grows on.
    values.push(COUNT + 1, GFP_KERNEL)?;
    pr_info!(
        "still working: len {}, capacity {}, last {}\n",
        values.len(),
        values.capacity(),
        values.last().copied().unwrap_or(0)
    );
    Ok(())
}
// ANCHOR_END: enomem

// ANCHOR: leak_check
/// Fills a vector with heap values and drops it: no block is left behind.
fn boxes_dropped() -> Result {
    let before = live_allocations();
    let mut boxes = LabVec::new();
    for i in 0..1000u64 {
        boxes.push(KBox::new(i, GFP_KERNEL)?, GFP_KERNEL)?;
    }
    let sum: u64 = boxes.iter().map(|b| **b).sum();
    pr_info!(
        "{} boxes (sum {sum}): {} more live allocations\n",
        boxes.len(),
        live_allocations() - before
    );
    drop(boxes);
    pr_info!(
        "boxes dropped: {} more live allocations\n",
        live_allocations() - before
    );
    Ok(())
}
// ANCHOR_END: leak_check

// ANCHOR: slices
/// A slice goes in whole; `truncate` drops values from the end.
fn slices() -> Result {
    let before = live_allocations();
    let mut digits = LabVec::new();
    digits.extend_from_slice(&[3u64, 1, 4], GFP_KERNEL)?;
    digits.extend_from_slice(&[1, 5, 9, 2, 6, 5], GFP_KERNEL)?;
    digits.extend_from_slice(&[], GFP_KERNEL)?;
    pr_info!(
        "slices: {:?}, capacity {}\n",
        &digits[..],
        digits.capacity()
    );
    digits.truncate(4);
    digits.truncate(100);
    pr_info!(
        "truncated: {:?}, capacity {}\n",
        &digits[..],
        digits.capacity()
    );
    let mut boxes = LabVec::new();
    for i in 0..10u64 {
        boxes.push(KBox::new(i, GFP_KERNEL)?, GFP_KERNEL)?;
    }
    boxes.truncate(3);
    pr_info!(
        "10 boxes truncated to {}: {} more live allocations\n",
        boxes.len(),
        live_allocations() - before
    );
    Ok(())
}
// ANCHOR_END: slices

/// Displays `char` `count` times, without allocating.
struct Repeat(char, usize);

impl fmt::Display for Repeat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for _ in 0..self.1 {
            f.write_char(self.0)?;
        }
        Ok(())
    }
}

/// Everything `init` does. On an error every value made so far is dropped
/// on the way out: the debug kernel's failslab steps check that nothing is
/// left (`live allocations: 0`) whichever allocation failed.
fn load() -> Result<GrowVec> {
    let mut values = fill(*pushes.read())?;
    let sum: u64 = values.iter().sum();
    let summary = kformat!(
        GFP_KERNEL,
        "len {}, sum {sum}, first {}, last {}",
        values.len(),
        values.first().copied().unwrap_or(0),
        values.last().copied().unwrap_or(0)
    )?;
    pr_info!("{summary}\n");

    too_much(&mut values)?;
    boxes_dropped()?;
    slices()?;

    // ANCHOR: printing
    // 5 + 300 * 2 bytes: cut to the 253 `é` that fit in 512 bytes, and
    // never in the middle of one.
    pr_info!("long:{}END\n", Repeat('é', 300));
    pr_info!("100% literal: %s %d %n\n");
    // ANCHOR_END: printing
    Ok(GrowVec { values })
}

impl kernel::Module for GrowVec {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        load().inspect_err(|e| {
            pr_info!(
                "init failed: {e}, live allocations: {}\n",
                live_allocations()
            );
        })
    }
}

impl Drop for GrowVec {
    fn drop(&mut self) {
        let values = core::mem::take(&mut self.values);
        let len = values.len();
        drop(values);
        pr_info!(
            "dropped {len} values, live allocations: {}\n",
            live_allocations()
        );
    }
}
