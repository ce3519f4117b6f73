//! The whole host played natively: the real [`Host`] and the machines it composes (listings,
//! page calls through the gate, runs from their start to their end, simulations, smoke
//! evaluations), driven by a scripted browser (tabs whose pages answer the bridge's messages,
//! [`page::ShopPage`]), a scripted OpenAI-compatible model server ([`model::ModelServer`]: the
//! real provider code reads its streams) and simulated time: what the shell performs in the
//! browser, performed here as values, with the clock a number that moves only when something
//! waits (a timer, a model's latency, a page loading).
//!
//! Each driver performs what its machine asks exactly as its shell driver does (`shell::drive`
//! for the machines on the vocabulary: listings, page calls, audits, evaluations, simulations,
//! replay diffs, crawls; `shell::agent::run` for runs); what the browser would add
//! (messaging, storage, the popup) is answered from the scripted world.
//!
//! Crossings: every time a driver hands a value into the [`Host`] ([`Host::advance`],
//! [`Host::list`]) counts one, so the tests can hold how often a page call enters the core.

use std::collections::HashMap;

use serde_json::Value;

use super::call::HostCall;
use super::io::{Frames, Input, Mcp, Output, Runs, Step, Storage, Tabs, Timers, Ui};
use super::listing::{Listing, Settle};
use super::run::{HostRun, RunEffect, RunFeed};
use super::runlog::{RunLogRead, RunStore};
use super::Host;
use crate::core::gate::Asker;
use crate::core::observe::cost::Prices;
use crate::core::ops::AuditRequest;
use crate::core::page::bridge::{FrameRequest, Reply as FrameReply, Target};
use crate::core::page::call::{CallAnswer, CallRequest, FrameState, Tab};
use crate::core::page::tabs::{listing, Frame, FrameAnswer, Listed};
use crate::core::provider::{ModelConfig, ModelRegistry, Provider};
use crate::core::run::drive::{Action, Answer, Gated};
use crate::core::run::{RunEnded, RunOutcome};
use crate::core::setup::call::Called;
use crate::core::setup::start::{Got, Need, Start};
use crate::core::setup::store::{MIDDLEWARE_KEY, REGISTRY_KEY};
use crate::core::storage::Area;

pub(crate) mod model;
pub(crate) mod page;
pub(crate) mod peer;
mod suites;

use model::ModelServer;
use page::ShopPage;

/// How long a page takes to load again (ms of simulated time).
const LOAD_MS: f64 = 300.0;

/// The scripted world and the host in it.
pub(crate) struct Play {
    /// The host under test.
    pub host: Host,
    /// The time now (ms since the epoch), moved only by waits.
    pub now: f64,
    /// The tabs, each showing one page, by id.
    pub pages: HashMap<i64, ShopPage>,
    /// The pages of the sites no tab shows now, by origin: a tab taken to a URL of another
    /// origin shows that site's page (from here, or a new one), and the page it left waits
    /// here.
    pub elsewhere: HashMap<String, ShopPage>,
    /// The model server.
    pub models: ModelServer,
    /// The configured models, each served by [`Play::models`].
    pub registry: ModelRegistry,
    /// The person's stored layers (`configure({middleware})`), if any.
    pub layers: Option<Value>,
    /// Whether the person allows what they are asked to confirm.
    pub allow: bool,
    /// Whether JavaScript layers (`webmcpHost.use`) wrap the runs' tool calls: then a run's
    /// page call comes to the shell, which makes it (as the layers' `next()` does).
    pub layered: bool,
    /// How a reloaded page answers its first listings: how many while it parses, then how
    /// many before it registers its tools.
    pub loading: (usize, usize),
    /// Values handed into the host so far (see the module's note).
    pub crossings: usize,
    /// The crossings of each page call, in the order they ended (its listing included).
    pub call_crossings: Vec<usize>,
    /// Every run's outcome, in the order they ended.
    pub outcomes: Vec<RunOutcome>,
    /// What crawls keep in local storage, by storage key (each origin's last crawl and the
    /// index of the origins kept).
    pub local: std::collections::BTreeMap<String, Value>,
    /// What the host keeps in session storage, by key (the runs' records, the conversations,
    /// the first definitions seen, …), kept across a restart.
    pub session: std::collections::BTreeMap<String, Value>,
    /// When set, every read and write of storage fails with these words.
    pub storage_error: Option<String>,
    /// The warnings of the worker's console, in order.
    pub warnings: Vec<String>,
    /// Whether loading a page again fails (as when its tab was closed meanwhile).
    pub lose_tab_on_reload: bool,
    /// When a run's event makes this true, the worker stops there: the run is cut, that event
    /// never recorded (its run answers an error saying so).
    pub cut: Option<Cut>,
    /// Every push to the extension's pages (`Ui::Push`): its kind and body, in order.
    pub pushes: Vec<(String, Value)>,
    /// What the browser answers instead, for the outputs it names (a write that fails, …).
    pub instead: Option<Instead>,
    /// The MCP server of this world.
    pub peer: peer::Peer,
    ids: u64,
}

/// An answer the browser gives instead of the scripted world's, for the outputs it names.
pub(crate) type Instead = Box<dyn FnMut(&Output) -> Option<Input>>;

/// When a run's event cuts it (the worker stops before that event is recorded).
pub(crate) type Cut = Box<dyn Fn(&Value) -> bool>;

/// One run's pending answers in simulated time: when each is due, in order (answers due at
/// the same time in the order they were asked for).
#[derive(Default)]
struct Pending {
    due: Vec<(f64, u64, RunFeed)>,
    seq: u64,
}

impl Pending {
    fn at(&mut self, when: f64, answer: RunFeed) {
        self.seq += 1;
        self.due.push((when, self.seq, answer));
    }

    /// The earliest answer due.
    fn next(&mut self) -> Option<(f64, RunFeed)> {
        let first = (self.due.iter().enumerate())
            .min_by(|(_, a), (_, b)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(i, _)| i)?;
        let (when, _, answer) = self.due.remove(first);
        Some((when, answer))
    }

    /// What is due of the run's child `child` no longer comes (a timer cancelled).
    fn drop_child(&mut self, child: u64) {
        (self.due)
            .retain(|(_, _, feed)| !matches!(feed, RunFeed::Child { child: c, .. } if *c == child));
    }
}

impl Play {
    /// Tab 4 showing the shop, and the models `names` (each `<name>-1` at the server).
    pub(crate) fn shop(names: &[&str]) -> Play {
        let models = names.iter().map(|name| ModelConfig {
            name: (*name).into(),
            provider: Provider::Openai,
            base_url: model::MODEL_URL.into(),
            model: format!("{name}-1"),
            native_tools: true,
            key_ref: None,
            max_tokens: None,
            transcript: None,
            idle_timeout_ms: None,
        });
        Play {
            host: Host::default(),
            now: 1_800_000_000_000.0,
            pages: HashMap::from([(4, ShopPage::new("https://shop.test/"))]),
            elsewhere: HashMap::new(),
            models: ModelServer::default(),
            registry: ModelRegistry {
                models: models.collect(),
                default: names.first().map(|n| (*n).to_owned()),
            },
            layers: None,
            allow: true,
            layered: false,
            loading: (2, 0),
            crossings: 0,
            call_crossings: Vec::new(),
            outcomes: Vec::new(),
            local: Default::default(),
            session: Default::default(),
            storage_error: None,
            warnings: Vec::new(),
            lose_tab_on_reload: false,
            cut: None,
            pushes: Vec::new(),
            instead: None,
            peer: peer::Peer::default(),
            ids: 0,
        }
    }

    fn fresh(&mut self) -> String {
        self.ids += 1;
        format!("p{}", self.ids)
    }

    /// Drives one machine of the host to its answer as `shell::drive` does: each output
    /// performed ([`Play::perform`]), the clock moved by what it took, its input fed back.
    pub(crate) fn drive<A>(
        &mut self,
        mut step: impl FnMut(&Host, Option<Input>, f64) -> Step<A>,
    ) -> A {
        let mut input = None;
        loop {
            self.crossings += 1;
            match step(&self.host, input.take(), self.now) {
                Step::Done(answer) => return answer,
                Step::Do(output) => {
                    let (ms, fed) = self.perform(output);
                    self.now += ms;
                    input = Some(fed);
                }
            }
        }
    }

    /// Lists a tab as `shell::list` does.
    pub(crate) fn list(&mut self, mut listing: Listing) -> Listed {
        self.drive(|host, input, now| host.list(&mut listing, input, now))
    }

    /// Performs one output as `shell::perform` does, against the scripted world: how long it
    /// took (ms) and its input.
    fn perform(&mut self, output: Output) -> (f64, Input) {
        if let Some(input) = self.instead.as_mut().and_then(|instead| instead(&output)) {
            return (0.0, input);
        }
        let input = match output {
            Output::Sleep { ms } => return (f64::from(ms), Input::Slept),
            Output::Storage(Storage::Read { area, key }) => Input::Read(self.stored(area, &key)),
            Output::Storage(Storage::Write { area, key, value }) => {
                Input::Done(self.store(area, key, value))
            }
            Output::Storage(Storage::Keys { area }) => Input::Keys(match &self.storage_error {
                Some(error) => Err(error.clone()),
                None => Ok(self.area(area).keys().cloned().collect()),
            }),
            Output::Storage(Storage::All { area }) => Input::Read(match &self.storage_error {
                Some(error) => Err(error.clone()),
                None => Ok(Some(
                    serde_json::to_value(self.area(area)).unwrap_or_default(),
                )),
            }),
            Output::Http(http) if self.models.serves(&http) => return self.models.perform(http),
            Output::Http(http) => return self.peer.perform(http),
            Output::Timers(Timers::Set { ms, .. }) => return (f64::from(ms), Input::Slept),
            Output::Timers(Timers::Cancel { .. }) => Input::Done(Ok(())),
            Output::Mcp(Mcp::Listen { .. }) => Input::Done(Ok(())),
            Output::Mcp(Mcp::Close { client }) => {
                let mut closing = super::mcp::Closing::new(client);
                self.drive(|host, input, now| host.mcp_close(&mut closing, input, now));
                Input::Done(Ok(()))
            }
            Output::Storage(Storage::Exposures) => Input::Exposures(Vec::new()),
            Output::Frames(Frames::List { tab_id, sites }) => Input::Listed {
                answers: self.frame_listings(tab_id),
                sites: sites.then(|| Ok(Vec::new())),
            },
            Output::Frames(Frames::Inject { .. }) => Input::Done(Ok(())),
            Output::Frames(Frames::Ask {
                tab_id,
                target,
                message,
                ..
            }) => Input::Reply(self.send(tab_id, &target, &message)),
            Output::Frames(Frames::Send {
                tab_id,
                target,
                message,
                list_tabs,
                ..
            }) => {
                let tabs = list_tabs.then(|| self.tabs());
                let reply = self.send(tab_id, &target, &message);
                Input::Sent { tabs, reply }
            }
            Output::Frames(Frames::Survey {
                tab_ids, message, ..
            }) => Input::Surveyed(
                (tab_ids.into_iter())
                    .map(|tab_id| {
                        let reply = self.send(tab_id, &Target::TOP, &message);
                        (tab_id, reply, self.list(Listing::kept(tab_id, Settle::Now)))
                    })
                    .collect(),
            ),
            Output::Frames(Frames::All { tab_id }) => Input::Frames(Ok(self.frames(tab_id))),
            Output::Frames(Frames::Tell { .. }) => Input::Done(Ok(())),
            Output::Frames(Frames::State { tab_id, frame_id }) => Input::Frame(
                (self.frames(tab_id).into_iter())
                    .find(|frame| frame.frame_id == frame_id)
                    .map(|frame| FrameState {
                        url: frame.url,
                        document_id: frame.document_id,
                    }),
            ),
            Output::Tabs(Tabs::List) => Input::Tabs(self.tabs()),
            Output::Tabs(Tabs::Snapshot { tab_id }) => Input::Snapshot(self.snapshot(tab_id)),
            Output::Tabs(Tabs::Reload { tab_id, url, .. }) => {
                return (0.0, Input::Done(self.back_to(tab_id, Some(&url))));
            }
            Output::Tabs(Tabs::Load { tab_id, url, .. }) => {
                return (0.0, Input::Landed(self.load(tab_id, &url).map(|()| url)));
            }
            // The run moves the clock itself.
            Output::Runs(Runs::Start {
                request, within_ms, ..
            }) => Input::Ran(self.run_ended(&request, within_ms)),
            Output::Runs(Runs::Log { run_id }) => Input::Logged(self.run_log(&run_id)),
            Output::Ui(Ui::Confirm { .. }) => Input::Confirmed(self.allow),
            Output::Ui(Ui::Push { kind, body }) => {
                self.pushes.push((kind, body));
                Input::Pushed
            }
            Output::Ui(Ui::Warn { message }) => {
                self.warnings.push(message);
                Input::Pushed
            }
            Output::Ui(Ui::Authorize { .. }) => Input::Authorized(Err("no window here".into())),
            Output::Ui(Ui::Redirect { path, uuids }) => Input::Redirect {
                url: Ok(format!("https://ext.chromiumapp.org/{path}")),
                random: "ab".repeat(16 * uuids as usize),
            },
            Output::Model(super::io::Model::Availability) => {
                Input::Availability("downloadable".into())
            }
            // The idle timer is the shell's task; here the connection stays.
            Output::Mcp(Mcp::Idle { .. }) => Input::Done(Ok(())),
            Output::Mcp(_) => Input::McpTools(Err("no MCP server in this world".into())),
        };
        (0.0, input)
    }

    /// A storage area's keys and values.
    fn area(&mut self, area: Area) -> &mut std::collections::BTreeMap<String, Value> {
        match area {
            Area::Local => &mut self.local,
            Area::Session => &mut self.session,
        }
    }

    /// What is stored under `key` (the person's layers are [`Play::layers`]).
    fn stored(&mut self, area: Area, key: &str) -> Result<Option<Value>, String> {
        match (&self.storage_error, area, key) {
            (Some(error), ..) => Err(error.clone()),
            (None, Area::Local, MIDDLEWARE_KEY) => Ok(self.layers.clone()),
            // The world's registry, until one is configured.
            (None, Area::Local, REGISTRY_KEY) if !self.local.contains_key(REGISTRY_KEY) => {
                Ok(serde_json::to_value(&self.registry).ok())
            }
            (None, area, key) => Ok(self.area(area).get(key).cloned()),
        }
    }

    /// Stores `value` under `key` (`None`: removes it).
    fn store(&mut self, area: Area, key: String, value: Option<Value>) -> Result<(), String> {
        if let Some(error) = &self.storage_error {
            return Err(error.clone());
        }
        match (area, key.as_str(), value) {
            (Area::Local, MIDDLEWARE_KEY, value) => self.layers = value,
            (area, _, Some(value)) => drop(self.area(area).insert(key, value)),
            (area, _, None) => drop(self.area(area).remove(&key)),
        }
        Ok(())
    }

    /// A tab's snapshot as `tabSnapshot` takes it (every tab visible).
    fn snapshot(&self, tab_id: Option<i64>) -> Value {
        let mut out = serde_json::json!({"userAgent": "Play/1", "version": crate::VERSION});
        let Some(tab_id) = tab_id else {
            out["screenshotError"] = "the run had no tab".into();
            return out;
        };
        match self.pages.get(&tab_id) {
            Some(page) => {
                out["page"] = serde_json::json!({"url": page.url, "title": ""});
                out["screenshot"] = "data:image/png;base64,AA==".into();
            }
            None => out["screenshotError"] = format!("tab {tab_id} is closed").into(),
        }
        out
    }

    fn frame_listings(&mut self, tab_id: i64) -> Result<Vec<FrameAnswer>, String> {
        let frame = self.frames(tab_id).into_iter().next();
        let frame = frame.ok_or_else(|| format!("No tab with id: {tab_id}."))?;
        let message = FrameRequest::ListTools.to_message();
        let reply = self.send(tab_id, &frame.target(), &message);
        Ok(vec![listing(frame, reply)])
    }

    fn frames(&self, tab_id: i64) -> Vec<Frame> {
        let page = self.pages.get(&tab_id).into_iter();
        page.map(|page| Frame {
            frame_id: 0,
            url: page.url.clone(),
            document_id: Some(page.document()),
        })
        .collect()
    }

    fn tabs(&self) -> Vec<Tab> {
        let mut ids: Vec<i64> = self.pages.keys().copied().collect();
        ids.sort_unstable();
        (ids.into_iter())
            .map(|id| Tab {
                id,
                opener: None,
                complete: true,
            })
            .collect()
    }

    /// A message to a frame's document: its reply, or the channel's failure when the document
    /// is not the one aimed at; then the tab goes where the page took it, if it did.
    fn send(&mut self, tab_id: i64, target: &Target, message: &Value) -> FrameReply {
        let reply = match self.pages.get_mut(&tab_id) {
            Some(page) if target.frame_id == 0 => match &target.document_id {
                Some(document) if *document != page.document() => FrameReply::Failed(
                    "Could not establish connection. Receiving end does not exist.".into(),
                ),
                _ => match page.answer(message) {
                    Ok(reply) => FrameReply::Answered(Ok(reply)),
                    Err(closed) => FrameReply::Failed(closed),
                },
            },
            _ => FrameReply::Failed(format!("No frame {} in tab {tab_id}.", target.frame_id)),
        };
        let leaving = (self.pages.get_mut(&tab_id)).and_then(|page| page.leaving.take());
        if let Some(url) = leaving {
            if let Some(page) = self.show(tab_id, &url) {
                page.load(&url, 0, 0);
            }
        }
        reply
    }

    /// The tab's page for `url`: its own when `url` is of its origin, else the page of that
    /// origin's site (the one it left kept in [`Play::elsewhere`]); `None` without the tab.
    fn show(&mut self, tab_id: i64, url: &str) -> Option<&mut ShopPage> {
        let origin = crate::core::url::http_origin(url).unwrap_or_default();
        let page = self.pages.get_mut(&tab_id)?;
        if page.origin() != origin {
            let there = (self.elsewhere.remove(&origin)).unwrap_or_else(|| ShopPage::new(url));
            let left = std::mem::replace(page, there);
            self.elsewhere.insert(left.origin(), left);
        }
        Some(page)
    }

    /// The page of the site of `origin`, whether a tab shows it or not.
    pub(crate) fn site(&self, origin: &str) -> Option<&ShopPage> {
        (self.pages.values().find(|page| page.origin() == origin))
            .or_else(|| self.elsewhere.get(origin))
    }

    /// Loads `url` in the tab (as `reloadTab` does after a probe navigated it).
    fn load(&mut self, tab_id: i64, url: &str) -> Result<(), String> {
        let gone = Err(format!("No tab with id: {tab_id}."));
        if self.lose_tab_on_reload {
            return gone;
        }
        let (loading, late) = self.loading;
        let Some(page) = self.show(tab_id, url) else {
            return gone;
        };
        page.load(url, loading, late);
        self.now += LOAD_MS;
        Ok(())
    }

    /// The tab brought back to a suite's first page, as `reloadTab` does for
    /// `evaluate({reload: true})`: reloaded when it shows that URL, else taken back to it.
    pub(crate) fn back_to(&mut self, tab_id: i64, first: Option<&str>) -> Result<(), String> {
        let shown = self.pages.get(&tab_id).map(|page| page.url.as_str());
        match first {
            Some(url) if shown != Some(url) => self.load(tab_id, url),
            _ => self.reload(tab_id),
        }
    }

    /// Reloads a tab's page (its cart emptied; as it loads, [`Play::loading`] listings while
    /// it parses, then those before it registers its tools).
    pub(crate) fn reload(&mut self, tab_id: i64) -> Result<(), String> {
        let (loading, late) = self.loading;
        let page = self.pages.get_mut(&tab_id);
        let page = page.ok_or_else(|| format!("No tab with id: {tab_id}."))?;
        page.reload(loading, late);
        self.now += LOAD_MS;
        Ok(())
    }

    /// A page call that `asker` asks for, as the host's suites make it ([`HostCall::asked`]).
    pub(crate) fn asked(&mut self, asker: Asker, request: CallRequest) -> CallAnswer {
        let id = format!("call_{}", self.fresh());
        self.page_call(HostCall::asked(asker, request, id))
    }

    /// Performs a page call as `shell::page_call` does.
    pub(crate) fn page_call(&mut self, mut call: HostCall) -> CallAnswer {
        let before = self.crossings;
        let answer = self.drive(|host, input, now| host.advance(&mut call, input, now));
        self.call_crossings.push(self.crossings - before);
        answer
    }

    /// `run(raw)` as `shell::agent::run` performs it: its start, then its drive to the end;
    /// its answer as `run` gives it.
    pub(crate) fn run(&mut self, raw: &Value) -> Result<Value, String> {
        self.run_within(raw, None)
    }

    /// [`Play::run`], stopped once `within_ms` passed (a simulation's conversation deadline).
    pub(crate) fn run_within(
        &mut self,
        raw: &Value,
        within_ms: Option<u64>,
    ) -> Result<Value, String> {
        Ok(self.run_ended(raw, within_ms)?.to_json())
    }

    /// [`Play::run_within`], its end typed as the evaluations get it
    /// (`shell::agent::run_ended`): the host's [`HostRun`], its effects performed as
    /// `shell::agent` performs them.
    pub(crate) fn run_ended(
        &mut self,
        raw: &Value,
        within_ms: Option<u64>,
    ) -> Result<RunEnded, String> {
        let registry = self.registry.clone();
        let start = Start::new(raw, &registry, || self.fresh())?;
        let (run_id, thread_id) = (start.run_id().to_owned(), start.thread_id().to_owned());
        let calls = format!("call_{}", self.fresh());
        let mut run = HostRun::new(start, false, Prices::default(), calls);
        let mut pending = Pending::default();
        if let Some(ms) = within_ms {
            let reason = "the simulation's time budget ran out".to_owned();
            pending.at(
                self.now + ms as f64,
                RunFeed::Drive(Answer::Stop { reason }),
            );
        }
        let mut events = Vec::new();
        // Each page call's crossings, by its id in the run: per step, the poll that gave it and
        // the feed of its outcome.
        let mut calls = std::collections::BTreeMap::<u64, usize>::new();
        loop {
            run.set_layered(self.layered);
            while let Some(effect) = self.host.run_poll(&mut run, self.now) {
                let now = self.now;
                match effect {
                    RunEffect::Need(Need::Refused(message)) => return Err(message),
                    RunEffect::Need(Need::Record) => {
                        // Kept and stored as the shell keeps it: the run's log, read back by
                        // `runLog`.
                        let tab_id = run.start().and_then(Start::tab_id);
                        let mut log = self.host.runs.borrow_mut();
                        log.on_start(&run_id, run.thread_id(), tab_id, raw, now);
                        drop(log);
                        let _ = self.store_run(RunStore::flush(&run_id));
                        pending.at(now, RunFeed::Got(Got::Recorded(now)));
                    }
                    RunEffect::Need(need) => panic!("the host meets {need:?} itself"),
                    RunEffect::Act(Action::Event(event)) => {
                        let value = serde_json::to_value(&event).unwrap_or(Value::Null);
                        if self.cut.as_ref().is_some_and(|cut| cut(&value)) {
                            return Err(format!("the worker stopped during run `{run_id}`"));
                        }
                        self.host.runs.borrow_mut().on_event(&run_id, &value, now);
                        let _ = self.store_run(RunStore::flush(&run_id));
                        events.push(value);
                    }
                    RunEffect::Act(Action::Finished(outcome)) => {
                        let value = serde_json::to_value(&outcome).unwrap_or(Value::Null);
                        self.host.runs.borrow_mut().on_finish(&run_id, &value);
                        let _ = self.store_run(RunStore::flush(&run_id));
                        self.outcomes.push(outcome.clone());
                        let drive = run.drive().expect("the run's drive");
                        self.call_crossings.extend(calls.into_values());
                        return Ok(drive.ended(&run_id, &thread_id, outcome, events));
                    }
                    // Every change is stored at once here: no save loop.
                    RunEffect::Log(_) => {}
                    RunEffect::Act(action) => self.act(action, &mut pending),
                    RunEffect::Child { child, output } => {
                        // A page call's crossings are counted; its tab's listings are not.
                        if run.is_call(child) {
                            self.crossings += 1;
                            *calls.entry(child).or_default() += 2;
                        }
                        if matches!(output, Output::Timers(Timers::Cancel { .. })) {
                            pending.drop_child(child);
                        }
                        let (ms, input) = self.perform(output);
                        pending.at(now + ms, RunFeed::Child { child, input });
                    }
                    RunEffect::Page(page) => {
                        self.host.runs.borrow_mut().on_page(&run_id, page);
                        let _ = self.store_run(RunStore::flush(&run_id));
                    }
                }
            }
            let Some((when, feed)) = pending.next() else {
                panic!("the run waits for nothing: it would hang");
            };
            self.now = self.now.max(when);
            self.host.run_handle(&mut run, feed, self.now);
        }
    }

    /// `runLog({runId})` as `shell::runlog::run_log` answers it: from this worker, else as
    /// stored by one before.
    pub(crate) fn run_log(&mut self, run_id: &str) -> Result<Value, String> {
        let mut read = RunLogRead::new(run_id, 0);
        self.drive(|host, input, now| host.run_log(&mut read, input, now))
    }

    /// Stores a run's record as `shell::runlog` does; every change is stored at once here
    /// (the shell's save loops store them a little later).
    fn store_run(&mut self, mut store: RunStore) -> Result<(), String> {
        self.drive(|host, input, now| host.store_run(&mut store, input, now))
            .result
    }

    /// The worker stops and a new one starts: the host's state is gone, what was stored
    /// stays (the conversations, the runs' logs, a run that was going read back as cut).
    pub(crate) fn restart(&mut self) {
        self.host = Host::default();
    }

    fn act(&mut self, action: Action, pending: &mut Pending) {
        let now = self.now;
        let drive = RunFeed::Drive;
        match action {
            // The run's other tools: the clock here, no MCP server; a page call only through
            // the layers (the host makes it otherwise).
            Action::Tool { call_id, call, .. } => {
                let answer = match call.gated() {
                    Gated::CurrentTime => Called::Time {
                        now_ms: now,
                        utc_offset_minutes: 0,
                    },
                    Gated::Mcp { server, .. } => Called::NotConnected(server),
                    Gated::Page(permit) if self.layered => {
                        let id = format!("call_{}", self.fresh());
                        Called::Page(self.page_call(HostCall::permitted(permit, id)))
                    }
                    Gated::Page(_) => panic!("a page call the host makes itself"),
                };
                let answer = answer.answer();
                pending.at(now, drive(Answer::ToolDone { call_id, answer }));
            }
            Action::WaitForPerson(_) => pending.at(now, drive(Answer::Person(Vec::new()))),
            Action::RepairHook { call_id, .. } => {
                pending.at(
                    now,
                    drive(Answer::Hook {
                        call_id,
                        call: None,
                    }),
                );
            }
            Action::ChromeAvailability { id } => {
                let availability = "unavailable".into();
                pending.at(now, drive(Answer::ChromeAvailability { id, availability }));
            }
            Action::ChromePrompt { id, .. } => {
                let output = Err("no built-in model here".into());
                pending.at(now, drive(Answer::ChromeOutput { id, output }));
            }
            Action::KeepAlive(_) | Action::CancelInFrame { .. } => {}
            Action::ListTabTools { .. }
            | Action::Fetch { .. }
            | Action::Read { .. }
            | Action::Abort { .. }
            | Action::Timer { .. }
            | Action::CancelTimer { .. }
            | Action::Confirm(_)
            | Action::Intents(_)
            | Action::StoreIntents { .. }
            | Action::Event(_)
            | Action::Finished(_) => {
                unreachable!("the host's or the loop's")
            }
        }
    }
}

#[cfg(test)]
mod tests;
