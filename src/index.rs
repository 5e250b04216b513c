//! Index encodings shared by the passes' tables.

/// "No index" in a `u32` table of indices (a dead section's output section, a symbol without slots): the one
/// encoding every pass uses.
pub const NONE: u32 = u32::MAX;
