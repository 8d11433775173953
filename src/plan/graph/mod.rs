//! Graph partitioning (seed 001). Placeholder: filled in by its issue.
