//! The `vwr` command line: local all-in-one server (`vwr dev`), table bootstrap, key
//! generation and the admin client.

pub mod admin;
pub mod cdn;
pub mod client;
pub mod dev;
pub mod devstate;
pub mod draw;
pub mod edge;
pub mod loadtest;
pub mod site;
pub mod watch;
