//! The soak's chart: p99 latency (top) and each instance's resident memory
//! (bottom) over time, one SVG, with the slow-engine phase, the engine
//! outage and the Redis restart shaded in both panels so they are seen at a
//! glance.

use super::tally::Reading;
use plotters::prelude::*;
use std::path::Path;

/// A shaded stretch of the soak.
pub struct Phase {
    pub label: &'static str,
    pub from_s: f64,
    pub to_s: f64,
    pub color: RGBColor,
}

/// What the chart draws.
pub struct Series<'a> {
    pub total_s: f64,
    /// (window end, p99 ms) per window.
    pub p99: &'a [(f64, f64)],
    pub readings: &'a [Reading],
    pub instances: &'a [String],
    pub phases: &'a [Phase],
}

const LINES: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// Writes the chart to `path`.
pub fn draw(path: &Path, series: &Series) -> Result<(), String> {
    draw_inner(path, series).map_err(|e| format!("drawing {}: {e}", path.display()))
}

fn draw_inner(path: &Path, s: &Series) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(320);
    let minutes = s.total_s / 60.0;

    let p99_max = s.p99.iter().map(|p| p.1).fold(10.0, f64::max) * 1.15;
    let mut chart = ChartBuilder::on(&top)
        .caption(
            "p99 latency of all answers, 10 s windows",
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..minutes, 0f64..p99_max)?;
    chart
        .configure_mesh()
        .x_desc("minutes")
        .y_desc("p99 (ms)")
        .draw()?;
    shade(&mut chart, s.phases, p99_max)?;
    chart
        .draw_series(LineSeries::new(
            s.p99.iter().map(|(t, p)| (t / 60.0, *p)),
            RED.stroke_width(2),
        ))?
        .label("p99")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;

    let rss_max = s
        .readings
        .iter()
        .flat_map(|r| r.rss_mib.iter().flatten())
        .fold(10.0f64, |a, b| a.max(*b))
        * 1.2;
    let mut chart = ChartBuilder::on(&bottom)
        .caption(
            "resident memory of each gateway instance",
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..minutes, 0f64..rss_max)?;
    chart
        .configure_mesh()
        .x_desc("minutes")
        .y_desc("RSS (MiB)")
        .draw()?;
    shade(&mut chart, s.phases, rss_max)?;
    for (i, name) in s.instances.iter().enumerate() {
        let color = LINES[i % LINES.len()];
        chart
            .draw_series(LineSeries::new(
                s.readings
                    .iter()
                    .filter_map(|r| Some((r.at_s / 60.0, (*r.rss_mib.get(i)?)?))),
                color.stroke_width(2),
            ))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Shades every phase over the full height and names it at the top.
fn shade<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    phases: &[Phase],
    y_max: f64,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    for p in phases {
        let (x0, x1) = (p.from_s / 60.0, p.to_s / 60.0);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x0, 0.0), (x1, y_max)],
            p.color.mix(0.25).filled(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            p.label,
            (x0, y_max * 0.97),
            ("sans-serif", 12).into_font(),
        )))?;
    }
    Ok(())
}
