//! GNU linker scripts: the lexer (`lexer`), the parser of the whole command language (`parse`) into commands
//! (`ast`), and what a link applies of them (`input`: scripts given as inputs, like glibc's `libc.so`).

pub mod ast;
pub mod input;
pub mod insert;
pub mod lexer;
pub mod ordering;
pub mod parse;
pub mod sections;

pub use input::{looks_like_script, parse_input};

/// The keyword of a top-level command, for diagnostics.
pub fn command_name(c: &ast::Command) -> &'static str {
    use ast::Command::*;
    match c {
        Entry(_) => "ENTRY",
        Input(_) => "INPUT",
        Group(_) => "GROUP",
        Output(_) => "OUTPUT",
        SearchDir(_) => "SEARCH_DIR",
        Startup(_) => "STARTUP",
        OutputFormat(_) => "OUTPUT_FORMAT",
        OutputArch(_) => "OUTPUT_ARCH",
        Target(_) => "TARGET",
        Extern(_) => "EXTERN",
        ForceCommonAllocation => "FORCE_COMMON_ALLOCATION",
        InhibitCommonAllocation => "INHIBIT_COMMON_ALLOCATION",
        ForceGroupAllocation => "FORCE_GROUP_ALLOCATION",
        NoCrossRefs { to: false, .. } => "NOCROSSREFS",
        NoCrossRefs { to: true, .. } => "NOCROSSREFS_TO",
        RegionAlias(..) => "REGION_ALIAS",
        LdFeature(_) => "LD_FEATURE",
        Assert(..) => "ASSERT",
        Assign(_) => "a symbol assignment",
        Version(_) => "VERSION",
        Memory(_) => "MEMORY",
        Phdrs(_) => "PHDRS",
        Sections(_) => "SECTIONS",
        Insert { .. } => "INSERT",
    }
}
