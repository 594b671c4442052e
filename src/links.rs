//! Links between reports. A report's Markdown link names a file and a heading
//! (`synthesis.md#open-questions`), as it would on a forge; the site shows reports as
//! pages, so each link is led to the page and anchor it means, and one that leads
//! nowhere (no such report, no such heading) is a warning at its place (an error with
//! `--strict`), never a dead link found by a reader.
//!
//! A fragment may be the anchor casebook gives a heading or the one a forge gives it
//! (`#21-write-agency` for `2.1 Write agency`, whose anchor here is `2-1-write-agency`):
//! authors write the forge's, since that is where they preview.

use std::collections::{HashMap, HashSet};

use crate::model::{Code, Diagnostic, LocalLink, Report, Site};
use crate::urls;

/// Every report of the site by its path, with its page and anchors: built once per build
/// and read by the check and the renderer.
pub struct SiteLinks<'a> {
    reports: HashMap<&'a str, Target<'a>>,
}

/// A report's page and the anchors it holds.
struct Target<'a> {
    url: String,
    anchors: HashSet<&'a str>,
    /// A forge's anchor of each heading → the anchor casebook gave it.
    forge_anchors: HashMap<String, &'a str>,
}

/// Why a link leads nowhere.
#[derive(Debug, PartialEq, Eq)]
pub enum Broken {
    /// The file it names is no report of the site; the nearest report's path, if any is near.
    NoReport(Option<String>),
    /// The report has no such anchor; the nearest of its anchors, if any is near.
    NoAnchor(Option<String>),
}

impl<'a> SiteLinks<'a> {
    /// The reports of `site`, in one pass.
    pub fn of(site: &'a Site) -> Self {
        let mut reports = HashMap::new();
        for system in &site.systems {
            for run in &system.runs {
                for report in &run.reports {
                    let url = urls::report(&system.slug, &run.slug, &report.slug);
                    reports.insert(report.source_path.as_str(), Target::of(report, url));
                }
            }
        }
        SiteLinks { reports }
    }

    /// Where `link`, written in `from`, leads: the page and anchor it means.
    pub fn url(&self, from: &Report, link: &LocalLink) -> Result<String, Broken> {
        let path = link.file.as_deref().unwrap_or(&from.source_path);
        let Some(target) = self.reports.get(path) else {
            return Err(Broken::NoReport(self.nearest_report(path)));
        };
        match &link.fragment {
            None => Ok(target.url.clone()),
            Some(fragment) => {
                let anchor = target.anchor(fragment).ok_or_else(|| Broken::NoAnchor(target.nearest(fragment)))?;
                Ok(format!("{}#{anchor}", target.url))
            }
        }
    }

    fn nearest_report(&self, path: &str) -> Option<String> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let mut near: Vec<&str> = self
            .reports
            .keys()
            .copied()
            .filter(|candidate| {
                let candidate_name = candidate.rsplit('/').next().unwrap_or(candidate);
                candidate_name == name || strsim::levenshtein(candidate, path) <= 3
            })
            .collect();
        near.sort_by_key(|candidate| (strsim::levenshtein(candidate, path), *candidate));
        near.first().map(|p| p.to_string())
    }
}

impl<'a> Target<'a> {
    fn of(report: &'a Report, url: String) -> Self {
        let anchors: HashSet<&str> = report
            .sections
            .iter()
            .map(|s| &*s.anchor)
            .chain(report.declarations.iter().map(|d| &*d.anchor))
            .chain(report.row_anchors.values().map(|a| &**a))
            .chain(report.block_anchors.values().map(|a| &**a))
            .collect();
        // A forge numbers a repeated heading's anchor: `notes`, `notes-1`, `notes-2`.
        let mut forge_anchors = HashMap::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for section in &report.sections {
            let forge = urls::heading_anchor(&section.title);
            let count = seen.entry(forge.clone()).or_default();
            let numbered = if *count == 0 { forge } else { format!("{forge}-{count}") };
            *count += 1;
            forge_anchors.entry(numbered).or_insert(&*section.anchor);
        }
        Target { url, anchors, forge_anchors }
    }

    fn anchor(&self, fragment: &str) -> Option<&'a str> {
        if let Some(anchor) = self.anchors.get(fragment) {
            return Some(anchor);
        }
        let lower = fragment.to_lowercase();
        // An Obsidian link names a heading by its words (`[[#Open questions]]`).
        let words = urls::heading_anchor(fragment);
        self.anchors
            .get(lower.as_str())
            .copied()
            .or_else(|| self.forge_anchors.get(&lower).copied())
            .or_else(|| self.forge_anchors.get(&words).copied())
    }

    /// The anchor nearest `fragment`, of casebook's and the forge's, if one is near.
    fn nearest(&self, fragment: &str) -> Option<String> {
        let scored = |anchor: &str| {
            (std::cmp::Reverse((strsim::normalized_levenshtein(anchor, fragment) * 1000.0) as u32), anchor.to_string())
        };
        self.anchors
            .iter()
            .copied()
            .chain(self.forge_anchors.keys().map(String::as_str))
            .map(scored)
            .filter(|(std::cmp::Reverse(similarity), _)| *similarity >= 700)
            .min()
            .map(|(_, anchor)| anchor)
    }
}

/// A warning at each link of the site's reports that leads nowhere.
pub fn check(site: &Site, links: &SiteLinks<'_>) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for report in site.systems.iter().flat_map(|s| &s.runs).flat_map(|r| &r.reports) {
        for link in &report.links {
            if let Err(broken) = links.url(report, link) {
                diagnostics.push(broken_link(report, link, broken));
            }
        }
    }
    diagnostics
}

fn broken_link(report: &Report, link: &LocalLink, broken: Broken) -> Diagnostic {
    let written = &link.written;
    let (message, help) = match broken {
        Broken::NoReport(near) => (
            format!(
                "the link `{written}` leads to no page: {} is not a report of this site",
                link.file.as_deref().unwrap_or(&report.source_path)
            ),
            match near {
                Some(path) => {
                    let folder = report.source_path.rsplit_once('/').map_or("", |(folder, _)| folder);
                    let written = path.strip_prefix(folder).and_then(|p| p.strip_prefix('/')).unwrap_or(&path);
                    format!("did you mean `{written}`? A link is resolved against the report's own folder")
                }
                None => "link to a report (its .md file, resolved against this report's folder) or a heading of one (`other.md#heading`, `#heading`); other files are not published".to_string(),
            },
        ),
        Broken::NoAnchor(near) => (
            format!(
                "the link `{written}` leads to no heading: {} has no anchor `{}`",
                link.file.as_deref().unwrap_or(&report.source_path),
                link.fragment.as_deref().unwrap_or_default()
            ),
            match near {
                Some(anchor) => format!("did you mean `#{anchor}`?"),
                None => "name a heading as a forge does (`## 2.1 Write agency` → `#21-write-agency`) or as the report page shows it".to_string(),
            },
        ),
    };
    let diagnostic = Diagnostic::warning(Code::BrokenLink, link.at.of(&report.file), message).with_help(help);
    match source_line(report, link) {
        Some((line, span)) => diagnostic.with_source(line, span),
        None => diagnostic,
    }
}

/// The line of `report` where `link` is written, and how many characters the link spans
/// there (`[text](dest)`, or to the line's end when it goes on).
fn source_line<'r>(report: &'r Report, link: &LocalLink) -> Option<(&'r str, usize)> {
    let line = report.markdown.lines().nth(link.at.line.checked_sub(report.body_line)? as usize)?;
    let from: String = line.chars().skip(link.at.col.saturating_sub(1) as usize).collect();
    // `[text](dest)`, or an Obsidian link `[[dest]]`, `[[dest|text]]`.
    let markdown = from.find(&format!("({}", link.written)).and_then(|at| {
        let end = at + link.written.len() + 1;
        from[end..].find(')').map(|close| end + close + 1)
    });
    let wiki = || from.find("]]").map(|close| close + 2).filter(|_| from.starts_with("[["));
    let span = match markdown.or_else(wiki) {
        Some(end) => from[..end].chars().count(),
        None => from.chars().count(),
    };
    Some((line, span))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::site_of_reports;

    fn diagnostics(reports: &[(&str, &str)]) -> Vec<String> {
        let site = site_of_reports(reports);
        check(&site, &SiteLinks::of(&site))
            .iter()
            .map(|d| format!("{}:{} {}", d.location.line, d.location.col, d.message))
            .collect()
    }

    #[test]
    fn links_to_reports_and_their_headings_lead_to_their_pages() {
        let site = site_of_reports(&[
            ("memory", "# Memory\n\n## 2.1 Write agency\n\nSee [the synthesis](synthesis.md#open-questions).\n"),
            ("synthesis", "# Synthesis\n\n## Open questions\n\nBack to [writes](memory.md#21-write-agency) and [top](#synthesis).\n"),
        ]);
        let links = &SiteLinks::of(&site);
        let run = &site.systems[0].runs[0];
        let urls: Vec<String> =
            run.reports.iter().flat_map(|r| r.links.iter().map(move |l| links.url(r, l).unwrap())).collect();
        assert_eq!(
            urls,
            ["/lab/r1/synthesis/#open-questions", "/lab/r1/memory/#2-1-write-agency", "/lab/r1/synthesis/#synthesis",]
        );
        assert!(check(&site, links).is_empty());
    }

    #[test]
    fn a_link_to_no_report_or_no_heading_is_a_warning_at_its_place_with_the_nearest() {
        let found = diagnostics(&[
            (
                "memory",
                "# Memory\n\n## Writes\n\nSee [it](synthesis.md) and\n[there](#wrtes) and [far](#nothing-like-it).\n",
            ),
            ("synthesys", "# Synthesis\n"),
        ]);
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(found[0].starts_with("5:5 the link `synthesis.md` leads to no page"), "{found:#?}");
        assert!(found[1].starts_with("6:1 the link `#wrtes` leads to no heading"), "{found:#?}");
        assert!(found[2].contains("no anchor `nothing-like-it`"), "{found:#?}");
    }

    #[test]
    fn links_off_the_site_are_not_checked() {
        assert!(diagnostics(&[("memory", "# M\n\n[a](https://example.com/x.md) [b](mailto:a@b.c) [c](/about/)\n")])
            .is_empty());
    }
}
