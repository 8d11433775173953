//! `best`: every 3D decomposer, and the plan of least predicted time per
//! iteration ([`predicted_time3`]) for a given [`Stencil`] — the 3D
//! counterpart of [`crate::array2d::Best`]. Also the decomposers by name
//! (`nuce plan grid3 --algo NAME`).

use super::{
    check_args3, predicted_time3, Column3, GridDecomposer3, GridPlan3, Guillotine3, Pencils3,
    Rectilinear3, RecursiveBisection3d, Shape3, Slabs3, Stencil,
};
use crate::error::{Error, Result};

/// Names accepted by [`decomposer3_by_name`]: the concrete decomposers in
/// the order [`Best3`] tries them (ties go to the earlier), then `best`.
pub const NAMES3: &[&str] = &[
    "column",
    "pencils",
    "rb",
    "rectilinear",
    "slabs",
    "guillotine",
    "best",
];

/// Every concrete 3D decomposer that accepts any grid (neither `best` nor
/// the small-grid [`Guillotine3`]), in [`NAMES3`] order.
pub fn all_decomposers3() -> Vec<Box<dyn GridDecomposer3>> {
    vec![
        Box::new(Column3),
        Box::new(Pencils3),
        Box::new(RecursiveBisection3d),
        Box::new(Rectilinear3),
        Box::new(Slabs3),
    ]
}

/// The decomposer called `name`; `best` ranks by `stencil`. Unknown names
/// are an [`Error::InvalidInput`] listing the known ones.
pub fn decomposer3_by_name(name: &str, stencil: Stencil) -> Result<Box<dyn GridDecomposer3>> {
    stencil.check()?;
    match name {
        "best" => return Ok(Box::new(Best3 { stencil })),
        "guillotine" => return Ok(Box::new(Guillotine3)),
        _ => {}
    }
    all_decomposers3()
        .into_iter()
        .find(|d| d.name() == name)
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "unknown grid3 algorithm {name:?}; known: {}",
                NAMES3.join(", ")
            ))
        })
}

/// The plan of least [`predicted_time3`] for [`Best3::stencil`] among
/// [`all_decomposers3`] and, where it applies ([`Guillotine3::applies`]),
/// the exhaustive [`Guillotine3`] (ties: the earlier in [`NAMES3`]); its `algorithm`
/// reads `best:<winner>`. By construction no other 3D decomposer of nuce
/// has a smaller predicted time on the same input ([`Best3::choose`]
/// returns every candidate's). Cost: the sum of the candidates' plus
/// `O(p)` each for the evaluation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Best3 {
    /// The stencil whose halo the predicted time counts.
    pub stencil: Stencil,
}

/// One candidate of [`Best3`] and its predicted time.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate3 {
    /// The candidate's algorithm.
    pub algorithm: String,
    /// Its [`predicted_time3`].
    pub time: f64,
}

impl Best3 {
    /// The winning plan (named `best:<winner>`) and every candidate with
    /// its predicted time, in the order tried.
    pub fn choose(&self, shape: Shape3, speeds: &[f64]) -> Result<(GridPlan3, Vec<Candidate3>)> {
        check_args3(shape, speeds)?;
        self.stencil.check()?;
        let mut best: Option<(f64, GridPlan3)> = None;
        let mut tried = Vec::new();
        let mut candidates = all_decomposers3();
        if Guillotine3::applies(shape, speeds.len()) {
            candidates.push(Box::new(Guillotine3));
        }
        for d in candidates {
            let plan = d.decompose(shape, speeds)?;
            let time = predicted_time3(&plan, speeds, self.stencil)?;
            tried.push(Candidate3 {
                algorithm: plan.algorithm.clone(),
                time,
            });
            if best.as_ref().is_none_or(|(t, _)| time < *t) {
                best = Some((time, plan));
            }
        }
        let (_, mut plan) =
            best.ok_or_else(|| Error::InvalidInput("no grid decomposer available".into()))?;
        plan.algorithm = format!("best:{}", plan.algorithm);
        Ok((plan, tried))
    }
}

impl GridDecomposer3 for Best3 {
    fn name(&self) -> &str {
        "best"
    }

    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        Ok(self.choose(shape, speeds)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in NAMES3 {
            assert_eq!(
                decomposer3_by_name(n, Stencil::default()).unwrap().name(),
                *n
            );
        }
        let e = decomposer3_by_name("nope", Stencil::default())
            .err()
            .unwrap();
        assert!(e.to_string().contains("rectilinear"));
        assert!(decomposer3_by_name("best", Stencil::seven(0)).is_err());
    }

    #[test]
    fn best_is_no_worse_than_any() {
        let speeds = [1.0, 3.0, 2.0, 7.0, 1.5, 0.5];
        for stencil in [Stencil::seven(1), Stencil::twenty_seven(2)] {
            let (b, tried) = Best3 { stencil }.choose((30, 20, 25), &speeds).unwrap();
            assert!(b.algorithm.starts_with("best:"));
            let tb = predicted_time3(&b, &speeds, stencil).unwrap();
            assert_eq!(tried.len(), 5);
            assert!(tried.iter().all(|c| tb <= c.time));
        }
    }
}
