//! Randomised inputs of differential steps (`[random]` in `lab.toml`).
//!
//! A fixed transcript can be printed by a module that does nothing else;
//! inputs drawn per run cannot. The checker draws each `[random]` value
//! from one seed (`checker lab --seed N` reproduces a run), substitutes
//! `{name}` in the `run` of `differential` steps, and runs each such step
//! twice in the same guest boot: with the student's module (`{ko}` is
//! `/lab/NAME.ko`), and at the end of the run with the reference
//! solution's (`{ko}` is `/lab/ref/NAME.ko`). The two outputs must match
//! after the snapshots' normalisation (see [`crate::grade::grade_steps`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;

/// One `[random]` value: how it is drawn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
pub enum RandomSpec {
    /// `{ int = [LO, HI] }`: an integer from LO to HI, both included.
    Int([i64; 2]),
    /// `{ hex = N }`: N random bytes as 2N lowercase hex digits.
    Hex(u32),
    /// `{ alpha = [MIN, MAX] }`: MIN to MAX lowercase letters.
    Alpha([u32; 2]),
}

impl RandomSpec {
    /// Why the spec cannot be drawn from, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            RandomSpec::Int([lo, hi]) if lo > hi => Err(format!("int = [{lo}, {hi}]: empty range")),
            RandomSpec::Hex(n) if !(1..=256).contains(&n) => {
                Err(format!("hex = {n}: from 1 to 256 bytes"))
            }
            RandomSpec::Alpha([lo, hi]) if lo == 0 || lo > hi || hi > 256 => Err(format!(
                "alpha = [{lo}, {hi}]: lengths from 1 to 256, the first not above the second"
            )),
            _ => Ok(()),
        }
    }

    fn draw(&self, rng: &mut Rng) -> String {
        match *self {
            RandomSpec::Int([lo, hi]) => {
                let span = (i128::from(hi) - i128::from(lo) + 1) as u128;
                let v = i128::from(lo) + (u128::from(rng.next()) % span) as i128;
                v.to_string()
            }
            RandomSpec::Hex(n) => (0..n).fold(String::new(), |mut s, _| {
                let _ = write!(s, "{:02x}", rng.next() as u8);
                s
            }),
            RandomSpec::Alpha([lo, hi]) => {
                let len = lo + (rng.next() % u64::from(hi - lo + 1)) as u32;
                (0..len)
                    .map(|_| char::from(b'a' + (rng.next() % 26) as u8))
                    .collect()
            }
        }
    }
}

/// splitmix64: small, and the same on every machine for a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The values of one run, drawn from `seed`.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// The seed (`--seed`).
    pub seed: u64,
    /// `(name, value)`, sorted by name.
    pub values: Vec<(String, String)>,
}

impl Inputs {
    /// Draws every value of `random` from `seed`, in name order.
    pub fn draw(random: &BTreeMap<String, RandomSpec>, seed: u64) -> Inputs {
        let mut rng = Rng(seed);
        let values = random
            .iter()
            .map(|(name, spec)| (name.clone(), spec.draw(&mut rng)))
            .collect();
        Inputs { seed, values }
    }

    /// `seed 42: count=7 name=abc`, for the report.
    pub fn describe(&self) -> String {
        let values: Vec<String> = self
            .values
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        format!("seed {}: {}", self.seed, values.join(" "))
    }
}

/// A fresh seed from the OS.
pub fn os_seed() -> u64 {
    use std::io::Read as _;
    let mut bytes = [0u8; 8];
    match std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)) {
        Ok(()) => u64::from_le_bytes(bytes),
        // No /dev/urandom: the clock still differs from run to run.
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    }
}

/// The seed of one child run of `checker grade`: derived from the grading
/// run's `base` seed, the student and the lab, so that students draw
/// different inputs and `checker grade --seed` reproduces them all.
pub fn derive_seed(base: u64, student: &str, lab: &str) -> u64 {
    // FNV-1a over the names, mixed with the base by one splitmix step.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in student.bytes().chain([0]).chain(lab.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    Rng(base ^ h).next()
}

/// The placeholders of `run`: every `{ident}` not preceded by `$` (so a
/// shell's `${x}` and `{ cmd; }` are left alone), with its byte range.
pub fn placeholders(run: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let bytes = run.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' && (i == 0 || bytes[i - 1] != b'$') {
            let end = bytes[i + 1..]
                .iter()
                .position(|&b| !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
                .map(|p| i + 1 + p);
            if let Some(end) = end {
                if end > i + 1 && bytes[end] == b'}' && bytes[i + 1].is_ascii_lowercase() {
                    out.push((i..end + 1, &run[i + 1..end]));
                    i = end + 1;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

/// `run` with `{ko}` replaced by `ko` and every value of `inputs` by its
/// value; other placeholders stay as they are.
pub fn expand(run: &str, inputs: Option<&Inputs>, ko: &str) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (range, name) in placeholders(run) {
        let value = match name {
            "ko" => Some(ko),
            _ => inputs.and_then(|i| {
                i.values
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.as_str())
            }),
        };
        if let Some(value) = value {
            out.push_str(&run[last..range.start]);
            out.push_str(value);
            last = range.end;
        }
    }
    out.push_str(&run[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn specs() -> BTreeMap<String, RandomSpec> {
        toml::from_str(
            "count = { int = [1, 200] }\nbytes = { hex = 4 }\nname = { alpha = [1, 8] }\nneg = { int = [-3, -3] }",
        )
        .unwrap()
    }

    #[test]
    fn a_seed_draws_the_same_values_everywhere() {
        let a = Inputs::draw(&specs(), 42);
        expect!["seed 42: bytes=95035294 count=51 name=xmrgvcy neg=-3"].assert_eq(&a.describe());
        assert_eq!(a, Inputs::draw(&specs(), 42));
        assert_ne!(a.values, Inputs::draw(&specs(), 43).values);
    }

    #[test]
    fn values_stay_in_their_ranges() {
        for seed in 0..500 {
            let i = Inputs::draw(&specs(), seed);
            let get = |n: &str| i.values.iter().find(|(k, _)| k == n).unwrap().1.clone();
            let count: i64 = get("count").parse().unwrap();
            assert!((1..=200).contains(&count));
            assert_eq!(get("bytes").len(), 8);
            assert!((1..=8).contains(&get("name").len()));
            assert_eq!(get("neg"), "-3");
        }
    }

    #[test]
    fn bad_specs() {
        let bad = |t: &str| {
            let m: BTreeMap<String, RandomSpec> = toml::from_str(t).unwrap();
            m.values().next().unwrap().check().unwrap_err()
        };
        expect!["int = [5, 1]: empty range"].assert_eq(&bad("a = { int = [5, 1] }"));
        expect!["hex = 0: from 1 to 256 bytes"].assert_eq(&bad("a = { hex = 0 }"));
        expect!["alpha = [0, 3]: lengths from 1 to 256, the first not above the second"]
            .assert_eq(&bad("a = { alpha = [0, 3] }"));
    }

    #[test]
    fn placeholders_and_expansion() {
        let run = "insmod {ko} count={count} && echo ${HOME} {x y} { true; } {count}{bytes}";
        let names: Vec<&str> = placeholders(run).into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["ko", "count", "count", "bytes"]);
        let inputs = Inputs {
            seed: 1,
            values: vec![("count".into(), "7".into())],
        };
        expect!["insmod /lab/ref/m.ko count=7 && echo ${HOME} {x y} { true; } 7{bytes}"]
            .assert_eq(&expand(run, Some(&inputs), "/lab/ref/m.ko"));
    }

    #[test]
    fn derived_seeds_differ_by_student_and_lab() {
        let a = derive_seed(1, "alice", "lab-03");
        assert_eq!(a, derive_seed(1, "alice", "lab-03"));
        assert_ne!(a, derive_seed(1, "bob", "lab-03"));
        assert_ne!(a, derive_seed(1, "alice", "lab-04"));
        assert_ne!(a, derive_seed(2, "alice", "lab-03"));
    }
}
