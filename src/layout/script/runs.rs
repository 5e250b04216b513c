//! Runs of input sections that one statement places one after another. The address walk (`walk`) is sequential
//! and makes two passes or more (`DATA_SEGMENT_RELRO_END`, `SIZEOF_HEADERS`); with runs, a pass moves a whole
//! run by its start, with the size it has from a start of that remainder modulo its alignment (the last one
//! kept: later passes mostly ask the same), instead of placing a large link's sections one by one, and the
//! sections' offsets are written once, after the last pass (`place_runs`).

use super::walk::CodeGap;
use super::{OutputSection, ScriptInput};
use crate::elf::align_up;
use crate::index::OsecId;
use object::elf as E;
use rayon::prelude::*;
use std::cell::Cell;

/// Entries `first..end` of a list: one statement's input sections (and the merged ones among them that are not
/// the list's first, which place nothing); `align`, the largest of their alignments.
#[derive(Debug)]
pub struct Run {
    pub first: u32,
    pub end: u32,
    pub align: u64,
    /// A start's remainder modulo `align` and the size the run has from there: the last one asked.
    sized: Cell<(u64, u64)>,
}

impl Run {
    /// The run's size (of `list`'s entries) from a start at `dot`.
    pub fn size_from(&self, list: &[ScriptInput], dot: u64) -> u64 {
        let rem = dot % self.align;
        let (r, size) = self.sized.get();
        if r == rem && size != u64::MAX {
            return size;
        }
        let mut end = rem;
        for e in list[self.first as usize..self.end as usize]
            .iter()
            .filter(|e| !e.is_merged())
        {
            end = align_up(end, e.align).saturating_add(e.size);
        }
        let size = end - rem;
        self.sized.set((rem, size));
        size
    }
}

/// Where a pass put a run: the location counter at its start and the address of its output section, or `APART`
/// where the pass placed its sections one by one (`SUBALIGN` applies).
pub type RunAt = (u64, u64);
pub const APART: RunAt = (u64::MAX, 0);

/// Each list's runs, in list order. A linker-made section and the list's first merged one (which brings the
/// merged strings) are placed on their own, between runs.
pub fn list_runs(lists: &[Vec<ScriptInput>]) -> Vec<Vec<Run>> {
    (lists.par_iter()).map(|l| runs_of(l)).collect()
}

fn runs_of(list: &[ScriptInput]) -> Vec<Run> {
    let first_merged = list.iter().position(|e| e.is_merged());
    let inert = |j: usize| list[j].is_merged() && Some(j) != first_merged;
    let plain = |j: usize| !list[j].is_linker_made() && !list[j].is_merged();
    let mut runs = Vec::new();
    let mut j = 0;
    while j < list.len() {
        if !plain(j) && !inert(j) {
            j += 1;
            continue;
        }
        let (first, stmt) = (j, list[j].stmt);
        let mut align = 1u64;
        while j < list.len() && list[j].stmt == stmt && (plain(j) || inert(j)) {
            if plain(j) {
                align = align.max(list[j].align);
            }
            j += 1;
        }
        runs.push(Run {
            first: first as u32,
            end: j as u32,
            align,
            sized: Cell::new((0, u64::MAX)),
        });
    }
    runs
}

/// What the last pass of the walk left for `place_runs`: per output section, per run, where it went; and per
/// output section, whether nothing but its runs needs padding in its inputs' range (`State::runs_only`), and
/// whether it has a fill pattern.
pub struct Placed<'a> {
    pub at: &'a [Vec<RunAt>],
    pub runs_only: &'a [bool],
    pub filled: &'a [bool],
}

/// The offsets of the sections of the runs the last pass placed whole, and the padding before each: in an output
/// section where only runs need it, for its writer (`pads`; `pads_known` set where every one fits), elsewhere as
/// code gaps where the section is code, as the walk records them for a section placed on its own
/// (`State::place_input`); as gaps too where it has a fill pattern, which starts again at each gap.
pub fn place_runs(
    (lists, runs, placed): (&[Vec<ScriptInput>], &[Vec<Run>], Placed),
    osecs: &mut [OutputSection],
    (sec_off, pads): (&mut [Vec<u64>], &mut [Vec<u16>]),
    code_gaps: &mut Vec<CodeGap>,
) {
    for (i, list) in lists.iter().enumerate() {
        let filled = placed.filled.get(i).copied().unwrap_or(false);
        let code = osecs[i].flags & E::SHF_EXECINSTR as u64 != 0 || filled;
        let mut gaps = Vec::new();
        let mut narrow = placed.runs_only[i];
        for (run, &(start, addr)) in runs[i].iter().zip(&placed.at[i]) {
            if (start, addr) == APART {
                continue;
            }
            let mut dot = start;
            for e in &list[run.first as usize..run.end as usize] {
                if e.is_merged() {
                    continue;
                }
                let at = align_up(dot, e.align);
                if code && at > dot {
                    gaps.push((OsecId::new(i), dot - addr, at - dot));
                }
                match u16::try_from(at - dot) {
                    Ok(pad) => pads[e.file.index()][e.sec.index()] = pad,
                    Err(_) => narrow = false,
                }
                sec_off[e.file.index()][e.sec.index()] = at - addr;
                dot = at.saturating_add(e.size);
            }
        }
        osecs[i].pads_known = narrow;
        if !narrow || filled {
            code_gaps.append(&mut gaps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{FileId, SecIdx};

    fn input(stmt: u32, size: u64, align: u64) -> ScriptInput {
        ScriptInput {
            stmt,
            file: FileId::new(0),
            sec: SecIdx::new(0),
            size,
            align,
        }
    }

    #[test]
    fn runs_split_at_statements_and_the_first_merged_section() {
        let merged = input(1, 0, 0);
        let list = [
            input(0, 3, 1),
            input(0, 8, 16),
            input(1, 1, 4),
            merged,
            input(1, 2, 2),
            merged,
            input(1, 5, 8),
        ];
        let runs = runs_of(&list);
        let shape: Vec<(u32, u32, u64, u64)> = (runs.iter())
            .map(|r| (r.first, r.end, r.align, r.size_from(&list, 0)))
            .collect();
        // 3 bytes, then 8 at 16; 1 byte; then 2 at 2 (past the later merged one, which places nothing), 5 at 8.
        assert_eq!(shape, [(0, 2, 16, 24), (2, 3, 4, 1), (4, 7, 8, 13)]);
        // From 5 past a 16-byte boundary: 3 bytes, 8 at the next boundary.
        assert_eq!(runs[0].size_from(&list, 0x105), 19);
        assert_eq!(runs[0].size_from(&list, 0x200), 24);
    }

    #[test]
    fn a_whole_run_is_placed_as_its_sections_one_by_one() {
        let list = vec![input(0, 3, 1), input(0, 7, 16), input(0, 5, 4)];
        let runs = vec![runs_of(&list)];
        let code = (E::SHF_ALLOC | E::SHF_EXECINSTR) as u64;
        let mut osecs = vec![OutputSection::new(b".text", E::SHT_PROGBITS, code)];
        // At 0x1020 in a section at 0x1000; the three share section 0 of file 0 here, whose offset and padding
        // are the last one's: 32 + 16 + 7, aligned to 4, after 1 byte of padding.
        for (runs_only, pads_known, gaps) in [(true, true, 0), (false, false, 1)] {
            let (mut sec_off, mut pads) = (vec![vec![0u64; 1]], vec![vec![0u16; 1]]);
            let mut code_gaps = Vec::new();
            let placed = Placed {
                at: &[vec![(0x1020, 0x1000)]],
                runs_only: &[runs_only],
                filled: &[false],
            };
            place_runs(
                (std::slice::from_ref(&list), &runs, placed),
                &mut osecs,
                (&mut sec_off, &mut pads),
                &mut code_gaps,
            );
            assert_eq!((sec_off[0][0], pads[0][0]), (56, 1));
            assert_eq!(osecs[0].pads_known, pads_known);
            // Padded by the sections' writers, or else by code gaps: 13 bytes before the second section, 1
            // before the third.
            let want = [(OsecId::new(0), 35, 13), (OsecId::new(0), 55, 1)];
            assert_eq!(code_gaps, &want[..2 * gaps]);
        }
    }
}
