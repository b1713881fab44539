//! One module per subcommand: its arguments and what it runs.

pub mod backtest;
pub mod controller;
pub mod crd;
pub mod explain;
pub mod flags;
pub mod import;
pub mod input;
pub mod kubeconfig;
pub mod live;
pub mod recommend;
pub mod recommend_cluster;
pub mod series;
pub mod simulate;
pub mod validate;
