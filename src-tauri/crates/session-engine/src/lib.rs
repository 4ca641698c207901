//! Pi-compatible session engine.
