//! Layout rule for `-n` (`--nmagic`): where the data starts. GNU ld's `-n` script is its default one without
//! demand paging, so the data (the RELRO part, then the rest) goes where `DATA_SEGMENT_ALIGN` and
//! `DATA_SEGMENT_RELRO_END` put it, in the one load that also holds the code. GNU ld 2.40 decides that in a
//! second sizing pass, from the first; this computes the second pass's start directly from the sections' sizes.

use super::OutputSection;
use crate::elf::align_up;

/// Where the data starts, and how the end of its RELRO part is padded.
pub(super) struct DataStart {
    pub addr: u64,
    /// `Some(offset)`: the RELRO part ends `offset` bytes before a maximum-size page boundary (GNU's
    /// `DATA_SEGMENT_RELRO_END`, whose offset keeps `.got.plt`'s three reserved words inside it).
    pub relro_end_offset: Option<u64>,
}

/// The data's start after code ending at `dot`. `data` is the data sections in layout order, each with whether
/// the rules call it RELRO; `max_page` and `common_page` are `-z max-page-size` and `-z common-page-size`.
///
/// - With RELRO (`-z relro`): the RELRO part is laid out from the next page, its end rounded up to a maximum-size
///   page, and each RELRO section then moved up towards that end as far as its alignment lets it, from the last
///   back, as GNU ld does; the data starts where the first of them lands.
/// - Without: the next page at the same offset in it as `dot` (`ALIGN(MAXPAGESIZE) + (. & (MAXPAGESIZE - 1))`),
///   or the next page's start where that keeps the data on fewer common-size pages.
///
/// GNU ld takes the first way only where the RELRO part is not empty, or where it edited `.eh_frame` (which
/// makes it size the sections once more, in the RELRO phase): `has_eh_frame` stands for the second, since GNU
/// ld edits every `.eh_frame` that compilers write.
pub(super) fn start(
    dot: u64,
    data: &[(&OutputSection, bool)],
    (max_page, common_page): (u64, u64),
    relro: bool,
    has_eh_frame: bool,
) -> DataStart {
    let next_page = align_up(dot, max_page);
    // GNU's script: `DATA_SEGMENT_RELRO_END (SIZEOF (.got.plt) >= 24 ? 24 : 0, .)`, just before `.got.plt`.
    let offset = match data.iter().find(|(o, _)| o.name == b".got.plt") {
        Some((o, _)) if o.size >= 24 => 24,
        _ => 0,
    };
    let relro_secs: Vec<&OutputSection> = (data.iter())
        .filter(|&&(_, r)| r)
        .map(|&(o, _)| o)
        .collect();
    if relro && (!relro_secs.is_empty() || offset > 0 || has_eh_frame) {
        // The first pass: the RELRO sections from the next page.
        let mut at = next_page;
        let mut spans = Vec::with_capacity(relro_secs.len());
        for o in &relro_secs {
            // `.tbss` takes no addresses from the sections after it.
            let size = if o.is_tls() && o.is_nobits() {
                0
            } else {
                o.size
            };
            at = align_up(at, o.align.max(1)) + size;
            spans.push((o.align.max(1), size));
        }
        // Then each moved up to end where the next starts.
        let mut end = align_up(at + offset, max_page) - offset;
        for &(align, size) in spans.iter().rev() {
            end = (end - size) & !(align - 1);
        }
        return DataStart {
            addr: end,
            relro_end_offset: Some(offset),
        };
    }
    let base = next_page + (dot & (max_page - 1));
    let mut end = base;
    for (o, _) in data {
        end = align_up(end, o.align.max(1));
        if !(o.is_tls() && o.is_nobits()) {
            end += o.size;
        }
    }
    let common = common_page.max(1);
    let first = base.wrapping_neg() & (common - 1);
    let last = end & (common - 1);
    let saves_a_page = first != 0
        && last != 0
        && base & !(common - 1) != end & !(common - 1)
        && first + last <= common;
    let addr = match saves_a_page {
        true => next_page + ((dot + common - 1) & (max_page - common)),
        false => base,
    };
    DataStart {
        addr,
        relro_end_offset: None,
    }
}
