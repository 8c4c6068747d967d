//! Kivi-style trace messages, produced only when a trace is replayed.
//!
//! Transition functions take a [`Recorder`]; during the search it is off and its closures are
//! never called, so no text is formatted on the hot path.

/// One line of a counterexample: `[step][controller] message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceLine {
    /// The component that printed it (Kivi's bracketed tag), or `None` for Kivi's untagged
    /// lines such as kernel panics.
    pub controller: Option<&'static str>,
    /// The message.
    pub message: String,
    /// Why the controller did it, in the words Kubernetes users know (`None` for events and
    /// for steps whose reason is the message itself).
    pub why: Option<Why>,
}

/// Why a controller acted, as Kubernetes would say it: a short reason (the HPA's `New size: 6;
/// reason: cpu resource utilization (percentage of request) above target`) and the numbers
/// behind it (the usage, the target and the formula), printed at higher verbosity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    /// The reason, one sentence.
    pub reason: String,
    /// The numbers behind it.
    pub detail: String,
}

impl TraceLine {
    /// The line as Kivi prints it, with `step` as its number.
    pub fn render(&self, step: usize) -> String {
        match self.controller {
            Some(c) => format!("[{step}][{c}] {}", self.message),
            None => format!("[{step}] {}", self.message),
        }
    }
}

/// Collects trace lines when on; does nothing when off.
#[derive(Debug, Default)]
pub struct Recorder {
    lines: Option<Vec<TraceLine>>,
}

impl Recorder {
    /// A recorder that drops everything (used during the search).
    pub fn off() -> Self {
        Self { lines: None }
    }

    /// A recorder that keeps every line (used when replaying a trace).
    pub fn on() -> Self {
        Self {
            lines: Some(Vec::new()),
        }
    }

    /// Whether lines are kept (a trace is being replayed).
    pub fn is_recording(&self) -> bool {
        self.lines.is_some()
    }

    /// Records a line from `controller`; `message` is only called when recording.
    #[inline]
    pub fn log(&mut self, controller: Option<&'static str>, message: impl FnOnce() -> String) {
        if let Some(lines) = &mut self.lines {
            lines.push(TraceLine {
                controller,
                message: message(),
                why: None,
            });
        }
    }

    /// Attaches why to the line recorded last; `why` is only called when recording.
    #[inline]
    pub fn because(&mut self, why: impl FnOnce() -> Why) {
        if let Some(line) = self.lines.as_mut().and_then(|lines| lines.last_mut()) {
            line.why = Some(why());
        }
    }

    /// The recorded lines.
    pub fn into_lines(self) -> Vec<TraceLine> {
        self.lines.unwrap_or_default()
    }
}
