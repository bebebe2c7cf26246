//! The report's sections for axis reductions (`bench --shapes`): one section per shape
//! and set of axes, because rows of different shapes share their element count and a
//! chart against n would draw them as one line. Each section has the shape's operators
//! as bars (GB/s of input read, the read roof measured beside them as a bar of its own)
//! and a table saying which kernel or CPU path ran each row and why (`--explain`).

use std::fmt::Write;

use crate::charts::{bars, Bar};
use crate::record::{Record, Status};
use crate::report::{esc, figure};

/// `4096×8192, axis 1`, `… axes 0, 2`, `… all axes`.
pub fn shape_label(shape: &[usize], axes: Option<&[isize]>) -> String {
    let dims = shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("×");
    match axes {
        None => format!("{dims}, all axes"),
        Some([one]) => format!("{dims}, axis {one}"),
        Some(many) => format!(
            "{dims}, axes {}",
            many.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The sections, one per (shape, axes) in record order; empty when no row has a shape.
pub fn sections(records: &[Record]) -> String {
    let mut keys: Vec<(Vec<usize>, Option<Vec<isize>>)> = Vec::new();
    for r in records {
        if let Some(shape) = &r.shape {
            let key = (shape.clone(), r.axes.clone());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let mut h = String::new();
    for (shape, axes) in &keys {
        let label = shape_label(shape, axes.as_deref());
        let rows: Vec<&Record> = records
            .iter()
            .filter(|r| r.shape.as_ref() == Some(shape) && r.axes == *axes)
            .collect();
        let _ = write!(h, "<h2>{}</h2>", esc(&label));
        let mut chart: Vec<Bar> = rows
            .iter()
            .filter(|r| r.status == Status::Ok)
            .map(|r| Bar {
                label: format!(
                    "{} {} · {} {} ({:.0})",
                    r.op,
                    r.dtype,
                    r.device,
                    r.variant,
                    r.gbps.unwrap_or(0.0)
                ),
                segments: vec![("GB/s".into(), r.gbps.unwrap_or(0.0))],
            })
            .collect();
        let roof = rows.iter().filter_map(|r| r.roof_gbps).reduce(f64::max);
        if let Some(roof) = roof {
            chart.push(Bar {
                label: format!("read roof, same run ({roof:.0})"),
                segments: vec![("GB/s".into(), roof)],
            });
        }
        let caption = if roof.is_some() {
            "Median GB/s of each operator on this shape; the last bar is the streaming read \
             of the same bytes measured in the same run."
        } else {
            "Median GB/s of each operator on this shape."
        };
        h.push_str(&figure(
            bars(&format!("{label}: GB/s of input read"), "GB/s", &chart),
            caption,
        ));
        h.push_str(
            "<table><tr><th class=\"l\">problem</th><th class=\"l\">device</th><th>GB/s</th>\
             <th class=\"l\">status</th><th class=\"l\">what ran</th></tr>",
        );
        for r in &rows {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{} {}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                esc(&r.op),
                esc(&r.dtype),
                esc(&r.device),
                r.gbps.map_or("—".into(), |g| format!("{g:.1}")),
                esc(&format!("{:?}", r.status).to_lowercase()),
                esc(r.strategy.as_deref().unwrap_or("—"))
            );
        }
        h.push_str("</table>");
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_shape_and_the_axes() {
        assert_eq!(shape_label(&[8192, 8192], Some(&[1])), "8192×8192, axis 1");
        assert_eq!(shape_label(&[4, 5, 6], Some(&[0, 2])), "4×5×6, axes 0, 2");
        assert_eq!(shape_label(&[7], None), "7, all axes");
    }
}
