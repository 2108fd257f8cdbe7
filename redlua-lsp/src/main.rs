//! `redlua-lsp`: the language server for Redis Lua scripts, over standard
//! input and output. It takes no arguments but `--version`.

use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--version") {
        println!("redlua-lsp {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let stdin = std::io::BufReader::new(std::io::stdin());
    let stdout = std::io::stdout().lock();
    ExitCode::from(redlua_lsp::transport::run(stdin, stdout))
}
