//! casebook.yaml, system.yaml, run.yaml, redirects.yaml and report front matter: any text
//! is a value or a located diagnostic, and a usable config compiles to its conventions
//! (ID grammars, source pattern, status words) or says why not.
#![no_main]

use std::path::Path;

use casebook::config::{parse_yaml, FrontMatter, Redirect, RunMeta, SiteConfig, SystemMeta};
use casebook::parse::split_front_matter;
use casebook::recognise::Conventions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(config) = parse_yaml::<SiteConfig>(text, Path::new("casebook.yaml"), 1) {
        let _ = Conventions::new(&config);
    }
    let _ = parse_yaml::<SystemMeta>(text, Path::new("system.yaml"), 1);
    let _ = parse_yaml::<RunMeta>(text, Path::new("run.yaml"), 1);
    let _ = parse_yaml::<Vec<Redirect>>(text, Path::new("redirects.yaml"), 1);
    if let Ok((Some(yaml), _, body_line)) = split_front_matter(text, Path::new("report.md")) {
        assert!(body_line >= 3, "the body starts after both fences");
        if let Err(d) = parse_yaml::<FrontMatter>(yaml, Path::new("report.md"), 2) {
            assert!(d.location.line >= 2, "front matter errors point into the front matter");
        }
    }
});
