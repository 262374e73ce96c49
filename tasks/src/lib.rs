//! LRAB task packs: spec types, loader, validation, prompt rendering, materialization.
