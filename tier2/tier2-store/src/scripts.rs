//! The Lua of the Redis admission store: one `.lua` file per operation under
//! `tier2/tier2-store/lua/`, with the shared prelude `lib.lua`.
//!
//! They run as one Redis function library (`FUNCTION LOAD`, then `FCALL`): Redis runs the
//! prelude once, at load, where a script (`EVALSHA`) runs it again at every call — 2–3 µs a
//! call, a sixth of a status poll with a long line (`benches/redis_cost.rs`). The library's
//! name carries a hash of its code, so instances running another version use their own
//! library side by side. Where Redis refuses
//! functions, the store runs the same bodies as scripts (`script`). Why, and what the
//! operator must allow: docs/adr/0021-redis-function-library.md.

use std::sync::LazyLock;

use aws_lc_rs::digest;
use redis::Script;

const LIB: &str = include_str!("../lua/lib.lua");

/// The operations, in the order of [`BODIES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Register,
    Check,
    Status,
    Leave,
    Admit,
    Cleanup,
    Snapshot,
    Unregister,
    Retire,
    Take,
    Ack,
    Line,
}

const BODIES: [(Op, &str, &str); 12] = [
    (Op::Register, "register", include_str!("../lua/register.lua")),
    (Op::Check, "check", include_str!("../lua/check.lua")),
    (Op::Status, "status", include_str!("../lua/status.lua")),
    (Op::Leave, "leave", include_str!("../lua/leave.lua")),
    (Op::Admit, "admit", include_str!("../lua/admit.lua")),
    (Op::Cleanup, "cleanup", include_str!("../lua/cleanup.lua")),
    (Op::Snapshot, "snapshot", include_str!("../lua/snapshot.lua")),
    (Op::Unregister, "unregister", include_str!("../lua/unregister.lua")),
    (Op::Retire, "retire", include_str!("../lua/retire.lua")),
    (Op::Take, "take", include_str!("../lua/take.lua")),
    (Op::Ack, "ack", include_str!("../lua/ack.lua")),
    (Op::Line, "line", include_str!("../lua/line.lua")),
];

/// The function library: its name and source (`FUNCTION LOAD`).
pub struct Library {
    pub name: String,
    pub source: String,
}

/// Operations that free memory (a user leaving, the cleanup, an unregistration) and the
/// snapshot (the operator's view; its only write is the cached rate) also run when Redis is
/// out of memory: a function without `allow-oom` is refused outright once `maxmemory` is
/// reached, where a script is refused only at its first write that grows memory.
fn flags(op: Op) -> &'static str {
    match op {
        Op::Leave | Op::Cleanup | Op::Unregister | Op::Snapshot => "{ 'allow-oom' }",
        _ => "{}",
    }
}

/// `vwr_<first 12 hex digits of the SHA-256 of everything after the name line>`: any change of
/// the code Redis runs (prelude, bodies, or how they are wrapped) gives another name, so two
/// versions never replace each other's library.
pub static LIBRARY: LazyLock<Library> = LazyLock::new(|| {
    const NAME: &str = "vwr_<hash>";
    let mut code = format!("{LIB}\n");
    for (op, suffix, body) in BODIES {
        // Each body runs inside a function of the library, after binding its keys.
        code.push_str(&format!(
            "redis.register_function{{ function_name = '{NAME}_{suffix}', flags = {flags}, \
             callback = function(keys, args)\nbind(keys, args)\n{body}\nend }}\n",
            flags = flags(op),
        ));
    }
    let hash: String = digest::digest(&digest::SHA256, code.as_bytes()).as_ref()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let name = format!("vwr_{hash}");
    let source = format!("#!lua name={name}\n{}", code.replace(NAME, &name));
    Library { name, source }
});

static FUNCTIONS: LazyLock<[String; 12]> =
    LazyLock::new(|| BODIES.map(|(_, op, _)| format!("{}_{op}", LIBRARY.name)));

/// The function that runs `op` (`FCALL`).
pub fn function(op: Op) -> &'static str {
    // BODIES lists every Op once, in declaration order (tested).
    &FUNCTIONS[op as usize]
}

static SCRIPTS: LazyLock<[Script; 12]> = LazyLock::new(|| {
    // The prelude's `KEYS` and `ARGV` are its own locals: bound from the script's globals.
    BODIES.map(|(_, _, body)| {
        Script::new(&format!("local keys, args = KEYS, ARGV\n{LIB}\nbind(keys, args)\n{body}"))
    })
});

/// The script that runs `op` where Redis refuses functions (`EVALSHA`).
pub fn script(op: Op) -> &'static Script {
    &SCRIPTS[op as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_has_its_body_in_order() {
        for (i, (op, _, _)) in BODIES.iter().enumerate() {
            assert_eq!(*op as usize, i);
        }
        assert!(function(Op::Ack).ends_with("_ack"));
        assert!(function(Op::Line).ends_with("_line"));
        assert!(LIBRARY.source.starts_with(&format!("#!lua name={}\n", LIBRARY.name)));
    }

    /// The name hashes all the code Redis runs, the wrapping of the bodies included (it once
    /// hashed the Lua files only: a change of the wrapping kept the name, and two versions
    /// would have replaced each other's library).
    #[test]
    fn the_name_is_the_hash_of_all_the_code() {
        let (first, code) = LIBRARY.source.split_once('\n').unwrap();
        assert_eq!(first, format!("#!lua name={}", LIBRARY.name));
        assert!(code.contains("callback = function(keys, args)\nbind(keys, args)\n"));
        let code = code.replace(&LIBRARY.name, "vwr_<hash>");
        let hex: String = digest::digest(&digest::SHA256, code.as_bytes())
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(LIBRARY.name, format!("vwr_{}", &hex[..12]));
    }

    /// Only the operations that free memory, and the snapshot, run when Redis is out of memory.
    #[test]
    fn only_freeing_operations_and_the_snapshot_allow_oom() {
        let oom: Vec<&str> =
            BODIES.iter().filter(|(op, _, _)| flags(*op).contains("allow-oom")).map(|b| b.1).collect();
        assert_eq!(oom, ["leave", "cleanup", "snapshot", "unregister"]);
    }
}
