//! The record graph, drawn at build time: each record's neighbourhood and each run's
//! most linked records, as SVG inlined in the page (no script, no request, styled by
//! the site's stylesheet so the dark scheme applies). layout-rs places the nodes and
//! routes the edges (a layered layout, single-threaded and without randomness, so a
//! graph's bytes are the same on every build); this module chooses what is drawn and
//! writes the SVG itself, escaping every text and linking every node. Each picture comes
//! with the same edges as rows of a table, for screen readers and for what is left out.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;

use super::views::{GraphEdgeView, GraphView, Link};
use crate::markup::escape;
use crate::model::{Owner, Record, RecordId, Run};

/// Most records a record's neighbourhood draws, itself included.
pub(crate) const NEIGHBOURHOOD_NODES: usize = 8;
/// Most records a run's graph draws.
pub(crate) const RUN_NODES: usize = 40;

/// Width of one character of a node's label, in the SVG's units: the stylesheet draws
/// labels in a monospace face of 12 units, whose advance is 0.6 em.
const CHAR_WIDTH: f64 = 7.2;
const NODE_HEIGHT: f64 = 24.0;
const NODE_PADDING: f64 = 16.0;
/// Labels longer than this are cut (with an ellipsis); the node's tooltip and the table
/// give them whole.
const LABEL_CHARS: usize = 28;
/// Room around the drawing, for arrow heads and strokes.
const MARGIN: f64 = 6.0;

/// One record linking to another, as the reports write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edge {
    /// The record whose text links (an index into [`RunGraph::records`]).
    pub(crate) from: usize,
    /// The record it names.
    pub(crate) to: usize,
    /// In the declaring record's own text.
    pub(crate) in_text: bool,
    /// In a note on the record (an `On <ID>` annotation).
    pub(crate) in_notes: bool,
}

/// A run's records and the links between them, made once per run and shared by all its
/// pages.
pub(crate) struct RunGraph<'r> {
    /// The run's records, in ID order.
    pub(crate) records: Vec<&'r Record>,
    index: HashMap<&'r RecordId, usize>,
    /// Every link, one per (from, to) pair, sorted by it.
    pub(crate) edges: Vec<Edge>,
    /// For each record, the edges that touch it (indices into `edges`).
    touching: Vec<Vec<usize>>,
}

/// What one picture shows: some records of a run and the edges among them.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Selection {
    /// Drawn records (indices into [`RunGraph::records`]), in ID order.
    pub(crate) nodes: Vec<usize>,
    /// The record the picture is about, if any.
    pub(crate) centre: Option<usize>,
    /// Edges among the drawn records (indices into [`RunGraph::edges`]), in order.
    pub(crate) edges: Vec<usize>,
    /// Records that the picture would have shown but for its bound: a record's direct
    /// neighbours not drawn, or a run's linked records not drawn.
    pub(crate) left_out: usize,
}

impl<'r> RunGraph<'r> {
    /// The links of `run`: a record's text naming another (its declaration's mentions),
    /// and a note on a record naming another.
    pub(crate) fn of(run: &'r Run) -> Self {
        let records: Vec<&Record> = run.records.values().collect();
        let index: HashMap<&RecordId, usize> = records.iter().enumerate().map(|(i, r)| (&r.id, i)).collect();
        let mut pairs: std::collections::BTreeMap<(usize, usize), (bool, bool)> = Default::default();
        for (from, record) in records.iter().enumerate() {
            for target in &record.references {
                if let Some(&to) = index.get(target).filter(|&&to| to != from) {
                    pairs.entry((from, to)).or_default().0 = true;
                }
            }
        }
        for (to, record) in records.iter().enumerate() {
            for at in &record.backlinks {
                let report = &run.reports[at.report as usize];
                let Some(Owner::Annotation(a)) = report.mentions[at.index as usize].owner else { continue };
                if report.annotations[a as usize].own_text {
                    continue;
                }
                if let Some(&from) = index.get(&report.annotations[a as usize].target).filter(|&&from| from != to) {
                    pairs.entry((from, to)).or_default().1 = true;
                }
            }
        }
        let edges: Vec<Edge> =
            pairs.into_iter().map(|((from, to), (in_text, in_notes))| Edge { from, to, in_text, in_notes }).collect();
        Self::from_parts(records, index, edges)
    }

    /// The graph of `records` (`index` their positions by ID) with `edges` (sorted by
    /// their ends, one per pair).
    fn from_parts(records: Vec<&'r Record>, index: HashMap<&'r RecordId, usize>, edges: Vec<Edge>) -> Self {
        let mut touching = vec![Vec::new(); records.len()];
        for (e, edge) in edges.iter().enumerate() {
            touching[edge.from].push(e);
            touching[edge.to].push(e);
        }
        RunGraph { records, index, edges, touching }
    }

    /// The other end of each edge touching `node`, each once, most cited first.
    fn neighbours(&self, node: usize) -> Vec<usize> {
        let ends: BTreeSet<usize> = self.touching[node]
            .iter()
            .map(|&e| if self.edges[e].from == node { self.edges[e].to } else { self.edges[e].from })
            .collect();
        let mut ends: Vec<usize> = ends.into_iter().collect();
        self.by_citations(&mut ends);
        ends
    }

    /// Most cited first (the reports' mentions of it), then in ID order.
    fn by_citations(&self, nodes: &mut [usize]) {
        nodes.sort_by_key(|&n| (std::cmp::Reverse(self.records[n].backlinks.len()), n));
    }

    /// The record `id` and the records it links with (none, for a record alone): its
    /// direct neighbours, most cited first, then the neighbours of its published ones
    /// while there is room, up to `bound` records in all. Drawn are the edges that touch it and those that bring in
    /// the second ring; edges within a ring would tangle the picture, and are on the
    /// records' own pages.
    pub(crate) fn neighbourhood(&self, id: &RecordId, bound: usize) -> Option<Selection> {
        let &centre = self.index.get(id)?;
        let direct = self.neighbours(centre);
        if direct.is_empty() {
            // The picture says so too: a record alone.
            return Some(Selection { nodes: vec![centre], centre: Some(centre), edges: Vec::new(), left_out: 0 });
        }
        let first: BTreeSet<usize> = direct.iter().copied().take(bound.saturating_sub(1)).collect();
        let left_out = direct.len() - first.len();
        // An unpublished record has no text of its own: its other neighbours only cite
        // it too, which its own page lists. The second ring grows from published ones.
        let mut second: Vec<usize> = first
            .iter()
            .filter(|&&n| self.records[n].is_published())
            .flat_map(|&n| self.neighbours(n))
            .filter(|n| *n != centre && !first.contains(n))
            .collect::<BTreeSet<usize>>()
            .into_iter()
            .collect();
        self.by_citations(&mut second);
        second.truncate(bound.saturating_sub(1 + first.len()));
        let second: BTreeSet<usize> = second.into_iter().collect();
        let mut nodes: Vec<usize> =
            std::iter::once(centre).chain(first.iter().copied()).chain(second.iter().copied()).collect();
        nodes.sort_unstable();
        let drawn = |n: usize| n == centre || first.contains(&n) || second.contains(&n);
        // Only the edges at the centre and the first ring can be drawn: those, not the
        // run's, are looked at (a page per record).
        let near: BTreeSet<usize> = std::iter::once(centre)
            .chain(first.iter().copied())
            .flat_map(|n| self.touching[n].iter().copied())
            .collect();
        let edges = near
            .into_iter()
            .filter(|&e| {
                let Edge { from, to, .. } = self.edges[e];
                let rings =
                    (first.contains(&from) && second.contains(&to)) || (second.contains(&from) && first.contains(&to));
                drawn(from) && drawn(to) && (from == centre || to == centre || rings)
            })
            .collect();
        Some(Selection { nodes, centre: Some(centre), edges, left_out })
    }

    /// The run's most linked records (by the edges that touch them), up to `bound`.
    pub(crate) fn overview(&self, bound: usize) -> Option<Selection> {
        let mut linked: Vec<usize> = (0..self.records.len()).filter(|&n| !self.touching[n].is_empty()).collect();
        if linked.is_empty() {
            return None;
        }
        linked.sort_by_key(|&n| (std::cmp::Reverse(self.touching[n].len()), n));
        let left_out = linked.len().saturating_sub(bound);
        linked.truncate(bound);
        linked.sort_unstable();
        let drawn: BTreeSet<usize> = linked.iter().copied().collect();
        let edges = (0..self.edges.len())
            .filter(|&e| drawn.contains(&self.edges[e].from) && drawn.contains(&self.edges[e].to))
            .collect();
        Some(Selection { nodes: linked, centre: None, edges, left_out })
    }
}

/// What the SVG needs besides the graph: unique ids within the page, its accessible
/// name and description, and each record's URL.
pub(crate) struct Drawing<'a> {
    /// Prefix of the SVG's element ids (`g-<prefix>-title`), unique within the page.
    pub(crate) id: &'a str,
    /// The accessible name.
    pub(crate) title: &'a str,
    /// The accessible description.
    pub(crate) description: &'a str,
}

/// The SVG of `selection`, laid out left to right (a link points rightwards where the
/// graph has no cycle).
pub(crate) fn draw(
    graph: &RunGraph<'_>,
    selection: &Selection,
    drawing: &Drawing<'_>,
    url_of: &dyn Fn(&Record) -> String,
) -> String {
    let mut visual = VisualGraph::new(Orientation::LeftToRight);
    let mut handles = HashMap::new();
    for (position, &node) in selection.nodes.iter().enumerate() {
        let label = node_label(graph.records[node]);
        let size = Point::new(label.chars().count() as f64 * CHAR_WIDTH + NODE_PADDING, NODE_HEIGHT);
        let element = Element::create_with_properties(
            ShapeKind::new_box(&label),
            StyleAttr::new(Color::new(0), 1, None, 0, 12),
            Orientation::LeftToRight,
            size,
            position.to_string(),
        );
        handles.insert(node, visual.add_node(element));
    }
    for (position, &e) in selection.edges.iter().enumerate() {
        let edge = graph.edges[e];
        let style = if edge.in_text { LineStyleKind::Normal } else { LineStyleKind::Dashed };
        let arrow = Arrow::with_properties(
            LineEndKind::None,
            LineEndKind::Arrow,
            style,
            "",
            &StyleAttr::simple(),
            position.to_string(),
            &None,
            &None,
        );
        visual.add_edge(arrow, handles[&edge.from], handles[&edge.to]);
    }
    let mut canvas = Canvas::default();
    // layout-rs's crossing optimiser is most of its time; a neighbourhood is a star
    // around its centre, which ranks alone lay out well.
    let optimise = selection.centre.is_none();
    visual.do_it(false, !optimise, false, &mut canvas);
    canvas.svg(graph, selection, drawing, url_of)
}

/// The picture of `selection` with its links as rows, for a page.
pub(crate) fn view(
    graph: &RunGraph<'_>,
    selection: &Selection,
    drawing: &Drawing<'_>,
    url_of: &dyn Fn(&Record) -> String,
) -> GraphView {
    // The page's own record is named, not linked.
    let link = |n: usize| Link {
        name: graph.records[n].id.to_string(),
        url: if selection.centre == Some(n) { String::new() } else { url_of(graph.records[n]) },
    };
    let edges = selection
        .edges
        .iter()
        .map(|&e| {
            let edge = graph.edges[e];
            let how = match (edge.in_text, edge.in_notes) {
                (true, true) => "its text and a note on it",
                (false, true) => "a note on it",
                _ => "its text",
            };
            GraphEdgeView { from: link(edge.from), to: link(edge.to), how }
        })
        .collect();
    GraphView {
        svg: draw(graph, selection, drawing, url_of),
        drawn: selection.nodes.len(),
        left_out: selection.left_out,
        edges,
    }
}

/// A node's label: the record's ID, cut to [`LABEL_CHARS`].
fn node_label(record: &Record) -> String {
    let id = record.id.as_str();
    if id.chars().count() <= LABEL_CHARS {
        return id.to_string();
    }
    let mut cut: String = id.chars().take(LABEL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// What layout-rs drew, kept to be written as SVG once the extent is known.
#[derive(Default)]
struct Canvas {
    /// Each drawn node by its position in the selection: top-left corner and size.
    boxes: Vec<(usize, Point, Point)>,
    /// Each edge by its position in the selection: its path, and which ends have heads.
    arrows: Vec<DrawnArrow>,
}

/// An edge's position in the selection, its path (layout-rs's point and control point
/// pairs), and whether its start and its end have heads.
type DrawnArrow = (usize, Vec<(Point, Point)>, (bool, bool));

impl RenderBackend for Canvas {
    fn draw_rect(&mut self, xy: Point, size: Point, _: &StyleAttr, properties: Option<String>, _: Option<ClipHandle>) {
        if let Some(position) = properties.and_then(|p| p.parse().ok()) {
            self.boxes.push((position, xy, size));
        }
    }

    fn draw_line(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}

    fn draw_circle(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}

    // Labels are written from the records themselves, centred in their boxes.
    fn draw_text(&mut self, _: Point, _: &str, _: &StyleAttr) {}

    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        _: bool,
        head: (bool, bool),
        _: &StyleAttr,
        properties: Option<String>,
        _: &str,
    ) {
        if let Some(position) = properties.and_then(|p| p.parse().ok()) {
            self.arrows.push((position, path.to_vec(), head));
        }
    }

    fn create_clip(&mut self, _: Point, _: Point, _: usize) -> ClipHandle {
        0
    }
}

impl Canvas {
    // Long: one SVG document, element by element; splitting it would pass the same
    // offsets and ids through every piece.
    fn svg(
        mut self,
        graph: &RunGraph<'_>,
        selection: &Selection,
        drawing: &Drawing<'_>,
        url_of: &dyn Fn(&Record) -> String,
    ) -> String {
        self.boxes.sort_by_key(|b| b.0);
        self.arrows.sort_by_key(|a| a.0);
        let (mut low, mut high) = (Point::new(f64::MAX, f64::MAX), Point::new(f64::MIN, f64::MIN));
        let mut grow = |p: Point| {
            low = Point::new(low.x.min(p.x), low.y.min(p.y));
            high = Point::new(high.x.max(p.x), high.y.max(p.y));
        };
        for (_, xy, size) in &self.boxes {
            grow(*xy);
            grow(xy.add(*size));
        }
        for (_, path, _) in &self.arrows {
            for (a, b) in path {
                grow(*a);
                grow(*b);
            }
        }
        let origin = Point::new(low.x - MARGIN, low.y - MARGIN);
        let (width, height) = (high.x - low.x + 2.0 * MARGIN, high.y - low.y + 2.0 * MARGIN);
        let at = |p: Point| (round(p.x - origin.x), round(p.y - origin.y));
        let id = drawing.id;
        let mut svg = String::new();
        // The edges' heads are the stylesheet's (`marker-end: url(#graph-head)`), and so
        // are the boxes' corners: a page carries one graph, and its bytes are per record.
        let _ = write!(
            svg,
            "<svg class=\"graph\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
             role=\"group\" aria-labelledby=\"g-{id}-title g-{id}-desc\">\
             <title id=\"g-{id}-title\">{title}</title><desc id=\"g-{id}-desc\">{desc}</desc>\
             <defs><marker id=\"graph-head\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" \
             markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0L10 5L0 10z\"/></marker></defs>",
            w = round(width),
            h = round(height),
            title = escape(drawing.title),
            desc = escape(drawing.description),
        );
        for (position, path, (start, end)) in &self.arrows {
            let edge = graph.edges[selection.edges[*position]];
            // layout-rs turns an edge of a cycle round to lay it out, and says so by its
            // heads: a head at the start only is an edge drawn backwards.
            let class = match (edge.in_text, *start && !*end) {
                (true, false) => "edge",
                (true, true) => "edge back",
                (false, false) => "edge note",
                (false, true) => "edge note back",
            };
            let _ = write!(svg, "<path class=\"{class}\" d=\"");
            push_path(&mut svg, path, &at);
            svg.push_str("\"/>");
        }
        for (position, xy, size) in &self.boxes {
            let node = selection.nodes[*position];
            let record = graph.records[node];
            let centre = selection.centre == Some(node);
            let class = match (centre, record.is_published()) {
                (true, true) => "node centre",
                (true, false) => "node centre unpublished",
                (false, true) => "node",
                (false, false) => "node unpublished",
            };
            let (x, y) = at(*xy);
            let shape = format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\"/><text x=\"{tx}\" y=\"{ty}\">{label}</text>",
                w = round(size.x),
                h = round(size.y),
                tx = round(xy.x - origin.x + size.x / 2.0),
                ty = round(xy.y - origin.y + size.y / 2.0),
                label = escape(&node_label(record)),
            );
            if centre {
                // The page's own record: its title is the page's.
                let _ = write!(svg, "<g class=\"{class}\">{shape}</g>");
                continue;
            }
            let tooltip = match record.title_label() {
                Some(label) => format!("{} — {label}", record.id),
                None => record.id.to_string(),
            };
            // The table under the picture has the same links: these are for pointers only.
            let _ = write!(
                svg,
                "<a href=\"{url}\" tabindex=\"-1\" class=\"{class}\"><title>{tooltip}</title>{shape}</a>",
                url = escape(&url_of(record)),
                tooltip = escape(&tooltip),
            );
        }
        svg.push_str("</svg>");
        svg
    }
}

/// The path of an edge: layout-rs's list of (point, control point) pairs, the first its
/// exit and the rest entries, as one cubic Bézier and smooth continuations.
fn push_path(svg: &mut String, path: &[(Point, Point)], at: &dyn Fn(Point) -> (i64, i64)) {
    let Some(((first, exit), rest)) = path.split_first().map(|(f, r)| (*f, r)) else { return };
    let (x, y) = at(first);
    let (cx, cy) = at(exit);
    let _ = write!(svg, "M{x} {y}C{cx} {cy}");
    for (n, (point, control)) in rest.iter().enumerate() {
        let (px, py) = at(*point);
        let (qx, qy) = at(*control);
        if n == 0 {
            let _ = write!(svg, " {px} {py} {qx} {qy}");
        } else {
            let _ = write!(svg, "S{px} {py} {qx} {qy}");
        }
    }
}

/// Coordinates in whole units: a unit is a CSS pixel, and the digits are per record.
fn round(v: f64) -> i64 {
    v.round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_of;

    const RUN: &str =
        "revision: 5954a07d464feeaf6c311a9fa5ca2e54200a6794\nsources:\n  - id: SRC-1\n    title: The repository\n";

    fn graph_run(report: &str) -> Run {
        let (run, diagnostics) = run_of(RUN, &[("memory", report)]);
        assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");
        run
    }

    const REPORT: &str = "# Memory\n\n\
        ## OBJ-01 Raw log\n\nIt feeds OBJ-02 and OBJ-03.\n\n\
        ## OBJ-02 Summary\n\nMade from OBJ-03.\n\n\
        ## OBJ-03 Index\n\nStands alone.\n\n\
        ## OBJ-04 Orphan\n\nNo links.\n\n\
        ## On OBJ-03\n\nSee OBJ-04 too.\n";

    /// Whether every `<rect>` of `svg` lies within its `viewBox`.
    fn boxes_inside(svg: &str) -> bool {
        let number = |tag: &str, name: &str| -> i64 {
            let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
        };
        let view = &svg[svg.find("viewBox=\"0 0 ").unwrap() + 13..];
        let mut size = view[..view.find('"').unwrap()].split(' ').map(|n| n.parse::<i64>().unwrap());
        let (width, height) = (size.next().unwrap(), size.next().unwrap());
        svg.split("<rect").skip(1).all(|rect| {
            let rect = &rect[..rect.find("/>").unwrap()];
            let (x, y) = (number(rect, "x"), number(rect, "y"));
            x >= 0 && y >= 0 && x + number(rect, "width") <= width && y + number(rect, "height") <= height
        })
    }

    fn ids(graph: &RunGraph<'_>, nodes: &[usize]) -> Vec<String> {
        nodes.iter().map(|&n| graph.records[n].id.to_string()).collect()
    }

    #[test]
    fn a_run_links_records_by_their_text_and_by_notes_on_them() {
        let run = graph_run(REPORT);
        let graph = RunGraph::of(&run);
        let edges: Vec<(String, String, bool, bool)> = graph
            .edges
            .iter()
            .map(|e| (graph.records[e.from].id.to_string(), graph.records[e.to].id.to_string(), e.in_text, e.in_notes))
            .collect();
        let edge = |f: &str, t: &str, text, notes| (f.to_string(), t.to_string(), text, notes);
        assert_eq!(
            edges,
            [
                edge("OBJ-01", "OBJ-02", true, false),
                edge("OBJ-01", "OBJ-03", true, false),
                edge("OBJ-02", "OBJ-03", true, false),
                edge("OBJ-03", "OBJ-04", false, true),
            ]
        );
    }

    #[test]
    fn a_neighbourhood_takes_direct_neighbours_most_cited_first_then_theirs_within_its_bound() {
        let run = graph_run(REPORT);
        let graph = RunGraph::of(&run);
        let whole = graph.neighbourhood(&RecordId::new("OBJ-01"), 12).unwrap();
        assert_eq!(ids(&graph, &whole.nodes), ["OBJ-01", "OBJ-02", "OBJ-03", "OBJ-04"], "OBJ-04 is two hops away");
        assert_eq!(whole.left_out, 0);
        let drawn: Vec<(String, String)> = whole
            .edges
            .iter()
            .map(|&e| {
                (graph.records[graph.edges[e].from].id.to_string(), graph.records[graph.edges[e].to].id.to_string())
            })
            .collect();
        let pair = |f: &str, t: &str| (f.to_string(), t.to_string());
        assert_eq!(
            drawn,
            [pair("OBJ-01", "OBJ-02"), pair("OBJ-01", "OBJ-03"), pair("OBJ-03", "OBJ-04")],
            "the edges at the centre and to the second ring; not OBJ-02 → OBJ-03, within the first"
        );
        // Bound to two: OBJ-03 (cited twice) is kept before OBJ-02 (cited once).
        let bounded = graph.neighbourhood(&RecordId::new("OBJ-01"), 2).unwrap();
        assert_eq!(ids(&graph, &bounded.nodes), ["OBJ-01", "OBJ-03"]);
        assert_eq!(bounded.left_out, 1, "one direct neighbour is not drawn");
        for &e in &bounded.edges {
            let edge = graph.edges[e];
            assert!(
                bounded.nodes.contains(&edge.from) && bounded.nodes.contains(&edge.to),
                "{edge:?} has both ends drawn"
            );
        }
        assert_eq!(bounded.edges.len(), 1, "OBJ-01 → OBJ-03 only: OBJ-02 is not drawn");
        let drawing = Drawing { id: "b", title: "t", description: "d" };
        assert_eq!(draw(&graph, &bounded, &drawing, &|r| r.id.to_string()).matches("<path class=\"edge").count(), 1);
        assert_eq!(ids(&graph, &[bounded.centre.unwrap()]), ["OBJ-01"]);
    }

    #[test]
    fn the_second_ring_does_not_grow_from_an_unpublished_record() {
        // OBJ-01 and OBJ-02 both cite RT-RTE-x, which is not published: it is OBJ-01's
        // neighbour, but OBJ-02 is only a co-citer, not drawn; OBJ-03, cited by OBJ-01's
        // published neighbour OBJ-04, is.
        let run_yaml = format!("{RUN}unpublished:\n  - name: runtime report\n    ids: [\"RT-*\"]\n");
        let report = "# Memory\n\n## OBJ-01 One\n\nUses RT-RTE-x and OBJ-04.\n\n## OBJ-02 Two\n\nUses RT-RTE-x.\n\n\
             ## OBJ-03 Three\n\nAlone.\n\n## OBJ-04 Four\n\nFeeds OBJ-03.\n";
        let (run, diagnostics) = run_of(&run_yaml, &[("memory", report)]);
        assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");
        let graph = RunGraph::of(&run);
        let selection = graph.neighbourhood(&RecordId::new("OBJ-01"), 8).unwrap();
        assert_eq!(ids(&graph, &selection.nodes), ["OBJ-01", "OBJ-03", "OBJ-04", "RT-RTE-x"]);
        // From its own page, both citers are drawn, and OBJ-01's published neighbour.
        let hub = graph.neighbourhood(&RecordId::new("RT-RTE-x"), 8).unwrap();
        assert_eq!(ids(&graph, &hub.nodes), ["OBJ-01", "OBJ-02", "OBJ-04", "RT-RTE-x"]);
    }

    #[test]
    fn a_record_without_links_is_drawn_alone_and_a_run_shows_its_most_linked() {
        let run = graph_run("# Memory\n\n## OBJ-01 Alone\n\nNothing.\n");
        let graph = RunGraph::of(&run);
        let alone = graph.neighbourhood(&RecordId::new("OBJ-01"), 12).unwrap();
        assert_eq!((alone.nodes.len(), alone.edges.len(), alone.centre), (1, 0, Some(0)));
        let drawing = Drawing { id: "a", title: "t", description: "d" };
        assert!(draw(&graph, &alone, &drawing, &|r| r.id.to_string()).contains(">OBJ-01</text>"));
        assert_eq!(graph.overview(40), None, "a run without links has no picture");
        let run = graph_run(REPORT);
        let graph = RunGraph::of(&run);
        let top = graph.overview(2).unwrap();
        assert_eq!(ids(&graph, &top.nodes), ["OBJ-01", "OBJ-03"], "three edges touch OBJ-03, two OBJ-01");
        assert_eq!(top.left_out, 2);
    }

    #[test]
    fn the_svg_links_every_node_escapes_its_text_and_is_the_same_every_time() {
        let run = graph_run(REPORT);
        let graph = RunGraph::of(&run);
        let selection = graph.neighbourhood(&RecordId::new("OBJ-01"), 12).unwrap();
        let drawing = Drawing { id: "n", title: "OBJ-01 & <neighbours>", description: "Four records" };
        let url = |r: &Record| format!("/lab/r1/records/{}.html?a&b", r.id);
        let svg = draw(&graph, &selection, &drawing, &url);
        assert!(svg.starts_with("<svg class=\"graph\""), "{svg}");
        assert!(svg.contains("<title id=\"g-n-title\">OBJ-01 &amp; &lt;neighbours&gt;</title>"), "{svg}");
        for id in ["OBJ-02", "OBJ-03", "OBJ-04"] {
            assert!(svg.contains(&format!("href=\"/lab/r1/records/{id}.html?a&amp;b\"")), "{id} is linked: {svg}");
            assert!(svg.contains(&format!(">{id}</text>")), "{id} is labelled");
        }
        assert!(svg.contains("<g class=\"node centre\"><rect"), "the centre is the page itself: {svg}");
        assert!(!svg.contains("records/OBJ-01.html") && !svg.contains("Raw log"), "{svg}");
        assert_eq!(svg.matches("<path class=\"edge").count(), 3, "{svg}");
        assert_eq!(svg.matches(" note").count(), 1, "the note's link is dashed");
        assert_eq!(svg.matches(" centre").count(), 1);
        assert!(boxes_inside(&svg), "every box lies inside the picture: {svg}");
        assert_eq!(svg, draw(&graph, &selection, &drawing, &url), "deterministic");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, ..Default::default() })]

        /// Any graph a run can make (cycles, both directions, dense or sparse, unpublished
        /// ends) is drawn whole: every selected node and edge, without a panic.
        #[test]
        fn any_graph_is_drawn_with_every_node_and_edge(
            nodes in 2usize..45,
            pairs in proptest::collection::btree_set((0usize..45, 0usize..45, proptest::bool::ANY), 1..100),
            published in proptest::collection::vec(proptest::bool::ANY, 45),
            centre in 0usize..45,
        ) {
            use crate::model::Publication;
            let records: Vec<Record> = (0..nodes)
                .map(|n| {
                    let publication = if published[n] { Publication::Published } else { Publication::Unpublished(0) };
                    crate::resolve::bare_record(RecordId::new(&format!("OBJ-{n:02}")), "OBJ".into(), None, publication)
                })
                .collect();
            let mut unique = std::collections::BTreeMap::new();
            for (from, to, note) in pairs {
                let (from, to) = (from % nodes, to % nodes);
                if from != to {
                    let entry = unique.entry((from, to)).or_insert((false, false));
                    if note { entry.1 = true } else { entry.0 = true }
                }
            }
            let edges = unique.into_iter().map(|((from, to), (in_text, in_notes))| Edge { from, to, in_text, in_notes }).collect();
            let index = records.iter().enumerate().map(|(i, r)| (&r.id, i)).collect();
            let graph = RunGraph::from_parts(records.iter().collect(), index, edges);
            let drawing = Drawing { id: "p", title: "t", description: "d" };
            let selections = [graph.overview(RUN_NODES), graph.neighbourhood(&records[centre % nodes].id, NEIGHBOURHOOD_NODES)];
            for selection in selections.into_iter().flatten() {
                for &e in &selection.edges {
                    proptest::prop_assert!(selection.nodes.contains(&graph.edges[e].from) && selection.nodes.contains(&graph.edges[e].to));
                }
                let svg = draw(&graph, &selection, &drawing, &|r| r.id.to_string());
                proptest::prop_assert_eq!(svg.matches("<path class=\"edge").count(), selection.edges.len());
                proptest::prop_assert_eq!(svg.matches("<rect ").count(), selection.nodes.len());
                proptest::prop_assert!(boxes_inside(&svg), "every box lies inside the picture: {}", svg);
            }
        }
    }

    #[test]
    fn long_ids_are_cut_in_the_box_and_whole_in_the_tooltip() {
        let long = "RT-RTE-headless-turn-with-a-very-long-name".to_string();
        let report = format!("# Memory\n\n## {long} Long\n\nSee OBJ-02.\n\n## OBJ-02 Short\n\nBack to {long}.\n");
        let run = graph_run(&report);
        let graph = RunGraph::of(&run);
        let selection = graph.overview(40).unwrap();
        let drawing = Drawing { id: "r", title: "t", description: "d" };
        let svg = draw(&graph, &selection, &drawing, &|r| r.id.to_string());
        assert!(svg.contains(&format!("<title>{long} — Long</title>")), "{svg}");
        assert!(svg.contains(">RT-RTE-headless-turn-with-a…</text>"), "{svg}");
        assert_eq!(svg.matches("<path class=\"edge").count(), 2, "a cycle keeps both edges: {svg}");
    }
}
