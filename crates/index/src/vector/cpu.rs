//! The one choice of vector unit for both kinds of vector work in this crate: the f32 dot
//! product of exact scores ([`super::dot`]) and the int8 first pass of
//! [`super::VectorIndex::search_many`] ([`super::quantized`]). Levels are cumulative: a level
//! holds every feature of the levels below it, so a kernel written for a level runs on any CPU
//! detected at that level or above, and the check covers every feature a kernel's
//! `#[target_feature]` enables.

/// The widest vector unit found on this CPU, each level including the ones below.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// Portable code only.
    Portable = 1,
    /// AVX2 with FMA: the f32 kernel `dot_avx2` (`avx2,fma`) and the int8 kernel
    /// `idot4_avx2` (`avx2`).
    Avx2 = 2,
    /// Also AVX-512 F: the f32 kernel `dot_avx512` (`avx512f`).
    Avx512 = 3,
    /// Also AVX-512 BW and VNNI: the int8 kernels `idot4_vnni` and `scan4x4_vnni`
    /// (`avx512f,avx512bw,avx512vnni`).
    Avx512Vnni = 4,
}

/// What this CPU offers, detected once.
pub(crate) fn level() -> Level {
    use std::sync::atomic::{AtomicU8, Ordering};
    static LEVEL: AtomicU8 = AtomicU8::new(0);
    match LEVEL.load(Ordering::Relaxed) {
        1 => Level::Portable,
        2 => Level::Avx2,
        3 => Level::Avx512,
        4 => Level::Avx512Vnni,
        _ => {
            let level = detect();
            LEVEL.store(level as u8, Ordering::Relaxed);
            level
        }
    }
}

/// The level from the CPU's feature flags (not cached).
fn detect() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if !(has!("avx2") && has!("fma")) {
            return Level::Portable;
        }
        if !has!("avx512f") {
            return Level::Avx2;
        }
        if !(has!("avx512bw") && has!("avx512vnni")) {
            return Level::Avx512;
        }
        Level::Avx512Vnni
    }
    #[cfg(not(target_arch = "x86_64"))]
    Level::Portable
}

/// Every level this CPU can run, the portable one first (for tests that run each kernel).
#[cfg(test)]
pub(crate) fn levels_here() -> Vec<Level> {
    [
        Level::Portable,
        Level::Avx2,
        Level::Avx512,
        Level::Avx512Vnni,
    ]
    .into_iter()
    .filter(|l| *l <= level())
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The level is the highest one whose every feature (and every lower level's) the CPU
    /// reports, feature by feature.
    #[test]
    fn the_level_needs_every_feature_of_its_kernels() {
        let got = level();
        assert_eq!(got, detect(), "cached and fresh detection agree");
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let avx2 = has!("avx2") && has!("fma");
            let avx512 = avx2 && has!("avx512f");
            let vnni = avx512 && has!("avx512bw") && has!("avx512vnni");
            assert_eq!(got >= Level::Avx2, avx2);
            assert_eq!(got >= Level::Avx512, avx512);
            assert_eq!(got >= Level::Avx512Vnni, vnni);
            eprintln!("vector unit on this CPU: {got:?}");
        }
        #[cfg(not(target_arch = "x86_64"))]
        assert_eq!(got, Level::Portable);
        assert_eq!(levels_here().first(), Some(&Level::Portable));
        assert_eq!(levels_here().last(), Some(&got));
    }
}
