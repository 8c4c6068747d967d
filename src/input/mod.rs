//! Readers that turn input documents into a [`ClusterModel`](crate::cluster::ClusterModel).
//!
//! - [`uniform`]: Kivi's uniform JSON (what Kivi writes with `-jf`).

pub mod uniform;

pub use uniform::{load_uniform, load_uniform_file, LoadError};
