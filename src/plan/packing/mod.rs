//! AMR processor allocation (seed 004). Placeholder: filled in by its issue.
