//! `vwr completions SHELL` prints a completion script built from the command's own definition
//! (clap_complete), so it never lags a new flag.
#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn completions_print_a_script_for_each_shell_and_refuse_others() {
    for (shell, marker) in [
        ("bash", "_vwr()"),
        ("zsh", "#compdef vwr"),
        ("fish", "complete -c vwr"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_vwr")).args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {}", String::from_utf8_lossy(&out.stderr));
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: {marker} missing");
        for word in ["schedule", "loadtest", "open-at", "text"] {
            assert!(script.contains(word), "{shell}: {word} missing");
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_vwr")).args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
