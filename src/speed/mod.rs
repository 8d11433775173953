//! Speed measurement. Placeholder, filled in by the runtime issue.
