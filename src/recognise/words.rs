//! The words analysts write for the parts casebook reads, in every language the corpus
//! holds (English, French, German, Spanish, Portuguese, Italian, Turkish, Chinese,
//! Japanese, Korean, Russian), one list
//! per role, so that a new language is added in one place. Two lists live elsewhere, since
//! they are of another form: the headings that mean limits are a default of the
//! configuration (`config::LimitsConfig`), and the words for lines are part of the
//! citation patterns (`citations::LINE_WORDS`).
//!
//! Every word is lower case; the recognisers compare lower-cased text.

/// What a caption's first word may be: `Source:`, `Listing 3`, `Exhibit`, `Extrait :`,
/// `Auszug`, `Fragmento`, `出典`, `摘录`, `출처`, `Источник`.
pub(crate) const CAPTION_WORDS: &[&str] = &[
    // English
    "listing",
    "exhibit",
    "figure",
    "source",
    "quoted",
    "from",
    "evidence",
    "snippet",
    "excerpt",
    // French, German, Spanish, Portuguese and Italian
    "fonte",
    "trecho",
    "excerto",
    "estratto",
    "extrait",
    "auszug",
    "fragmento",
    "extracto",
    // Japanese: source, excerpt, quotation; Chinese: source, origin, excerpt
    "出典",
    "抜粋",
    "引用",
    "出处",
    "来源",
    "摘录",
    // Korean: source, excerpt, quotation
    "출처",
    "발췌",
    "인용",
    // Turkish: source, code (`Kod 1.`), excerpt
    "kaynak",
    "kod",
    "alıntı",
    // Russian: source, listing, fragment, extract
    "источник",
    "листинг",
    "фрагмент",
    "выдержка",
];

/// The header of a table's column that names each row's dimension: `Dimension`, `Aspect`.
pub(crate) const DIMENSION_HEADERS: &[&str] = &[
    "dimension",
    "dimensions",
    "aspect",
    "aspects",
    // Spanish, Portuguese; Chinese; Japanese (dimension, viewpoint); Korean (dimension,
    // aspect); Russian
    "dimensão",
    "aspecto",
    "dimensión",
    "维度",
    "次元",
    "観点",
    "차원",
    "측면",
    "измерение",
    // Turkish: dimension
    "boyut",
    "аспект",
];

/// The words a status column's header ends with: `Status`, the `Result`, `Verdict` or
/// `Outcome` of a test report's checks, an opinion's `Determination`.
pub(crate) const STATUS_HEADERS: &[&str] = &[
    "status",
    "result",
    "verdict",
    "outcome",
    "determination",
    // Spanish, Portuguese, Italian
    "dictamen",
    "situação",
    "veredito",
    "esito",
    "stato",
    "verdetto",
    // Chinese: status, conclusion, determination; Japanese: state, determination
    "状态",
    "结论",
    "判定",
    "状態",
    // Turkish: status, finding, result
    "durum",
    "bulgu",
    "sonuç",
    // Korean: status, determination
    "상태",
    "판정",
];

/// Headers of the column of a table of dimensions that concludes on each (`| Dimension |
/// Finding |`): a status column, whose header names no dimension of its own.
pub(crate) const CONCLUDING_HEADERS: &[&str] = &[
    "finding",
    "conclusion",
    "assessment",
    // German, French, Spanish
    "befund",
    "bewertung",
    "constat",
    "évaluation",
    "evaluación",
    // Japanese: conclusion; Korean: conclusion, assessment
    "結論",
    "결론",
    "평가",
];

/// Words that name the whole subject, not a dimension of it: `overall: wired`,
/// `Principal status`, a `| Overall | wired |` row.
pub(crate) const WHOLE_SUBJECT: &[&str] = &[
    "principal",
    "main",
    "primary",
    "headline",
    "overall",
    "general",
    "in general",
    "overall status",
    // French, German, Portuguese, Italian, Turkish
    "geral",
    "principale",
    "complessivo",
    "genel",
    "d'ensemble",
    "d’ensemble",
    "général",
    "en général",
    "global",
    "globale",
    "gesamt",
    // Chinese: overall, whole; Japanese: whole, overall; Korean: whole, overall
    "总体",
    "整体",
    "全体",
    "総合",
    "전체",
    "종합",
    // Russian: general, on the whole, final
    "общий",
    "общая",
    "в целом",
    "итоговый",
];

/// What a key may end with to say a status follows (`Status:`, `Verdict:`, `Statut :`).
pub(crate) const STATUS_NOUNS: &[&str] = &[
    "status",
    "finding",
    "conclusion",
    "result",
    "verdict",
    "outcome",
    "conformity",
    "determination",
    // French, Spanish, Portuguese, Italian
    "esito",
    "stato",
    "verdetto",
    "situação",
    "veredito",
    "conclusão",
    "constatação",
    "statut",
    "constat",
    "dictamen",
    "veredicto",
    "estado",
    // Turkish: status, finding
    "durum",
    "bulgu",
    // Russian
    "статус",
];
