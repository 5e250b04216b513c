//! Whether the linked objects ask for an executable stack, by GNU ld's rule, and GNU ld's one warning about it.
//!
//! An object's `.note.GNU-stack` says what its code needs: executable (`SHF_EXECINSTR`: gcc's trampolines for
//! nested functions whose address is taken) or not. Where some object has the note, GNU ld makes the stack
//! executable when one object's note asks for it, or when an object lacks the note (older assembly, `-b binary`
//! blobs), which it still reads as asking; it warns once, naming the first object whose note asks, else the last
//! one without a note. Where no object has the note, GNU ld writes no `PT_GNU_STACK`; rivet writes a
//! non-executable one there, as lld and mold do (Linux gives x86-64 programs without one a non-executable stack).

use crate::args::Config;
use crate::index::FileId;
use crate::resolve::Resolved;

/// The linked objects' notes, walked in load order as GNU ld walks its inputs.
pub struct StackNotes {
    /// Some object has a `.note.GNU-stack`.
    pub any: bool,
    /// The first object whose note asks for an executable stack (GNU ld stops at it).
    pub exec: Option<FileId>,
    /// The last object before it without a note.
    pub missing: Option<FileId>,
}

impl StackNotes {
    pub fn of(res: &Resolved) -> StackNotes {
        let mut notes = StackNotes {
            any: false,
            exec: None,
            missing: None,
        };
        for f in res.order.files(res.objects.len()) {
            if !res.object_live[f.index()] {
                continue;
            }
            match res.objects[f.index()].stack_note {
                Some(exec) => {
                    notes.any = true;
                    if exec {
                        notes.exec = Some(f);
                        break;
                    }
                }
                None => notes.missing = Some(f),
            }
        }
        notes
    }

    /// Whether the notes ask for an executable stack (see the module's comment), with GNU ld's warning unless
    /// `--no-warn-execstack`.
    pub fn ask_exec(&self, config: &Config, res: &Resolved) -> bool {
        if !self.any {
            return false;
        }
        let (f, why) = match (self.exec, self.missing) {
            (Some(f), _) => (
                f,
                "requires executable stack (because the .note.GNU-stack section is executable)",
            ),
            (None, Some(f)) => (
                f,
                "missing .note.GNU-stack section implies executable stack",
            ),
            (None, None) => return false,
        };
        if config.warn_execstack != Some(false) {
            crate::diag::warn(&format!("{}: {why}", res.objects[f.index()].name));
            if self.exec.is_none() {
                crate::diag::note(
                    "This behaviour is deprecated and will be removed in a future version of the linker",
                );
            }
        }
        true
    }
}

/// Whether a final link's `PT_GNU_STACK` makes the stack executable: `-z execstack` or `-z noexecstack`, else
/// what the objects' notes ask for.
pub fn final_link(config: &Config, res: &Resolved) -> bool {
    if config.execstack {
        warn_option(config);
        return true;
    }
    !config.noexecstack && StackNotes::of(res).ask_exec(config, res)
}

/// `--warn-execstack`'s warning about `-z execstack` itself.
pub fn warn_option(config: &Config) {
    if config.execstack && config.warn_execstack == Some(true) {
        crate::diag::warn(
            "enabling an executable stack because of -z execstack command line option",
        );
    }
}
