//! The sections `--icf` must keep unique, by lld's rules:
//! - a section whose address is significant: named by a symbol in an input's `.llvm_addrsig` table (all the
//!   symbols of an object that has none), or defining a symbol the output exports (another module may compare its
//!   address). Under `--icf=safe` that keeps any section unique; under `--icf=all` only data, as code is folded
//!   whatever its address means;
//! - a function with an LSDA (its FDE's CIE has an `L` augmentation): two functions with the same code may have
//!   different exception tables, which the FDEs are not compared for.

use crate::args::{Config, Icf};
use crate::diag::{Errors, Result};
use crate::elf::{self, LE};
use crate::gc::Liveness;
use crate::index::{FileId, SecIdx};
use crate::parse::{ObjectFile, SectionKind};
use crate::resolve::{Def, Resolved};
use object::elf as E;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// `SHT_LLVM_ADDRSIG`: the symbols (ULEB128 indices into the object's symbol table) whose address is taken.
const SHT_LLVM_ADDRSIG: u32 = 0x6fff_4c03;

/// Per file, per section: whether `--icf` must keep it unique.
pub fn unique_sections(config: &Config, res: &Resolved, live: &Liveness) -> Result<Vec<Vec<bool>>> {
    let unique: Vec<Vec<AtomicBool>> = res.runs.map(|f| {
        (0..res.objects[f.index()].sections.len())
            .map(|_| AtomicBool::new(false))
            .collect()
    });
    let safe = config.icf == Icf::Safe;
    // Code stays foldable under --icf=all whatever its address means.
    let significant = |tf: FileId, ts: SecIdx| {
        let t = &res.objects[tf.index()];
        if safe || t.sec(ts).flags() & E::SHF_EXECINSTR as u64 == 0 {
            unique[tf.index()][ts.index()].store(true, Relaxed);
        }
    };
    // Per file: an error, or the warning of an ignored table (printed in input order).
    let messages: Vec<(bool, String)> = res.runs.flat_map(|f| {
        let o = &res.objects[f.index()];
        if !res.object_live[f.index()] {
            return None.into_iter();
        }
        for_lsda_functions(res, live, f, |tf, ts| {
            unique[tf.index()][ts.index()].store(true, Relaxed)
        });
        let mark = |i: usize| {
            if let Some((tf, ts)) = crate::gc::target_section(res, f, i) {
                significant(tf, ts);
            }
        };
        match addrsig_table(o) {
            Ok(table) => {
                if let Err(e) = for_each_uleb(table, o.syms.len(), mark) {
                    return Some((true, format!("{}: .llvm_addrsig: {e}", o.name))).into_iter();
                }
                None.into_iter()
            }
            Err(ignored) => {
                (1..o.syms.len()).for_each(mark);
                let warning = ignored.filter(|_| safe).map(|k| {
                    format!(
                        "{}: --icf=safe conservatively ignores SHT_LLVM_ADDRSIG [index {k}] with sh_link=0 \
                         (likely created using objcopy or ld -r)",
                        o.name
                    )
                });
                warning.map(|w| (false, w)).into_iter()
            }
        }
    });
    let errors: Vec<String> = (messages.iter())
        .filter(|m| m.0)
        .map(|m| m.1.clone())
        .collect();
    if !errors.is_empty() {
        return Err(Errors(errors));
    }
    for (_, w) in messages {
        crate::diag::warn(&w);
    }
    // `--keep-unique`: unique whatever the mode and the section's kind, with lld's warning for a name no object
    // defines.
    for name in &config.keep_unique {
        let def = res
            .names
            .lookup(name.as_bytes())
            .map(|g| res.defs[g.index()]);
        match def {
            Some(Def::Object { file, sym }) => {
                let t = &res.objects[file.index()];
                let s = t.sym_shndx(sym as usize) as usize;
                if s != 0 && s < t.sections.len() {
                    unique[file.index()][s].store(true, Relaxed);
                }
            }
            _ => crate::diag::warn(&format!("could not find symbol {name} to keep unique")),
        }
    }
    for g in crate::gc::exported_symbols(config, res) {
        if let Def::Object { file, sym } = res.defs[g.index()] {
            let t = &res.objects[file.index()];
            let s = t.sym_shndx(sym as usize) as usize;
            if s != 0 && s < t.sections.len() {
                significant(file, SecIdx::new(s));
            }
        }
    }
    Ok(unique
        .into_iter()
        .map(|v| v.into_iter().map(AtomicBool::into_inner).collect())
        .collect())
}

/// The object's address-significance table; without one that can be trusted, the index of the one ignored, if any:
/// a table with `sh_link` 0 was rewritten by a tool that reorders symbols (`objcopy`, `ld -r`), and is ignored as
/// if there were none (under `--icf=safe` with lld's warning).
fn addrsig_table(o: &ObjectFile) -> std::result::Result<&'static [u8], Option<usize>> {
    let k = (o.shdrs.iter())
        .position(|sh| sh.sh_type.get(LE) == SHT_LLVM_ADDRSIG)
        .ok_or(None)?;
    let sh = &o.shdrs[k];
    if sh.sh_link.get(LE) == 0 {
        return Err(Some(k));
    }
    elf::slice(o.data, sh.sh_offset.get(LE), sh.sh_size.get(LE)).ok_or(None)
}

/// Calls `visit` with each ULEB128 number of `table`, each checked to be below `limit`.
fn for_each_uleb(
    table: &[u8],
    limit: usize,
    mut visit: impl FnMut(usize),
) -> std::result::Result<(), String> {
    let mut at = 0;
    while at < table.len() {
        let (mut v, mut shift) = (0u64, 0u32);
        loop {
            let Some(&b) = table.get(at) else {
                return Err("truncated ULEB128 number".into());
            };
            at += 1;
            if shift >= 64 {
                return Err("ULEB128 number too large".into());
            }
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        if v as usize >= limit {
            return Err(format!("symbol index {v} out of range"));
        }
        visit(v as usize);
    }
    Ok(())
}

/// Calls `visit` with the section of each function of object `f` whose FDE's CIE has an LSDA (an `L` in its
/// augmentation string). Malformed records are left to the `.eh_frame` pass, which reports them.
fn for_lsda_functions(
    res: &Resolved,
    live: &Liveness,
    f: FileId,
    mut visit: impl FnMut(FileId, SecIdx),
) {
    let o = &res.objects[f.index()];
    for (s, sec) in o.secs() {
        if sec.kind != SectionKind::EhFrame || !live.live[f.index()][s.index()] {
            continue;
        }
        let (d, relas) = (sec.data(), sec.relas());
        let mut lsda_cies: Vec<usize> = Vec::new();
        let (mut off, mut rel) = (0usize, 0usize);
        while let Some(len) = elf::read_u32(d, off) {
            let size = 4 + len as usize;
            if len == 0xffff_ffff || off + size > d.len() {
                break;
            }
            let id = elf::read_u32(d, off + 4).unwrap_or(0) as usize;
            if len == 0 {
                off += 4;
                continue;
            }
            if id == 0 {
                let aug = d.get(off + 9..off + size).unwrap_or(&[]);
                let aug = &aug[..elf::memchr0(aug).unwrap_or(0)];
                if aug.first() == Some(&b'z') && aug.contains(&b'L') {
                    lsda_cies.push(off);
                }
            } else if (off + 4)
                .checked_sub(id)
                .is_some_and(|c| lsda_cies.contains(&c))
            {
                // The FDE's first relocation is its pc_begin.
                while relas
                    .get(rel)
                    .is_some_and(|r| (r.r_offset.get(LE) as usize) < off)
                {
                    rel += 1;
                }
                if let Some(r) = relas
                    .get(rel)
                    .filter(|r| (r.r_offset.get(LE) as usize) < off + size)
                    && let Some((tf, ts)) =
                        crate::gc::target_section(res, f, r.r_sym(LE, false) as usize)
                {
                    visit(tf, ts);
                }
            }
            off += size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::for_each_uleb;

    #[test]
    fn address_significance_table_is_uleb128_symbol_indices() {
        let mut seen = Vec::new();
        assert!(for_each_uleb(&[1, 0x85, 0x01, 7], 200, |i| seen.push(i)).is_ok());
        assert_eq!(seen, [1, 133, 7]);
        assert!(
            for_each_uleb(&[0x85], 200, |_| {})
                .unwrap_err()
                .contains("truncated")
        );
        assert!(
            for_each_uleb(&[0x85, 0x01], 100, |_| {})
                .unwrap_err()
                .contains("out of range")
        );
    }
}
