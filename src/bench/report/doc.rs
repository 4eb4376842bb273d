//! A report as a document — a title, a table of facts, sections of tables, notes — written out
//! as Markdown or as one self-contained HTML page (styles inline, the chart's SVG inline,
//! nothing fetched from anywhere).

/// A table: a header, an alignment per column, rows of cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Column headers.
    pub header: Vec<String>,
    /// Right-aligned (numeric) columns.
    pub right: Vec<bool>,
    /// Rows, a cell per column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these columns (`true`: right-aligned).
    pub fn new(columns: Vec<(String, bool)>) -> Table {
        let (header, right) = columns.into_iter().unzip();
        Table {
            header,
            right,
            rows: Vec::new(),
        }
    }
}

/// A titled table with a line of explanation.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// The heading.
    pub title: String,
    /// What the figures are.
    pub intro: String,
    /// The figures.
    pub table: Table,
}

/// The whole document.
#[derive(Clone, Debug, PartialEq)]
pub struct Doc {
    /// The title.
    pub title: String,
    /// One line under it.
    pub subtitle: String,
    /// The machine(s) and the run.
    pub facts: Table,
    /// The figures.
    pub sections: Vec<Section>,
    /// Closing remarks (how to read the figures).
    pub notes: Vec<String>,
}

impl Doc {
    /// GitHub-flavoured Markdown.
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "# {}\n\n{}\n\n",
            md_text(&self.title),
            md_text(&self.subtitle)
        );
        out.push_str(&md_table(&self.facts));
        for section in &self.sections {
            out.push_str(&format!("\n## {}\n\n", md_text(&section.title)));
            if !section.intro.is_empty() {
                out.push_str(&format!("{}\n\n", md_text(&section.intro)));
            }
            out.push_str(&md_table(&section.table));
        }
        if !self.notes.is_empty() {
            out.push_str("\n## Notes\n\n");
            for note in &self.notes {
                out.push_str(&format!("- {}\n", md_text(note)));
            }
        }
        out.push_str("\nThe chart of these figures is `report.svg`; everything measured, with the raw samples, is in `report.json`.\n");
        out
    }

    /// One HTML page with `svg` (an `<svg>` element) inline.
    pub fn to_html(&self, svg: &str) -> String {
        let mut out =
            String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        out.push_str(&format!("<title>{}</title>\n", esc(&self.title)));
        out.push_str(STYLE);
        out.push_str("</head>\n<body>\n");
        out.push_str(&format!(
            "<h1>{}</h1>\n<p class=\"sub\">{}</p>\n",
            esc(&self.title),
            esc(&self.subtitle)
        ));
        out.push_str(&html_table(&self.facts, "facts"));
        out.push_str("<h2>Chart</h2>\n<div class=\"chart\">\n");
        out.push_str(strip_xml_declaration(svg));
        out.push_str("\n</div>\n");
        for section in &self.sections {
            out.push_str(&format!("<h2>{}</h2>\n", esc(&section.title)));
            if !section.intro.is_empty() {
                out.push_str(&format!("<p>{}</p>\n", esc(&section.intro)));
            }
            out.push_str(&html_table(&section.table, "figures"));
        }
        if !self.notes.is_empty() {
            out.push_str("<h2>Notes</h2>\n<ul>\n");
            for note in &self.notes {
                out.push_str(&format!("<li>{}</li>\n", esc(note)));
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</body>\n</html>\n");
        out
    }
}

/// Styles inline: the page must render the same offline, from a file, anywhere.
const STYLE: &str = "<style>
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif;
       margin: 2em auto; max-width: 1320px; padding: 0 1em; color: #1d2330; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #d8dce6; padding-bottom: 0.2em; }
p.sub { color: #5a6275; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #d8dce6; padding: 0.25em 0.6em; }
th { background: #f1f3f8; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.facts td:first-child { font-weight: 600; background: #f8f9fb; }
tr:nth-child(even) td { background: #fafbfd; }
.chart svg { max-width: 100%; height: auto; border: 1px solid #d8dce6; }
</style>
";

fn md_text(s: &str) -> String {
    // A bar would end a table cell; GitHub's Markdown leaves intraword `_` alone, so kernel
    // names stay readable in the raw file.
    s.replace('|', "\\|")
}

fn md_table(table: &Table) -> String {
    let cell = |s: &str| md_text(s).replace('\n', " ");
    let mut out = String::from("|");
    for h in &table.header {
        out.push_str(&format!(" {} |", cell(h)));
    }
    out.push_str("\n|");
    for &right in &table.right {
        out.push_str(if right { "---:|" } else { "---|" });
    }
    out.push('\n');
    for row in &table.rows {
        out.push('|');
        for c in row {
            out.push_str(&format!(" {} |", cell(c)));
        }
        out.push('\n');
    }
    out
}

fn html_table(table: &Table, class: &str) -> String {
    let mut out = format!("<table class=\"{class}\">\n<thead><tr>");
    for h in &table.header {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            if table.right.get(i).copied().unwrap_or(false) {
                out.push_str(&format!("<td class=\"num\">{}</td>", esc(c)));
            } else {
                out.push_str(&format!("<td>{}</td>", esc(c)));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// HTML-escapes text.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

fn strip_xml_declaration(svg: &str) -> &str {
    let s = svg.trim_start();
    if s.starts_with("<?xml") {
        s.find("?>").map_or(s, |i| s[i + 2..].trim_start())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Doc {
        let mut table = Table::new(vec![("kernel".into(), false), ("GB/s".into(), true)]);
        table.rows.push(vec!["a|b <c>".into(), "1.5".into()]);
        Doc {
            title: "T & t".into(),
            subtitle: "sub".into(),
            facts: table.clone(),
            sections: vec![Section {
                title: "S".into(),
                intro: "why".into(),
                table,
            }],
            notes: vec!["n".into()],
        }
    }

    #[test]
    fn markdown_escapes_cells() {
        let md = doc().to_markdown();
        assert!(
            md.contains("| kernel | GB/s |\n|---|---:|\n| a\\|b <c> | 1.5 |"),
            "{md}"
        );
        assert!(md.starts_with("# T & t\n"));
    }

    #[test]
    fn html_escapes_and_inlines() {
        let html = doc().to_html("<?xml version=\"1.0\"?>\n<svg></svg>");
        assert!(html.contains("<td>a|b &lt;c&gt;</td><td class=\"num\">1.5</td>"));
        assert!(html.contains("<svg></svg>") && !html.contains("<?xml"));
        assert!(html.contains("<title>T &amp; t</title>"));
    }
}
