//! The SVG plots of the designs and read sections (plotters' SVG backend: text is left to the
//! browser, no fonts are loaded).

use crate::designs::{Design, Run};
use crate::read::Row;
use crate::stores::Kind;
use plotters::prelude::*;
use std::path::Path;
const DESIGN_COLORS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
];

fn store_color(store: Kind) -> RGBColor {
    match store {
        Kind::Memory => RGBColor(31, 119, 180),
        Kind::Latency => RGBColor(148, 103, 189),
        Kind::File => RGBColor(44, 160, 44),
        Kind::Azure => RGBColor(214, 39, 40),
        Kind::S3 => RGBColor(140, 86, 75),
    }
}

/// A panel's or a series' name: an emulator is marked as one.
fn label(store: Kind) -> String {
    if store.is_emulator() {
        format!("{} (emulator, CPU-bound)", store.name())
    } else {
        store.name().to_string()
    }
}

type PlotResult = Result<(), Box<dyn std::error::Error>>;

pub fn designs(
    runs: &[Run],
    stores: &[Kind],
    producers: &[usize],
    path: &Path,
) -> anyhow::Result<()> {
    draw_designs(runs, stores, producers, path)
        .map_err(|e| anyhow::anyhow!("plotting {}: {e}", path.display()))
}

fn draw_designs(runs: &[Run], stores: &[Kind], producers: &[usize], path: &Path) -> PlotResult {
    let width = 380 * stores.len().max(1) as u32 + 40;
    let root = SVGBackend::new(path, (width, 440)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(36);
    top.draw_text(
        "Registrations per second under P concurrent producers and a pruning reader (log scale)",
        &("sans-serif", 17).into_font().color(&BLACK),
        (12, 10),
    )?;
    let (panels, legend) = rest.split_vertically(370);
    let rates: Vec<f64> = runs
        .iter()
        .filter(|r| r.supported && r.regs_per_s > 0.0)
        .map(|r| r.regs_per_s)
        .collect();
    let lo = rates.iter().copied().fold(f64::INFINITY, f64::min).min(1.0);
    let hi = rates.iter().copied().fold(0.0, f64::max).max(10.0);
    let y = (
        10f64.powf(lo.log10().floor()),
        10f64.powf(hi.log10().ceil() + 0.3),
    );
    let areas = panels.split_evenly((1, stores.len().max(1)));
    for (area, &store) in areas.iter().zip(stores) {
        design_panel(area, store, runs, producers, y)?;
    }
    design_legend(&legend)?;
    root.present()?;
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// One store's panel: a group of bars per number of producers, one bar per design.
fn design_panel(
    area: &Area,
    store: Kind,
    runs: &[Run],
    producers: &[usize],
    (ymin, ymax): (f64, f64),
) -> PlotResult {
    let groups = producers.len().max(1) as f64;
    // Group i is centred on x = i; only those integer ticks get a label.
    let mut chart = ChartBuilder::on(area)
        .caption(label(store), ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(58)
        .build_cartesian_2d(-0.5f64..groups - 0.5, (ymin..ymax).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(producers.len() + 1)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            producers
                .get(i as usize)
                .map(|p| format!("P = {p}"))
                .unwrap_or_default()
        })
        .y_desc("registrations/s")
        .y_label_formatter(&|y| {
            if *y >= 1000.0 {
                format!("{:.0}k", y / 1000.0)
            } else {
                format!("{y:.0}")
            }
        })
        .draw()?;
    for (gi, p) in producers.iter().enumerate() {
        for (di, d) in Design::all().into_iter().enumerate() {
            let Some(r) = runs
                .iter()
                .find(|r| r.store == store && r.producers == *p && r.design == d && !r.variant)
            else {
                continue;
            };
            let x0 = gi as f64 - 0.38 + di as f64 * 0.26;
            let x1 = x0 + 0.24;
            if !r.supported {
                chart.draw_series(std::iter::once(Text::new(
                    "n/s",
                    (x0 + 0.02, ymin * 1.6),
                    ("sans-serif", 11).into_font().color(&DESIGN_COLORS[di]),
                )))?;
                continue;
            }
            let y = r.regs_per_s.max(ymin);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, ymin), (x1, y)],
                DESIGN_COLORS[di].filled(),
            )))?;
            if r.lost > 0 {
                chart.draw_series(std::iter::once(Text::new(
                    format!("−{}", r.lost),
                    (x0, y * 1.35),
                    ("sans-serif", 10).into_font().color(&BLACK),
                )))?;
            }
        }
    }
    Ok(())
}

fn design_legend(legend: &Area) -> PlotResult {
    let mut x = 16;
    for (di, d) in Design::all().into_iter().enumerate() {
        legend.draw(&Rectangle::new(
            [(x, 12), (x + 14, 26)],
            DESIGN_COLORS[di].filled(),
        ))?;
        legend.draw_text(
            d.label(),
            &("sans-serif", 13).into_font().color(&BLACK),
            (x + 20, 13),
        )?;
        x += 24 + 8 * d.label().len() as i32;
    }
    legend.draw_text(
        "−N: live registrations lost;  n/s: not supported (no conditional update)",
        &("sans-serif", 12).into_font().color(&BLACK),
        (x + 10, 14),
    )?;
    Ok(())
}

pub fn read(rows: &[Row], stores: &[Kind], path: &Path) -> anyhow::Result<()> {
    draw_read(rows, stores, path).map_err(|e| anyhow::anyhow!("plotting {}: {e}", path.display()))
}

fn draw_read(rows: &[Row], stores: &[Kind], path: &Path) -> PlotResult {
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let times: Vec<f64> = rows
        .iter()
        .flat_map(|r| [Some(r.recent_ms), Some(r.floor_ms), r.paged_floor_ms])
        .flatten()
        .filter(|t| *t > 0.0)
        .collect();
    let lo = times.iter().copied().fold(f64::INFINITY, f64::min).min(1.0);
    let hi = times.iter().copied().fold(0.0, f64::max).max(1.0);
    let (ymin, ymax) = (
        10f64.powf(lo.log10().floor()),
        10f64.powf(hi.log10().ceil()),
    );
    let max_markers = rows
        .iter()
        .map(|r| r.markers)
        .max()
        .unwrap_or(100_000)
        .max(1_000) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Median read time: `recent` (solid) vs the floor (dashed), per store",
            ("sans-serif", 17),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (50f64..max_markers * 2.0).log_scale(),
            (ymin..ymax).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("markers in the workspace")
        .y_desc("ms (median)")
        .x_label_formatter(&|x| {
            if *x >= 1000.0 {
                format!("{:.0}k", x / 1000.0)
            } else {
                format!("{x:.0}")
            }
        })
        .y_label_formatter(&|y| {
            if *y >= 1.0 {
                format!("{y:.0}")
            } else {
                format!("{y}")
            }
        })
        .draw()?;
    for &store in stores {
        read_series(&mut chart, store, rows)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}

type ReadChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// One store's lines: `recent` (solid), the floor (dashed), and the floor with an 8-key page
/// where it was measured.
fn read_series(chart: &mut ReadChart, store: Kind, rows: &[Row]) -> PlotResult {
    let color = store_color(store);
    let name = label(store);
    let mine: Vec<&Row> = rows.iter().filter(|r| r.store == store).collect();
    let recent: Vec<(f64, f64)> = mine
        .iter()
        .map(|r| (r.markers as f64, r.recent_ms))
        .collect();
    let floor: Vec<(f64, f64)> = mine
        .iter()
        .map(|r| (r.markers as f64, r.floor_ms))
        .collect();
    chart
        .draw_series(LineSeries::new(recent.clone(), color.stroke_width(3)))?
        .label(format!("{name}: recent"))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3)));
    chart.draw_series(recent.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    chart
        .draw_series(DashedLineSeries::new(
            floor.clone(),
            6,
            4,
            color.stroke_width(1),
        ))?
        .label(format!("{name}: floor"))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(1)));
    chart.draw_series(
        floor
            .iter()
            .map(|&p| TriangleMarker::new(p, 4, color.mix(0.6).filled())),
    )?;
    let paged: Vec<(f64, f64)> = mine
        .iter()
        .filter_map(|r| r.paged_floor_ms.map(|p| (r.markers as f64, p)))
        .collect();
    if !paged.is_empty() {
        let c = RGBColor(120, 120, 120);
        chart
            .draw_series(DashedLineSeries::new(
                paged.clone(),
                2,
                3,
                c.stroke_width(1),
            ))?
            .label(format!("{name}: floor, 8-key page"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(1)));
        chart.draw_series(paged.iter().map(|&p| Cross::new(p, 4, c.stroke_width(1))))?;
    }
    Ok(())
}
