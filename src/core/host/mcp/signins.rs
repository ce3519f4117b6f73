//! The sign-ins an MCP connection sends, as sub-machines over [`Storage`] and
//! [`Http`](super::super::io::Http): both storage areas' records read as they are now ([`ReadRecords`]), written back
//! ([`WriteRecords`]), and a connection's record refreshed when due or after a 401
//! ([`Refresh`]). The operations that sign in and out (`signIn`, `signOut`) use the same
//! records.

use serde_json::Value;

use super::super::io::{Input, Output, Step, Storage};
use super::super::Host;
use super::text::Text;
use crate::core::mcp::auth::{
    Area, AuthRecord, Records, TokenState, Write, MAX_AUTH_BODY_BYTES, REQUEST_MS,
};
use crate::core::mcp::source::McpServerConfig;
use crate::core::storage::Area as StoreArea;

/// The storage area a sign-in area lives in.
fn store_area(area: Area) -> StoreArea {
    match area {
        Area::Local => StoreArea::Local,
        Area::Session => StoreArea::Session,
    }
}

/// Both storage areas' records: the session's read first, then the local one; an area that
/// cannot be read counts as empty.
#[derive(Debug, Default)]
pub struct ReadRecords {
    session: Option<Option<Value>>,
}

impl ReadRecords {
    /// One step.
    pub fn step(&mut self, input: Option<Input>) -> Step<Records> {
        let read = |area: Area| {
            Step::Do(Output::Storage(Storage::Read {
                area: store_area(area),
                key: area.key().into(),
            }))
        };
        let value = match input {
            Some(Input::Read(read)) => read.ok().flatten(),
            _ => return read(Area::Session),
        };
        match self.session.take() {
            None => {
                self.session = Some(value);
                read(Area::Local)
            }
            Some(session) => Step::Done(Records::read(session, value)),
        }
    }
}

/// Writes of the records' areas, one after the other, until one fails.
#[derive(Debug)]
pub struct WriteRecords {
    writes: std::vec::IntoIter<Write>,
}

impl WriteRecords {
    /// The writes to make.
    pub fn new(writes: Vec<Write>) -> WriteRecords {
        WriteRecords {
            writes: writes.into_iter(),
        }
    }

    /// One step.
    pub fn step(&mut self, input: Option<Input>) -> Step<Result<(), String>> {
        if let Some(Input::Done(Err(error))) = input {
            return Step::Done(Err(error));
        }
        match self.writes.next() {
            Some(Write { area, map }) => Step::Do(Output::Storage(Storage::Write {
                area: store_area(area),
                key: area.key().into(),
                value: Some(map),
            })),
            None => Step::Done(Ok(())),
        }
    }
}

/// A connection's sign-in record: the stored one, refreshed first when due
/// ([`Refresh::for_connection`]), or refreshed after the server refused it
/// ([`Refresh::after_refusal`]). `None`: there is none, or it expired and could not be
/// refreshed.
#[derive(Debug)]
pub struct Refresh {
    config: McpServerConfig,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    /// The records read to find the connection's.
    Find(ReadRecords),
    /// The records read to find the area of a refused record.
    Area(ReadRecords, AuthRecord),
    /// The refresh request.
    Asking(Text, AuthRecord, Area),
    /// The records read again, to store the refreshed one.
    Again(ReadRecords, AuthRecord, Area),
    Storing(WriteRecords, AuthRecord),
    Done,
}

impl Refresh {
    /// The record to use for a connection to `config`.
    pub fn for_connection(config: McpServerConfig) -> Refresh {
        Refresh {
            config,
            phase: Phase::Find(ReadRecords::default()),
        }
    }

    /// After a 401 with `record`: a refresh, when the record can be refreshed.
    pub fn after_refusal(config: McpServerConfig, record: AuthRecord) -> Refresh {
        let phase = match record.tokens.refresh_token {
            Some(_) => Phase::Area(ReadRecords::default(), record),
            None => Phase::Done,
        };
        Refresh { config, phase }
    }

    /// One step.
    pub fn step(
        &mut self,
        host: &Host,
        mut input: Option<Input>,
        now: f64,
    ) -> Step<Option<AuthRecord>> {
        loop {
            let phase = std::mem::replace(&mut self.phase, Phase::Done);
            match phase {
                Phase::Done => return Step::Done(None),
                Phase::Find(mut read) => match read.step(input.take()) {
                    Step::Do(output) => return self.wait(Phase::Find(read), output),
                    Step::Done(records) => {
                        let Some((record, area)) = records.find(&self.config) else {
                            return Step::Done(None);
                        };
                        match record.token_state(now) {
                            TokenState::Fresh => return Step::Done(Some(record)),
                            TokenState::Expired => return Step::Done(None),
                            TokenState::Refresh => self.phase = ask(record, area),
                        }
                    }
                },
                Phase::Area(mut read, record) => match read.step(input.take()) {
                    Step::Do(output) => return self.wait(Phase::Area(read, record), output),
                    Step::Done(records) => {
                        let area = records.find(&self.config).map_or(Area::Session, |f| f.1);
                        self.phase = ask(record, area);
                    }
                },
                Phase::Asking(mut text, mut record, area) => {
                    match text.step(host, input.take(), now) {
                        Step::Do(output) => {
                            return self.wait(Phase::Asking(text, record, area), output)
                        }
                        Step::Done(answer) => {
                            let (status, body) = match answer {
                                Ok(Some(answer)) => answer,
                                Ok(None) => (0, "no answer in time".into()),
                                Err(error) => (0, error),
                            };
                            if record.refreshed(status, &body, now).is_err() {
                                return Step::Done(None);
                            }
                            self.phase = Phase::Again(ReadRecords::default(), record, area);
                        }
                    }
                }
                Phase::Again(mut read, record, area) => match read.step(input.take()) {
                    Step::Do(output) => return self.wait(Phase::Again(read, record, area), output),
                    Step::Done(mut records) => {
                        let writes = records.store(&self.config.name, &record, area);
                        self.phase = Phase::Storing(WriteRecords::new(writes), record);
                    }
                },
                // A refreshed record is used even when it could not be stored.
                Phase::Storing(mut write, record) => match write.step(input.take()) {
                    Step::Do(output) => return self.wait(Phase::Storing(write, record), output),
                    Step::Done(_) => return Step::Done(Some(record)),
                },
            }
        }
    }

    fn wait(&mut self, phase: Phase, output: Output) -> Step<Option<AuthRecord>> {
        self.phase = phase;
        Step::Do(output)
    }
}

/// The refresh request of `record`, or done when it has none.
fn ask(record: AuthRecord, area: Area) -> Phase {
    match record.refresh_request() {
        Some(request) => Phase::Asking(
            Text::new(request, REQUEST_MS, MAX_AUTH_BODY_BYTES),
            record,
            area,
        ),
        None => Phase::Done,
    }
}

impl Host {
    /// One step of a [`Refresh`].
    pub fn sign_in_record(
        &self,
        m: &mut Refresh,
        input: Option<Input>,
        now: f64,
    ) -> Step<Option<AuthRecord>> {
        m.step(self, input, now)
    }

    /// One step of a [`ReadRecords`].
    pub fn read_records(&self, m: &mut ReadRecords, input: Option<Input>) -> Step<Records> {
        m.step(input)
    }

    /// One step of a [`WriteRecords`].
    pub fn write_records(
        &self,
        m: &mut WriteRecords,
        input: Option<Input>,
    ) -> Step<Result<(), String>> {
        m.step(input)
    }
}
