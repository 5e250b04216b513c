//! `.note.gnu.property`: the program properties of the output, merged from those of its relocatable inputs as the
//! Linux gABI extension says (GNU ld's rules), and `PT_GNU_PROPERTY` pointing at them. The loader reads them: the
//! shadow stack and indirect branch tracking marks (CET), the ISA level a program needs (glibc refuses to run a
//! program that needs more than the CPU has).
//!
//! Each 4-byte property merges by its type's range: an AND property keeps a bit only if every input has it (an
//! input without the property counts as zero), an OR property a bit any input has, an OR-AND one the OR only if
//! every input has the property. A property that merges to zero is left out, and so is the note when none is left.
//! The processor-specific ranges and bits come from the architecture (`Arch::property_merge`).

use crate::arch::{Arch, PropertyMerge};
use crate::args::{Config, Report};
use crate::diag::{Errors, Result};
use crate::parse::ObjectFile;

use crate::elf::NT_GNU_PROPERTY_TYPE_0;

/// The generic ranges (gABI): `GNU_PROPERTY_UINT32_AND_LO..HI` and `GNU_PROPERTY_UINT32_OR_LO..HI`.
fn merge_rule<A: Arch>(pr_type: u32) -> PropertyMerge {
    match pr_type {
        0xb000_0000..=0xb000_7fff => PropertyMerge::And,
        0xb000_8000..=0xb000_ffff => PropertyMerge::Or,
        _ => A::property_merge(pr_type),
    }
}

/// The output's properties, sorted by type, from the relocatable inputs in the link and the `-z` options that set
/// them; warns or fails under `-z cet-report=` about inputs without the CET marks.
pub fn merge<A: Arch>(config: &Config, objects: &[&ObjectFile]) -> Result<Vec<(u32, u32)>> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    // Every type any input has, then each merged over all inputs.
    let mut types: Vec<u32> = objects
        .iter()
        .flat_map(|o| o.gnu_props.iter().flatten().map(|&(t, _)| t))
        .collect();
    types.sort_unstable();
    types.dedup();
    for t in types {
        let mut values = objects.iter().map(|o| {
            o.gnu_props
                .iter()
                .flatten()
                .filter(|&&(pt, _)| pt == t)
                .fold(None, |v: Option<u32>, &(_, x)| Some(v.unwrap_or(0) | x))
        });
        let merged = match merge_rule::<A>(t) {
            PropertyMerge::And => values.fold(u32::MAX, |a, v| a & v.unwrap_or(0)),
            PropertyMerge::Or => values.fold(0, |a, v| a | v.unwrap_or(0)),
            PropertyMerge::OrAnd => values.try_fold(0, |a, v| v.map(|v| a | v)).unwrap_or(0),
            PropertyMerge::Skip => 0,
        };
        if merged != 0 && !objects.is_empty() {
            out.push((t, merged));
        }
    }
    for (t, bits) in A::forced_properties(config.z_ibt, config.z_shstk, config.z_isa_level) {
        match out.iter_mut().find(|(pt, _)| *pt == t) {
            Some((_, v)) => *v |= bits,
            None if bits != 0 => out.push((t, bits)),
            None => {}
        }
    }
    out.sort_unstable();
    if config.cet_report != Report::None {
        let mut msgs = Vec::new();
        for o in objects {
            let missing = A::cet_missing(o.gnu_props.as_deref().unwrap_or(&[]));
            if !missing.is_empty() {
                let plural = if missing.len() > 1 {
                    "properties"
                } else {
                    "property"
                };
                msgs.push(format!(
                    "{}: missing {} {plural}",
                    o.name,
                    missing.join(" and ")
                ));
            }
        }
        if config.cet_report == Report::Error && !msgs.is_empty() {
            return Err(Errors(msgs));
        }
        for m in msgs {
            crate::diag::warn(&m);
        }
    }
    Ok(out)
}

/// The bytes of one property: its 8-byte header and its 4-byte value, padded to the class's word (ELF32's
/// properties are 4-byte aligned, ELF64's 8).
fn entry_size() -> usize {
    if crate::elf::elf32_addend().is_some() {
        12
    } else {
        16
    }
}

/// The size of the note for `props` (none: no section).
pub fn size(props: &[(u32, u32)]) -> u64 {
    if props.is_empty() {
        0
    } else {
        16 + (entry_size() * props.len()) as u64
    }
}

/// Writes the note (`out` is `size(props)` bytes): one `NT_GNU_PROPERTY_TYPE_0` note, owner "GNU", each property
/// 8 bytes of header and its value padded to the class's word.
pub fn write(out: &mut [u8], props: &[(u32, u32)]) {
    let each = entry_size();
    out.fill(0);
    out[0..4].copy_from_slice(&4u32.to_le_bytes());
    out[4..8].copy_from_slice(&((each * props.len()) as u32).to_le_bytes());
    out[8..12].copy_from_slice(&NT_GNU_PROPERTY_TYPE_0.to_le_bytes());
    out[12..16].copy_from_slice(b"GNU\0");
    for (k, &(t, v)) in props.iter().enumerate() {
        let p = &mut out[16 + each * k..16 + each * (k + 1)];
        p[0..4].copy_from_slice(&t.to_le_bytes());
        p[4..8].copy_from_slice(&4u32.to_le_bytes());
        p[8..12].copy_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_writes() {
        let props = [(0xc000_0002, 3), (0xc000_8002, 1)];
        let mut note = vec![0u8; size(&props) as usize];
        write(&mut note, &props);
        assert_eq!(crate::elf::note_properties(&note).unwrap(), props);
        assert!(crate::elf::note_properties(&note[..20]).is_err());
    }
}
