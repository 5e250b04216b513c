//! Pass 1: the GNU ld command line (with `@response` files) into an immutable [`Config`] and an ordered list of
//! [`InputArg`]s, each carrying the positional state it was given under (`--whole-archive`, `--as-needed`,
//! `-Bstatic`, group nesting).
//!
//! Input: `argv` without `argv[0]`. Output: an [`Action`]; for a link, a [`Config`] whose `inputs` keep command-line
//! order.
//!
//! Invariants: unknown options are errors; options rivet accepts but ignores are listed explicitly in the option
//! table (their help text says "ignored"), never swallowed by a catch-all. Every accepted spelling is in
//! [`ACCEPTED_OPTIONS`].
//!
//! Spelling rules, as GNU ld (`getopt_long_only`) has them:
//! - a long option may be written with one or two dashes (`--soname`, `-soname`, `-Bstatic`, `--Bstatic`), except that
//!   a one-dash word starting with `o` is always `-o` with a glued value (`-omagic` writes `magic`);
//! - a long option's value is glued with `=` or is the next argument (`--entry=f`, `--entry f`); options whose value is
//!   optional (`--build-id[=STYLE]`, `--time-trace[=FILE]`, …) take it only with `=`;
//! - a one-letter option's value is glued or is the next argument (`-lc`, `-l c`, `-zrelro`, `-z relro`);
//! - `@FILE` arguments are replaced by the words of FILE (libiberty quoting), recursively, before anything else;
//! - after `--` every argument is an input file.
//!
//! Unique abbreviations of long options (`--whole-arch`), which GNU ld also accepts, are not.

use std::path::{Path, PathBuf};

/// What kind of file the link produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// `-no-pie` dynamic or static executable at a fixed address (ET_EXEC).
    Exec,
    /// Position-independent executable (`-pie`, also `-static -pie`) (ET_DYN with an entry point).
    Pie,
    /// `-shared` library.
    Shared,
}

/// How an executable's file maps into memory. The magic numbers of a.out, kept by GNU ld's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Magic {
    /// Demand paged: each load starts on a page, in memory and in the file.
    Paged,
    /// `-n` (`--nmagic`): not demand paged, as GNU ld's `-n` script lays it out: one load, without the headers,
    /// sections packed at their alignment; the data at `DATA_SEGMENT_ALIGN`'s place on the next page, its RELRO
    /// part ending on a page (`layout::data_segment`) but not protected.
    Nmagic,
    /// `-N` (`--omagic`): as `-n` but the data right after the code, and `.text` writable; no RELRO in the default
    /// layout (a script's `DATA_SEGMENT_RELRO_END` still pads, as in GNU ld). `-r` ignores both.
    Omagic,
}

impl Magic {
    /// The option that asked for it, for messages.
    pub fn option(self) -> &'static str {
        match self {
            Magic::Paged => "--no-omagic",
            Magic::Nmagic => "-n (--nmagic)",
            Magic::Omagic => "-N (--omagic)",
        }
    }
}

/// `--orphan-handling`: what a `SECTIONS` script does with the sections none of its statements places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrphanHandling {
    Place,
    Warn,
    Error,
    Discard,
}

/// Which of the inputs' local symbols `.symtab` keeps (GNU ld's `-x`, `-X`, `--discard-none` and its default; the
/// last option given counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discard {
    /// `--discard-none`: every one.
    None,
    /// The default: all but the assembler's temporary labels (`.L*`) in mergeable sections, which a final link
    /// cannot place exactly (a `-r` link keeps them).
    MergeLabels,
    /// `-X` / `--discard-locals`: all but the temporary labels.
    Labels,
    /// `-x` / `--discard-all`: none.
    All,
}

/// How `--compress-debug-sections` compresses (`ELFCOMPRESS_ZLIB`, `ELFCOMPRESS_ZSTD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugCompression {
    Zlib,
    Zstd,
}

/// `--call-graph-profile-sort=`: how the call graph (the inputs' `.llvm.call-graph-profile`, and
/// `--call-graph-ordering-file`) orders input sections (`layout::call_graph`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallGraphSort {
    None,
    /// lld's Call-Chain Clustering (C3).
    Hfsort,
    /// lld's default: LLVM's cache-directed sort.
    #[default]
    Cdsort,
}

/// `--icf`: which identical input sections are folded into one (`icf`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Icf {
    #[default]
    None,
    /// Read-only sections whose address is not significant, and all code.
    All,
    /// Only sections whose address is not significant (the inputs' `.llvm_addrsig` tables, exports).
    Safe,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashStyle {
    Sysv,
    Gnu,
    Both,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildId {
    None,
    Fast,
    Md5,
    Sha1,
    Uuid,
    Hex(Vec<u8>),
}

/// Positional state in effect where an input appeared on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputFlags {
    pub whole_archive: bool,
    pub as_needed: bool,
    /// `-Bstatic` in effect: `-lfoo` only finds `libfoo.a`.
    pub static_only: bool,
    /// Between `--start-lib` and `--end-lib`: objects are linked only when they define a needed symbol, like
    /// archive members.
    pub lazy: bool,
    /// `-b binary`: files are raw bytes (`input::binary`), until `-b` names an ELF format again.
    pub binary: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputArg {
    /// A file path given directly.
    File { path: PathBuf, flags: InputFlags },
    /// `-lNAME` or `-l:FILE`; resolved against the search path by the load pass.
    Library { name: String, flags: InputFlags },
    /// `--start-group` / `-(`
    GroupStart,
    /// `--end-group` / `-)`
    GroupEnd,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub output: PathBuf,
    /// `-o` was given: a script's `OUTPUT` does not replace it.
    pub output_set: bool,
    /// `--oformat`, as given (an ELF target's name, or `binary`).
    pub oformat: Option<String>,
    /// The output is the loaded sections' bytes at their load addresses, not an ELF file (`--oformat binary`,
    /// or a script's `OUTPUT_FORMAT(binary)` without `--oformat`).
    pub binary_output: bool,
    pub kind: OutputKind,
    /// `-r`: a relocatable object (a partial link, `src/relocatable/`) instead of `kind`'s output.
    pub relocatable: bool,
    /// `-d`, `-dc`, `-dp`: with `-r`, common symbols are allocated in `.bss` as in a final link.
    pub define_common: bool,
    /// `-static` / `-Bstatic` as the *last* global state means "no dynamic linking at all" only when no shared
    /// object ends up in the link; this records whether `-static` (not just `-Bstatic`) was given.
    pub static_link: bool,
    /// `--no-dynamic-linker` (static-pie): no PT_INTERP even though the output has a dynamic section.
    pub no_dynamic_linker: bool,
    pub dynamic_linker: Option<String>,
    pub entry: Option<String>,
    pub search_paths: Vec<PathBuf>,
    pub inputs: Vec<InputArg>,
    /// `-u SYM` / `--undefined=SYM`
    pub undefined: Vec<String>,
    /// `--defsym=SYM=EXPR` in command-line order (expression kept as text; the resolve pass evaluates it).
    pub defsyms: Vec<(String, String)>,
    /// Per command-line `--defsym`, the number of inputs (`-T` scripts among them) given before it.
    pub defsym_inputs: Vec<usize>,
    /// Per entry of `defsyms`, where a script's assignment is (`FILE:LINE:COL`), for its errors; `None` for a
    /// `--defsym`. Empty until the scripts are read (`with_scripts`).
    pub defsym_places: Vec<Option<String>>,
    /// The entries of `defsyms` from this one on follow the `SECTIONS` script on the command line: GNU ld
    /// evaluates them after its commands, so they override its assignments. `defsyms.len()` (or more) for none.
    pub defsyms_after: usize,
    pub rpath: Vec<String>,
    /// `--audit=LIB`, `--depaudit=LIB` (`-P`): `DT_AUDIT` and `DT_DEPAUDIT`, the libraries joined by ':'.
    pub audit: Vec<String>,
    pub depaudit: Vec<String>,
    pub soname: Option<String>,
    pub gc_sections: bool,
    pub print_gc_sections: bool,
    pub icf: Icf,
    /// `--print-icf-sections`: list the folded sections on standard output.
    pub print_icf_sections: bool,
    /// `--keep-unique=SYMBOL`: the sections of these symbols are never folded by `--icf`.
    pub keep_unique: Vec<String>,
    pub eh_frame_hdr: bool,
    pub export_dynamic: bool,
    pub hash_style: HashStyle,
    pub orphan_handling: OrphanHandling,
    pub build_id: BuildId,
    /// `-z relro` (default on).
    pub relro: bool,
    /// `-z now`
    pub bind_now: bool,
    /// `-z execstack`
    pub execstack: bool,
    /// `-z noexecstack` given: with `-r`, inputs that ask for an executable stack do not get one.
    pub noexecstack: bool,
    /// `--warn-execstack` (`Some(true)`), `--no-warn-execstack` (`Some(false)`); unset, GNU ld's default: warn
    /// about the objects that make the stack executable, not about `-z execstack`.
    pub warn_execstack: Option<bool>,
    /// `-z unique-symbol`: each input's local symbol named with `.N` appended, N counting the locals of that
    /// name before it, so that no two locals share a name in `.strtab` (GNU ld's option, for live patching).
    pub unique_symbol: bool,
    /// `-z stack-size=N`: the stack size `PT_GNU_STACK` asks for (0: the system's default).
    pub stack_size: u64,
    /// `--relax` (default): GOT loads of local symbols become direct references.
    pub relax: bool,
    /// `-z dynamic-undefined-weak` / `-z nodynamic-undefined-weak`: whether an executable leaves weak undefined
    /// symbols to the dynamic linker (default: in a PIE, as GNU ld does on x86-64).
    pub dynamic_undefined_weak: Option<bool>,
    /// `-z nocopyreloc`: a reference that would need a copy relocation is an error (lld's rule; GNU ld makes a text
    /// relocation the loader then rejects).
    pub z_nocopyreloc: bool,
    /// `-z start-stop-visibility=`: the visibility of `__start_SEC` and `__stop_SEC` (GNU ld's default: protected).
    pub start_stop_visibility: u8,
    /// `-z ibt`, `-z shstk`: mark the output as using indirect branch tracking / a shadow stack whatever its
    /// inputs say (`.note.gnu.property`); `-z cet-report=`: warn or fail on inputs that lack the marks.
    pub z_ibt: bool,
    pub z_shstk: bool,
    pub cet_report: Report,
    /// `-z x86-64-v2`, `-v3`, `-v4`: the ISA level the output needs (0: none asked for).
    pub z_isa_level: u8,
    /// `-z nodefaultlib`, `-z nodump`, `-z global`: DF_1 flags.
    pub z_nodefaultlib: bool,
    pub z_nodump: bool,
    pub z_global: bool,
    /// `--allow-multiple-definition`, `-z muldefs`: the first definition wins, no error.
    pub allow_multiple_definition: bool,
    /// `--enable-new-dtags` (default): DT_RUNPATH rather than DT_RPATH.
    pub new_dtags: bool,
    /// `-s`: the last of `-s` and `-S` decides, as GNU ld keeps one setting for both (`-s -S` keeps `.symtab`).
    pub strip_all: bool,
    pub strip_debug: bool,
    /// `--unique`: with `-r`, each orphan input section (one GNU ld's `-r` script does not name) gets an output
    /// section of its own instead of joining those of its name.
    pub unique_orphans: bool,
    /// `--unique=GLOB`: with `-r`, each input section the pattern matches gets an output section of its own.
    pub unique_sections: Vec<String>,
    /// `--force-group-allocation`: with `-r`, section group members join their output sections as in a final
    /// link and no group is written.
    pub force_group_allocation: bool,
    /// `--compress-debug-sections`: how the output's `.debug_*` sections are compressed (`None`: not).
    pub compress_debug: Option<DebugCompression>,
    /// `--gdb-index`: add a `.gdb_index` section (gdb's symbol and address index) built from the inputs' DWARF.
    pub gdb_index: bool,
    /// `-q` / `--emit-relocs`: keep the inputs' relocations in the output (`.rela<section>`, non-allocated).
    pub emit_relocs: bool,
    /// `--threads=N`; `None` means one thread per 6 MiB of input, up to all cores (`default_threads` in main.rs).
    pub threads: Option<usize>,
    pub mmap_output: bool,
    /// `--update-in-place` (default): write the new output into the existing output file when nothing else uses it
    /// and writing is proved not to fail.
    pub update_in_place: bool,
    /// `--fork` (default): link in a child process and exit as soon as the output is complete, leaving the
    /// child's teardown off the caller's critical path.
    pub fork: bool,
    pub print_timing: bool,
    pub time_trace: Option<PathBuf>,
    /// `--reproduce=FILE.tar`: a tar of the inputs and a response file that repeats the link.
    pub reproduce: Option<PathBuf>,
    /// The command line after `@file` expansion (for `--reproduce`).
    pub argv: Vec<String>,
    /// `-Map FILE`: a link map (`-` for stdout).
    pub map: Option<PathBuf>,
    /// `--why-extract=FILE`: why each archive member was pulled in, as tab-separated lines (`-` for stdout).
    pub why_extract: Option<PathBuf>,
    /// Whether `--eh-frame-hdr` or `--no-eh-frame-hdr` appeared at all (otherwise `eh_frame_hdr` is the default).
    pub eh_frame_hdr_set: bool,
    /// `-z text`: a text relocation (a dynamic relocation against a read-only section) is an error; otherwise the
    /// output gets DT_TEXTREL and a warning, as GNU ld does by default.
    pub z_text: bool,
    /// Warn about text relocations where they are allowed (GNU ld's default, `--warn-textrel`); `-z notext`
    /// allows them silently.
    pub warn_textrel: bool,
    pub z_separate_code: bool,
    /// `-N` (`--omagic`) and `-n` (`--nmagic`): a static executable that is not demand paged (`Magic`).
    pub magic: Magic,
    pub max_page_size: u64,
    /// `-z common-page-size=N`: the page size RELRO is rounded up to.
    pub common_page_size: u64,
    /// `-z pack-relative-relocs` / `--pack-dyn-relocs=relr`: relative relocations go to `.relr.dyn` (DT_RELR).
    pub pack_relative_relocs: bool,
    pub fatal_warnings: bool,
    /// `--warn-common`.
    pub warn_common: bool,
    pub verbose: bool,
    /// `-O1` etc. (accepted; rivet applies the same string tail merging at every level).
    pub opt_level: u32,
    /// `-v` / `-V` given together with inputs: print [`version_line`] to stdout, then link (GNU ld and lld do this;
    /// without inputs they only print the version, which [`parse`] reports as [`Action::Version`]).
    pub print_version: bool,
    /// Non-fatal diagnostics found while parsing (e.g. a missing `--end-group`); main prints each as
    /// `rivet: warning: MSG`.
    pub warnings: Vec<String>,
    /// `--exclude-libs`: archives (by file name, or `ALL`) whose symbols are not exported.
    pub exclude_libs: Vec<String>,
    /// `--sort-common[=ascending|descending]`: commons placed by alignment (`Some(true)`: largest first).
    pub sort_common: Option<bool>,
    /// `--sort-section=name|alignment` (`Sort::Name` or `Sort::Alignment`): GNU ld's sort of the input sections of
    /// every wildcard statement that does not sort, in a script (`script::sections`) and in the default layout
    /// (`layout::order`), but `.init`'s and `.fini`'s.
    pub sort_section: Option<crate::script::ast::Sort>,
    /// `--no-undefined-version`: a version script naming a symbol the output does not define is an error.
    pub no_undefined_version: bool,
    /// `--package-metadata=JSON`: the text of `.note.package`.
    pub package_metadata: Option<String>,
    /// `-w`, `--no-warnings`: no warning is printed (nor counted for `--fatal-warnings`).
    pub no_warnings: bool,
    /// `--demangle` (default) / `--no-demangle`: symbol names in messages.
    pub demangle: bool,
    /// `--dependency-file=FILE`: a Makefile rule naming every file the link read.
    pub dependency_file: Option<PathBuf>,
    /// `-y SYMBOL`, `--trace-symbol=SYMBOL`: report the files that define or reference these symbols.
    pub trace_symbols: Vec<String>,
    /// `-Ttext-segment`, `--image-base`: the address of the image's first segment.
    pub image_base: Option<u64>,
    /// `--section-start=SECTION=ADDR`, `-Ttext`, `-Tdata`, `-Tbss`: output sections placed at fixed addresses.
    pub section_start: Vec<(String, u64)>,
    /// `--sysroot=DIR`: what `-L=DIR` and `-L$SYSROOT/DIR` are relative to, and the prefix of absolute paths in
    /// input scripts found under it.
    pub sysroot: Option<PathBuf>,
    /// `--warn-backrefs`: report archive members pulled in by files after their archive.
    pub warn_backrefs: bool,
    /// `--default-symver`: unversioned exported symbols get a version named after the soname (or output file).
    pub default_symver: bool,
    /// `--cref`: print a cross reference table.
    pub cref: bool,
    /// `--print-memory-usage`, `--stats`.
    pub print_memory_usage: bool,
    pub stats: bool,
    /// `-V`: the version line is followed by the supported emulations.
    pub print_emulations: bool,
    /// `-m`: `Some(true)` for `elf_i386`, `Some(false)` for `elf_x86_64`; unset, the first object's machine
    /// decides.
    pub elf_i386: Option<bool>,
    /// `--allow-shlib-undefined` / `--no-allow-shlib-undefined`; unset: allowed for a shared object only, as in
    /// GNU ld and lld.
    pub allow_shlib_undefined: Option<bool>,
    /// `--unresolved-symbols=`: whether undefined symbols the objects reference are reported (not with
    /// `ignore-all` or `ignore-in-object-files`); `--warn-unresolved-symbols`: as warnings, and the link goes on.
    /// An unreported undefined symbol of a dynamic executable is left to the dynamic linker, as in GNU ld.
    pub report_undefined: bool,
    pub warn_undefined: bool,
    /// `-z defs` or `--no-undefined`: undefined symbols are errors even in `-shared` links (`-z undefs` clears it).
    pub z_defs: bool,
    /// `--no-undefined`; always equal to `z_defs` (the two spellings mean the same thing).
    pub no_undefined: bool,
    /// `-z nodelete`: `DF_1_NODELETE`.
    pub z_nodelete: bool,
    /// `-z nodlopen`: `DF_1_NOOPEN`.
    pub z_nodlopen: bool,
    /// `-z origin`: `DF_ORIGIN` / `DF_1_ORIGIN`.
    pub z_origin: bool,
    /// `-z initfirst`: `DF_1_INITFIRST`.
    pub z_initfirst: bool,
    /// `-z interpose`: `DF_1_INTERPOSE`.
    pub z_interpose: bool,
    /// `--version-script FILE`, in command-line order (parsed later by the resolve pass).
    pub version_script: Vec<PathBuf>,
    /// `--symbol-ordering-file FILE`: the sections of the symbols it lists go first (`layout::order`).
    pub symbol_ordering_file: Option<PathBuf>,
    /// `--no-warn-symbol-ordering` clears it: warn about the ordering file's names that order nothing.
    pub warn_symbol_ordering: bool,
    /// `--call-graph-profile-sort=` (`--no-call-graph-profile-sort`: none); off when a symbol ordering file is
    /// given, as in lld.
    pub call_graph_sort: CallGraphSort,
    /// `--call-graph-ordering-file FILE`: `caller callee weight` lines added to the inputs' call graph.
    pub call_graph_ordering_file: Option<PathBuf>,
    /// `--print-symbol-order=FILE`: the symbols of the sections the call graph sort ordered, in their order.
    pub print_symbol_order: Option<PathBuf>,
    /// `--section-ordering-file FILE` (GNU ld 2.43): output section statements whose input descriptions go
    /// first in the same-named statements of the link's script (`script::ordering`).
    pub section_ordering_file: Option<PathBuf>,
    /// `VERSION { ... }` of the linker scripts read: (where, the version script's text).
    pub version_texts: Vec<(String, String)>,
    /// Linker scripts' `PROVIDE(SYM = EXPR)` outside `SECTIONS`: defined as a `--defsym` is, but only when an input
    /// refers to SYM and nothing defines it.
    pub provides: Vec<(String, String)>,
    /// Symbols a script assigns with `HIDDEN` or `PROVIDE_HIDDEN`: never exported.
    pub script_hidden: Vec<String>,
    /// The scripts' `NOCROSSREFS` lists: references between their output sections are errors.
    pub nocrossrefs: Vec<crate::script::input::NoCrossRefs>,
    /// The scripts given with `-T` (the others are named as inputs: `INSERT` there is GNU ld's error).
    pub script_options: Vec<PathBuf>,
    /// The linker script's `SECTIONS` and `MEMORY`: the layout it asks for instead of the default.
    pub sections: Option<std::sync::Arc<crate::script::sections::SectionsScript>>,
    /// The symbols `SECTIONS` assigns: defined by the layout; a `PROVIDE`d one only when an input refers to it and
    /// nothing defines it.
    pub section_symbols: Vec<crate::script::sections::ScriptSymbol>,
    /// `--dynamic-list FILE`: in an executable the symbols to export; in a shared object the only ones that
    /// stay preemptible (the rest bind locally, as with -Bsymbolic).
    pub dynamic_list: Vec<PathBuf>,
    /// `--wrap SYM`, in command-line order.
    pub wrap: Vec<String>,
    /// `-t` / `--trace`: print each input file as it is loaded.
    pub trace: bool,
    /// `-Bsymbolic`: bind global symbol references inside a shared library to its own definitions.
    pub bsymbolic: bool,
    /// `-Bsymbolic-functions`: like `-Bsymbolic`, for function symbols only.
    pub bsymbolic_functions: bool,
    /// `--export-dynamic-symbol=GLOB` patterns and `--export-dynamic-symbol-list=FILE` files: symbols to export
    /// (and, with -Bsymbolic, keep preemptible), without making the others local as `--dynamic-list` does.
    pub export_dynamic_symbols: Vec<String>,
    pub export_dynamic_symbol_lists: Vec<PathBuf>,
    /// `--dynamic-list-data`: every global data symbol is in the dynamic list.
    pub dynamic_list_data: bool,
    /// `--error-limit=N`: stop after N errors; 0 means no limit. Default 20 (as lld).
    pub error_limit: u32,
    /// `-init SYM`: `DT_INIT` target. `None` means the GNU default (`_init`, if defined).
    pub init: Option<String>,
    /// `-fini SYM`: `DT_FINI` target. `None` means the GNU default (`_fini`, if defined).
    pub fini: Option<String>,
    /// `-x`, `-X`, `--discard-none`: which local symbols `.symtab` keeps.
    pub discard: Discard,
}

impl Default for Config {
    /// GNU ld's defaults on x86-64 Linux when no option says otherwise.
    fn default() -> Config {
        Config {
            relocatable: false,
            define_common: false,
            output: PathBuf::from("a.out"),
            output_set: false,
            oformat: None,
            binary_output: false,
            kind: OutputKind::Exec,
            static_link: false,
            no_dynamic_linker: false,
            dynamic_linker: None,
            entry: None,
            search_paths: Vec::new(),
            inputs: Vec::new(),
            undefined: Vec::new(),
            defsyms: Vec::new(),
            defsym_inputs: Vec::new(),
            defsym_places: Vec::new(),
            defsyms_after: usize::MAX,
            rpath: Vec::new(),
            audit: Vec::new(),
            depaudit: Vec::new(),
            soname: None,
            gc_sections: false,
            print_gc_sections: false,
            icf: Icf::None,
            print_icf_sections: false,
            keep_unique: Vec::new(),
            unique_orphans: false,
            unique_sections: Vec::new(),
            force_group_allocation: false,
            eh_frame_hdr: false,
            export_dynamic: false,
            hash_style: HashStyle::Both,
            orphan_handling: OrphanHandling::Place,
            build_id: BuildId::None,
            relro: true,
            bind_now: false,
            execstack: false,
            noexecstack: false,
            warn_execstack: None,
            unique_symbol: false,
            stack_size: 0,
            relax: true,
            dynamic_undefined_weak: None,
            z_nocopyreloc: false,
            start_stop_visibility: object::elf::STV_PROTECTED,
            z_ibt: false,
            z_shstk: false,
            cet_report: Report::None,
            z_isa_level: 0,
            z_nodefaultlib: false,
            z_nodump: false,
            z_global: false,
            allow_multiple_definition: false,
            new_dtags: true,
            strip_all: false,
            emit_relocs: false,
            strip_debug: false,
            compress_debug: None,
            gdb_index: false,
            threads: None,
            mmap_output: true,
            update_in_place: true,
            fork: true,
            print_timing: false,
            time_trace: None,
            map: None,
            why_extract: None,
            reproduce: None,
            argv: Vec::new(),
            eh_frame_hdr_set: false,
            z_text: false,
            warn_textrel: true,
            z_separate_code: true,
            magic: Magic::Paged,
            max_page_size: 4096,
            common_page_size: 4096,
            pack_relative_relocs: false,
            fatal_warnings: false,
            warn_common: false,
            verbose: false,
            opt_level: 0,
            print_version: false,
            warnings: Vec::new(),
            exclude_libs: Vec::new(),
            sort_common: None,
            sort_section: None,
            no_undefined_version: false,
            package_metadata: None,
            no_warnings: false,
            demangle: true,
            trace_symbols: Vec::new(),
            cref: false,
            default_symver: false,
            image_base: None,
            warn_backrefs: false,
            sysroot: None,
            section_start: Vec::new(),
            print_memory_usage: false,
            stats: false,
            dependency_file: None,
            print_emulations: false,
            elf_i386: None,
            allow_shlib_undefined: None,
            report_undefined: true,
            warn_undefined: false,
            z_defs: false,
            no_undefined: false,
            z_nodelete: false,
            z_nodlopen: false,
            z_origin: false,
            z_initfirst: false,
            z_interpose: false,
            version_script: Vec::new(),
            symbol_ordering_file: None,
            warn_symbol_ordering: true,
            call_graph_sort: CallGraphSort::Cdsort,
            call_graph_ordering_file: None,
            print_symbol_order: None,
            section_ordering_file: None,
            version_texts: Vec::new(),
            provides: Vec::new(),
            script_hidden: Vec::new(),
            nocrossrefs: Vec::new(),
            script_options: Vec::new(),
            sections: None,
            section_symbols: Vec::new(),
            dynamic_list: Vec::new(),
            wrap: Vec::new(),
            trace: false,
            bsymbolic: false,
            bsymbolic_functions: false,
            export_dynamic_symbols: Vec::new(),
            export_dynamic_symbol_lists: Vec::new(),
            dynamic_list_data: false,
            error_limit: 20,
            init: None,
            fini: None,
            discard: Discard::MergeLabels,
        }
    }
}

/// What the command line asks for.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // made once per process; boxing would only add noise for the caller
pub enum Action {
    /// Link with this configuration.
    Link(Config),
    /// Print [`version_line`] and exit 0 (`--version`, or `-v`/`-V` with no inputs).
    Version,
    /// Print [`help_text`] and exit 0 (`--help`).
    Help,
    /// Print [`version_line`] and the supported emulations, as GNU ld does, and exit 0 (`-V` with no inputs).
    Emulations,
}

/// The line `--version` and `-v` print, in GNU ld's own shape (`GNU ld (VENDOR) VERSION`) with rivet as the vendor
/// and the binutils release whose behaviour it follows as the version. libtool only looks for "GNU", but
/// configure scripts of libffi, libatomic and libstdc++ take the version from that shape (`sed 's/GNU ld
/// ([^)]*) /GNU ld /'`) and turn symbol versioning off below 2.14: lld's and mold's lines read as version 1.0
/// there, and libffi then builds without its version script.
pub fn version_line() -> String {
    format!(
        "GNU ld (rivet {}, compatible with GNU linkers) 2.40",
        env!("CARGO_PKG_VERSION")
    )
}

/// The `--help` text, generated from the option table.
pub fn help_text() -> String {
    let mut out = String::from("Usage: rivet [options] file...\n\nOptions:\n");
    for spec in OPTIONS {
        let mut left = String::new();
        for (i, name) in spec.names.iter().enumerate() {
            if i > 0 {
                left.push_str(", ");
            }
            left.push_str(name);
            match spec.takes {
                Takes::Nothing => {}
                Takes::Value if !name.starts_with("--") => {
                    left.push(' ');
                    left.push_str(spec.meta);
                }
                Takes::Value => {
                    left.push('=');
                    left.push_str(spec.meta);
                }
                Takes::Optional => {
                    left.push_str("[=");
                    left.push_str(spec.meta);
                    left.push(']');
                }
            }
        }
        if left.len() < 34 {
            out.push_str(&format!("  {left:<34} {}\n", spec.help));
        } else {
            out.push_str(&format!("  {left}\n  {:<34} {}\n", "", spec.help));
        }
    }
    out.push_str("\nLong options take one or two dashes. @FILE reads more arguments from FILE.\n-z keywords:");
    let mut width = "-z keywords:".len();
    for k in Z_KEYWORDS {
        if width + 1 + k.len() > 110 {
            out.push_str("\n ");
            width = 1;
        }
        out.push(' ');
        out.push_str(k);
        width += 1 + k.len();
    }
    out.push_str("\nOther -z keywords are ignored with a warning, as GNU ld does.\n");
    // GNU ld ends its help with these two lines, and build systems read them: libtool's configure looks for
    // "supported targets: ... elf" and builds no shared libraries without it.
    out.push_str(&format!(
        "\nrivet: supported targets: {TARGETS}\nrivet: supported emulations: {}\n",
        EMULATIONS.join(" ")
    ));
    out
}

/// The BFD target names of the output formats rivet writes, as `--help` lists them.
const TARGETS: &str = "elf64-x86-64 elf32-i386";
/// The emulations `-m` accepts, as `--help` and `-V` list them.
pub const EMULATIONS: &[&str] = &["elf_x86_64", "elf_i386"];

/// Which option an argument is; the handler in [`Parser::apply`] gives it its meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    // Output and kind.
    Output,
    Pie,
    NoPie,
    Shared,
    EmitRelocs,
    Relocatable,
    DefineCommon,
    Emulation,
    Format,
    Oformat,
    // Inputs and positional state.
    Library,
    LibraryPath,
    AsNeeded,
    NoAsNeeded,
    WholeArchive,
    NoWholeArchive,
    Bstatic,
    Static,
    Bdynamic,
    PushState,
    PopState,
    StartGroup,
    EndGroup,
    Script,
    // Symbols.
    Entry,
    Undefined,
    Defsym,
    Wrap,
    VersionScript,
    SymbolOrderingFile,
    WarnSymbolOrdering,
    NoWarnSymbolOrdering,
    CallGraphProfileSort,
    NoCallGraphProfileSort,
    CallGraphOrderingFile,
    PrintSymbolOrder,
    SectionOrderingFile,
    DynamicList,
    ExportDynamic,
    NoExportDynamic,
    Bsymbolic,
    BsymbolicFunctions,
    BnoSymbolic,
    DynamicListData,
    ExportDynamicSymbol,
    ExportDynamicSymbolList,
    Init,
    Fini,
    NoUndefined,
    // Dynamic linking.
    Rpath,
    RpathLink,
    Audit,
    DepAudit,
    RpathOrJustSymbols,
    Soname,
    DynamicLinker,
    NoDynamicLinker,
    HashStyle,
    PackDynRelocs,
    EnableNewDtags,
    DisableNewDtags,
    Z,
    // Sections and output contents.
    GcSections,
    NoGcSections,
    PrintGcSections,
    NoPrintGcSections,
    EhFrameHdr,
    NoEhFrameHdr,
    BuildId,
    StripAll,
    StripDebug,
    DiscardAll,
    DiscardLocals,
    DiscardNone,
    CompressDebugSections,
    GdbIndex,
    NoGdbIndex,
    Icf,
    PrintIcfSections,
    KeepUnique,
    NoPrintIcfSections,
    Optimize,
    Map,
    WhyExtract,
    Reproduce,
    WarnCommon,
    NoWarnCommon,
    WarnTextrel,
    // Rivet's own behaviour.
    Threads,
    NoThreads,
    MmapOutput,
    NoMmapOutput,
    UpdateInPlace,
    NoUpdateInPlace,
    Fork,
    NoFork,
    PrintTiming,
    TimeTrace,
    TimeTraceFile,
    ErrorLimit,
    FatalWarnings,
    WarnExecstack,
    NoWarnExecstack,
    Relax,
    NoRelax,
    ExcludeLibs,
    Rosegment,
    NoRosegment,
    Omagic,
    Nmagic,
    NoOmagic,
    OrphanHandling,
    AllowShlibUndefined,
    UnresolvedSymbols,
    WarnUnresolvedSymbols,
    ErrorUnresolvedSymbols,
    NoAllowShlibUndefined,
    NoWarnings,
    Demangle,
    NoDemangle,
    DependencyFile,
    PrintMap,
    TraceSymbol,
    WarnBackrefs,
    Sysroot,
    ImageBase,
    SectionStart,
    Ttext,
    Tdata,
    Tbss,
    DefaultSymver,
    Cref,
    PrintMemoryUsage,
    Stats,
    VersionEmulations,
    StartLib,
    EndLib,
    PackageMetadata,
    UndefinedVersion,
    NoUndefinedVersion,
    AllowMultipleDefinition,
    NoFatalWarnings,
    Verbose,
    Trace,
    Version,
    VersionAndLink,
    Help,
    // Accepted and ignored, with or without a (checked) value.
    Ignored,
    IgnoredValue,
    ColorDiagnostics,
    SortCommon,
    Unique,
    ForceGroupAllocation,
    SortSection,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Takes {
    /// A flag; `--flag=x` is not this option.
    Nothing,
    /// Required value: glued (`-lc`, `--entry=f`) or the next argument.
    Value,
    /// Optional value, only in the glued form `--opt=VALUE`.
    Optional,
}

struct OptSpec {
    opt: Opt,
    /// Canonical spellings. A two-character name (`-o`, `-(`) is a short option; anything longer is a long option,
    /// also accepted with the other number of dashes (see the module doc).
    names: &'static [&'static str],
    takes: Takes,
    /// Value placeholder for the help text.
    meta: &'static str,
    help: &'static str,
}

const fn flag(opt: Opt, names: &'static [&'static str], help: &'static str) -> OptSpec {
    OptSpec {
        opt,
        names,
        takes: Takes::Nothing,
        meta: "",
        help,
    }
}

const fn value(
    opt: Opt,
    names: &'static [&'static str],
    meta: &'static str,
    help: &'static str,
) -> OptSpec {
    OptSpec {
        opt,
        names,
        takes: Takes::Value,
        meta,
        help,
    }
}

const fn optional(
    opt: Opt,
    names: &'static [&'static str],
    meta: &'static str,
    help: &'static str,
) -> OptSpec {
    OptSpec {
        opt,
        names,
        takes: Takes::Optional,
        meta,
        help,
    }
}

/// Every option rivet knows. Order is the help text's order.
#[rustfmt::skip]
const OPTIONS: &[OptSpec] = &[
    value(Opt::Output, &["-o", "--output"], "FILE", "Write the output to FILE (default a.out)"),
    flag(Opt::Pie, &["-pie", "--pic-executable"], "Create a position-independent executable"),
    flag(Opt::NoPie, &["-no-pie", "--no-pic-executable"], "Create a position-dependent executable (default)"),
    flag(Opt::Shared, &["-shared", "-Bshareable"], "Create a shared library"),
    flag(Opt::Relocatable, &["-r", "--relocatable", "-i", "-Ur"], "Relocatable output: combine the inputs into one object (partial link; -Ur is the same for ELF, as in GNU ld)"),
    flag(Opt::DefineCommon, &["-d", "-dc", "-dp", "--define-common"], "With -r: allocate common symbols in .bss"),
    flag(Opt::EmitRelocs, &["-q", "--emit-relocs"], "Keep the inputs' relocations in the output, as .rela<section> sections (for post-link optimisers)"),
    value(Opt::Emulation, &["-m"], "EMULATION", "Target emulation: elf_x86_64, or elf_i386 (static executables and -r only)"),
    value(Opt::Oformat, &["--oformat"], "FORMAT", "Output format: elf64-x86-64 (elf32-i386 for i386 links), or binary (the loaded sections' bytes at their load addresses, as GNU ld writes it)"),
    value(Opt::Format, &["-b", "--format"], "FORMAT", "Format of the following input files: binary (raw bytes, as GNU ld's), or an ELF target or default"),
    value(Opt::Library, &["-l", "--library"], "NAME", "Search for libNAME.so / libNAME.a (-l:FILE: exactly FILE)"),
    value(Opt::LibraryPath, &["-L", "--library-path"], "DIR", "Add DIR to the library search path"),
    flag(Opt::AsNeeded, &["--as-needed"], "Only add DT_NEEDED for following shared libraries that are used"),
    flag(Opt::NoAsNeeded, &["--no-as-needed"], "Always add DT_NEEDED for following shared libraries (default)"),
    flag(Opt::WholeArchive, &["--whole-archive"], "Include every member of following archives"),
    flag(Opt::StartLib, &["--start-lib"], "Link the following objects only if they define a needed symbol, as archive members"),
    flag(Opt::EndLib, &["--end-lib"], "End --start-lib"),
    flag(Opt::NoWholeArchive, &["--no-whole-archive"], "Turn off --whole-archive"),
    flag(Opt::Bstatic, &["-Bstatic", "-dn", "-non_shared"], "Following -l options only find static archives"),
    flag(Opt::Static, &["-static"], "Same as -Bstatic, and marks the link as static"),
    flag(Opt::Bdynamic, &["-Bdynamic", "-dy", "-call_shared"], "Following -l options may find shared libraries"),
    flag(Opt::PushState, &["--push-state"], "Save the --whole-archive, --as-needed and -Bstatic state"),
    flag(Opt::PopState, &["--pop-state"], "Restore the state saved by the matching --push-state"),
    flag(Opt::StartGroup, &["--start-group", "-("], "Start a group of archives searched repeatedly"),
    flag(Opt::EndGroup, &["--end-group", "-)"], "End a group"),
    value(Opt::Script, &["-T", "--script", "-dT", "--default-script"], "FILE", "Read a linker script (SECTIONS, MEMORY and PHDRS lay the output out; SECTIONS ... INSERT AFTER|BEFORE adds sections to the default layout)"),
    value(Opt::Entry, &["-e", "--entry"], "SYM", "Set the entry point"),
    value(Opt::Undefined, &["-u", "--undefined"], "SYM", "Start with SYM undefined (pulls archive members)"),
    value(Opt::Defsym, &["--defsym"], "SYM=EXPR", "Define SYM as EXPR"),
    value(Opt::Wrap, &["--wrap"], "SYM", "Use __wrap_SYM for SYM and __real_SYM for the original"),
    value(Opt::VersionScript, &["--version-script"], "FILE", "Read a version script"),
    value(Opt::SymbolOrderingFile, &["--symbol-ordering-file"], "FILE", "Place the sections of the symbols FILE lists (one per line) first, in its order"),
    flag(Opt::WarnSymbolOrdering, &["--warn-symbol-ordering"], "Warn about ordering-file symbols that order nothing (default)"),
    flag(Opt::NoWarnSymbolOrdering, &["--no-warn-symbol-ordering"], "Do not warn about ordering-file symbols that order nothing"),
    value(Opt::CallGraphProfileSort, &["--call-graph-profile-sort"], "none|hfsort|cdsort", "Order input sections by the call graph (the inputs' .llvm.call-graph-profile and --call-graph-ordering-file): cdsort (lld's cache-directed sort, the default when a profile exists and no --symbol-ordering-file is given), hfsort (lld's C3 clustering) or none"),
    flag(Opt::NoCallGraphProfileSort, &["--no-call-graph-profile-sort"], "Same as --call-graph-profile-sort=none"),
    value(Opt::CallGraphOrderingFile, &["--call-graph-ordering-file"], "FILE", "Add the call graph edges FILE lists (lines 'caller callee weight') to the call graph sort"),
    value(Opt::PrintSymbolOrder, &["--print-symbol-order"], "FILE", "Write the symbols of the sections the call graph sort ordered, in their order, to FILE (hfsort only, as lld)"),
    value(Opt::SectionOrderingFile, &["--section-ordering-file"], "FILE", "Read output section statements (GNU ld 2.43) whose input section descriptions go first in the same-named output sections of the link's script"),
    value(Opt::DynamicList, &["--dynamic-list"], "FILE", "Symbols to export (executable) or keep preemptible (shared)"),
    flag(Opt::ExportDynamic, &["-E", "--export-dynamic"], "Export all global symbols"),
    flag(Opt::NoExportDynamic, &["--no-export-dynamic"], "Turn off --export-dynamic (default)"),
    flag(Opt::Bsymbolic, &["-Bsymbolic"], "Bind global references locally in a shared library"),
    flag(Opt::BsymbolicFunctions, &["-Bsymbolic-functions"], "Bind global function references locally"),
    flag(Opt::BnoSymbolic, &["-Bno-symbolic"], "Undo -Bsymbolic and -Bsymbolic-functions"),
    flag(Opt::DynamicListData, &["--dynamic-list-data"], "Put every global data symbol in the dynamic list"),
    value(Opt::ExportDynamicSymbol, &["--export-dynamic-symbol"], "GLOB", "Export the symbols matching GLOB (keep them preemptible under -Bsymbolic)"),
    value(Opt::ExportDynamicSymbolList, &["--export-dynamic-symbol-list"], "FILE", "--export-dynamic-symbol for each pattern of FILE (dynamic list format)"),
    value(Opt::Init, &["-init"], "SYM", "Call SYM at load time (DT_INIT)"),
    value(Opt::Fini, &["-fini"], "SYM", "Call SYM at unload time (DT_FINI)"),
    flag(Opt::NoUndefined, &["--no-undefined"], "Report undefined symbols even with -shared (= -z defs)"),
    flag(Opt::AllowShlibUndefined, &["--allow-shlib-undefined"], "Allow undefined references in the shared objects linked against (default for -shared)"),
    value(Opt::UnresolvedSymbols, &["--unresolved-symbols"], "METHOD", "report-all (default), ignore-all, ignore-in-object-files or ignore-in-shared-libs"),
    flag(Opt::WarnUnresolvedSymbols, &["--warn-unresolved-symbols"], "Report undefined symbols as warnings and link"),
    flag(Opt::ErrorUnresolvedSymbols, &["--error-unresolved-symbols"], "Report undefined symbols as errors (default)"),
    flag(Opt::NoAllowShlibUndefined, &["--no-allow-shlib-undefined"], "A shared object's reference nothing defines is an error (default for executables)"),
    flag(Opt::UndefinedVersion, &["--undefined-version"], "Allow a version script to name symbols the output does not define (default)"),
    flag(Opt::NoUndefinedVersion, &["--no-undefined-version"], "A version script naming a symbol the output does not define is an error"),
    value(Opt::Rpath, &["-rpath", "--rpath"], "DIR", "Add DIR to the runtime library search path"),
    value(Opt::RpathOrJustSymbols, &["-R"], "DIR", "Same as -rpath DIR (reading symbols from a file: not supported)"),
    value(Opt::RpathLink, &["-rpath-link"], "DIR", "Ignored"),
    value(Opt::Audit, &["--audit"], "LIB", "Name LIB in DT_AUDIT: an auditing library for the dynamic linker"),
    value(Opt::DepAudit, &["--depaudit", "-P"], "LIB", "Name LIB in DT_DEPAUDIT: an auditing library for the dependencies"),
    value(Opt::Soname, &["-soname", "-h"], "NAME", "Set DT_SONAME of a shared library"),
    value(Opt::DynamicLinker, &["-dynamic-linker", "-I"], "FILE", "Set the program interpreter (PT_INTERP)"),
    flag(Opt::NoDynamicLinker, &["--no-dynamic-linker"], "No PT_INTERP (static-pie)"),
    value(Opt::HashStyle, &["--hash-style"], "sysv|gnu|both", "Dynamic symbol hash table style (default both, as GNU ld and lld)"),
    value(Opt::PackDynRelocs, &["--pack-dyn-relocs"], "none|relr", "relr: pack relative relocations into .relr.dyn (as -z pack-relative-relocs)"),
    flag(Opt::EnableNewDtags, &["--enable-new-dtags"], "Use DT_RUNPATH for -rpath (default)"),
    flag(Opt::DisableNewDtags, &["--disable-new-dtags"], "Use DT_RPATH for -rpath"),
    value(Opt::Z, &["-z"], "KEYWORD", "ELF extensions (see below)"),
    flag(Opt::GcSections, &["--gc-sections"], "Remove unreferenced sections"),
    flag(Opt::NoGcSections, &["--no-gc-sections"], "Keep unreferenced sections (default)"),
    flag(Opt::PrintGcSections, &["--print-gc-sections"], "List removed sections"),
    flag(Opt::NoPrintGcSections, &["--no-print-gc-sections"], "Do not list removed sections (default)"),
    flag(Opt::EhFrameHdr, &["--eh-frame-hdr"], "Create .eh_frame_hdr and PT_GNU_EH_FRAME"),
    flag(Opt::NoEhFrameHdr, &["--no-eh-frame-hdr"], "Do not create .eh_frame_hdr"),
    value(Opt::PackageMetadata, &["--package-metadata"], "JSON", "Add .note.package with this packaging metadata (FDO format)"),
    optional(Opt::BuildId, &["--build-id"], "STYLE", "Add .note.gnu.build-id: sha1 (default, 20 bytes), md5, fast (16 bytes), uuid, 0xHEX, none"),
    flag(Opt::StripAll, &["-s", "--strip-all"], "Omit all symbol information"),
    flag(Opt::StripDebug, &["-S", "--strip-debug"], "Omit debug information"),
    flag(Opt::DiscardAll, &["-x", "--discard-all"], "Discard all local symbols"),
    flag(Opt::DiscardLocals, &["-X", "--discard-locals"], "Discard temporary (.L) local symbols (by default only those in mergeable sections)"),
    flag(Opt::DiscardNone, &["--discard-none"], "Keep every local symbol, temporary (.L) ones in mergeable sections too"),
    value(Opt::CompressDebugSections, &["--compress-debug-sections"], "none|zlib|zlib-gabi|zstd", "Compress the .debug_* sections (SHF_COMPRESSED; a section compression would not shrink stays as it is); zlib-gnu is refused"),
    flag(Opt::GdbIndex, &["--gdb-index"], "Add .gdb_index, gdb's index of the compile units, their address ranges and their names (from .debug_gnu_pubnames/.debug_gnu_pubtypes, or a C unit's top-level DIEs where it has none; no names at all where a unit of another language has none, or with type units); not with -r"),
    flag(Opt::NoGdbIndex, &["--no-gdb-index"], "Do not add .gdb_index (default)"),
    value(Opt::Icf, &["--icf"], "all|safe|none", "Fold identical input sections: all (code, and read-only data whose address is not significant), safe (only sections whose address is not significant, by the inputs' .llvm_addrsig tables), none (default)"),
    flag(Opt::PrintIcfSections, &["--print-icf-sections"], "List the sections --icf folds"),
    value(Opt::KeepUnique, &["--keep-unique"], "SYMBOL", "Never fold the section that defines SYMBOL with --icf"),
    flag(Opt::NoPrintIcfSections, &["--no-print-icf-sections"], "Do not list folded sections (default)"),
    value(Opt::Optimize, &["-O"], "LEVEL", "Optimization level (2 or more: share string tails, as a script does)"),
    value(Opt::Map, &["-Map"], "FILE", "Write a link map to FILE: output sections, input sections, symbols, archive members"),
    value(Opt::Reproduce, &["--reproduce"], "FILE.tar", "Write the inputs and a response file repeating this link to FILE.tar"),
    value(Opt::WhyExtract, &["--why-extract"], "FILE", "Write why each archive member was pulled in to FILE ('-' for stdout)"),
    value(Opt::Threads, &["--threads", "--thread-count"], "N", "Use N threads (default: one per 6 MiB of input, up to all cores)"),
    flag(Opt::NoThreads, &["--no-threads"], "Use one thread"),
    flag(Opt::MmapOutput, &["--mmap-output-file"], "Write the output through a mapping (default)"),
    flag(Opt::NoMmapOutput, &["--no-mmap-output-file"], "Write the output with write(2)"),
    flag(Opt::UpdateInPlace, &["--update-in-place"], "Write into the existing output file when no process has it open or mapped and writing cannot fail (default)"),
    flag(Opt::NoUpdateInPlace, &["--no-update-in-place"], "Always write a new output file and rename it over the old one"),
    flag(Opt::Fork, &["--fork"], "Link in a child process; exit once the output is written (default)"),
    flag(Opt::NoFork, &["--no-fork"], "Link in this process and tear it down before exiting"),
    flag(Opt::PrintTiming, &["--print-timing"], "Print the wall and CPU time each pass took"),
    optional(Opt::TimeTrace, &["--time-trace"], "FILE", "Write a Chrome trace (default OUTPUT.time-trace.json)"),
    value(Opt::TimeTraceFile, &["--time-trace-file"], "FILE", "Same as --time-trace=FILE"),
    value(Opt::ErrorLimit, &["--error-limit"], "N", "Stop after N errors (0: no limit; default 20)"),
    flag(Opt::FatalWarnings, &["--fatal-warnings"], "Treat warnings as errors"),
    flag(Opt::NoFatalWarnings, &["--no-fatal-warnings"], "Do not treat warnings as errors (default)"),
    flag(Opt::WarnExecstack, &["--warn-execstack"], "Warn when the stack is made executable, -z execstack too"),
    flag(Opt::NoWarnExecstack, &["--no-warn-execstack"], "Do not warn when the stack is made executable"),
    flag(Opt::Verbose, &["--verbose"], "Verbose output"),
    flag(Opt::Trace, &["-t", "--trace"], "Print the name of each input file"),
    flag(Opt::Version, &["--version"], "Print the version and exit"),
    flag(Opt::VersionAndLink, &["-v"], "Print the version, then link if there are inputs"),
    flag(Opt::VersionEmulations, &["-V"], "Print the version and the supported emulations, then link if there are inputs"),
    flag(Opt::NoWarnings, &["-w", "--no-warnings"], "Print no warnings"),
    flag(Opt::Rosegment, &["--rosegment"], "Read-only data in a segment apart from code (default)"),
    flag(Opt::NoRosegment, &["--no-rosegment"], "Read-only data, code and headers in one R+X segment (as -z noseparate-code)"),
    flag(Opt::Omagic, &["-N", "--omagic"], "A static executable not paged: one writable, executable load without the headers, sections packed; later -l options find static archives only"),
    flag(Opt::Nmagic, &["-n", "--nmagic"], "A static executable not paged, as -N but with .text read-only and the data on the next page; later -l options find static archives only"),
    flag(Opt::NoOmagic, &["--no-omagic"], "Undo -N's or -n's layout (it still leaves -l options static)"),
    value(Opt::OrphanHandling, &["--orphan-handling"], "place|warn|error|discard", "What a SECTIONS script does with input sections none of its statements places: place them by the default rules (the default), warn, fail, or discard them; without SECTIONS it has no effect (lld's rule), and discard is refused"),
    flag(Opt::Ignored, &["--warn-once"], "Accepted: each undefined symbol is reported once already"),
    optional(Opt::Demangle, &["--demangle"], "STYLE", "Demangle symbol names in messages (default)"),
    flag(Opt::NoDemangle, &["--no-demangle"], "Do not demangle symbol names in messages"),
    value(Opt::DependencyFile, &["--dependency-file"], "FILE", "Write a Makefile rule: the output depends on every file the link read"),
    flag(Opt::PrintMap, &["-M", "--print-map"], "Print the link map on standard output"),
    flag(Opt::DefaultSymver, &["--default-symver"], "Give unversioned exported symbols a version named after the soname (or output file)"),
    value(Opt::ImageBase, &["-Ttext-segment", "--image-base"], "ADDR", "Start the image (its first segment) at ADDR"),
    value(Opt::SectionStart, &["--section-start"], "SECTION=ADDR", "Place SECTION at ADDR; the sections after it follow it"),
    value(Opt::Ttext, &["-Ttext"], "ADDR", "Same as --section-start=.text=ADDR"),
    value(Opt::Tdata, &["-Tdata"], "ADDR", "Same as --section-start=.data=ADDR"),
    value(Opt::Tbss, &["-Tbss"], "ADDR", "Same as --section-start=.bss=ADDR"),
    value(Opt::Sysroot, &["--sysroot"], "DIR", "Root of -L=DIR/-L$SYSROOT paths and of the absolute paths of input scripts inside it"),
    flag(Opt::WarnBackrefs, &["--warn-backrefs"], "Warn when an archive member is pulled in by a file after its archive (lld's check)"),
    value(Opt::TraceSymbol, &["-y", "--trace-symbol"], "SYMBOL", "Print each file that defines or references SYMBOL"),
    flag(Opt::PrintMemoryUsage, &["--print-memory-usage"], "Print the use of each MEMORY region (a header only: no linker script defines regions yet)"),
    flag(Opt::Stats, &["--stats"], "Print the link's total time and peak memory on standard error"),
    flag(Opt::Cref, &["--cref"], "Print a cross reference table (into the -Map file, else on standard output)"),
    flag(Opt::Help, &["--help"], "Print this help and exit"),
    value(Opt::IgnoredValue, &["-plugin", "--plugin"], "FILE", "Ignored (LTO plugin)"),
    value(Opt::IgnoredValue, &["-plugin-opt"], "OPT", "Ignored (LTO plugin option)"),
    value(Opt::ExcludeLibs, &["--exclude-libs"], "LIBS", "Do not export the symbols of these archives (comma- or colon-separated file names, or ALL)"),
    optional(Opt::ColorDiagnostics, &["--color-diagnostics"], "always|never|auto", "Ignored"),
    flag(Opt::Ignored, &["--no-color-diagnostics"], "Ignored"),
    optional(Opt::Unique, &["--unique"], "SECTION", "With -r: an output section of its own for each orphan input section, or each one matching SECTION (a glob)"),
    flag(Opt::ForceGroupAllocation, &["--force-group-allocation"], "With -r: place section group members as a final link does, and write no groups"),
    optional(Opt::SortCommon, &["--sort-common"], "ascending|descending", "Place common symbols by alignment, largest first unless ascending"),
    value(Opt::SortSection, &["--sort-section"], "name|alignment", "Sort the input sections of every statement that does not sort (in the default layout, as GNU ld's default script's)"),
    flag(Opt::WarnCommon, &["--warn-common"], "Warn when a common symbol is merged with another common or a definition"),
    flag(Opt::NoWarnCommon, &["--no-warn-common"], "Do not warn about common symbols (default)"),
    flag(Opt::WarnTextrel, &["--warn-textrel"], "Warn when the output has text relocations (default)"),
    flag(Opt::Ignored, &["--no-warn-mismatch"], "Ignored"),
    flag(Opt::Ignored, &["--warn-shared-textrel"], "Ignored"),
    flag(Opt::Relax, &["--relax"], "Relax GOT loads of local symbols to direct references (default)"),
    flag(Opt::NoRelax, &["--no-relax"], "Keep every GOT load"),
    flag(Opt::AllowMultipleDefinition, &["--allow-multiple-definition"], "The first of several definitions wins, without an error (also -z muldefs)"),
    flag(Opt::Ignored, &["-EL"], "Ignored (little-endian is the only choice)"),
    flag(Opt::Ignored, &["-nostdlib"], "Ignored (there is no built-in library path)"),
    flag(Opt::Ignored, &["--no-copy-dt-needed-entries"], "Ignored (already the behaviour)"),
    flag(Opt::Ignored, &["-g"], "Ignored"),
    flag(Opt::Ignored, &["--no-ld-generated-unwind-info"], "Ignored (rivet makes no unwind information for its PLT: already the behaviour)"),
    flag(Opt::Ignored, &["--no-warn-rwx-segments"], "Ignored (rivet does not warn about segments that are writable and executable)"),
];

#[cfg(test)]
const fn count_names(specs: &[OptSpec]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < specs.len() {
        n += specs[i].names.len();
        i += 1;
    }
    n
}

#[cfg(test)]
const NAME_COUNT: usize = count_names(OPTIONS);

#[cfg(test)]
const fn all_names() -> [&'static str; NAME_COUNT] {
    let mut out = [""; NAME_COUNT];
    let mut k = 0;
    let mut i = 0;
    while i < OPTIONS.len() {
        let mut j = 0;
        while j < OPTIONS[i].names.len() {
            out[k] = OPTIONS[i].names[j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

/// Every option spelling rivet accepts, in help order, generated from the option table. Long options are listed with
/// their canonical dashes; the other number of dashes is accepted too (see the module doc). `-z` keywords are in
/// [`Z_KEYWORDS`].
#[cfg(test)]
pub const ACCEPTED_OPTIONS: &[&str] = &all_names();

/// Every `-z` keyword rivet acts on (`=N` takes a number, decimal or `0x` hex), as `--help` lists them.
pub const Z_KEYWORDS: &[&str] = &[
    "relro",
    "norelro",
    "now",
    "lazy",
    "execstack",
    "noexecstack",
    "unique-symbol",
    "nounique-symbol",
    "text",
    "notext",
    "textoff",
    "separate-code",
    "noseparate-code",
    "defs",
    "undefs",
    "nodelete",
    "nodlopen",
    "origin",
    "initfirst",
    "interpose",
    "pack-relative-relocs",
    "nopack-relative-relocs",
    "combreloc",
    "nodefaultlib",
    "nodump",
    "dynamic-undefined-weak",
    "nocopyreloc",
    "start-stop-visibility=default|internal|hidden|protected",
    "copyreloc",
    "nodynamic-undefined-weak",
    "ibt",
    "shstk",
    "cet-report=none|warning|error",
    "x86-64-baseline",
    "x86-64-v2",
    "x86-64-v3",
    "x86-64-v4",
    "global",
    "muldefs",
    "max-page-size=N",
    "common-page-size=N",
    "stack-size=N",
];

fn is_short(name: &str) -> bool {
    name.len() == 2
}

/// How a report option (`-z cet-report=`) treats what it finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    None,
    Warning,
    Error,
}

/// What a command-line word is to `--reproduce`, which rewrites paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgRole {
    /// A positional input file.
    Input,
    /// An option naming an input file or search directory; `glued` says whether its value is in the same word
    /// (`-Lx`, `--version-script=x`) rather than the next one.
    InputPath { glued: bool },
    /// An option naming an output file (`-o`, `-Map`), glued or not.
    OutputPath { glued: bool },
    /// `--reproduce` itself.
    Reproduce { glued: bool },
    /// Anything else; `takes_next` if its value is the next word.
    Other { takes_next: bool },
}

/// Classifies one word of the (expanded) command line.
pub fn arg_role(arg: &str) -> ArgRole {
    if !arg.starts_with('-') || arg == "-" {
        return ArgRole::Input;
    }
    let Some((spec, glued)) = lookup(arg) else {
        return ArgRole::Other { takes_next: false };
    };
    let glued = glued.is_some();
    match spec.opt {
        Opt::LibraryPath
        | Opt::Script
        | Opt::VersionScript
        | Opt::DynamicList
        | Opt::SymbolOrderingFile
        | Opt::CallGraphOrderingFile
        | Opt::SectionOrderingFile => ArgRole::InputPath { glued },
        Opt::Output | Opt::Map | Opt::WhyExtract => ArgRole::OutputPath { glued },
        Opt::Reproduce => ArgRole::Reproduce { glued },
        _ => ArgRole::Other {
            takes_next: spec.takes == Takes::Value && !glued,
        },
    }
}

/// Finds the option `arg` (which starts with `-`) spells, and the value glued to it if any.
fn lookup(arg: &str) -> Option<(&'static OptSpec, Option<String>)> {
    let (body, two_dashes) = match arg.strip_prefix("--") {
        Some(body) => (body, true),
        None => (&arg[1..], false),
    };
    if (two_dashes || !body.starts_with('o'))
        && let Some(found) = lookup_long(body)
    {
        return Some(found);
    }
    if two_dashes {
        return None;
    }
    lookup_short(body)
}

fn lookup_long(body: &str) -> Option<(&'static OptSpec, Option<String>)> {
    let (name, glued) = match body.split_once('=') {
        Some((name, glued)) => (name, Some(glued)),
        None => (body, None),
    };
    for spec in OPTIONS {
        let names_it = spec
            .names
            .iter()
            .any(|n| !is_short(n) && n.trim_start_matches('-') == name);
        if !names_it {
            continue;
        }
        match (spec.takes, glued) {
            (Takes::Nothing, Some(_)) => return None,
            (_, glued) => return Some((spec, glued.map(str::to_string))),
        }
    }
    None
}

fn lookup_short(body: &str) -> Option<(&'static OptSpec, Option<String>)> {
    let letter = body.chars().next()?;
    let rest = &body[letter.len_utf8()..];
    for spec in OPTIONS {
        let names_it = spec
            .names
            .iter()
            .any(|n| is_short(n) && n[1..].starts_with(letter));
        if !names_it {
            continue;
        }
        return match spec.takes {
            Takes::Nothing | Takes::Optional if rest.is_empty() => Some((spec, None)),
            Takes::Nothing | Takes::Optional => None,
            Takes::Value if rest.is_empty() => Some((spec, None)),
            Takes::Value => Some((spec, Some(rest.to_string()))),
        };
    }
    None
}

/// Parses the command line (without `argv[0]`).
pub fn parse(argv: &[String]) -> Result<Action, String> {
    let args = expand_response_files(argv)?;
    let mut parser = Parser::default();
    parser.cfg.argv = args.clone();
    let mut i = 0;
    let mut only_files = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "-" && !only_files {
            return Err("reading input from standard input ('-') is not supported".to_string());
        }
        if only_files || !arg.starts_with('-') {
            parser.add_file(PathBuf::from(arg));
            continue;
        }
        if arg == "--" {
            only_files = true;
            continue;
        }
        let Some((spec, glued)) = lookup(arg) else {
            return Err(format!("unknown argument '{arg}'"));
        };
        let value = match (spec.takes, glued) {
            (Takes::Value, None) => {
                let Some(next) = args.get(i) else {
                    return Err(format!("missing argument to {arg}"));
                };
                i += 1;
                Some(next.clone())
            }
            (_, glued) => glued,
        };
        if let Some(action) = parser.apply(spec.opt, arg, value)? {
            return Ok(action);
        }
    }
    parser.finish()
}

/// The option part of `arg` for messages: `--script=x.ld` → `--script`, `-Tx.ld` → `-T`.
fn option_name(arg: &str) -> &str {
    if arg.starts_with("-T") {
        return "-T";
    }
    arg.split_once('=').map_or(arg, |(name, _)| name)
}

#[derive(Default)]
struct Parser {
    cfg: Config,
    flags: InputFlags,
    saved: Vec<InputFlags>,
    in_group: bool,
    pie: bool,
    shared: bool,
    /// `Some(None)`: `--time-trace` without a file, named after the output at the end.
    time_trace: Option<Option<PathBuf>>,
}

impl Parser {
    fn add_file(&mut self, path: PathBuf) {
        self.cfg.inputs.push(InputArg::File {
            path,
            flags: self.flags,
        });
    }

    /// Applies one option. `value` is `Some` for `Takes::Value` options, and for `Takes::Optional` ones when given.
    /// One arm per option, a table in code form: here those that read the inputs or change the command line's
    /// state (groups, `--as-needed`, the output's kind) and the actions; `apply_setting` the rest. An arm that needs
    /// more than a few lines of logic calls a function (below `finish`).
    fn apply(
        &mut self,
        opt: Opt,
        arg: &str,
        value: Option<String>,
    ) -> Result<Option<Action>, String> {
        let val = || value.clone().unwrap_or_default();
        let cfg = &mut self.cfg;
        match opt {
            Opt::Output => (cfg.output, cfg.output_set) = (PathBuf::from(val()), true),
            // Checked against the link's target once it is known (`main::link`).
            Opt::Oformat => {
                let f = val();
                cfg.binary_output = f == "binary";
                cfg.oformat = Some(f);
            }
            // The last of -shared, -pie and -no-pie decides the output's kind, as in GNU ld (`-shared -pie
            // --dynamic-linker` makes a runnable shared object: a PIE).
            Opt::Pie => (self.pie, self.shared) = (true, false),
            Opt::NoPie => (self.pie, self.shared) = (false, false),
            Opt::Shared => (self.pie, self.shared) = (false, true),
            Opt::Emulation => {
                check_emulation(&val())?;
                cfg.elf_i386 = Some(val() == "elf_i386");
            }
            Opt::Format => {
                let f = val();
                self.flags.binary = match f.as_str() {
                    "binary" => true,
                    "default" => false,
                    _ if f.starts_with("elf") => false,
                    _ => {
                        return Err(format!(
                            "{arg}: unsupported input format '{f}' (binary or ELF)"
                        ));
                    }
                };
            }
            Opt::Library => {
                let name = val();
                if name.is_empty() || name == ":" {
                    return Err(format!("{arg}: missing library name"));
                }
                cfg.inputs.push(InputArg::Library {
                    name,
                    flags: self.flags,
                });
            }
            Opt::LibraryPath => {
                // A leading '=' or `$SYSROOT` means "under the sysroot" (`--sysroot`; '/' without one), resolved
                // once the whole command line is read.
                cfg.search_paths.push(PathBuf::from(val()));
            }
            Opt::AsNeeded => self.flags.as_needed = true,
            Opt::NoAsNeeded => self.flags.as_needed = false,
            Opt::WholeArchive => self.flags.whole_archive = true,
            Opt::StartLib => self.flags.lazy = true,
            Opt::EndLib => self.flags.lazy = false,
            Opt::NoWholeArchive => self.flags.whole_archive = false,
            Opt::Bstatic => self.flags.static_only = true,
            // GNU ld's -N also stops linking against shared libraries, from there on.
            Opt::Omagic | Opt::Nmagic => {
                cfg.magic = match opt {
                    Opt::Omagic => Magic::Omagic,
                    _ => Magic::Nmagic,
                };
                self.flags.static_only = true;
            }
            Opt::NoOmagic => cfg.magic = Magic::Paged,
            Opt::Static => {
                self.flags.static_only = true;
                cfg.static_link = true;
            }
            Opt::Bdynamic => self.flags.static_only = false,
            Opt::PushState => self.saved.push(self.flags),
            Opt::PopState => {
                self.flags = self
                    .saved
                    .pop()
                    .ok_or("unbalanced --push-state/--pop-state")?;
            }
            Opt::StartGroup => {
                if self.in_group {
                    return Err("nested --start-group".to_string());
                }
                self.in_group = true;
                cfg.inputs.push(InputArg::GroupStart);
            }
            Opt::EndGroup => {
                if !self.in_group {
                    return Err("stray --end-group".to_string());
                }
                self.in_group = false;
                cfg.inputs.push(InputArg::GroupEnd);
            }
            Opt::Relocatable => {
                // As in GNU ld, `-l` after `-r` finds archives only: a relocatable object cannot use a shared one.
                cfg.relocatable = true;
                self.flags.static_only = true;
            }
            Opt::DefineCommon => cfg.define_common = true,
            Opt::Entry => cfg.entry = Some(val()),
            // Read like a script named as an input, which applies what rivet supports of scripts and refuses
            // the rest (`SECTIONS` among it) with its place. GNU ld looks for it as named, then in the `-L`
            // directories given before it.
            Opt::Script => {
                let named = PathBuf::from(val());
                let path = match named.is_relative() && !named.exists() {
                    true => cfg
                        .search_paths
                        .iter()
                        .map(|d| d.join(&named))
                        .find(|p| p.is_file())
                        .unwrap_or(named),
                    false => named,
                };
                cfg.script_options.push(path.clone());
                cfg.inputs.push(InputArg::File {
                    path,
                    flags: self.flags,
                });
            }
            Opt::TimeTrace => self.time_trace = Some(value.map(PathBuf::from)),
            Opt::TimeTraceFile => self.time_trace = Some(Some(PathBuf::from(val()))),
            Opt::Version => return Ok(Some(Action::Version)),
            Opt::Help => return Ok(Some(Action::Help)),
            setting => apply_setting(cfg, setting, arg, value)?,
        }
        Ok(None)
    }

    fn finish(mut self) -> Result<Action, String> {
        if self.in_group {
            // GNU ld closes the group itself and says so.
            self.cfg
                .warnings
                .push("missing --end-group; added as last command line option".to_string());
            self.cfg.inputs.push(InputArg::GroupEnd);
        }
        let cfg = &mut self.cfg;
        let sysroot = cfg.sysroot.clone();
        for dir in &mut cfg.search_paths {
            *dir = under_sysroot(dir, sysroot.as_deref());
        }
        if cfg.relocatable {
            check_relocatable(cfg, self.shared, self.pie)?;
        } else if cfg.unique_orphans || !cfg.unique_sections.is_empty() {
            // GNU ld splits a final link's output sections too (two `.text`s); rivet's layout keeps one per name.
            return Err("--unique without -r (relocatable output) is not supported yet".into());
        }
        // lld's rules: the two files are refused together, and a symbol ordering file turns the call graph
        // sort off without a word.
        if cfg.symbol_ordering_file.is_some() {
            if cfg.sort_section.is_some() {
                // Two orders of the same sections: lld has no --sort-section, GNU ld no ordering file.
                return Err(
                    "--sort-section and --symbol-ordering-file may not be used together".into(),
                );
            }
            if cfg.call_graph_ordering_file.is_some() {
                return Err(
                    "--symbol-ordering-file and --call-graph-ordering-file may not be used together"
                        .into(),
                );
            }
            cfg.call_graph_sort = CallGraphSort::None;
        }
        cfg.kind = if self.shared {
            OutputKind::Shared
        } else if self.pie {
            OutputKind::Pie
        } else {
            OutputKind::Exec
        };
        if !cfg.paged() && !cfg.relocatable && cfg.kind != OutputKind::Exec {
            // GNU ld writes a `-shared -N` object at the executable's address and fails `-pie -N`.
            return Err(format!(
                "{} makes a static executable; it cannot be used with {}",
                cfg.magic.option(),
                if self.shared { "-shared" } else { "-pie" }
            ));
        }
        cfg.time_trace = self.time_trace.map(|file| {
            file.unwrap_or_else(|| {
                let mut name = cfg.output.clone().into_os_string();
                name.push(".time-trace.json");
                PathBuf::from(name)
            })
        });
        if cfg.binary_output && cfg.relocatable {
            return Err(
                "--oformat binary cannot be used with -r: a partial link's output is an object"
                    .into(),
            );
        }
        if cfg.emit_relocs && cfg.strip_all {
            // The emitted relocations name `.symtab`'s symbols; GNU ld fails such a link ("invalid operation").
            return Err("--emit-relocs (-q) can not be used with --strip-all (-s): the relocations need .symtab".into());
        }
        let has_input = cfg
            .inputs
            .iter()
            .any(|i| matches!(i, InputArg::File { .. } | InputArg::Library { .. }));
        if !has_input {
            if cfg.print_emulations {
                return Ok(Action::Emulations);
            }
            if cfg.print_version {
                return Ok(Action::Version);
            }
            return Err("no input files".to_string());
        }
        Ok(Action::Link(self.cfg))
    }
}

/// Applies an option that only sets the configuration: symbols, dynamic linking, layout, the output, the process
/// and diagnostics (`Parser::apply` takes the inputs, the command line's state and the actions).
/// Option `what`'s decimal value `v`.
fn number<T: std::str::FromStr>(what: &str, v: &str) -> std::result::Result<T, String> {
    v.parse()
        .map_err(|_| format!("{what}: number expected, but got '{v}'"))
}

fn apply_setting(
    cfg: &mut Config,
    opt: Opt,
    arg: &str,
    value: Option<String>,
) -> Result<(), String> {
    let val = || value.clone().unwrap_or_default();
    match opt {
        Opt::Undefined => cfg.undefined.push(val()),
        Opt::Defsym => {
            cfg.defsyms.push(parse_defsym(&val())?);
            cfg.defsym_inputs.push(cfg.inputs.len());
        }
        Opt::Wrap => cfg.wrap.push(val()),
        Opt::VersionScript => cfg.version_script.push(PathBuf::from(val())),
        Opt::SymbolOrderingFile => cfg.symbol_ordering_file = Some(PathBuf::from(val())),
        Opt::WarnSymbolOrdering => cfg.warn_symbol_ordering = true,
        Opt::NoWarnSymbolOrdering => cfg.warn_symbol_ordering = false,
        Opt::CallGraphProfileSort => cfg.call_graph_sort = parse_call_graph_sort(&val())?,
        Opt::NoCallGraphProfileSort => cfg.call_graph_sort = CallGraphSort::None,
        Opt::CallGraphOrderingFile => cfg.call_graph_ordering_file = Some(PathBuf::from(val())),
        Opt::PrintSymbolOrder => cfg.print_symbol_order = Some(PathBuf::from(val())),
        Opt::SectionOrderingFile => cfg.section_ordering_file = Some(PathBuf::from(val())),
        Opt::DynamicList => cfg.dynamic_list.push(PathBuf::from(val())),
        Opt::ExportDynamic => cfg.export_dynamic = true,
        Opt::NoExportDynamic => cfg.export_dynamic = false,
        Opt::Bsymbolic => cfg.bsymbolic = true,
        Opt::BsymbolicFunctions => cfg.bsymbolic_functions = true,
        Opt::BnoSymbolic => {
            cfg.bsymbolic = false;
            cfg.bsymbolic_functions = false;
        }
        Opt::ExportDynamicSymbol => cfg.export_dynamic_symbols.push(val()),
        Opt::DynamicListData => cfg.dynamic_list_data = true,
        Opt::ExportDynamicSymbolList => cfg.export_dynamic_symbol_lists.push(PathBuf::from(val())),
        Opt::Init => cfg.init = Some(val()),
        Opt::Fini => cfg.fini = Some(val()),
        Opt::NoUndefined => {
            cfg.no_undefined = true;
            cfg.z_defs = true;
        }
        Opt::Rpath => add_rpath(&mut cfg.rpath, val()),
        Opt::RpathOrJustSymbols => add_rpath_or_just_symbols(&mut cfg.rpath, val())?,
        Opt::RpathLink => {}
        Opt::Audit => cfg.audit.push(val()),
        Opt::DepAudit => cfg.depaudit.push(val()),
        Opt::Soname => cfg.soname = Some(val()),
        Opt::DynamicLinker => {
            cfg.dynamic_linker = Some(val());
            cfg.no_dynamic_linker = false;
        }
        Opt::NoDynamicLinker => {
            cfg.no_dynamic_linker = true;
            cfg.dynamic_linker = None;
        }
        Opt::HashStyle => {
            cfg.hash_style = match val().as_str() {
                "sysv" => HashStyle::Sysv,
                "gnu" => HashStyle::Gnu,
                "both" => HashStyle::Both,
                other => return Err(format!("unknown --hash-style: {other}")),
            }
        }
        Opt::PackDynRelocs => {
            cfg.pack_relative_relocs = match val().as_str() {
                "relr" => true,
                "none" => false,
                other => return Err(format!("unknown --pack-dyn-relocs: {other}")),
            }
        }
        Opt::EnableNewDtags => cfg.new_dtags = true,
        Opt::DisableNewDtags => cfg.new_dtags = false,
        Opt::Z => apply_z(cfg, &val())?,
        Opt::GcSections => cfg.gc_sections = true,
        Opt::NoGcSections => cfg.gc_sections = false,
        Opt::PrintGcSections => cfg.print_gc_sections = true,
        Opt::NoPrintGcSections => cfg.print_gc_sections = false,
        Opt::EhFrameHdr | Opt::NoEhFrameHdr => {
            cfg.eh_frame_hdr = opt == Opt::EhFrameHdr;
            cfg.eh_frame_hdr_set = true;
        }
        Opt::BuildId => cfg.build_id = parse_build_id(value.as_deref())?,
        Opt::StripAll => cfg.strip_all = true,
        Opt::Unique => match value {
            Some(glob) => cfg.unique_sections.push(glob),
            None => cfg.unique_orphans = true,
        },
        Opt::ForceGroupAllocation => cfg.force_group_allocation = true,
        Opt::EmitRelocs => cfg.emit_relocs = true,
        // GNU ld's one strip setting: the later option replaces `-s`.
        Opt::StripDebug => (cfg.strip_debug, cfg.strip_all) = (true, false),
        Opt::DiscardAll => cfg.discard = Discard::All,
        Opt::DiscardLocals => cfg.discard = Discard::Labels,
        Opt::DiscardNone => cfg.discard = Discard::None,
        Opt::GdbIndex => cfg.gdb_index = true,
        Opt::NoGdbIndex => cfg.gdb_index = false,
        Opt::CompressDebugSections => cfg.compress_debug = parse_compress_debug(&val())?,
        Opt::Icf => cfg.icf = parse_icf(&val())?,
        Opt::PrintIcfSections => cfg.print_icf_sections = true,
        Opt::KeepUnique => cfg.keep_unique.push(val()),
        Opt::NoPrintIcfSections => cfg.print_icf_sections = false,
        Opt::Optimize => cfg.opt_level = number("-O", &val())?,
        Opt::Threads => cfg.threads = Some(parse_threads(arg, &val())?),
        Opt::NoThreads => cfg.threads = Some(1),
        Opt::MmapOutput => cfg.mmap_output = true,
        Opt::NoMmapOutput => cfg.mmap_output = false,
        Opt::UpdateInPlace => cfg.update_in_place = true,
        Opt::NoUpdateInPlace => cfg.update_in_place = false,
        Opt::Fork => cfg.fork = true,
        Opt::NoFork => cfg.fork = false,
        Opt::PrintTiming => cfg.print_timing = true,
        Opt::ErrorLimit => cfg.error_limit = number("--error-limit", &val())?,
        Opt::FatalWarnings => cfg.fatal_warnings = true,
        Opt::WarnExecstack => cfg.warn_execstack = Some(true),
        Opt::NoWarnExecstack => cfg.warn_execstack = Some(false),
        Opt::Relax => cfg.relax = true,
        Opt::Rosegment => cfg.z_separate_code = true,
        Opt::NoRosegment => cfg.z_separate_code = false,
        Opt::OrphanHandling => cfg.orphan_handling = parse_orphan_handling(&val())?,
        Opt::AllowShlibUndefined => cfg.allow_shlib_undefined = Some(true),
        Opt::UnresolvedSymbols => apply_unresolved_symbols(cfg, &val())?,
        Opt::WarnUnresolvedSymbols => cfg.warn_undefined = true,
        Opt::ErrorUnresolvedSymbols => cfg.warn_undefined = false,
        Opt::NoAllowShlibUndefined => cfg.allow_shlib_undefined = Some(false),
        Opt::NoWarnings => cfg.no_warnings = true,
        Opt::Demangle => cfg.demangle = true,
        Opt::NoDemangle => cfg.demangle = false,
        Opt::DependencyFile => cfg.dependency_file = Some(PathBuf::from(val())),
        Opt::PrintMap => cfg.map = Some(PathBuf::from("-")),
        Opt::TraceSymbol => cfg.trace_symbols.push(val()),
        Opt::WarnBackrefs => cfg.warn_backrefs = true,
        Opt::Sysroot => {
            // Applies to the -L options before it too, as in GNU ld: kept as written until the end.
            cfg.sysroot = Some(PathBuf::from(val()));
        }
        Opt::ImageBase => {
            let v = val();
            cfg.image_base =
                Some(parse_number(&v).ok_or_else(|| format!("{arg}: invalid address: {v}"))?);
        }
        Opt::SectionStart | Opt::Ttext | Opt::Tdata | Opt::Tbss => {
            set_section_start(cfg, opt, arg, &val())?
        }
        Opt::DefaultSymver => cfg.default_symver = true,
        Opt::Cref => cfg.cref = true,
        Opt::PrintMemoryUsage => cfg.print_memory_usage = true,
        Opt::Stats => cfg.stats = true,
        Opt::VersionEmulations => {
            cfg.print_version = true;
            cfg.print_emulations = true;
        }
        Opt::PackageMetadata => cfg.package_metadata = Some(val()),
        Opt::UndefinedVersion => cfg.no_undefined_version = false,
        Opt::NoUndefinedVersion => cfg.no_undefined_version = true,
        Opt::ExcludeLibs => cfg.exclude_libs.extend(
            val()
                .split([',', ':'])
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        ),
        Opt::NoRelax => cfg.relax = false,
        Opt::AllowMultipleDefinition => cfg.allow_multiple_definition = true,
        Opt::WarnCommon => cfg.warn_common = true,
        Opt::WarnTextrel => {
            cfg.z_text = false;
            cfg.warn_textrel = true;
        }
        Opt::NoWarnCommon => cfg.warn_common = false,
        Opt::NoFatalWarnings => cfg.fatal_warnings = false,
        Opt::Verbose => cfg.verbose = true,
        Opt::Trace => cfg.trace = true,
        Opt::Map => cfg.map = Some(PathBuf::from(val())),
        Opt::WhyExtract => cfg.why_extract = Some(PathBuf::from(val())),
        Opt::Reproduce => cfg.reproduce = Some(PathBuf::from(val())),
        Opt::VersionAndLink => cfg.print_version = true,
        Opt::Ignored | Opt::IgnoredValue => {}
        Opt::ColorDiagnostics => check_choice(
            "--color-diagnostics",
            value.as_deref(),
            &["always", "never", "auto"],
        )?,
        Opt::SortCommon => {
            check_choice(
                "--sort-common",
                value.as_deref(),
                &["ascending", "descending"],
            )?;
            cfg.sort_common = Some(value.as_deref() != Some("ascending"));
        }
        Opt::SortSection => {
            check_choice("--sort-section", value.as_deref(), &["name", "alignment"])?;
            cfg.sort_section = Some(match value.as_deref() {
                Some("name") => crate::script::ast::Sort::Name,
                _ => crate::script::ast::Sort::Alignment,
            });
        }
        _ => return Err(format!("{arg}: internal error: option not applied")),
    }
    Ok(())
}

/// `-r` with the options that only a final link has a meaning for: GNU ld's errors for `-shared` and `-pie`, and
/// an error for each option whose effect rivet does not reproduce in a partial link yet (never silently ignored).
fn check_relocatable(cfg: &Config, shared: bool, pie: bool) -> Result<(), String> {
    if shared {
        return Err("-r and -shared may not be used together".into());
    }
    if pie {
        return Err("-r and -pie may not be used together".into());
    }
    if cfg.icf != Icf::None {
        return Err("-r and --icf may not be used together".into());
    }
    if cfg.gdb_index {
        // lld's error: the index describes a final output's addresses.
        return Err("-r and --gdb-index may not be used together".into());
    }
    if cfg.gc_sections && cfg.entry.is_none() && cfg.undefined.is_empty() {
        // GNU ld's rule: nothing would be kept.
        return Err("--gc-sections requires a defined symbol root specified by -e or -u".into());
    }
    let unsupported = [
        (cfg.gc_sections, "--gc-sections"),
        (!cfg.version_script.is_empty(), "--version-script"),
        (cfg.symbol_ordering_file.is_some(), "--symbol-ordering-file"),
        (
            cfg.call_graph_ordering_file.is_some(),
            "--call-graph-ordering-file",
        ),
        (
            cfg.section_ordering_file.is_some(),
            "--section-ordering-file",
        ),
        (cfg.sort_section.is_some(), "--sort-section"),
        (
            !cfg.section_start.is_empty(),
            "--section-start/-Ttext/-Tdata/-Tbss",
        ),
        (!cfg.exclude_libs.is_empty(), "--exclude-libs"),
    ];
    match unsupported.iter().find(|(given, _)| *given) {
        Some((_, name)) => Err(format!(
            "{name} with -r (relocatable output) is not supported yet"
        )),
        None => Ok(()),
    }
}

/// `-m EMULATION`: x86-64's, and i386's for static executables.
fn check_emulation(emulation: &str) -> Result<(), String> {
    if !EMULATIONS.contains(&emulation) {
        return Err(format!(
            "unsupported emulation: {emulation} (supported: {})",
            EMULATIONS.join(" ")
        ));
    }
    Ok(())
}

/// `--defsym SYM=EXPR`: the symbol and the expression's text, once the expression parses.
fn parse_defsym(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((sym, expr)) if !sym.is_empty() && !expr.is_empty() => {
            crate::expr::parse(expr).map_err(|e| format!("--defsym: {text}: {e}"))?;
            Ok((sym.trim().to_string(), expr.to_string()))
        }
        _ => Err(format!(
            "--defsym: syntax error: {text} (expected SYM=EXPR)"
        )),
    }
}

/// GNU ld: `-R DIR` is -rpath; `-R FILE` reads FILE's symbols (--just-symbols), which is refused.
fn add_rpath_or_just_symbols(rpath: &mut Vec<String>, path: String) -> Result<(), String> {
    if std::fs::metadata(&path).is_ok_and(|m| !m.is_dir()) {
        return Err(format!(
            "-R {path}: reading symbols from a file (--just-symbols) is not supported"
        ));
    }
    add_rpath(rpath, path);
    Ok(())
}

/// `--compress-debug-sections`'s value: GNU ld's names, but `zlib-gnu` (the old `.zdebug_*` sections, which lld
/// dropped too).
fn parse_compress_debug(v: &str) -> Result<Option<DebugCompression>, String> {
    match v {
        "none" => Ok(None),
        "zlib" | "zlib-gabi" => Ok(Some(DebugCompression::Zlib)),
        "zstd" => Ok(Some(DebugCompression::Zstd)),
        "zlib-gnu" => Err(
            "--compress-debug-sections=zlib-gnu is not supported: the .zdebug_* sections it makes \
             are obsolete (lld dropped them too); use zlib (SHF_COMPRESSED sections)"
                .into(),
        ),
        _ => Err(format!(
            "--compress-debug-sections: unknown value '{v}' (none, zlib, zlib-gabi or zstd)"
        )),
    }
}

/// `--call-graph-profile-sort=ALGORITHM` (lld 19 has no flag form: the value is required).
fn parse_call_graph_sort(v: &str) -> Result<CallGraphSort, String> {
    match v {
        "none" => Ok(CallGraphSort::None),
        "hfsort" => Ok(CallGraphSort::Hfsort),
        "cdsort" => Ok(CallGraphSort::Cdsort),
        _ => Err(format!(
            "unknown --call-graph-profile-sort= value: {v} (expected none, hfsort or cdsort)"
        )),
    }
}

/// `--icf=MODE`.
fn parse_icf(v: &str) -> Result<Icf, String> {
    match v {
        "none" => Ok(Icf::None),
        "all" => Ok(Icf::All),
        "safe" => Ok(Icf::Safe),
        _ => Err(format!(
            "unknown --icf value: {v} (expected all, safe or none)"
        )),
    }
}

/// `--threads=N` (written `arg`): a positive number.
fn parse_threads(arg: &str, v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{}: expected a positive integer, but got '{v}'",
            option_name(arg)
        )),
    }
}

fn parse_orphan_handling(v: &str) -> Result<OrphanHandling, String> {
    Ok(match v {
        "place" => OrphanHandling::Place,
        "warn" => OrphanHandling::Warn,
        "error" => OrphanHandling::Error,
        "discard" => OrphanHandling::Discard,
        _ => return Err(format!("unknown --orphan-handling value: {v}")),
    })
}

/// `--unresolved-symbols=METHOD`: whether undefined symbols of objects are reported, and of shared libraries
/// allowed.
fn apply_unresolved_symbols(cfg: &mut Config, method: &str) -> Result<(), String> {
    let (objects, shlibs) = match method {
        "report-all" => (true, None),
        "ignore-all" => (false, Some(true)),
        "ignore-in-object-files" => (false, None),
        "ignore-in-shared-libs" => (true, Some(true)),
        m => return Err(format!("unknown --unresolved-symbols method '{m}'")),
    };
    cfg.report_undefined = objects;
    if shlibs.is_some() {
        cfg.allow_shlib_undefined = shlibs;
    }
    Ok(())
}

impl Config {
    /// Whether the executable is demand paged (neither `-N` nor `-n`).
    pub fn paged(&self) -> bool {
        self.magic == Magic::Paged
    }

    /// Whether merged strings share their tails, as GNU ld's do: under a `SECTIONS` script and at `-O2`
    /// (`merge::share_tails`).
    pub fn shares_string_tails(&self) -> bool {
        self.sections.is_some() || self.opt_level >= 2
    }

    /// The configuration with what the scripts read say applied: `ENTRY` unless `-e` was given, `EXTERN` as
    /// `-u`, assignments outside `SECTIONS` in scripts without it as `--defsym`s (among the command line's, in
    /// command-line order; `PROVIDE`'s only for symbols the inputs refer to and do not define; `HIDDEN`'s not
    /// exported), `VERSION` as a version script, `SECTIONS` as the layout (with its script's assignments outside
    /// it among its commands).
    pub fn with_scripts(&self, s: &crate::script::input::ScriptSettings) -> Config {
        let mut c = self.clone();
        if c.entry.is_none() {
            c.entry = s.entry.clone();
        }
        // `-o` and `--oformat` take precedence over `OUTPUT` and `OUTPUT_FORMAT`, as in GNU ld.
        if let (false, Some(o)) = (c.output_set, &s.output) {
            c.output = PathBuf::from(o);
        }
        if c.oformat.is_none() {
            c.binary_output |= s.binary_output;
        }
        c.undefined.extend(s.externs.iter().cloned());
        // The scripts' assignments among the `--defsym`s, in command-line order (GNU ld reads each script where
        // it is named); `SECTIONS` among them where its script is, after the assignments of the scripts named
        // with it between the same `--defsym`s (a `MEMORY` script's before the `SECTIONS` one's).
        let given = std::mem::take(&mut c.defsyms);
        c.defsym_places.clear();
        let mut assigns = s.assignments.iter().peekable();
        for k in 0..=given.len() {
            while let Some((at, a, _)) = assigns.next_if(|a| a.2 <= k) {
                let def = (a.target.clone(), a.text.clone());
                if a.provide {
                    c.provides.push(def);
                } else {
                    c.defsyms.push(def);
                    c.defsym_places.push(Some(at.clone()));
                }
                if a.hidden {
                    c.script_hidden.push(a.target.clone());
                }
            }
            if s.sections_after_defsyms == Some(k) {
                c.defsyms_after = c.defsyms.len();
            }
            if let Some(d) = given.get(k) {
                c.defsyms.push(d.clone());
                c.defsym_places.push(None);
            }
        }
        c.version_texts.extend(s.versions.iter().cloned());
        c.nocrossrefs.extend(s.nocrossrefs.iter().cloned());
        if let Some(sections) = &s.sections {
            c.section_symbols = sections.symbols();
            c.script_hidden.extend(
                c.section_symbols
                    .iter()
                    .filter(|s| s.hidden)
                    .map(|s| s.name.clone()),
            );
            c.sections = Some(sections.clone());
        }
        c
    }
}

/// `--section-start=SECTION=ADDR`, `-Ttext`, `-Tdata`, `-Tbss` (option `opt`, written `arg`, value `v`): the last
/// address given for a section wins.
fn set_section_start(cfg: &mut Config, opt: Opt, arg: &str, v: &str) -> Result<(), String> {
    let (name, addr) = match opt {
        Opt::Ttext => (".text", v),
        Opt::Tdata => (".data", v),
        Opt::Tbss => (".bss", v),
        _ => v
            .split_once('=')
            .ok_or_else(|| format!("--section-start: expected SECTION=ADDR, got '{v}'"))?,
    };
    let addr = parse_number(addr).ok_or_else(|| format!("{arg}: invalid address: {addr}"))?;
    cfg.section_start.retain(|(n, _)| n != name);
    cfg.section_start.push((name.to_string(), addr));
    Ok(())
}

fn check_choice(option: &str, value: Option<&str>, choices: &[&str]) -> Result<(), String> {
    match value {
        Some(v) if !choices.contains(&v) => Err(format!("unknown {option} value: {v}")),
        _ => Ok(()),
    }
}

fn parse_build_id(style: Option<&str>) -> Result<BuildId, String> {
    Ok(match style {
        Some("fast") => BuildId::Fast,
        Some("none") => BuildId::None,
        Some("md5") => BuildId::Md5,
        // GNU ld's default style, and the id size tools (debuginfod, rpm's debuginfo) expect.
        None | Some("sha1") | Some("tree") => BuildId::Sha1,
        Some("uuid") => BuildId::Uuid,
        Some(s) if s.starts_with("0x") || s.starts_with("0X") => {
            let hex = &s[2..];
            if hex.is_empty() || hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("--build-id: invalid hex string: {s}"));
            }
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0));
            BuildId::Hex(bytes.collect())
        }
        Some(s) => return Err(format!("unknown --build-id style: {s}")),
    })
}

fn apply_z(cfg: &mut Config, keyword: &str) -> Result<(), String> {
    match keyword {
        "relro" => cfg.relro = true,
        "norelro" => cfg.relro = false,
        "now" => cfg.bind_now = true,
        "lazy" => cfg.bind_now = false,
        "execstack" => cfg.execstack = true,
        "noexecstack" => {
            cfg.execstack = false;
            cfg.noexecstack = true;
        }
        "unique-symbol" => cfg.unique_symbol = true,
        "nounique-symbol" => cfg.unique_symbol = false,
        "text" => cfg.z_text = true,
        "notext" | "textoff" => {
            cfg.z_text = false;
            cfg.warn_textrel = false;
        }
        "separate-code" => cfg.z_separate_code = true,
        "noseparate-code" => cfg.z_separate_code = false,
        "defs" | "undefs" => {
            cfg.z_defs = keyword == "defs";
            cfg.no_undefined = cfg.z_defs;
        }
        "nodelete" => cfg.z_nodelete = true,
        "nodlopen" => cfg.z_nodlopen = true,
        "origin" => cfg.z_origin = true,
        "initfirst" => cfg.z_initfirst = true,
        "interpose" => cfg.z_interpose = true,
        "pack-relative-relocs" => cfg.pack_relative_relocs = true,
        "nopack-relative-relocs" => cfg.pack_relative_relocs = false,
        // `.rela.dyn` is always one section, sorted as GNU ld sorts it by default (`synthetic::rela::sort_combined`).
        "combreloc" => {}
        "nodefaultlib" => cfg.z_nodefaultlib = true,
        "nodump" => cfg.z_nodump = true,
        "global" => cfg.z_global = true,
        "muldefs" => cfg.allow_multiple_definition = true,
        "dynamic-undefined-weak" => cfg.dynamic_undefined_weak = Some(true),
        "nocopyreloc" => cfg.z_nocopyreloc = true,
        "copyreloc" => cfg.z_nocopyreloc = false,
        "nodynamic-undefined-weak" => cfg.dynamic_undefined_weak = Some(false),
        "ibt" => cfg.z_ibt = true,
        "shstk" => cfg.z_shstk = true,
        "x86-64-baseline" => cfg.z_isa_level = cfg.z_isa_level.max(1),
        "x86-64-v2" => cfg.z_isa_level = cfg.z_isa_level.max(2),
        "x86-64-v3" => cfg.z_isa_level = cfg.z_isa_level.max(3),
        "x86-64-v4" => cfg.z_isa_level = cfg.z_isa_level.max(4),
        _ => {
            if let Some(n) = keyword.strip_prefix("max-page-size=") {
                cfg.max_page_size = parse_page_size("max-page-size", n)?;
            } else if let Some(n) = keyword.strip_prefix("common-page-size=") {
                cfg.common_page_size = parse_page_size("common-page-size", n)?;
            } else if let Some(v) = keyword.strip_prefix("start-stop-visibility=") {
                use object::elf as E;
                cfg.start_stop_visibility = match v {
                    "default" => E::STV_DEFAULT,
                    "internal" => E::STV_INTERNAL,
                    "hidden" => E::STV_HIDDEN,
                    "protected" => E::STV_PROTECTED,
                    _ => {
                        return Err(format!(
                            "-z start-stop-visibility: unknown visibility '{v}'"
                        ));
                    }
                };
            } else if let Some(r) = keyword.strip_prefix("cet-report=") {
                cfg.cet_report = match r {
                    "none" => Report::None,
                    "warning" => Report::Warning,
                    "error" => Report::Error,
                    _ => {
                        return Err(format!(
                            "-z cet-report= takes none, warning or error, not '{r}'"
                        ));
                    }
                };
            } else if let Some(n) = keyword.strip_prefix("stack-size=") {
                cfg.stack_size =
                    parse_number(n).ok_or_else(|| format!("invalid stack size: {n}"))?;
            } else {
                // GNU ld, lld, mold and wild warn and go on; so does rivet, saying so (--fatal-warnings makes it an
                // error).
                cfg.warnings.push(format!("-z {keyword} ignored"));
            }
        }
    }
    Ok(())
}

/// A path that starts with `=` or `$SYSROOT` names one under the sysroot (`/` without `--sysroot`); any other is
/// as written.
pub fn under_sysroot(path: &Path, sysroot: Option<&Path>) -> PathBuf {
    let text = path.to_string_lossy();
    let Some(rest) = text
        .strip_prefix('=')
        .or_else(|| text.strip_prefix("$SYSROOT"))
    else {
        return path.to_path_buf();
    };
    match sysroot {
        Some(root) => root.join(rest.trim_start_matches('/')),
        None if rest.is_empty() => PathBuf::from("/"),
        None => PathBuf::from(rest),
    }
}

/// Adds an `-rpath` directory unless it is already one of the run path's entries (GNU ld drops repeats; a list
/// such as `/b:/c` is compared whole).
fn add_rpath(rpath: &mut Vec<String>, dir: String) {
    if !rpath.iter().flat_map(|r| r.split(':')).any(|e| e == dir) {
        rpath.push(dir);
    }
}

fn parse_page_size(what: &str, text: &str) -> Result<u64, String> {
    let n = parse_number(text).ok_or_else(|| format!("invalid {what}: {text}"))?;
    if !n.is_power_of_two() {
        return Err(format!("{what}: value isn't a power of 2: {text}"));
    }
    Ok(n)
}

/// A number as `strtoul(text, _, 0)` reads it: `0x` hex, leading-`0` octal, else decimal; nothing may follow.
fn parse_number(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).ok()
    } else {
        text.parse().ok()
    }
}

/// How deep `@file` may nest; deeper means a file includes itself.
const MAX_RESPONSE_DEPTH: usize = 64;

/// Replaces every `@FILE` argument by the words in FILE, recursively (as libiberty's `expandargv`, except that a
/// missing file is an error rather than a literal argument).
fn expand_response_files(argv: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(argv.len());
    for arg in argv {
        expand_arg(arg, &mut out, 0)?;
    }
    Ok(out)
}

fn expand_arg(arg: &str, out: &mut Vec<String>, depth: usize) -> Result<(), String> {
    let Some(path) = arg.strip_prefix('@').filter(|p| !p.is_empty()) else {
        out.push(arg.to_string());
        return Ok(());
    };
    if depth >= MAX_RESPONSE_DEPTH {
        return Err(format!(
            "response file {path} nested too deeply (does it include itself?)"
        ));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot open response file {path}: {}", io_message(&e)))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("response file {path} is not valid UTF-8"))?;
    for word in split_response_file(&text) {
        expand_arg(&word, out, depth + 1)?;
    }
    Ok(())
}

/// An I/O error as strerror says it, without Rust's " (os error N)" tail.
fn io_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// libiberty's `buildargv` rules: whitespace separates words; `'…'` and `"…"` quote (and may be empty); a backslash
/// makes the next character literal everywhere, inside quotes too.
fn split_response_file(text: &str) -> Vec<String> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c');
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|&c| is_space(c)).is_some() {}
        if chars.peek().is_none() {
            return words;
        }
        let mut word = String::new();
        let (mut single, mut double, mut escaped) = (false, false, false);
        for c in chars.by_ref() {
            if escaped {
                word.push(c);
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if single {
                if c == '\'' {
                    single = false;
                } else {
                    word.push(c);
                }
            } else if double {
                if c == '"' {
                    double = false;
                } else {
                    word.push(c);
                }
            } else if c == '\'' {
                single = true;
            } else if c == '"' {
                double = true;
            } else if is_space(c) {
                break;
            } else {
                word.push(c);
            }
        }
        words.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn link(line: &str) -> Config {
        match parse(&words(line)) {
            Ok(Action::Link(cfg)) => cfg,
            other => panic!("expected a link for {line:?}, got {other:?}"),
        }
    }

    fn error(line: &str) -> String {
        match parse(&words(line)) {
            Err(msg) => msg,
            other => panic!("expected an error for {line:?}, got {other:?}"),
        }
    }

    fn file(path: &str, flags: InputFlags) -> InputArg {
        InputArg::File {
            path: PathBuf::from(path),
            flags,
        }
    }

    fn lib(name: &str, flags: InputFlags) -> InputArg {
        InputArg::Library {
            name: name.to_string(),
            flags,
        }
    }

    const PLAIN: InputFlags = InputFlags {
        whole_archive: false,
        as_needed: false,
        static_only: false,
        lazy: false,
        binary: false,
    };
    const AS_NEEDED: InputFlags = InputFlags {
        whole_archive: false,
        as_needed: true,
        static_only: false,
        lazy: false,
        binary: false,
    };
    const STATIC_AS_NEEDED: InputFlags = InputFlags {
        whole_archive: false,
        as_needed: true,
        static_only: true,
        lazy: false,
        binary: false,
    };

    /// A unique scratch path for a test's files.
    fn temp_path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("rivet-args-{}-{name}", std::process::id()))
    }

    // `gcc -static-pie -### x.c` on Debian 12 (gcc 12), as collect2 hands it on.
    const GCC_STATIC_PIE: &str = "-plugin /usr/lib/gcc/x86_64-linux-gnu/12/liblto_plugin.so \
        -plugin-opt=/usr/lib/gcc/x86_64-linux-gnu/12/lto-wrapper -plugin-opt=-fresolution=/tmp/cc8pMDgR.res \
        -plugin-opt=-pass-through=-lgcc -plugin-opt=-pass-through=-lgcc_eh -plugin-opt=-pass-through=-lc \
        --build-id --eh-frame-hdr -m elf_x86_64 --hash-style=gnu --as-needed -static -pie --no-dynamic-linker \
        -z text -pie -o out \
        /usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu/rcrt1.o \
        /usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu/crti.o \
        /usr/lib/gcc/x86_64-linux-gnu/12/crtbeginS.o -L/usr/lib/gcc/x86_64-linux-gnu/12 \
        -L/usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu -L/usr/lib/gcc/x86_64-linux-gnu/12/../../../../lib \
        -L/lib/x86_64-linux-gnu -L/lib/../lib -L/usr/lib/x86_64-linux-gnu -L/usr/lib/../lib \
        -L/usr/lib/gcc/x86_64-linux-gnu/12/../../.. /tmp/ccvrORWZ.o --start-group -lgcc -lgcc_eh -lc --end-group \
        /usr/lib/gcc/x86_64-linux-gnu/12/crtendS.o /usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu/crtn.o";

    // `clang-19 -### x.c` (default PIE) on Debian 12.
    const CLANG_PIE: &str = "--hash-style=gnu --build-id --eh-frame-hdr -m elf_x86_64 -pie \
        -dynamic-linker /lib64/ld-linux-x86-64.so.2 -o a.out /lib/x86_64-linux-gnu/Scrt1.o \
        /lib/x86_64-linux-gnu/crti.o /usr/lib/gcc/x86_64-linux-gnu/12/crtbeginS.o -L/usr/lib/gcc/x86_64-linux-gnu/12 \
        -L/usr/lib/gcc/x86_64-linux-gnu/12/../../../../lib64 -L/lib/x86_64-linux-gnu -L/lib/../lib64 \
        -L/usr/lib/x86_64-linux-gnu -L/usr/lib/../lib64 -L/lib -L/usr/lib /tmp/x-f4aef5.o -lgcc --as-needed -lgcc_s \
        --no-as-needed -lc -lgcc --as-needed -lgcc_s --no-as-needed /usr/lib/gcc/x86_64-linux-gnu/12/crtendS.o \
        /lib/x86_64-linux-gnu/crtn.o";

    #[test]
    fn gcc_static_pie_line() {
        let cfg = link(GCC_STATIC_PIE);
        assert_eq!(cfg.kind, OutputKind::Pie);
        assert!(cfg.static_link);
        assert!(cfg.no_dynamic_linker);
        assert_eq!(cfg.dynamic_linker, None);
        assert!(cfg.z_text);
        assert!(cfg.eh_frame_hdr && cfg.eh_frame_hdr_set);
        assert_eq!(cfg.build_id, BuildId::Sha1);
        assert_eq!(cfg.hash_style, HashStyle::Gnu);
        assert_eq!(cfg.output, PathBuf::from("out"));
        assert_eq!(cfg.search_paths.len(), 8);
        assert_eq!(
            cfg.search_paths[0],
            PathBuf::from("/usr/lib/gcc/x86_64-linux-gnu/12")
        );
        assert_eq!(
            cfg.inputs,
            vec![
                file(
                    "/usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu/rcrt1.o",
                    STATIC_AS_NEEDED
                ),
                file(
                    "/usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu/crti.o",
                    STATIC_AS_NEEDED
                ),
                file(
                    "/usr/lib/gcc/x86_64-linux-gnu/12/crtbeginS.o",
                    STATIC_AS_NEEDED
                ),
                file("/tmp/ccvrORWZ.o", STATIC_AS_NEEDED),
                InputArg::GroupStart,
                lib("gcc", STATIC_AS_NEEDED),
                lib("gcc_eh", STATIC_AS_NEEDED),
                lib("c", STATIC_AS_NEEDED),
                InputArg::GroupEnd,
                file(
                    "/usr/lib/gcc/x86_64-linux-gnu/12/crtendS.o",
                    STATIC_AS_NEEDED
                ),
                file(
                    "/usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu/crtn.o",
                    STATIC_AS_NEEDED
                ),
            ]
        );
        assert!(cfg.warnings.is_empty());
    }

    #[test]
    fn clang_pie_line() {
        let cfg = link(CLANG_PIE);
        assert_eq!(cfg.kind, OutputKind::Pie);
        assert!(!cfg.static_link);
        assert_eq!(
            cfg.dynamic_linker.as_deref(),
            Some("/lib64/ld-linux-x86-64.so.2")
        );
        assert_eq!(cfg.output, PathBuf::from("a.out"));
        let libs: Vec<_> = cfg
            .inputs
            .iter()
            .filter(|i| matches!(i, InputArg::Library { .. }))
            .cloned()
            .collect();
        assert_eq!(
            libs,
            vec![
                lib("gcc", PLAIN),
                lib("gcc_s", AS_NEEDED),
                lib("c", PLAIN),
                lib("gcc", PLAIN),
                lib("gcc_s", AS_NEEDED),
            ]
        );
        // Defaults the line does not touch.
        assert!(
            cfg.relro && !cfg.bind_now && cfg.new_dtags && cfg.mmap_output && cfg.z_separate_code
        );
        assert_eq!(cfg.max_page_size, 4096);
        assert_eq!(cfg.threads, None);
        assert_eq!(cfg.time_trace, None);
    }

    #[test]
    fn gcc_default_pie_with_hardening() {
        let cfg = link(
            "-plugin /p/liblto_plugin.so -plugin-opt=/p/lto-wrapper --build-id --eh-frame-hdr -m elf_x86_64 \
             --hash-style=gnu --as-needed -dynamic-linker /lib64/ld-linux-x86-64.so.2 -pie -z now -z relro -o out \
             Scrt1.o crti.o crtbeginS.o -L/usr/lib a.o -lgcc --push-state --as-needed -lgcc_s --pop-state -lc \
             crtendS.o crtn.o",
        );
        assert_eq!(cfg.kind, OutputKind::Pie);
        assert!(cfg.bind_now && cfg.relro);
    }

    #[test]
    fn output_kinds() {
        assert_eq!(link("a.o").kind, OutputKind::Exec);
        assert_eq!(link("-pie a.o").kind, OutputKind::Pie);
        assert_eq!(link("--pic-executable a.o").kind, OutputKind::Pie);
        assert_eq!(link("-pie -no-pie a.o").kind, OutputKind::Exec);
        assert_eq!(link("-pie --no-pic-executable a.o").kind, OutputKind::Exec);
        // The last of -shared, -pie and -no-pie wins, as in GNU ld.
        assert_eq!(link("-shared -pie a.o").kind, OutputKind::Pie);
        assert_eq!(link("-shared -no-pie a.o").kind, OutputKind::Exec);
        assert_eq!(link("-pie -Bshareable a.o").kind, OutputKind::Shared);
        let cfg = link("-static a.o");
        assert_eq!(cfg.kind, OutputKind::Exec);
        assert!(cfg.static_link);
        assert!(!link("-Bstatic a.o").static_link);
    }

    #[test]
    fn push_and_pop_state() {
        let cfg = link(
            "-la --whole-archive -Bstatic --push-state --no-whole-archive --as-needed -Bdynamic -lb --pop-state -lc \
             --no-whole-archive -dy -ld",
        );
        let wa_static = InputFlags {
            whole_archive: true,
            as_needed: false,
            static_only: true,
            lazy: false,
            binary: false,
        };
        assert_eq!(
            cfg.inputs,
            vec![
                lib("a", PLAIN),
                lib("b", AS_NEEDED),
                lib("c", wa_static),
                lib("d", PLAIN)
            ]
        );
        assert_eq!(
            error("--pop-state a.o"),
            "unbalanced --push-state/--pop-state"
        );
    }

    #[test]
    fn static_spellings() {
        for spelling in ["-Bstatic", "-dn", "-non_shared", "-static", "--static"] {
            let cfg = link(&format!("{spelling} -lx -call_shared -ly"));
            let InputArg::Library { flags, .. } = &cfg.inputs[0] else {
                panic!()
            };
            assert!(flags.static_only, "{spelling}");
            let InputArg::Library { flags, .. } = &cfg.inputs[1] else {
                panic!()
            };
            assert!(!flags.static_only, "{spelling}");
        }
    }

    #[test]
    fn groups() {
        let cfg = link("-( -la -lb -) --start-group x.o --end-group");
        assert_eq!(cfg.inputs[0], InputArg::GroupStart);
        assert_eq!(cfg.inputs[3], InputArg::GroupEnd);
        assert_eq!(cfg.inputs[4], InputArg::GroupStart);
        assert_eq!(cfg.inputs[6], InputArg::GroupEnd);
        let cfg = link("--start-group -la");
        assert_eq!(cfg.inputs.last(), Some(&InputArg::GroupEnd));
        assert_eq!(cfg.warnings.len(), 1);
        assert_eq!(error("--start-group -( a.o"), "nested --start-group");
        assert_eq!(error("a.o --end-group"), "stray --end-group");
    }

    #[test]
    fn library_spellings() {
        let cfg = link(
            "-lc -l m --library=pthread --library dl -l:foo.a -L/a -L /b --library-path=/c -L=/d",
        );
        let names: Vec<_> = cfg
            .inputs
            .iter()
            .map(|i| match i {
                InputArg::Library { name, .. } => name.as_str(),
                _ => panic!(),
            })
            .collect();
        assert_eq!(names, ["c", "m", "pthread", "dl", ":foo.a"]);
        assert_eq!(
            cfg.search_paths,
            ["/a", "/b", "/c", "/d"].map(PathBuf::from)
        );
    }

    #[test]
    fn value_spellings() {
        let cfg = link("-ofoo -efoo_start -ufoo -u bar --undefined=baz -hlibx.so.1 a.o");
        assert_eq!(cfg.output, PathBuf::from("foo"));
        assert_eq!(cfg.entry.as_deref(), Some("foo_start"));
        assert_eq!(cfg.undefined, ["foo", "bar", "baz"]);
        assert_eq!(cfg.soname.as_deref(), Some("libx.so.1"));
        let cfg = link(
            "--output=o2 --entry f -soname=libz.so -rpath /r1 --rpath=/r2 -R /r3 -rpath-link /x a.o",
        );
        assert_eq!(cfg.output, PathBuf::from("o2"));
        assert_eq!(cfg.entry.as_deref(), Some("f"));
        assert_eq!(cfg.soname.as_deref(), Some("libz.so"));
        assert_eq!(cfg.rpath, ["/r1", "/r2", "/r3"]);
        let cfg = link("-I/lib/ld.so a.o");
        assert_eq!(cfg.dynamic_linker.as_deref(), Some("/lib/ld.so"));
        let cfg = link("--dynamic-linker=/x -melf_x86_64 -zrelro -znow -O1 a.o");
        assert_eq!(cfg.dynamic_linker.as_deref(), Some("/x"));
        assert!(cfg.bind_now);
        assert_eq!(cfg.opt_level, 1);
        assert_eq!(link("-O 2 a.o").opt_level, 2);
        // '-o' glues even what looks like a long option, as in GNU ld.
        assert_eq!(link("-output=x a.o").output, PathBuf::from("utput=x"));
        // Single-dash long options.
        let cfg = link("-export-dynamic -whole-archive a.o -no-whole-archive -gc-sections a.o");
        assert!(cfg.export_dynamic && cfg.gc_sections);
        assert_eq!(
            cfg.inputs[0],
            file(
                "a.o",
                InputFlags {
                    whole_archive: true,
                    ..PLAIN
                }
            )
        );
    }

    #[test]
    fn defsym() {
        let cfg = link("--defsym=foo=0x1000 --defsym bar=foo+4 -defsym baz=a==b a.o");
        assert_eq!(
            cfg.defsyms,
            vec![
                ("foo".to_string(), "0x1000".to_string()),
                ("bar".to_string(), "foo+4".to_string()),
                ("baz".to_string(), "a==b".to_string()),
            ]
        );
        assert!(error("--defsym baz=a=b a.o").contains("--defsym: baz=a=b"));
        assert!(error("--defsym x=(1 a.o").contains("expected ')'"));
        assert!(error("--defsym foo a.o").contains("syntax error"));
        assert!(error("--defsym=foo a.o").contains("syntax error"));
        assert!(error("--defsym =1 a.o").contains("syntax error"));
    }

    #[test]
    fn z_keywords() {
        let cfg = link(
            "-z norelro -z lazy -z execstack -z notext -z noseparate-code -z max-page-size=0x200000 \
             -z common-page-size=4096 -z defs -z nodelete -z nodlopen -z origin -z initfirst -z interpose a.o",
        );
        assert!(
            !cfg.relro && !cfg.bind_now && cfg.execstack && !cfg.z_text && !cfg.z_separate_code
        );
        assert_eq!(cfg.max_page_size, 0x200000);
        assert!(cfg.z_defs && cfg.no_undefined);
        assert!(
            cfg.z_nodelete && cfg.z_nodlopen && cfg.z_origin && cfg.z_initfirst && cfg.z_interpose
        );
        let cfg = link("--no-undefined -z undefs a.o");
        assert!(!cfg.z_defs && !cfg.no_undefined);
        assert_eq!(link("-z foo a.o").warnings, ["-z foo ignored"]);
        let cfg = link(
            "-z nodefaultlib -z nodump -z global -z muldefs -z stack-size=0x100000 --no-relax a.o",
        );
        assert!(
            cfg.z_nodefaultlib && cfg.z_nodump && cfg.z_global && cfg.allow_multiple_definition
        );
        assert_eq!(cfg.stack_size, 0x100000);
        assert!(!cfg.relax && link("a.o").relax);
        assert!(error("-z max-page-size=3000 a.o").contains("power of 2"));
        assert!(error("-z max-page-size=lots a.o").contains("invalid max-page-size"));
        for keyword in Z_KEYWORDS {
            let keyword = keyword
                .replace("=N", "=4096")
                .replace("=none|warning|error", "=warning")
                .replace("=default|internal|hidden|protected", "=hidden");
            link(&format!("-z {keyword} a.o"));
        }
        let cfg = link("-z ibt -z shstk -z cet-report=error -z x86-64-v3 -z x86-64-v2 a.o");
        assert!(
            cfg.z_ibt && cfg.z_shstk && cfg.cet_report == Report::Error && cfg.z_isa_level == 3
        );
        assert!(error("-z cet-report=loud a.o").contains("none, warning or error"));
    }

    #[test]
    fn build_id_and_hash_style() {
        assert_eq!(link("a.o").build_id, BuildId::None);
        assert_eq!(link("--build-id a.o").build_id, BuildId::Sha1);
        assert_eq!(link("--build-id=fast a.o").build_id, BuildId::Fast);
        assert_eq!(link("--build-id=sha1 a.o").build_id, BuildId::Sha1);
        assert_eq!(link("--build-id=md5 a.o").build_id, BuildId::Md5);
        assert_eq!(link("--build-id=uuid a.o").build_id, BuildId::Uuid);
        assert_eq!(
            link("--build-id --build-id=none a.o").build_id,
            BuildId::None
        );
        assert_eq!(
            link("--build-id=0xdeadBEEF a.o").build_id,
            BuildId::Hex(vec![0xde, 0xad, 0xbe, 0xef])
        );
        assert!(error("--build-id=0xabc a.o").contains("hex"));
        assert_eq!(
            error("--build-id=blake a.o"),
            "unknown --build-id style: blake"
        );
        assert_eq!(link("a.o").hash_style, HashStyle::Both);
        assert_eq!(link("--hash-style=gnu a.o").hash_style, HashStyle::Gnu);
        assert_eq!(link("--hash-style sysv a.o").hash_style, HashStyle::Sysv);
        assert_eq!(error("--hash-style=mips a.o"), "unknown --hash-style: mips");
    }

    #[test]
    fn threads_and_timing() {
        assert_eq!(link("--threads=4 a.o").threads, Some(4));
        assert_eq!(link("--threads 3 a.o").threads, Some(3));
        assert_eq!(link("--thread-count 2 a.o").threads, Some(2));
        assert_eq!(link("--threads=8 --no-threads a.o").threads, Some(1));
        assert!(error("--threads=0 a.o").contains("positive integer"));
        assert!(error("--threads a.o").contains("positive integer"));
        let cfg = link("--time-trace -o prog a.o");
        assert_eq!(cfg.time_trace, Some(PathBuf::from("prog.time-trace.json")));
        assert_eq!(
            link("--time-trace=t.json a.o").time_trace,
            Some(PathBuf::from("t.json"))
        );
        let cfg = link("--print-timing --no-mmap-output-file a.o");
        assert!(cfg.print_timing && !cfg.mmap_output && cfg.fork && cfg.update_in_place);
        assert!(!link("--no-update-in-place a.o").update_in_place);
        assert!(link("--no-update-in-place --update-in-place a.o").update_in_place);
        assert!(!link("--no-fork a.o").fork && link("--no-fork --fork a.o").fork);
    }

    #[test]
    fn recorded_for_later_passes() {
        let cfg = link(
            "--version-script v.map --version-script=w.map --wrap malloc --wrap=free \
             -t -Bsymbolic -Bsymbolic-functions --error-limit=0 -init my_init -fini=my_fini -x -X a.o",
        );
        assert_eq!(cfg.version_script, ["v.map", "w.map"].map(PathBuf::from));
        assert_eq!(cfg.wrap, ["malloc", "free"]);
        assert!(
            cfg.trace && cfg.bsymbolic && cfg.bsymbolic_functions && cfg.discard == Discard::Labels
        );
        // The last of -x, -X and --discard-none counts, as in GNU ld.
        assert_eq!(link("-X --discard-none a.o").discard, Discard::None);
        assert_eq!(link("--discard-none -x a.o").discard, Discard::All);
        assert_eq!(link("a.o").discard, Discard::MergeLabels);
        assert_eq!(cfg.error_limit, 0);
        assert_eq!(cfg.init.as_deref(), Some("my_init"));
        assert_eq!(cfg.fini.as_deref(), Some("my_fini"));
        assert_eq!(
            link("--dynamic-list=d.list a.o").dynamic_list,
            [PathBuf::from("d.list")]
        );
        for map in ["--Map=m.map a.o", "-Map m.map a.o", "-Map=m.map a.o"] {
            assert_eq!(link(map).map, Some(PathBuf::from("m.map")), "{map}");
        }
        assert_eq!(
            link("--why-extract=- a.o").why_extract,
            Some(PathBuf::from("-"))
        );
    }

    #[test]
    fn accepted_no_ops() {
        link(
            "-nostdlib -g -EL --relax --no-relax --sort-common --sort-common=descending \
             --allow-shlib-undefined --no-allow-shlib-undefined --undefined-version --no-undefined-version \
             --no-warn-mismatch --warn-shared-textrel --color-diagnostics --color-diagnostics=never \
             --exclude-libs ALL --compress-debug-sections=none --icf=none --plugin x.so -plugin-opt O2 \
             --fatal-warnings --no-fatal-warnings --verbose -s -S --enable-new-dtags --disable-new-dtags \
             --print-gc-sections --no-gc-sections --no-eh-frame-hdr --no-export-dynamic -E a.o",
        );
        assert_eq!(
            link("--compress-debug-sections=zlib a.o").compress_debug,
            Some(DebugCompression::Zlib)
        );
        assert_eq!(
            link("--compress-debug-sections=zlib-gabi a.o").compress_debug,
            Some(DebugCompression::Zlib)
        );
        assert_eq!(
            link("--compress-debug-sections=zstd --compress-debug-sections=none a.o")
                .compress_debug,
            None
        );
        assert_eq!(
            link("--compress-debug-sections zstd a.o").compress_debug,
            Some(DebugCompression::Zstd)
        );
        assert!(
            error("--compress-debug-sections=zlib-gnu a.o").contains("zlib-gnu is not supported")
        );
        assert!(error("--compress-debug-sections=lz4 a.o").contains("unknown value 'lz4'"));
        assert!(link("--gdb-index a.o").gdb_index);
        assert!(!link("--gdb-index --no-gdb-index a.o").gdb_index);
        assert!(!link("a.o").gdb_index);
        assert!(
            error("-r --gdb-index a.o").contains("-r and --gdb-index may not be used together")
        );
        assert_eq!(link("--icf=all a.o").icf, Icf::All);
        assert_eq!(link("--icf safe --print-icf-sections a.o").icf, Icf::Safe);
        assert!(link("--icf=safe --print-icf-sections a.o").print_icf_sections);
        assert!(error("--icf=most a.o").contains("unknown --icf value"));
        assert!(error("-r --icf=all a.o").contains("-r and --icf may not be used together"));
        use crate::script::ast::Sort;
        assert_eq!(
            link("--sort-section=name a.o").sort_section,
            Some(Sort::Name)
        );
        assert_eq!(
            link("--sort-section name --sort-section=alignment a.o").sort_section,
            Some(Sort::Alignment)
        );
        assert!(error("--sort-section=size a.o").contains("--sort-section"));
        assert!(error("-r --sort-section=name a.o").contains("not supported yet"));
        // `--unique` bare and with a glob (GNU ld's `-r` options); not in a final link yet.
        let u = link("-r --unique --unique=.text* a.o");
        assert!(u.unique_orphans && u.unique_sections == [".text*"]);
        assert!(error("--unique a.o").contains("--unique without -r"));
        assert!(link("-r --force-group-allocation a.o").force_group_allocation);
        assert!(link("--force-group-allocation a.o").force_group_allocation);
        // One strip setting, as GNU ld's: the later of -s and -S wins.
        assert!(!link("-s -S a.o").strip_all && link("-S -s a.o").strip_all);
        assert!(
            !link("--no-rosegment a.o").z_separate_code && link("--rosegment a.o").z_separate_code
        );
        link("--orphan-handling=warn --orphan-handling=place a.o");
        link("--orphan-handling=discard a.o");
        assert!(error("--orphan-handling=bogus a.o").contains("orphan-handling"));
        assert_eq!(link("--sort-common a.o").sort_common, Some(true));
        assert!(link("-w a.o").no_warnings && link("--no-warnings a.o").no_warnings);
        assert!(!link("--no-demangle a.o").demangle && link("a.o").demangle);
        assert_eq!(
            link("--dependency-file=deps.d a.o").dependency_file,
            Some(PathBuf::from("deps.d"))
        );
        assert_eq!(link("-M a.o").map, Some(PathBuf::from("-")));
        let lazy = |cfg: &Config| -> Vec<bool> {
            cfg.inputs
                .iter()
                .filter_map(|i| match i {
                    InputArg::File { flags, .. } => Some(flags.lazy),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            lazy(&link("--start-lib a.o b.o --end-lib c.o")),
            [true, true, false]
        );
        assert_eq!(link("--sort-common=ascending a.o").sort_common, Some(false));
        assert_eq!(link("a.o").sort_common, None);
    }

    #[test]
    fn every_listed_spelling_is_known() {
        for name in ACCEPTED_OPTIONS {
            assert!(lookup(name).is_some(), "{name}");
            if !is_short(name) {
                let other = match name.strip_prefix("--") {
                    Some(body) => format!("-{body}"),
                    None => format!("-{name}"),
                };
                if !other.starts_with("-o") {
                    assert!(lookup(&other).is_some(), "{other}");
                }
            }
        }
        assert!(help_text().contains("--whole-archive"));
        // libtool's configure: `$LD --help 2>&1 | grep ': supported targets:.* elf'`.
        assert!(
            help_text()
                .lines()
                .any(|l| l.contains(": supported targets:") && l.contains(" elf"))
        );
    }

    #[test]
    fn versions_and_help() {
        assert!(matches!(parse(&words("--version")), Ok(Action::Version)));
        assert!(matches!(
            parse(&words("a.o --version -lc")),
            Ok(Action::Version)
        ));
        assert!(matches!(parse(&words("-v")), Ok(Action::Version)));
        assert!(matches!(parse(&words("-V")), Ok(Action::Emulations)));
        assert!(link("-V a.o").print_emulations && link("-V a.o").print_version);
        assert!(matches!(parse(&words("--help")), Ok(Action::Help)));
        assert!(matches!(parse(&words("-help")), Ok(Action::Help)));
        let cfg = link("-v a.o");
        assert!(cfg.print_version);
        assert!(
            version_line().contains("(rivet ")
                && version_line().contains("compatible with GNU linkers")
        );
        // What libffi's, libatomic's and libstdc++'s configure scripts compute from it: 2.40 → 24000.
        let sh = format!(
            r"echo '{}' | sed -e 's/GNU gold /GNU ld /;s/GNU ld version /GNU ld /;s/GNU ld ([^)]*) /GNU ld /;s/GNU ld \([0-9.][0-9.]*\).*/\1/; q' | awk -F. '{{ if (NF<3) $3=0; print ($1*100+$2)*100+$3 }}'",
            version_line()
        );
        if let Ok(out) = std::process::Command::new("sh").args(["-c", &sh]).output() {
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "24000");
        }
    }

    #[test]
    fn errors() {
        assert_eq!(error("--foo a.o"), "unknown argument '--foo'");
        assert_eq!(error("-gc-sectionz a.o"), "unknown argument '-gc-sectionz'");
        assert_eq!(
            error("--gc-sections=yes a.o"),
            "unknown argument '--gc-sections=yes'"
        );
        assert_eq!(error("-sx a.o"), "unknown argument '-sx'");
        assert_eq!(error("a.o -o"), "missing argument to -o");
        assert_eq!(error("a.o --entry"), "missing argument to --entry");
        assert_eq!(
            error("-m elf32_x86_64 a.o"),
            "unsupported emulation: elf32_x86_64 (supported: elf_x86_64 elf_i386)"
        );
        assert_eq!(link("-m elf_i386 a.o").elf_i386, Some(true));
        assert_eq!(link("-melf_x86_64 a.o").elf_i386, Some(false));
        assert_eq!(link("a.o").elf_i386, None);
        assert_eq!(error("-T"), "missing argument to -T");
        for cmd in [
            "-T link.ld a.o",
            "-Tlink.ld a.o",
            "--script=link.ld a.o",
            "-dT link.ld a.o",
        ] {
            assert_eq!(
                link(cmd).inputs[0],
                file("link.ld", InputFlags::default()),
                "{cmd}"
            );
        }
        assert!(error("-q -s a.o").contains("--strip-all"));
        assert!(error("--emit-relocs --strip-all a.o").contains("--strip-all"));
        assert!(link("-r a.o").relocatable && link("-i -dc a.o").define_common);
        assert!(link("-Ur a.o").relocatable);
        assert_eq!(
            error("-r -shared a.o"),
            "-r and -shared may not be used together"
        );
        assert_eq!(
            error("--relocatable -pie a.o"),
            "-r and -pie may not be used together"
        );
        assert!(error("-r --gc-sections a.o").contains("requires a defined symbol root"));
        assert!(link("-r -Map=m a.o").map.is_some());
        // No dynamic relocations to pack: accepted and without effect, as in GNU ld.
        assert!(link("-r -z pack-relative-relocs a.o").relocatable);
        assert_eq!(link("-r --defsym=x=1 a.o").defsyms.len(), 1);
        assert_eq!(error(""), "no input files");
        assert_eq!(error("-o x --as-needed"), "no input files");
        assert!(error("-O fast a.o").contains("number expected"));
        assert_eq!(
            error("@/nonexistent/rivet.rsp"),
            "cannot open response file /nonexistent/rivet.rsp: No such file or directory"
        );
    }

    #[test]
    fn double_dash_ends_options() {
        let cfg = link("-o x -- -weird.o");
        assert_eq!(cfg.inputs, vec![file("-weird.o", PLAIN)]);
    }

    #[test]
    fn response_file_quoting() {
        let words = split_response_file(
            "a 'b c' \"d e\" f\\ g '' \"it's\" 'say \"hi\"' back\\\\slash\n\t x\\'y 'q\\'q'",
        );
        assert_eq!(
            words,
            [
                "a",
                "b c",
                "d e",
                "f g",
                "",
                "it's",
                "say \"hi\"",
                "back\\slash",
                "x'y",
                "q'q"
            ]
        );
        assert_eq!(split_response_file("  \n "), Vec::<String>::new());
        assert_eq!(split_response_file("a\"b c\"d"), ["ab cd"]);
    }

    #[test]
    fn response_files_nest() {
        let inner = temp_path("inner.rsp");
        let outer = temp_path("outer.rsp");
        std::fs::write(&inner, "-lm 'my file.o'\n--as-needed").unwrap();
        std::fs::write(
            &outer,
            format!("-o \"out put\"\n@{} -lc\n", inner.display()),
        )
        .unwrap();
        let cfg = link(&format!("--whole-archive @{} z.o", outer.display()));
        let whole = InputFlags {
            whole_archive: true,
            ..PLAIN
        };
        let both = InputFlags {
            whole_archive: true,
            as_needed: true,
            static_only: false,
            lazy: false,
            binary: false,
        };
        assert_eq!(cfg.output, PathBuf::from("out put"));
        assert_eq!(
            cfg.inputs,
            vec![
                lib("m", whole),
                file("my file.o", whole),
                lib("c", both),
                file("z.o", both)
            ]
        );

        // A file that includes itself is an error, not a hang.
        let selfish = temp_path("self.rsp");
        std::fs::write(&selfish, format!("@{}", selfish.display())).unwrap();
        assert!(error(&format!("@{}", selfish.display())).contains("nested too deeply"));
        for path in [inner, outer, selfish] {
            std::fs::remove_file(path).unwrap();
        }
    }
}
