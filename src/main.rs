//! The beamtrace command line: parse, call the library, report. The library prints
//! nothing; every message, table and progress bar is made in `cli`.

mod cli;

fn main() {
    if let Err(err) = cli::main() {
        eprintln!("error: {}", error_chain(&err));
        std::process::exit(1);
    }
}

/// The error and its causes, `: `-joined like `{:#}`, but without a cause whose text
/// the message before it already quotes (many errors print their source inline).
fn error_chain(err: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}
