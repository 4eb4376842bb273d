//! `report.svg`: a grid of grouped bar charts drawn with plotters' SVG backend — one panel per
//! kernel or model, groups along the x axis (input sizes, thread counts), a bar per series
//! (tiers, or machines) in each group, and one legend for all panels.
//!
//! Text is laid out with plotters' own size estimate (no font library: the SVG names a generic
//! `sans-serif` and the viewer picks the face), so labels are kept short and given room.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor;

use crate::bench::error::BenchError;

/// One bar chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// Its title (the kernel or model).
    pub title: String,
    /// The y axis's unit (`GB/s`, `MB/s`).
    pub unit: String,
    /// Group labels along the x axis.
    pub groups: Vec<String>,
    /// One value per group for each series (`None`: not measured).
    pub values: Vec<Vec<Option<f64>>>,
    /// A short note per group (the best tier's speed-up) above the bar of the last series;
    /// empty for none.
    pub annotations: Vec<Option<String>>,
}

/// A series: its name in the legend and its colour.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend's text.
    pub name: String,
    /// Its colour.
    pub color: (u8, u8, u8),
}

/// Panels per row.
const COLUMNS: usize = 3;
const PANEL_W: u32 = 440;
const PANEL_H: u32 = 270;
/// The header above the legend (title, subtitle), and each legend line.
const HEADER_H: u32 = 62;
const LEGEND_LINE_H: u32 = 22;
const LEGEND_SIZE: f64 = 13.0;
const FONT: &str = "sans-serif";

/// Colours of the tiers, the same in every report (scalar grey, SIMD tiers in distinct hues).
pub fn tier_color(tier: &str) -> (u8, u8, u8) {
    match tier {
        "scalar" => (150, 156, 168),
        "sse4.2" => (86, 148, 220),
        "avx2" => (24, 72, 160),
        "neon" => (214, 110, 40),
        _ => (110, 170, 90),
    }
}

/// Distinct colours for machines; index `i` gets a dark (best tier) and a light (scalar) shade.
pub fn machine_colors(i: usize) -> ((u8, u8, u8), (u8, u8, u8)) {
    const DARK: [(u8, u8, u8); 6] = [
        (24, 72, 160),
        (200, 90, 30),
        (40, 140, 80),
        (140, 60, 150),
        (170, 40, 60),
        (60, 130, 150),
    ];
    let d = DARK[i % DARK.len()];
    let light = |c: u8| c + (255 - c) / 2;
    (d, (light(d.0), light(d.1), light(d.2)))
}

/// The SVG of `panels` under `title` and `subtitle`, with a legend of `series` (and a line
/// saying what the annotations are when there are any).
pub fn render_svg(
    title: &str,
    subtitle: &str,
    series: &[Series],
    panels: &[Panel],
) -> Result<String, BenchError> {
    let annotated = panels
        .iter()
        .any(|p| p.annotations.iter().any(Option::is_some));
    let rows = panels.len().div_ceil(COLUMNS).max(1);
    let width = PANEL_W * COLUMNS as u32;
    let note = annotated.then_some(NOTE);
    let legend_lines = legend_layout(series, note, width)
        .last()
        .map_or(1, |e| e.line + 1);
    let header_h = HEADER_H + LEGEND_LINE_H * legend_lines as u32 + 2;
    let height = header_h + PANEL_H * rows as u32;
    let mut svg = String::new();
    let header = Header {
        title,
        subtitle,
        series,
        note,
        height: header_h,
    };
    draw(&mut svg, (width, height), &header, panels, rows)
        .map_err(|e| BenchError::Invalid(format!("drawing the chart: {e}")))?;
    Ok(svg)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// What the annotations mean.
const NOTE: &str = "n.nn× above a bar: that tier's speed-up over scalar";

/// The chart's top: title, subtitle, legend.
struct Header<'a> {
    title: &'a str,
    subtitle: &'a str,
    series: &'a [Series],
    note: Option<&'a str>,
    height: u32,
}

fn draw(
    svg: &mut String,
    size: (u32, u32),
    head: &Header<'_>,
    panels: &[Panel],
    rows: usize,
) -> DrawResult {
    let (title, subtitle, series) = (head.title, head.subtitle, head.series);
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, body) = root.split_vertically(head.height);
    header.draw(&Text::new(
        fit(title, 22.0, size.0 as i32 - 32),
        (16, 12),
        (FONT, 22).into_font().style(FontStyle::Bold).color(&BLACK),
    ))?;
    header.draw(&Text::new(
        fit(subtitle, 13.0, size.0 as i32 - 32),
        (16, 40),
        (FONT, 13).into_font().color(&RGBColor(80, 86, 100)),
    ))?;
    legend(&header, series, head.note, size.0)?;
    let areas = body.split_evenly((rows, COLUMNS));
    for (area, panel) in areas.iter().zip(panels) {
        draw_panel(area, panel, series)?;
    }
    root.present()?;
    Ok(())
}

/// Where each legend entry goes: its line and x position (`swatch: false` for the note).
struct LegendEntry {
    line: usize,
    x: i32,
    swatch: bool,
}

/// plotters' own estimate of a text's width (its font-less layout: 0.7 em per byte, the em
/// being the size over 1.24²), so the layout agrees with what it draws.
fn text_width(text: &str, size: f64) -> i32 {
    (size / 1.24 / 1.24 * 0.7 * text.len() as f64).round() as i32
}

/// Legend entries left to right, wrapping onto a new line before the chart's right edge.
fn legend_layout(series: &[Series], note: Option<&str>, width: u32) -> Vec<LegendEntry> {
    let right = width as i32 - 16;
    let mut out = Vec::new();
    let (mut line, mut x) = (0, 16);
    let mut place = |w: i32, swatch: bool| {
        if x > 16 && x + w > right {
            line += 1;
            x = 16;
        }
        out.push(LegendEntry { line, x, swatch });
        x += w + 22;
    };
    for s in series {
        place(20 + text_width(&s.name, LEGEND_SIZE), true);
    }
    if let Some(note) = note {
        place(text_width(note, LEGEND_SIZE), false);
    }
    out
}

/// Swatches and names under the subtitle, on as many lines as they need.
fn legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    series: &[Series],
    note: Option<&str>,
    width: u32,
) -> DrawResult {
    let layout = legend_layout(series, note, width);
    let texts = series
        .iter()
        .map(|s| (s.name.as_str(), Some(s.color)))
        .chain(note.map(|n| (n, None)));
    for (entry, (text, color)) in layout.iter().zip(texts) {
        let y = HEADER_H as i32 + (entry.line as u32 * LEGEND_LINE_H) as i32;
        let mut x = entry.x;
        if let (true, Some((r, g, b))) = (entry.swatch, color) {
            area.draw(&Rectangle::new(
                [(x, y), (x + 14, y + 14)],
                RGBColor(r, g, b).filled(),
            ))?;
            x += 20;
        }
        let ink = if entry.swatch {
            BLACK
        } else {
            RGBColor(80, 86, 100)
        };
        area.draw(&Text::new(
            text.to_owned(),
            (x, y + 7),
            (FONT, LEGEND_SIZE)
                .into_font()
                .color(&ink)
                .pos(text_anchor::Pos::new(
                    text_anchor::HPos::Left,
                    text_anchor::VPos::Center,
                )),
        ))?;
    }
    Ok(())
}

/// `title` shortened in the middle to fit a panel (a long path keeps its file name).
fn fit_title(title: &str, size: f64) -> String {
    fit(title, size, PANEL_W as i32 - 40)
}

/// `title` shortened in the middle to fit `max` pixels.
fn fit(title: &str, size: f64, max: i32) -> String {
    if text_width(title, size) <= max {
        return title.to_owned();
    }
    let chars: Vec<char> = title.chars().collect();
    // "…" is three bytes to the estimate.
    let keep = ((max as f64 / (size / 1.24 / 1.24 * 0.7)) as usize).saturating_sub(3);
    let head = keep / 3;
    let tail = keep - head;
    let start: String = chars[..head.min(chars.len())].iter().collect();
    let end: String = chars[chars.len().saturating_sub(tail)..].iter().collect();
    format!("{start}…{end}")
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    panel: &Panel,
    series: &[Series],
) -> DrawResult {
    let groups = panel.groups.len().max(1);
    let max = panel
        .values
        .iter()
        .flatten()
        .flatten()
        .fold(0.0f64, |m, &v| m.max(v));
    // Headroom above the tallest bar; a flat 1 when nothing was measured.
    let top = if max > 0.0 { max * 1.12 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .margin_top(6)
        .margin_left(8)
        .margin_right(16)
        .margin_bottom(4)
        .caption(
            fit_title(&panel.title, 15.0),
            (FONT, 15).into_font().style(FontStyle::Bold),
        )
        .x_label_area_size(26)
        .y_label_area_size(52)
        .build_cartesian_2d(0f64..groups as f64, 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(5)
        .y_desc(panel.unit.as_str())
        .y_label_formatter(&|v| tick(*v))
        .y_max_light_lines(1)
        .label_style((FONT, 11))
        .axis_desc_style((FONT, 12))
        .light_line_style(RGBColor(235, 237, 242))
        .bold_line_style(RGBColor(215, 219, 228))
        .draw()?;
    // Bars: each group spans [g, g+1); its bars share 80 % of it, centred.
    let n = series.len().max(1) as f64;
    let bar = 0.8 / n;
    for (si, s) in series.iter().enumerate() {
        let (r, g, b) = s.color;
        let color = RGBColor(r, g, b);
        let values = panel.values.get(si).map(Vec::as_slice).unwrap_or(&[]);
        chart.draw_series(values.iter().enumerate().filter_map(|(gi, v)| {
            let v = (*v)?;
            let x0 = gi as f64 + 0.1 + si as f64 * bar;
            Some(Rectangle::new(
                [(x0, 0.0), (x0 + bar * 0.92, v)],
                color.filled(),
            ))
        }))?;
    }
    // Notes above the last series' bar of each group.
    let note_style =
        (FONT, 11)
            .into_font()
            .color(&RGBColor(60, 66, 80))
            .pos(text_anchor::Pos::new(
                text_anchor::HPos::Center,
                text_anchor::VPos::Bottom,
            ));
    let last = series.len().saturating_sub(1);
    for (gi, note) in panel.annotations.iter().enumerate() {
        let value = panel
            .values
            .get(last)
            .and_then(|v| v.get(gi).copied().flatten());
        let (Some(note), Some(value)) = (note, value) else {
            continue;
        };
        let x = gi as f64 + 0.1 + last as f64 * bar + bar * 0.46;
        chart.draw_series(std::iter::once(Text::new(
            note.clone(),
            (x, value + top * 0.015),
            note_style.clone(),
        )))?;
    }
    // Group labels, centred under each group (drawn in the panel's own pixels).
    let base = area.get_base_pixel();
    let style = (FONT, 12)
        .into_font()
        .color(&BLACK)
        .pos(text_anchor::Pos::new(
            text_anchor::HPos::Center,
            text_anchor::VPos::Top,
        ));
    for (gi, label) in panel.groups.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(gi as f64 + 0.5, 0.0));
        area.draw(&Text::new(
            label.clone(),
            (x - base.0, y - base.1 + 6),
            style.clone(),
        ))?;
    }
    Ok(())
}

/// An axis tick: as few decimals as the value needs (`0`, `0.05`, `2.5`, `40`).
fn tick(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_legends_wrap_and_long_titles_shrink() {
        let series: Vec<Series> = (0..6)
            .map(|i| Series {
                name: format!("AMD EPYC 9R14 96-Core Processor {i}: best tier"),
                color: tier_color("avx2"),
            })
            .collect();
        let layout = legend_layout(&series, Some(NOTE), PANEL_W * COLUMNS as u32);
        assert!(layout.last().unwrap().line >= 1);
        assert!(layout.iter().all(|e| e.x >= 16));
        let long = "/home/someone/models/some/deep/folder/llama3-8b-instruct.tokenizer.json";
        let short = fit_title(long, 15.0);
        assert!(
            short.contains('…') && short.ends_with("instruct.tokenizer.json"),
            "{short}"
        );
        assert!(text_width(&short, 15.0) <= PANEL_W as i32 - 40);
        assert_eq!(fit_title("classify", 15.0), "classify");
    }

    #[test]
    fn ticks_drop_needless_decimals() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(20.0), "20");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.05), "0.05");
    }

    #[test]
    fn draws_an_svg_with_every_label() {
        let series = vec![
            Series {
                name: "scalar".into(),
                color: tier_color("scalar"),
            },
            Series {
                name: "avx2".into(),
                color: tier_color("avx2"),
            },
        ];
        let panels = vec![Panel {
            title: "classify & co".into(),
            unit: "GB/s".into(),
            groups: vec!["64 B".into(), "4 KiB".into()],
            values: vec![vec![Some(1.0), Some(2.0)], vec![Some(3.0), None]],
            annotations: vec![Some("3.00×".into()), None],
        }];
        let svg = render_svg("T", "sub", &series, &panels).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
        for text in [
            "classify &amp; co",
            "64 B",
            "4 KiB",
            "avx2",
            "GB/s",
            "3.00×",
        ] {
            assert!(svg.contains(text), "{text}");
        }
    }
}
