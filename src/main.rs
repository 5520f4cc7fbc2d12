//! The beamtrace command line: parse, call the library, report. The library prints
//! nothing; every message, table and progress bar is made in `cli`.

mod cli;

fn main() {
    quiet_broken_pipe();
    if let Err(err) = cli::main() {
        if is_broken_pipe(&err) {
            std::process::exit(0);
        }
        eprintln!("error: {}", error_chain(&err));
        std::process::exit(1);
    }
}

/// A reader that stops early (`beamtrace sensors | head -2`) closes our stdout: the
/// output was wanted only so far, so the program ends quietly with status 0, as a
/// command that dies of SIGPIPE does in a pipeline — instead of the panic `println!`
/// raises on a write error (Rust ignores SIGPIPE, so the write fails with EPIPE).
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        // `println!`'s message, and `{:?}` of an io::Error of that kind.
        if text.contains("Broken pipe") || text.contains("BrokenPipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// The error (or one of its causes) is a write into a closed pipe.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
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
