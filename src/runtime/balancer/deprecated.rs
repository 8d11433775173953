//! The balancer's old names, kept for the programs that use them: each
//! forwards to its replacement (hidden from the documentation).
//!
//! The old local setters stay local: each replaces one field of this
//! rank's [`Settings`] without [`Balancer::configure`]'s check, as before.

#![allow(missing_docs)]

use super::*;
use std::path::Path;

use crate::plan::array3d::GridDecomposer3;
use crate::runtime::layout::Plain;
use crate::runtime::savefile::SaveStats;

impl Balancer {
    #[deprecated(note = "use Balancer::configure with Settings::timeout")]
    #[doc(hidden)]
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.install(Settings {
            timeout,
            ..self.settings.clone()
        })
    }

    #[deprecated(note = "use Balancer::settings().timeout")]
    #[doc(hidden)]
    pub fn timeout(&self) -> Option<Duration> {
        self.settings.timeout
    }

    #[deprecated(note = "use Balancer::configure with Settings::policy")]
    #[doc(hidden)]
    pub fn set_policy(&mut self, policy: RemapPolicy) {
        self.install(Settings {
            policy,
            ..self.settings.clone()
        })
    }

    #[deprecated(note = "use Balancer::settings().policy")]
    #[doc(hidden)]
    pub fn policy(&self) -> RemapPolicy {
        self.settings.policy
    }

    #[deprecated(
        note = "use Balancer::configure with Settings::array_algorithm = ArrayAlgorithm::Named"
    )]
    #[doc(hidden)]
    pub fn set_algorithm(&mut self, name: &str, latency_cells: f64) -> Result<()> {
        self.configure(Settings {
            array_algorithm: ArrayAlgorithm::Named {
                name: name.to_string(),
                latency_cells,
            },
            ..self.settings.clone()
        })
    }

    #[deprecated(note = "use Balancer::settings().array_algorithm.name()")]
    #[doc(hidden)]
    pub fn algorithm(&self) -> &'static str {
        self.planner().map_or("", |p| p.name())
    }

    #[deprecated(
        note = "use Balancer::configure with Settings::array_algorithm = ArrayAlgorithm::given(…)"
    )]
    #[doc(hidden)]
    pub fn set_decomposer(&mut self, decomposer: impl ArrayDecomposer + 'static) {
        self.install(Settings {
            array_algorithm: ArrayAlgorithm::given(decomposer),
            ..self.settings.clone()
        })
    }

    #[deprecated(
        note = "use Balancer::configure with Settings::grid_algorithm = GridAlgorithm::given(…)"
    )]
    #[doc(hidden)]
    pub fn set_decomposer3(&mut self, decomposer: impl GridDecomposer3 + 'static) {
        self.install(Settings {
            grid_algorithm: GridAlgorithm::given(decomposer),
            ..self.settings.clone()
        })
    }

    #[deprecated(
        note = "use Balancer::configure with Settings::grid_algorithm = GridAlgorithm::named(…)"
    )]
    #[doc(hidden)]
    pub fn set_algorithm3(&mut self, name: &str) -> Result<()> {
        self.configure(Settings {
            grid_algorithm: GridAlgorithm::named(name),
            ..self.settings.clone()
        })
    }

    #[deprecated(note = "use Balancer::settings().grid_algorithm.name()")]
    #[doc(hidden)]
    pub fn algorithm3(&self) -> String {
        self.settings.grid_algorithm.name().to_string()
    }

    #[deprecated(note = "use Balancer::configure with Settings::hierarchical")]
    #[doc(hidden)]
    pub fn set_hierarchical(&mut self, hierarchical: bool) {
        self.install(Settings {
            hierarchical,
            ..self.settings.clone()
        })
    }

    #[deprecated(note = "use Balancer::configure with Settings::functional_model")]
    #[doc(hidden)]
    pub fn set_functional_model(&mut self, functional_model: bool) {
        self.install(Settings {
            functional_model,
            ..self.settings.clone()
        })
    }

    #[deprecated(note = "use Balancer::checkpoint")]
    #[doc(hidden)]
    pub fn checkpoint_array2<T: Element + Plain>(
        &self,
        a: &DistArray2<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        self.checkpoint(a, path, user)
    }

    #[deprecated(note = "use Balancer::checkpoint")]
    #[doc(hidden)]
    pub fn checkpoint_array3<T: Element + Plain>(
        &self,
        a: &DistArray3<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        self.checkpoint(a, path, user)
    }

    #[deprecated(note = "use Balancer::checkpoint")]
    #[doc(hidden)]
    pub fn checkpoint_graph<T: GraphValue>(
        &self,
        g: &DistGraph<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        self.checkpoint(g, path, user)
    }
}
