//! Index encodings shared by the passes' tables.
//!
//! Files, sections and symbols are numbered, and each kind of number has its own type, so that passing a file
//! index where a section index is expected does not compile. Each is a `u32` (tables of them are as small as
//! before) with one "no index" value, `NONE` (`u32::MAX`), the encoding every pass uses.

/// "No index" in a `u32` table of indices that has no type of its own (a symbol without slots, a dropped
/// `.eh_frame` record): the same encoding as the typed indices' `NONE`.
pub const NONE: u32 = u32::MAX;

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub struct $name(pub u32);

        impl $name {
            /// No index.
            pub const NONE: $name = $name(NONE);

            #[inline(always)]
            pub const fn new(i: usize) -> $name {
                $name(i as u32)
            }
            /// The index into a table.
            #[inline(always)]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
            #[inline(always)]
            pub const fn is_none(self) -> bool {
                self.0 == NONE
            }
            #[inline(always)]
            pub const fn is_some(self) -> bool {
                self.0 != NONE
            }
            /// `None` for `NONE`.
            #[inline(always)]
            pub fn get(self) -> Option<$name> {
                self.is_some().then_some(self)
            }
        }

        impl From<$name> for usize {
            #[inline(always)]
            fn from(i: $name) -> usize {
                i.index()
            }
        }
    };
}

index_type!(
    /// An object file: its index in `Resolved::objects`.
    FileId
);
index_type!(
    /// A section of an object file: its section header index.
    SecIdx
);
index_type!(
    /// An output section: its index in the layout's list of output sections.
    OsecId
);
index_type!(
    /// A symbol of the link: interned globals are `0..num_globals`, each object's locals follow
    /// (`SymbolSpace::local_base`).
    SymId
);
index_type!(
    /// A shared object: its index in `Resolved::shared`.
    SharedId
);
