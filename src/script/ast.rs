//! What a linker script says, as GNU ld's manual ("Linker Scripts") defines its commands: the parser's output,
//! before any of it is applied to a link.

use super::lexer::Pos;
use crate::expr::Expr;

/// One input named by `INPUT` or `GROUP`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptInput {
    /// A path, or `-lNAME`.
    pub name: String,
    pub as_needed: bool,
}

/// `SYM = EXPR;` and the other operators, possibly inside `PROVIDE`, `PROVIDE_HIDDEN` or `HIDDEN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The symbol, or `.` for the location counter.
    pub target: String,
    /// `=`, or the operator of `+=`, `-=`, `*=`, `/=`, `<<=`, `>>=`, `&=`, `|=`, `^=` (without the `=`).
    pub op: &'static str,
    pub expr: Expr,
    /// The expression as written (for evaluation with `--defsym`'s).
    pub text: String,
    /// `PROVIDE`/`PROVIDE_HIDDEN`: defined only if referenced and not defined elsewhere.
    pub provide: bool,
    /// `HIDDEN`/`PROVIDE_HIDDEN`.
    pub hidden: bool,
    pub pos: Pos,
}

/// A top-level command and where it is, as `FILE:LINE:COL` for diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub cmd: Command,
    pub at: String,
}

/// A top-level command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Entry(String),
    Input(Vec<ScriptInput>),
    Group(Vec<ScriptInput>),
    Output(String),
    SearchDir(String),
    Startup(String),
    /// `OUTPUT_FORMAT(default[, big, little])`.
    OutputFormat(Vec<String>),
    OutputArch(String),
    Target(String),
    Extern(Vec<String>),
    ForceCommonAllocation,
    InhibitCommonAllocation,
    ForceGroupAllocation,
    NoCrossRefs {
        to: bool,
        sections: Vec<String>,
    },
    RegionAlias(String, String),
    LdFeature(String),
    Assert(Expr, String, Pos),
    Assign(Assignment),
    /// The text of a `VERSION { ... }` block: a version script.
    Version(String),
    Memory(Vec<Region>),
    Phdrs(Vec<Phdr>),
    Sections(Vec<SectionsCommand>),
    /// `INSERT AFTER|BEFORE section`: the script's `SECTIONS` go into the default one there.
    Insert {
        after: bool,
        section: String,
    },
}

/// A `MEMORY` region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub name: String,
    /// The attribute letters (`rwxail`, with `!` negating those after it), as written.
    pub attributes: String,
    pub origin: Expr,
    pub length: Expr,
    pub pos: Pos,
}

/// A `PHDRS` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phdr {
    pub name: String,
    /// `PT_LOAD` and the like, or a number.
    pub ty: Expr,
    pub filehdr: bool,
    pub phdrs: bool,
    pub at: Option<Expr>,
    pub flags: Option<Expr>,
    pub pos: Pos,
}

/// A command inside `SECTIONS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionsCommand {
    Assign(Assignment),
    Output(Box<OutputSection>),
    Overlay(Box<Overlay>),
    Entry(String),
    Assert(Expr, String, Pos),
}

/// `ONLY_IF_RO` / `ONLY_IF_RW`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constraint {
    OnlyIfRo,
    OnlyIfRw,
}

/// An output section description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSection {
    pub name: String,
    pub address: Option<Expr>,
    /// `NOLOAD`, `COPY`, `INFO`, `OVERLAY`, `DSECT`, `READONLY`, or `TYPE = ...`'s value as written.
    pub ty: Option<String>,
    pub lma: Option<Expr>,
    pub align: Option<Expr>,
    pub align_with_input: bool,
    pub subalign: Option<Expr>,
    pub constraint: Option<Constraint>,
    pub commands: Vec<OutputCommand>,
    pub region: Option<String>,
    pub lma_region: Option<String>,
    pub phdrs: Vec<String>,
    pub fill: Option<Expr>,
    pub pos: Pos,
}

/// `OVERLAY [start] : [NOCROSSREFS] [AT (ldaddr)] { secname { ... } ... } [>region] [:phdr...] [=fill]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlay {
    pub start: Option<Expr>,
    pub nocrossrefs: bool,
    pub lma: Option<Expr>,
    pub sections: Vec<OutputSection>,
    pub region: Option<String>,
    pub phdrs: Vec<String>,
    pub fill: Option<Expr>,
    pub pos: Pos,
}

/// A command inside an output section description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputCommand {
    Assign(Assignment),
    Input(InputSections),
    /// `BYTE`, `SHORT`, `LONG`, `QUAD`, `SQUAD`: the size in bytes (8 for both of the last two).
    Data(u8, Expr),
    Fill(Expr),
    Constructors,
    Assert(Expr, String, Pos),
}

/// The sort of `SORT_BY_NAME` and friends (`SORT` is `SORT_BY_NAME`); nested sorts as GNU ld allows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    None,
    Name,
    Alignment,
    NameAlignment,
    AlignmentName,
    InitPriority,
    /// `REVERSE(...)` of GNU ld 2.42, around a name or alignment sort or alone.
    Reverse,
    NoneExplicit,
}

/// One section pattern with its `EXCLUDE_FILE` and sort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionPattern {
    pub exclude_files: Vec<String>,
    pub pattern: String,
    pub sort: Sort,
}

/// An input section description: `[KEEP(] [EXCLUDE_FILE(...)] file-pattern ( section-patterns ) [)]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSections {
    pub keep: bool,
    pub file: String,
    pub file_sort: Sort,
    pub exclude_files: Vec<String>,
    /// `INPUT_SECTION_FLAGS(...)`, as written.
    pub flags: Vec<String>,
    /// Empty: every section of the matching files.
    pub sections: Vec<SectionPattern>,
    pub pos: Pos,
}
