//! Where a `pickup` command writes: its output (the wrapped command's, passed through; an id, a
//! record, a report) and its own words. The binary's are its standard output and error; a
//! test's are buffers it reads ([`Console::captured`]), so a command runs in the test's own
//! process.

use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct Console(Arc<Sink>);

enum Sink {
    Std,
    Captured {
        out: Mutex<Vec<u8>>,
        err: Mutex<Vec<u8>>,
    },
}

impl Console {
    /// The process's standard output and error.
    pub fn std() -> Console {
        Console(Arc::new(Sink::Std))
    }

    /// Buffers, read with [`Console::out`] and [`Console::err`].
    pub fn captured() -> Console {
        Console(Arc::new(Sink::Captured {
            out: Mutex::default(),
            err: Mutex::default(),
        }))
    }

    /// What was written as output so far (empty for the process's own).
    pub fn out(&self) -> Vec<u8> {
        match &*self.0 {
            Sink::Std => Vec::new(),
            Sink::Captured { out, .. } => out.lock().unwrap().clone(),
        }
    }

    /// What was said on the error side so far.
    pub fn err(&self) -> String {
        match &*self.0 {
            Sink::Std => String::new(),
            Sink::Captured { err, .. } => String::from_utf8_lossy(&err.lock().unwrap()).into(),
        }
    }

    /// `bytes` to the output, flushed: a prompt without a newline shows at once.
    pub(crate) async fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        use tokio::io::AsyncWriteExt;
        match &*self.0 {
            Sink::Std => {
                let mut out = tokio::io::stdout();
                out.write_all(bytes).await?;
                out.flush().await
            }
            Sink::Captured { out, .. } => {
                out.lock().unwrap().extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// A line of output (an id, a record, a report's line).
    pub(crate) fn print(&self, line: std::fmt::Arguments) {
        match &*self.0 {
            Sink::Std => println!("{line}"),
            Sink::Captured { out, .. } => {
                let _ = writeln!(out.lock().unwrap(), "{line}");
            }
        }
    }

    /// A line of the command's own words, on the error side. Never fails: after a hang-up the
    /// terminal is gone and writing to it fails, and the wrapper must still finish the item.
    pub(crate) fn say(&self, line: std::fmt::Arguments) {
        let _ = match &*self.0 {
            Sink::Std => writeln!(std::io::stderr(), "{line}"),
            Sink::Captured { err, .. } => writeln!(err.lock().unwrap(), "{line}"),
        };
    }
}
