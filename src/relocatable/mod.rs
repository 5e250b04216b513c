//! `-r` (`--relocatable`): a partial link. The live objects (archive members pulled in as in a final link) become
//! one `ET_REL` object: input sections combined by output section name, section groups kept (one per COMDAT
//! signature), relocations and symbols carried over with the sections' new offsets. Nothing gets an address and
//! no GOT, PLT or relaxation is made: the final link does those. `main` runs this after resolution instead of
//! the final link's passes (ARCHITECTURE.md).

mod assign;
mod image;
mod map;
mod order;
mod out_sym;
mod relocs;
mod script;
mod sections;
mod symbols;

use crate::arch::Arch;
use crate::args::Config;
use crate::diag::{Errors, Result};
use crate::output_file::OutputFile;
use crate::resolve::Resolved;

/// Writes the partial link of `res` to the output.
pub fn link<A: Arch>(config: &Config, res: &Resolved) -> Result<()> {
    check(config, res)?;
    let plan = sections::plan::<A>(config, res, &res.order)?;
    let syms = symbols::table(config, res, &plan)?;
    let relas = relocs::collect::<A>(res, &plan, &syms)?;
    let image = image::build::<A>(config, res, &plan, &syms, &relas)?;
    if config.fatal_warnings && crate::diag::warnings() > 0 {
        return Err(Errors::one(format!(
            "{} warning(s) treated as errors (--fatal-warnings); no output written",
            crate::diag::warnings()
        )));
    }
    let mut out = OutputFile::open(
        config,
        image.len() as u64,
        false,
        0..image.len(),
        Vec::new(),
    )?;
    out.not_executable();
    out.prepare(Vec::new)?;
    out.bytes().copy_from_slice(&image);
    out.commit()?;
    if let Some(path) = &config.map {
        map::write(path, config, res, &plan, &syms)?;
    }
    Ok(())
}

/// What a partial link refuses: shared objects (GNU ld's "attempted static link of dynamic object") and what of a
/// script's `SECTIONS` needs addresses (`script::check`).
fn check(config: &Config, res: &Resolved) -> Result<()> {
    if let Some(s) = res.shared.first() {
        return Err(Errors::one(format!(
            "attempted static link of dynamic object '{}' (-r makes a relocatable object)",
            s.soname
        )));
    }
    if let Some(sc) = config.sections.as_deref() {
        script::check(sc).map_err(Errors::one)?;
    }
    Ok(())
}
