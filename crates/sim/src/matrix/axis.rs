//! Axes over a TOML document, the vocabulary of every matrix file
//! (`simulate matrix` and `lab matrix`): `[[axis]]` tables with a `key`
//! (a dotted path into the document) and the `values` it takes. The cells
//! are the checked cross product of the axes, first axis slowest.
//!
//! What a key means is the caller's: the simulator maps short names
//! (`layout`) to system fields (`pool.layout`); the lab sets its spec's
//! keys as written. Both expand through [`cross_product`].

use serde::{Deserialize, Serialize};

use crate::limits::{check_cells, LimitError};

/// One axis: the key it sets and the values it takes, in order.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub key: String,
    pub values: Vec<toml::Value>,
}

/// Why axes cannot be expanded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AxisError {
    #[error("axis {axis}: values must not be empty")]
    NoValues { axis: String },
    /// `part` of `key` names a value that is not a table.
    #[error("axis key {key}: '{part}' is inside a value that is not a table")]
    NotATable { key: String, part: String },
    /// `key` has an empty part (`pool..layout`, `""`).
    #[error("axis key '{key}': a dotted field has no empty part")]
    EmptyPart { key: String },
    /// More cells than the caller allows.
    #[error(transparent)]
    Cells(#[from] LimitError),
}

/// One cell of the cross product: the document with every axis set, and
/// the index of the value each axis took (in axis order).
#[derive(Debug, Clone, PartialEq)]
pub struct Combination {
    pub document: toml::Value,
    pub choices: Vec<usize>,
}

/// Set `key` (dotted) in the table `doc` to `value`, creating intermediate
/// tables. Setting a system's `log` replaces its whole log vdev: the second
/// member of a mirrored one (`log_mirror`) goes with the first (an axis
/// `log_mirror` after `log` mirrors the new device).
pub fn set_path(doc: &mut toml::Value, key: &str, value: toml::Value) -> Result<(), AxisError> {
    if key == "log" {
        if let Some(table) = doc.as_table_mut() {
            table.remove("log_mirror");
        }
    }
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(AxisError::EmptyPart {
            key: key.to_string(),
        });
    }
    let mut cur = doc;
    for (i, part) in parts.iter().enumerate() {
        let table = cur.as_table_mut().ok_or_else(|| AxisError::NotATable {
            key: key.to_string(),
            part: (*part).to_string(),
        })?;
        if i + 1 == parts.len() {
            table.insert((*part).to_string(), value);
            return Ok(());
        }
        cur = table
            .entry((*part).to_string())
            .or_insert_with(|| toml::Value::Table(toml::map::Map::new()));
    }
    unreachable!("split yields at least one part")
}

/// Every combination of `axes` on `base`, first axis slowest; `path` gives
/// the dotted key an axis sets. Refused before anything is expanded: more
/// than `max_cells` cells ([`crate::limits::check_cells`]), an axis without
/// values, a key that cannot be set.
pub fn cross_product(
    base: &toml::Value,
    axes: &[Axis],
    path: impl Fn(&Axis) -> &str,
    max_cells: u64,
) -> Result<Vec<Combination>, AxisError> {
    check_cells(axes.iter().map(|a| a.values.len()), max_cells)?;
    if let Some(empty) = axes.iter().find(|a| a.values.is_empty()) {
        return Err(AxisError::NoValues {
            axis: empty.key.clone(),
        });
    }
    let mut combos = vec![Combination {
        document: base.clone(),
        choices: Vec::with_capacity(axes.len()),
    }];
    for axis in axes {
        let mut next = Vec::with_capacity(combos.len() * axis.values.len());
        for c in &combos {
            for (i, v) in axis.values.iter().enumerate() {
                let mut document = c.document.clone();
                set_path(&mut document, path(axis), v.clone())?;
                let mut choices = c.choices.clone();
                choices.push(i);
                next.push(Combination { document, choices });
            }
        }
        combos = next;
    }
    Ok(combos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> toml::Value {
        toml::from_str(text).unwrap()
    }

    fn axis(key: &str, values: &[i64]) -> Axis {
        Axis {
            key: key.into(),
            values: values.iter().map(|&v| toml::Value::Integer(v)).collect(),
        }
    }

    #[test]
    fn the_first_axis_is_slowest_and_every_cell_is_set() {
        let axes = [axis("a.x", &[1, 2]), axis("b", &[7, 8, 9])];
        let cells = cross_product(&doc("c = 0"), &axes, |a| a.key.as_str(), 100).unwrap();
        let seen: Vec<(i64, i64, Vec<usize>)> = cells
            .iter()
            .map(|c| {
                let d = &c.document;
                (
                    d["a"]["x"].as_integer().unwrap(),
                    d["b"].as_integer().unwrap(),
                    c.choices.clone(),
                )
            })
            .collect();
        assert_eq!(seen[0], (1, 7, vec![0, 0]));
        assert_eq!(seen[2], (1, 9, vec![0, 2]));
        assert_eq!(seen[3], (2, 7, vec![1, 0]));
        assert_eq!(seen.len(), 6);
        assert!(cells
            .iter()
            .all(|c| c.document["c"].as_integer() == Some(0)));
    }

    #[test]
    fn refusals_are_typed() {
        let base = doc("a = 1");
        let e = cross_product(&base, &[axis("a.b", &[1])], |a| &a.key, 10).unwrap_err();
        assert_eq!(
            e,
            AxisError::NotATable {
                key: "a.b".into(),
                part: "b".into()
            }
        );
        let e = cross_product(&base, &[axis("x", &[])], |a| &a.key, 10).unwrap_err();
        assert_eq!(e, AxisError::NoValues { axis: "x".into() });
        let e = cross_product(&base, &[axis("x..y", &[1])], |a| &a.key, 10).unwrap_err();
        assert!(matches!(e, AxisError::EmptyPart { .. }), "{e}");
        let e = cross_product(
            &base,
            &[axis("x", &[1, 2]), axis("y", &[1, 2])],
            |a| &a.key,
            3,
        )
        .unwrap_err();
        assert!(matches!(e, AxisError::Cells(_)), "{e}");
    }
}
