//! An entry of `-r`'s symbol table and where it is defined: made by `symbols` and `assign`, read by the writers.

use crate::index::OsecId;

/// Where an output symbol is defined.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Undef,
    Abs,
    Common,
    Sec(OsecId),
    /// In the output's group section of this index in `Plan::groups`.
    Group(usize),
}

#[derive(Clone, Copy)]
pub struct OutSym<'a> {
    pub name: &'a [u8],
    pub value: u64,
    pub size: u64,
    pub info: u8,
    pub other: u8,
    pub place: Place,
}
