//! casebook publishes evidence-based analyses of software systems as a website.
//!
//! An analysis is a folder of systems, runs and reports written in Markdown. casebook
//! recognises the records declared in the reports (`MEM-OBJ-raw`, `OBJ-03`), resolves
//! every reference between them into a graph, and renders a page per system, run,
//! report and record, with quoted evidence highlighted and tied to the file at the
//! frozen revision.
//!
//! The pipeline ([`pipeline`]) runs these stages, each a module whose entry functions
//! take and return typed data:
//!
//! 1. [`discover`]: which files make up the site;
//! 2. [`parse`]: files → typed reports, in parallel;
//! 3. [`resolve`]: reports → the record graph of each run, with diagnostics;
//! 4. [`render`]: the graph → HTML pages, in parallel;
//! 5. [`postprocess`]: the base path in front of root-relative URLs (a site below the root);
//! 6. [`index`]: the tantivy index and the browser's static index;
//! 7. [`publish`]: the record manifest, sitemap, feeds, redirects and the anchor contract;
//! 8. [`write`]: the output folder, replaced only when the build succeeded.
//!
//! [`diff`] compares two record manifests for pull-request reviews; [`serve`] is the dev
//! server (build, serve, watch, rebuild, reload).
//!
//! The model types live in [`model`]; every stage speaks them.
//!
//! ```no_run
//! let options = casebook::pipeline::BuildOptions::new(".");
//! let outcome = casebook::pipeline::build(&options).expect("theme and output are usable");
//! for diagnostic in &outcome.diagnostics {
//!     eprintln!("{diagnostic}");
//! }
//! assert!(!outcome.has_errors());
//! ```

pub mod cache;
pub mod cli;
pub mod config;
pub mod diff;
pub mod discover;
pub mod index;
pub mod init;
pub mod links;
pub mod manifest;
pub mod markup;
pub mod messages;
pub mod model;
pub mod output;
pub mod parse;
pub mod pipeline;
pub mod postprocess;
pub mod progress;
pub mod publish;
pub mod rebuild;
pub mod recognise;
pub mod render;
pub mod resolve;
pub mod schema;
pub mod search;
pub mod serve;
#[cfg(test)]
mod testing;
pub mod urls;
pub mod verify;
pub mod write;
