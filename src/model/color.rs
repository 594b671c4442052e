//! The colours of status badges: a site's own (`color` and `text_color` of a status in
//! casebook.yaml), else a default for each default status, else one of a palette by the
//! status's place in the vocabulary; each readable, its text at least 4.5:1 against its
//! background (WCAG 2.2 AA for text).

use std::fmt;

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// The least contrast between a badge's text and its background (WCAG AA, normal text).
pub const MIN_CONTRAST: f64 = 4.5;

impl Rgb {
    /// `#rrggbb` or `#rgb`, in either case.
    pub fn parse(text: &str) -> Option<Rgb> {
        let hex = text.trim().strip_prefix('#')?;
        if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let channel = |i: usize, width: usize| {
            let digits = &hex[i * width..(i + 1) * width];
            let value = u8::from_str_radix(digits, 16).ok()?;
            Some(if width == 1 { value * 17 } else { value })
        };
        let width = match hex.len() {
            3 => 1,
            6 => 2,
            _ => return None,
        };
        Some(Rgb(channel(0, width)?, channel(1, width)?, channel(2, width)?))
    }

    /// Relative luminance, as WCAG defines it.
    fn luminance(self) -> f64 {
        let linear = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * linear(self.0) + 0.7152 * linear(self.1) + 0.0722 * linear(self.2)
    }

    /// The contrast ratio of two colours, 1 to 21.
    pub fn contrast(self, other: Rgb) -> f64 {
        let (a, b) = (self.luminance(), other.luminance());
        (a.max(b) + 0.05) / (a.min(b) + 0.05)
    }

    /// This colour, or the nearest to it towards black (on a light background) or white
    /// (on a dark one) whose contrast with `background` is at least [`MIN_CONTRAST`]: the
    /// same hue, only as dark or as light as reading needs.
    pub fn readable_on(self, background: Rgb) -> Rgb {
        let toward = if background.luminance() > 0.18 { Rgb(0, 0, 0) } else { WHITE };
        let mix = |t: f64| {
            let channel = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
            Rgb(channel(self.0, toward.0), channel(self.1, toward.1), channel(self.2, toward.2))
        };
        (0..=20)
            .map(|step| mix(f64::from(step) / 20.0))
            .find(|c| c.contrast(background) >= MIN_CONTRAST)
            .unwrap_or(toward)
    }
}

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// White: the text of every default badge.
pub const WHITE: Rgb = Rgb(255, 255, 255);

/// The default statuses' backgrounds.
const DEFAULTS: [(&str, Rgb); 9] = [
    ("absent", Rgb(0xb4, 0x23, 0x18)),
    ("inapplicable", Rgb(0x66, 0x70, 0x85)),
    ("uninspected", Rgb(0xb5, 0x47, 0x08)),
    ("claimed", Rgb(0x69, 0x38, 0xef)),
    ("implemented", Rgb(0x17, 0x5c, 0xd3)),
    ("wired", Rgb(0x06, 0x76, 0x47)),
    ("afforded", Rgb(0x10, 0x75, 0x69)),
    ("observed", Rgb(0x34, 0x40, 0x54)),
    ("causally supported", Rgb(0x69, 0x41, 0xc6)),
];

/// Backgrounds for a site's other statuses, in the order they come.
const PALETTE: [Rgb; 10] = [
    Rgb(0x93, 0x37, 0x0d),
    Rgb(0x4e, 0x5b, 0xa6),
    Rgb(0xc1, 0x15, 0x74),
    Rgb(0x06, 0x76, 0x47),
    Rgb(0x17, 0x5c, 0xd3),
    Rgb(0x6f, 0x4a, 0x00),
    Rgb(0x6b, 0x21, 0xa8),
    Rgb(0x0e, 0x6b, 0x8a),
    Rgb(0xb4, 0x23, 0x18),
    Rgb(0x34, 0x40, 0x54),
];

/// A badge's colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BadgeColors {
    /// The background.
    pub background: Rgb,
    /// The text.
    pub text: Rgb,
}

impl BadgeColors {
    /// The colours of status `name`, the `other`-th status without a default colour,
    /// given what casebook.yaml says (colours that do not parse count as unsaid: the
    /// configuration check reports them).
    pub fn of(name: &str, other: usize, color: Option<&str>, text_color: Option<&str>) -> BadgeColors {
        let given = color.and_then(Rgb::parse);
        let background = given
            .or_else(|| DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c))
            .unwrap_or(PALETTE[other % PALETTE.len()]);
        BadgeColors { background, text: text_color.and_then(Rgb::parse).unwrap_or(WHITE) }
    }

    /// True when the name has a colour of its own among the defaults.
    pub fn has_default(name: &str) -> bool {
        DEFAULTS.iter().any(|(n, _)| *n == name)
    }

    /// The contrast of text and background.
    pub fn contrast(self) -> f64 {
        self.background.contrast(self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colour_too_faint_for_its_background_is_darkened_or_lightened_just_enough() {
        let (panel, dark_panel) = (Rgb(0xf6, 0xf8, 0xfa), Rgb(0x1e, 0x21, 0x25));
        let readable = Rgb(0x18, 0x36, 0x91);
        assert_eq!(readable.readable_on(panel), readable, "already readable: unchanged");
        let comment = Rgb(0x96, 0x98, 0x96);
        let darker = comment.readable_on(panel);
        assert!(darker.contrast(panel) >= MIN_CONTRAST && darker.0 < comment.0, "{darker}");
        let deep = Rgb(0x4f, 0x5b, 0x66);
        let lighter = deep.readable_on(dark_panel);
        assert!(lighter.contrast(dark_panel) >= MIN_CONTRAST && lighter.0 > deep.0, "{lighter}");
    }

    #[test]
    fn colours_parse_in_both_lengths_and_nothing_else() {
        assert_eq!(Rgb::parse("#107569"), Some(Rgb(0x10, 0x75, 0x69)));
        assert_eq!(Rgb::parse("#FFF"), Some(WHITE));
        for bad in ["107569", "#10756", "#1075690", "#gg0000", "red", "", "#"] {
            assert_eq!(Rgb::parse(bad), None, "{bad}");
        }
        assert_eq!(Rgb(0x10, 0x75, 0x69).to_string(), "#107569");
    }

    #[test]
    fn contrast_is_wcag_s_ratio() {
        assert!((WHITE.contrast(Rgb(0, 0, 0)) - 21.0).abs() < 1e-9);
        assert!((WHITE.contrast(WHITE) - 1.0).abs() < 1e-9);
        // The teal the default theme had for `afforded`: 3.8:1, below AA.
        let old = Rgb::parse("#0e9384").unwrap();
        assert!((old.contrast(WHITE) - 3.8).abs() < 0.05);
    }

    #[test]
    fn every_default_and_palette_colour_is_readable_with_white() {
        for (name, colour) in DEFAULTS {
            assert!(colour.contrast(WHITE) >= MIN_CONTRAST, "{name} {colour}: {:.2}", colour.contrast(WHITE));
        }
        for colour in PALETTE {
            assert!(colour.contrast(WHITE) >= MIN_CONTRAST, "{colour}: {:.2}", colour.contrast(WHITE));
        }
    }

    #[test]
    fn a_status_takes_its_own_colour_else_its_default_else_the_palette() {
        assert_eq!(BadgeColors::of("absent", 0, None, None).background, DEFAULTS[0].1);
        assert_eq!(BadgeColors::of("absent", 0, Some("#000"), Some("#fff")).background, Rgb(0, 0, 0));
        let (first, second) = (BadgeColors::of("verified", 0, None, None), BadgeColors::of("refuted", 1, None, None));
        assert_ne!(first.background, second.background, "a site's own statuses are told apart");
        assert_eq!(BadgeColors::of("x", PALETTE.len(), None, None), first);
    }
}
