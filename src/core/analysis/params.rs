//! The parameters of a run (docs/measures.md §14), with their defaults.

use serde::Serialize;
use serde::ser::Serializer;

/// How grids are formed (docs/measures.md §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridMode {
    /// Every model gets its own grid.
    PerModel,
    /// One grid shared by all models, so their numbers are directly comparable.
    Joint,
}

impl GridMode {
    /// The name in the report and on the command line's `--grid`.
    pub fn as_str(self) -> &'static str {
        match self {
            GridMode::PerModel => "per_model",
            GridMode::Joint => "joint",
        }
    }
}

impl Serialize for GridMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The reference pixel count `P_ref` (docs/measures.md §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferencePixels {
    /// The `pixels` most visual grid configurations carry.
    Auto,
    /// Undefined: every configuration is on the ladder.
    None,
    /// This pixel count.
    Value(u64),
}

impl Serialize for ReferencePixels {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ReferencePixels::Auto => s.serialize_str("auto"),
            ReferencePixels::None => s.serialize_str("none"),
            ReferencePixels::Value(v) => s.serialize_u64(*v),
        }
    }
}

/// Comparison budget of a resolution variant (docs/measures.md §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantBudget {
    /// The variant's own budget.
    Own,
    /// 0, so a variant compares like the text-only configuration.
    Zero,
}

impl Serialize for VariantBudget {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            VariantBudget::Own => "own",
            VariantBudget::Zero => "zero",
        })
    }
}

/// The most bootstrap resamples a run takes. Percentile intervals settle to their third
/// digit by B = 10 000; a hundred times that is room for any study (at the bound, the
/// demo's 63 items take 2.2 s and 64 MB, growing with the items). B is also the length of
/// vectors allocated up front: 10^12 aborted on allocation, 2^64 - 1 on capacity overflow.
pub const MAX_BOOTSTRAP_B: usize = 1_000_000;

/// Every parameter of a run; `Params::default()` is the default run of docs/measures.md §14.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// The primary protocol, compared with the others and with the intervention.
    pub primary: String,
    /// The protocol of intervention runs, not analysed on its own (§11).
    pub intervention_protocol: String,
    /// δ, the continuous regression margin in points.
    pub delta: f64,
    /// Seed of the bootstrap's generator.
    pub seed: u64,
    /// B, the number of bootstrap resamples (0 disables the bootstrap).
    pub bootstrap_b: usize,
    /// Per-model or joint grids.
    pub grid_mode: GridMode,
    /// Model filter; `None` keeps every model.
    pub models: Option<Vec<String>>,
    /// Config filter; `None` means none.
    pub configs: Option<Vec<String>>,
    /// Whether zero-frame cells are in the selection.
    pub include_zero_frame: bool,
    /// How `P_ref` is found.
    pub reference_pixels: ReferencePixels,
    /// The comparison budget of resolution variants.
    pub variant_budget: VariantBudget,
    /// Cascade stages; `None` is the grid's visual ladder.
    pub cascade_stages: Option<Vec<String>>,
    /// Whether reports carry the 101-step cascade sweep (it is large).
    pub sweep: bool,
    /// The nuisances whose replicates the measures of docs/measures.md §16 use; `None`
    /// uses every nuisance the replicates read name.
    pub nuisances: Option<Vec<String>>,
    /// The false-discovery level an edge's excess must reach to be beyond noise.
    pub alpha: f64,
    /// Whether the bootstrap resamples clusters (videos) instead of items.
    pub cluster_bootstrap: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            primary: "main".into(),
            intervention_protocol: "intervention".into(),
            delta: 10.0,
            seed: 12345,
            bootstrap_b: 1000,
            grid_mode: GridMode::PerModel,
            models: None,
            configs: None,
            include_zero_frame: true,
            reference_pixels: ReferencePixels::Auto,
            variant_budget: VariantBudget::Own,
            cascade_stages: None,
            sweep: true,
            nuisances: None,
            alpha: 0.05,
            cluster_bootstrap: false,
        }
    }
}

/// The `params` object of the report.
#[derive(Debug, Serialize)]
pub struct ParamsJson<'a> {
    /// The primary protocol.
    pub primary: &'a str,
    /// The intervention protocol.
    pub intervention_protocol: &'a str,
    /// δ, the continuous regression margin in points.
    pub delta: f64,
    /// Seed of the bootstrap's generator.
    pub seed: u64,
    /// Bootstrap resamples.
    #[serde(rename = "bootstrap_B")]
    pub bootstrap_b: usize,
    /// The cascade's thresholds, in words.
    pub tau_grid: &'static str,
    /// Per-model or joint grids.
    pub grid_mode: GridMode,
    /// The model filter, if any.
    pub models: &'a Option<Vec<String>>,
    /// The config filter, if any.
    pub configs: &'a Option<Vec<String>>,
    /// Whether zero-frame cells were selected.
    pub include_zero_frame: bool,
    /// How `P_ref` was found.
    pub reference_pixels: ReferencePixels,
    /// The comparison budget of resolution variants.
    pub variant_budget: VariantBudget,
    /// The cascade stages given, if any.
    pub cascade_stages: &'a Option<Vec<String>>,
    /// The nuisances selected, if any were named.
    pub nuisances: &'a Option<Vec<String>>,
    /// The false-discovery level of `beyond_noise`.
    pub alpha: f64,
    /// Whether the bootstrap resamples clusters.
    pub cluster_bootstrap: bool,
}

impl Params {
    /// Whether protocol `name` holds intervention runs (docs/intervention.md §7): `Some(None)`
    /// for the intervention protocol itself, `Some(Some(strategy))` for one of its
    /// strategies, `NAME:STRATEGY`; `None` for any other protocol.
    pub fn intervention_strategy<'n>(&self, name: &'n str) -> Option<Option<&'n str>> {
        let rest = name.strip_prefix(self.intervention_protocol.as_str())?;
        if rest.is_empty() {
            return Some(None);
        }
        rest.strip_prefix(':').filter(|s| !s.is_empty()).map(Some)
    }

    /// The parameters as the report's `params` object writes them.
    pub fn to_json(&self) -> ParamsJson<'_> {
        ParamsJson {
            primary: &self.primary,
            intervention_protocol: &self.intervention_protocol,
            delta: self.delta,
            seed: self.seed,
            bootstrap_b: self.bootstrap_b,
            tau_grid: "j/100, j=0..100",
            grid_mode: self.grid_mode,
            models: &self.models,
            configs: &self.configs,
            include_zero_frame: self.include_zero_frame,
            reference_pixels: self.reference_pixels,
            variant_budget: self.variant_budget,
            cascade_stages: &self.cascade_stages,
            nuisances: &self.nuisances,
            alpha: self.alpha,
            cluster_bootstrap: self.cluster_bootstrap,
        }
    }
}
