//! The collective runtime over rsmpi. Placeholder, filled in by the runtime issue.
