//! Modelled cost tables per request size.
