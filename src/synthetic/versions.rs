//! Symbol versions: `.gnu.version` (one index per dynamic symbol), `.gnu.version_d` (the versions this output
//! defines: the base, named after the output, and a version script's named nodes) and `.gnu.version_r` (the
//! versions it needs from each library), sized and written here from the same data.

use super::DynSymbol;
use crate::args::Config;
use crate::elf;
use object::elf as E;
use rustc_hash::FxHashMap as HashMap;

/// (soname offset, [(version name, version index, name offset)]) per needed library with versions.
pub type Verneed = Vec<(usize, Vec<(&'static [u8], u16, u32)>)>;

/// The name of version 1 in `.gnu.version_d`: the soname, or else the output file's name.
pub fn version_base_name(config: &Config) -> String {
    config.soname.clone().unwrap_or_else(|| {
        config
            .output
            .file_name()
            .map_or_else(|| "a.out".into(), |n| n.to_string_lossy().into_owned())
    })
}

/// The size of `.gnu.version` for `count` dynamic symbols (the null one included).
pub fn versym_size(count: u64) -> u64 {
    2 * count
}

/// Writes `.gnu.version`: entry 0 (the null symbol) stays 0.
pub fn write_versym(out: &mut [u8], dynsyms: &[DynSymbol]) {
    for (e, d) in out.chunks_exact_mut(2).skip(1).zip(dynsyms) {
        e.copy_from_slice(&d.version.to_le_bytes());
    }
}

/// The size of `.gnu.version_d`: the base and each named node, a Verdef (20 bytes) with a Verdaux (8 bytes) for
/// its name and one per dependency.
pub fn verdef_size(version_defs: &[(String, Vec<String>)]) -> u64 {
    28 + version_defs
        .iter()
        .map(|(_, deps)| 28 + 8 * deps.len() as u64)
        .sum::<u64>()
}

/// Writes `.gnu.version_d`: the base version (`base`, flagged as such), then the named nodes with their
/// dependencies, names as offsets in `.dynstr` (`dyn_strings`).
pub fn write_verdef(
    out: &mut [u8],
    base: &str,
    version_defs: &[(String, Vec<String>)],
    dyn_strings: &HashMap<Vec<u8>, u32>,
) {
    let mut list: Vec<(&str, &[String], u16)> = vec![(base, &[], E::VER_FLG_BASE)];
    list.extend(version_defs.iter().map(|(n, d)| (n.as_str(), &d[..], 0u16)));
    let mut off = 0;
    for (k, (name, deps, flags)) in list.iter().enumerate() {
        let size = 20 + 8 * (1 + deps.len());
        let next = if k + 1 == list.len() { 0 } else { size as u32 };
        let e = &mut out[off..off + 20];
        e[0..2].copy_from_slice(&1u16.to_le_bytes());
        e[2..4].copy_from_slice(&flags.to_le_bytes());
        e[4..6].copy_from_slice(&(k as u16 + 1).to_le_bytes());
        e[6..8].copy_from_slice(&(1 + deps.len() as u16).to_le_bytes());
        e[8..12].copy_from_slice(&elf::sysv_hash(name.as_bytes()).to_le_bytes());
        e[12..16].copy_from_slice(&20u32.to_le_bytes());
        e[16..20].copy_from_slice(&next.to_le_bytes());
        let names = std::iter::once(*name).chain(deps.iter().map(String::as_str));
        let count = 1 + deps.len();
        for (j, n) in names.enumerate() {
            let a = &mut out[off + 20 + 8 * j..off + 28 + 8 * j];
            let name_off = dyn_strings.get(n.as_bytes()).copied().unwrap_or(0);
            a[0..4].copy_from_slice(&name_off.to_le_bytes());
            let anext: u32 = if j + 1 == count { 0 } else { 8 };
            a[4..8].copy_from_slice(&anext.to_le_bytes());
        }
        off += size;
    }
}

/// The size of `.gnu.version_r`: a Verneed (16 bytes) per library and a Vernaux (16 bytes) per version.
pub fn verneed_size(verneed: &Verneed) -> u64 {
    verneed.iter().map(|(_, l)| 16 + 16 * l.len() as u64).sum()
}

/// Writes `.gnu.version_r`.
pub fn write_verneed(out: &mut [u8], verneed: &Verneed) {
    let mut off = 0;
    for (k, (soname, list)) in verneed.iter().enumerate() {
        let next = if k + 1 == verneed.len() {
            0
        } else {
            16 + 16 * list.len() as u32
        };
        let e = &mut out[off..off + 16];
        e[0..2].copy_from_slice(&1u16.to_le_bytes());
        e[2..4].copy_from_slice(&(list.len() as u16).to_le_bytes());
        e[4..8].copy_from_slice(&(*soname as u32).to_le_bytes());
        e[8..12].copy_from_slice(&16u32.to_le_bytes());
        e[12..16].copy_from_slice(&next.to_le_bytes());
        off += 16;
        for (j, (name, idx, name_off)) in list.iter().enumerate() {
            let a = &mut out[off..off + 16];
            a[0..4].copy_from_slice(&elf::sysv_hash(name).to_le_bytes());
            a[4..6].copy_from_slice(&0u16.to_le_bytes());
            a[6..8].copy_from_slice(&idx.to_le_bytes());
            a[8..12].copy_from_slice(&name_off.to_le_bytes());
            a[12..16].copy_from_slice(&(if j + 1 == list.len() { 0u32 } else { 16 }).to_le_bytes());
            off += 16;
        }
    }
}
