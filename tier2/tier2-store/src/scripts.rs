//! The Lua scripts of the Redis admission store, each a `.lua` file under `tier2/tier2-store/lua/`
//! with the shared prelude `lib.lua` prepended.

use std::sync::LazyLock;

use redis::Script;

const LIB: &str = include_str!("../lua/lib.lua");

fn script(body: &str) -> Script {
    Script::new(&format!("{LIB}\n{body}"))
}

pub static REGISTER: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/register.lua")));
pub static CHECK: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/check.lua")));
pub static STATUS: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/status.lua")));
pub static LEAVE: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/leave.lua")));
pub static ADMIT: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/admit.lua")));
pub static CLEANUP: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/cleanup.lua")));
pub static SNAPSHOT: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/snapshot.lua")));
pub static UNREGISTER: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/unregister.lua")));
pub static RETIRE: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/retire.lua")));
pub static TAKE: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/take.lua")));
pub static ACK: LazyLock<Script> = LazyLock::new(|| script(include_str!("../lua/ack.lua")));
