//! Charts for the HTML report, drawn with plotters into SVG strings: lines over a log-x
//! axis (bandwidth against size, with the roof) and horizontal bars (rankings, stacked
//! time breakdowns). SVG text needs no fonts on the machine that draws it.

use plotters::prelude::*;

/// One named line of `(x, y)` points.
pub struct Line {
    /// Legend text.
    pub name: String,
    /// Points, x ascending.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed and black (a reference such as the roof).
    pub reference: bool,
}

/// One bar: a label and its stacked segments `(legend, value)`.
pub struct Bar {
    /// Category label.
    pub label: String,
    /// Segments from the left.
    pub segments: Vec<(String, f64)>,
}

fn colour(i: usize) -> RGBColor {
    const PALETTE: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Whether a point can go on log axes: both coordinates positive and finite with room
/// for the margins (a record of n = 0, or of an absurd rate, would otherwise give the
/// log scale a range it never finishes dividing).
fn drawable((x, y): (f64, f64)) -> bool {
    const LARGEST: f64 = 1e300;
    x > 0.0 && x < LARGEST && y > 0.0 && y < LARGEST
}

/// Lines over a log-scaled x axis.
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Line],
    log_y: bool,
) -> Result<String, String> {
    let xs = series.iter().flat_map(|s| {
        s.points
            .iter()
            .copied()
            .filter(|&p| drawable(p))
            .map(|p| p.0)
    });
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .copied()
                .filter(|&p| drawable(p))
                .map(|p| p.1)
        })
        .collect();
    let (x_lo, x_hi) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if ys.is_empty() || x_lo > x_hi {
        return Err(format!("{title}: nothing to draw"));
    }
    let y_hi = ys.iter().cloned().fold(0.0, f64::max) * 1.15;
    let y_lo = ys.iter().cloned().fold(f64::MAX, f64::min) / 1.5;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70);
        let x_range = (x_lo / 1.3..x_hi * 1.3).log_scale();
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(x_desc)
                    .y_desc(y_desc)
                    .x_label_formatter(&|x| pow2_label(*x))
                    .label_style(("sans-serif", 13))
                    .axis_desc_style(("sans-serif", 14))
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (i, s) in series.iter().enumerate() {
                    let style = if s.reference {
                        BLACK.stroke_width(2)
                    } else {
                        colour(i).stroke_width(2)
                    };
                    let c = if s.reference { BLACK } else { colour(i) };
                    let pts: Vec<(f64, f64)> =
                        s.points.iter().copied().filter(|&p| drawable(p)).collect();
                    if s.reference {
                        chart
                            .draw_series(DashedLineSeries::new(pts.clone(), 6, 4, style))
                            .map_err(|e| e.to_string())?
                            .label(s.name.clone())
                            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
                    } else {
                        chart
                            .draw_series(LineSeries::new(pts.clone(), style))
                            .map_err(|e| e.to_string())?
                            .label(s.name.clone())
                            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
                        chart
                            .draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))
                            .map_err(|e| e.to_string())?;
                    }
                }
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperLeft)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .draw()
                    .map_err(|e| e.to_string())?;
            }};
        }
        if log_y {
            draw!(builder
                .build_cartesian_2d(x_range, (y_lo..y_hi).log_scale())
                .map_err(|e| e.to_string())?);
        } else {
            draw!(builder
                .build_cartesian_2d(x_range, 0.0..y_hi)
                .map_err(|e| e.to_string())?);
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// `2^k` for exact powers of two, else the number in short form.
fn pow2_label(x: f64) -> String {
    let k = x.log2().round();
    if (x - 2f64.powf(k)).abs() < 1e-6 * x {
        format!("2^{k}")
    } else if x >= 1e6 {
        format!("{:.0}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Horizontal bars, stacked by segment, one row per bar (first on top).
pub fn bars(title: &str, x_desc: &str, bars: &[Bar]) -> Result<String, String> {
    if bars.is_empty() {
        return Err(format!("{title}: nothing to draw"));
    }
    let x_hi = bars
        .iter()
        .map(|b| {
            b.segments
                .iter()
                .map(|s| {
                    if s.1.is_finite() {
                        s.1.clamp(0.0, 1e300)
                    } else {
                        0.0
                    }
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
        * 1.1;
    let mut legend: Vec<String> = Vec::new();
    for b in bars {
        for (name, _) in &b.segments {
            if !legend.contains(name) {
                legend.push(name.clone());
            }
        }
    }
    let rows = bars.len();
    let height = (110 + 28 * rows).max(200) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(260)
            .build_cartesian_2d(0.0..x_hi.max(1e-12), 0.0..rows as f64)
            .map_err(|e| e.to_string())?;
        let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows * 2 + 1)
            .y_label_formatter(&|y| {
                let k = rows as f64 - y - 0.5;
                if (k - k.round()).abs() < 0.01 && k >= 0.0 && (k as usize) < labels.len() {
                    labels[k.round() as usize].clone()
                } else {
                    String::new()
                }
            })
            .x_desc(x_desc)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(|e| e.to_string())?;
        for (seg_index, name) in legend.iter().enumerate() {
            let c = colour(seg_index);
            let rects: Vec<Rectangle<(f64, f64)>> = bars
                .iter()
                .enumerate()
                .filter_map(|(row, b)| {
                    let start: f64 = b
                        .segments
                        .iter()
                        .take_while(|s| &s.0 != name)
                        .map(|s| s.1.max(0.0))
                        .sum();
                    let value = b.segments.iter().find(|s| &s.0 == name)?.1.max(0.0);
                    let y = (rows - 1 - row) as f64;
                    Some(Rectangle::new(
                        [(start, y + 0.15), (start + value, y + 0.85)],
                        c.filled(),
                    ))
                })
                .collect();
            chart
                .draw_series(rects)
                .map_err(|e| e.to_string())?
                .label(name.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
        }
        if legend.len() > 1 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_with_their_labels() {
        let line = Line {
            name: "two-stage".into(),
            points: vec![(1024.0, 1.0), (1048576.0, 100.0)],
            reference: false,
        };
        let roof = Line {
            name: "roof".into(),
            points: vec![(1024.0, 2.0), (1048576.0, 120.0)],
            reference: true,
        };
        let svg = lines("sum f32", "n", "GB/s", &[line, roof], false).expect("draws");
        assert!(
            svg.starts_with("<svg")
                && svg.contains("two-stage")
                && svg.contains("GB/s")
                && svg.contains("1M"),
            "{}",
            &svg[..200]
        );
        let svg = bars(
            "ranked",
            "GB/s",
            &[Bar {
                label: "production".into(),
                segments: vec![("pass 1".into(), 3.0)],
            }],
        )
        .expect("draws");
        assert!(svg.contains("production"));
        assert!(bars("empty", "x", &[]).is_err());
    }
}
