//! The A2A operations of the gateway (the SDK's [`RequestHandler`]): each Message routed
//! by the library's rules ([`crate::agent::Bundle::route_message`], draft "Domain-skill invocation",
//! "describe_skill request", the intermediate-exchange table), refused or answered from
//! the bundle without calling the upstream, or forwarded; everything the upstream sends
//! back about a governed Task shown only through a [`TaskView`].
//!
//! What the gateway decides itself — a refusal as a rejected or failed Task, a
//! describe_skill Task, a Task the upstream failed to finish — is kept in a bounded index
//! ([`super::tasks::TaskIndex`]) so GetTask shows the same Task later. Base A2A requests (no skill
//! request object) pass through unchanged; their Tasks are only remembered as base Tasks.

use super::log::LogRecord;
use super::recognise::{recognise, trim_history, withheld, Kind, UNCHECKABLE};
use super::state::{Gateway, Loaded, Shared};
use super::tasks::Entry;
use super::upstream::{self, OnBehalf, Op, UpstreamError};
use super::view::{self, guard_task, integral, TaskView};
use crate::agent::interaction::{Operation, RefusalKind, Refused};
use crate::agent::message::{ExistingTask, Part as RoutedPart, Policy, Refusal, Route};
use crate::agent::Request;
use crate::interface::condition::ErrorObject;
use crate::interface::DESCRIBE_SKILL;
use a2a_server::{RequestHandler, ServiceParams};
use a2a_types::{
    error_code, A2AError, AgentCard, Artifact, CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Message, Part,
    PartContent, SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest,
    Task, TaskPushNotificationConfig, TaskState, TypedDetail,
};
use futures::stream::BoxStream;
use futures::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Whether the request's `A2A-Extensions` header activates the schema-interface
/// extension.
pub fn activated(params: &ServiceParams) -> bool {
    params
        .get("a2a-extensions")
        .into_iter()
        .flatten()
        .flat_map(|v| v.split(','))
        .any(|v| v.trim() == crate::card::a2a::EXTENSION_URI)
}

/// An A2A error with a fixed message and, when the draft's condition applies, its code
/// in the `google.rpc.ErrorInfo` metadata (`{"code": <condition>}`).
fn binding_error(code: i32, message: &str, condition: Option<&ErrorObject>) -> A2AError {
    let error = A2AError::new(code, message);
    match condition {
        None => error,
        Some(e) => error.with_details(vec![TypedDetail::error_info(
            a2a_types::error_reason(code),
            a2a_types::PROTOCOL_DOMAIN,
            Some(HashMap::from([(
                "code".to_string(),
                e.code().as_str().to_string(),
            )])),
        )]),
    }
}

/// The caller's view of an upstream error: the A2A code when it is one of A2A's own,
/// with a fixed message; anything else is an internal error. Nothing of the upstream's
/// text.
fn upstream_error(e: &UpstreamError) -> A2AError {
    match e {
        UpstreamError::Binding(code)
            if (error_code::VERSION_NOT_SUPPORTED..=error_code::TASK_NOT_FOUND).contains(code)
                || *code == error_code::INVALID_PARAMS =>
        {
            A2AError::new(
                *code,
                format!(
                    "the agent answered {}",
                    a2a_types::error_reason(*code)
                        .to_lowercase()
                        .replace('_', " ")
                ),
            )
        }
        _ => A2AError::internal(view::UPSTREAM_FAILURE),
    }
}

/// The Message with every Data Part's numbers as the caller wrote them (see
/// [`integral`]).
fn normalized(mut message: Message) -> Message {
    for part in &mut message.parts {
        if let PartContent::Data(v) = &mut part.content {
            *v = integral(v.take());
        }
    }
    message
}

fn ids(message: &Message) -> (String, String) {
    (
        a2a_types::new_task_id(),
        message
            .context_id
            .clone()
            .unwrap_or_else(a2a_types::new_context_id),
    )
}

/// A Task the gateway ends itself. It has no history: nothing the caller sent is
/// repeated back.
fn decided_task(
    message: &Message,
    state: TaskState,
    reply: Option<Message>,
    artifacts: Vec<Artifact>,
) -> Task {
    let (id, context_id) = ids(message);
    let reply = reply.map(|mut reply| {
        reply.task_id = Some(id.clone());
        reply.context_id = Some(context_id.clone());
        reply
    });
    Task {
        id,
        context_id,
        status: view::status(state, reply),
        artifacts: (!artifacts.is_empty()).then_some(artifacts),
        history: None,
        metadata: None,
    }
}

/// How long an upstream CancelTask may take (the upstream deadline, if shorter).
const CANCEL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether an upstream Task in `state` has ended (nothing left to cancel).
fn is_terminal(state: &TaskState) -> bool {
    matches!(
        state,
        TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
    )
}

/// What one Message leads to.
enum Plan {
    /// A Task the gateway decides without the upstream.
    Decided(Box<Task>),
    /// Forward; the Task is of this governed skill (`None`: a base request).
    Forward(Option<String>),
}

impl Shared {
    fn policy(&self) -> Policy {
        Policy {
            require_extension: self.settings.require_extension,
            base_requests: true,
        }
    }

    fn refused(&self, code: &str) {
        self.metrics.refusal(code);
    }

    /// The upstream, once its card was read, as the caller's request (`params`)
    /// reaches it.
    fn upstream(&self, params: &ServiceParams) -> Result<OnBehalf, A2AError> {
        let upstream = self
            .upstream
            .read()
            .expect("the upstream lock is never poisoned")
            .clone()
            .ok_or_else(|| {
                A2AError::internal(
                    "the gateway is not ready: the upstream agent's card was not read yet",
                )
            })?;
        Ok(OnBehalf::new(
            upstream,
            self.settings.forward.select(params),
        ))
    }

    /// The Task a Message addresses, as the router needs it. A Task the index no longer
    /// remembers is recognised from the upstream's whole Task ([`recognise`]); one that
    /// can no longer be checked takes no further Message.
    async fn existing(
        &self,
        loaded: &Loaded,
        params: &ServiceParams,
        task_id: &str,
    ) -> Result<(Option<String>, bool), A2AError> {
        let entry = self.index().get(task_id).cloned();
        if let Some(Entry {
            decided: Some(_), ..
        }) = entry
        {
            // Decided by the gateway: it has ended, and nothing more goes into it (nor
            // to the upstream, which may still hold a Task of that id).
            return Err(A2AError::unsupported_operation(
                "the task has ended: it takes no further Message",
            ));
        }
        let interrupted = |t: &Task| {
            matches!(
                t.status.state,
                TaskState::InputRequired | TaskState::AuthRequired
            )
        };
        let upstream = self.upstream(params)?;
        if let Some(entry) = entry {
            let params = serde_json::json!({"id": task_id, "historyLength": 1});
            let task = self.timed(upstream.unary(Op::GetTask, &params)).await;
            let task: Option<Task> = task.ok().and_then(|v| upstream::decode(v).ok());
            return Ok((
                entry.skill_id.as_deref().map(str::to_string),
                task.as_ref().is_some_and(interrupted),
            ));
        }
        let task = self.whole_task(&upstream, task_id).await?;
        match recognise(&loaded.bundle, &task) {
            Kind::Governed(skill) => {
                self.remember(task_id, Some(&skill), None);
                Ok((Some(skill), interrupted(&task)))
            }
            Kind::Base => {
                self.remember(task_id, None, None);
                Ok((None, interrupted(&task)))
            }
            Kind::Uncheckable => {
                self.refused("uncheckable");
                Err(A2AError::unsupported_operation(UNCHECKABLE))
            }
        }
    }

    /// The upstream's Task `id` with its whole history (no history length asked).
    async fn whole_task(&self, upstream: &OnBehalf, id: &str) -> Result<Task, A2AError> {
        let params = serde_json::json!({ "id": id });
        let value = self
            .timed(upstream.unary(Op::GetTask, &params))
            .await
            .map_err(|e| upstream_error(&e))?;
        upstream::decode::<Task>(value)
            .ok()
            .filter(|t| t.id == id)
            .ok_or_else(A2AError::invalid_agent_response)
    }

    /// Route a Message: what the gateway answers itself, or what it forwards. A send
    /// with a push-notification config is refused with A2A's
    /// `PushNotificationNotSupportedError` whatever it is (governed, base, describe_skill,
    /// a follow-up), as the gateway's card says (`capabilities.pushNotifications: false`,
    /// [`super::card`]), before anything else and before the upstream is asked anything:
    /// the gateway offers no push notifications, and an upstream given the config would
    /// push to the caller what the gateway never saw.
    async fn plan(
        &self,
        loaded: &Loaded,
        params: &ServiceParams,
        message: &Message,
        operation: Operation,
    ) -> Result<Plan, A2AError> {
        if operation.push_config() {
            self.refused("push_notification_not_supported");
            return Err(A2AError::push_notification_not_supported());
        }
        let bundle = &loaded.bundle;
        let parts: Vec<RoutedPart<'_>> = message
            .parts
            .iter()
            .map(|p| match &p.content {
                PartContent::Data(v) => RoutedPart::Data(v),
                _ => RoutedPart::Other,
            })
            .collect();
        let metadata = message
            .metadata
            .as_ref()
            .map(|m| Value::Object(m.clone().into_iter().collect()));
        let known = match &message.task_id {
            Some(id) => Some(self.existing(loaded, params, id).await?),
            None => None,
        };
        let existing = known.as_ref().map(|(skill, interrupted)| ExistingTask {
            skill_id: skill.as_deref(),
            interrupted: *interrupted,
        });
        let routed = bundle.route_message(
            &parts,
            metadata.as_ref(),
            activated(params),
            existing,
            self.policy(),
        );
        Ok(match routed {
            Err(Refusal::ExtensionRequired) => {
                self.refused("extension_required");
                return Err(A2AError::new(
                    error_code::EXTENSION_SUPPORT_REQUIRED,
                    format!(
                        "this agent requires the extension {}: activate it with the A2A-Extensions request header",
                        crate::card::a2a::EXTENSION_URI
                    ),
                ));
            }
            Err(Refusal::Binding(e)) => {
                self.refused(e.code().as_str());
                return Err(binding_error(
                    error_code::INVALID_PARAMS,
                    e.message(),
                    Some(&e),
                ));
            }
            Err(Refusal::NotActivated) => {
                self.refused("not_activated");
                let text = format!(
                    "this agent's skills are schema-governed: activate the extension {} with the A2A-Extensions request header and send a skill request object as the Message's single Data Part",
                    crate::card::a2a::EXTENSION_URI
                );
                Plan::Decided(Box::new(decided_task(
                    message,
                    TaskState::Rejected,
                    Some(view::text_message(&text, "", "")),
                    Vec::new(),
                )))
            }
            Err(Refusal::Task(e)) => {
                self.refused(e.code().as_str());
                let state = match e.task_state() {
                    Some(TaskState::Failed) => TaskState::Failed,
                    _ => TaskState::Rejected,
                };
                Plan::Decided(Box::new(decided_task(
                    message,
                    state,
                    Some(view::error_message(&e, "", "")),
                    Vec::new(),
                )))
            }
            Ok(Route::Request(Request::Describe { skill_id })) => {
                let result = bundle
                    .describe_skill(skill_id)
                    .expect("the router checked the skill is advertised");
                let artifact = Artifact {
                    artifact_id: a2a_types::new_artifact_id(),
                    name: Some(DESCRIBE_SKILL.to_string()),
                    description: None,
                    parts: vec![Part::data(result)],
                    metadata: None,
                    extensions: Some(vec![crate::card::a2a::EXTENSION_URI.to_string()]),
                };
                Plan::Decided(Box::new(decided_task(
                    message,
                    TaskState::Completed,
                    None,
                    vec![artifact],
                )))
            }
            Ok(Route::Request(Request::Invoke { skill_id, .. })) => {
                self.interaction(loaded, Some(skill_id), operation)?;
                Plan::Forward(Some(skill_id.to_string()))
            }
            Ok(Route::FollowUp) => {
                let skill = existing.and_then(|e| e.skill_id);
                self.interaction(loaded, skill, operation)?;
                Plan::Forward(skill.map(str::to_string))
            }
            Ok(Route::Base) => Plan::Forward(None),
        })
    }

    /// The skill's `interaction` declaration applied to `operation`
    /// ([`crate::agent::interaction`]): A2A's `TaskNotCancelableError` or
    /// `UnsupportedOperationError`, before the upstream is called.
    fn interaction(
        &self,
        loaded: &Loaded,
        skill: Option<&str>,
        operation: Operation,
    ) -> Result<(), A2AError> {
        if let Err(Refused { kind, message }) = loaded.bundle.check_operation(skill, operation) {
            self.refused(kind.as_str());
            let declaration = match kind {
                RefusalKind::TaskNotCancelable => "cancellable",
                RefusalKind::UnsupportedOperation => "supported_response_modes",
            };
            // The message is the bundle's text (skill and declared modes), never the
            // caller's: ErrorInfo's `declaration` keeps it through the error scrub.
            return Err(A2AError::new(kind.code(), message).with_details(vec![
                TypedDetail::error_info(
                    a2a_types::error_reason(kind.code()),
                    a2a_types::PROTOCOL_DOMAIN,
                    Some(HashMap::from([(
                        "declaration".to_string(),
                        declaration.to_string(),
                    )])),
                ),
            ]));
        }
        Ok(())
    }

    /// The governed skill of Task `id` for an operation on it: as remembered, or (a Task
    /// the index no longer holds) recognised from the upstream's whole Task
    /// ([`recognise`]). `None` for a base Task, one the upstream does not show, or one
    /// that can no longer be checked (what the upstream answers of it is then withheld).
    async fn governed_skill(
        &self,
        loaded: &Loaded,
        upstream: &OnBehalf,
        id: &str,
    ) -> Option<String> {
        if let Some(entry) = self.index().get(id) {
            return entry.skill_id.as_deref().map(str::to_string);
        }
        let task = self.whole_task(upstream, id).await.ok()?;
        match recognise(&loaded.bundle, &task) {
            Kind::Governed(skill) => {
                self.remember(id, Some(&skill), None);
                Some(skill)
            }
            Kind::Base | Kind::Uncheckable => None,
        }
    }

    fn remember(&self, task_id: &str, skill_id: Option<&str>, decided: Option<&Task>) {
        self.index().insert(
            task_id,
            Entry {
                skill_id: skill_id.map(Arc::from),
                decided: decided.map(|task| Box::new(task.clone())),
                described: None,
            },
        );
    }

    /// A governed Task the upstream could not finish: failed by the gateway, and
    /// remembered so.
    fn failed_task(
        &self,
        message: &Message,
        skill_id: &str,
        task: Option<&Task>,
        error: Option<ErrorObject>,
    ) -> Task {
        let reply = match &error {
            Some(e) => view::error_message(e, "", ""),
            None => view::text_message(view::UPSTREAM_FAILURE, "", ""),
        };
        let mut failed = decided_task(message, TaskState::Failed, Some(reply), Vec::new());
        if let Some(task) = task {
            failed.id = task.id.clone();
            failed.context_id = task.context_id.clone();
        }
        if let Some(m) = failed.status.message.as_mut() {
            m.task_id = Some(failed.id.clone());
            m.context_id = Some(failed.context_id.clone());
        }
        self.remember(&failed.id, Some(skill_id), Some(&failed));
        failed
    }

    /// The Task `id` as the gateway decided it, if it did (a describe_skill Artifact
    /// answered from the bundle served now).
    fn decided(&self, loaded: &Loaded, id: &str) -> Option<Task> {
        let entry = self.index().get(id).cloned()?;
        let mut task = *entry.decided?;
        if let Some(skill) = entry.described {
            for artifact in task.artifacts.iter_mut().flatten() {
                if artifact.name.as_deref() == Some(DESCRIBE_SKILL) {
                    if let Ok(result) = loaded.bundle.describe_skill(&skill) {
                        artifact.parts = vec![Part::data(result)];
                    }
                }
            }
        }
        Some(task)
    }

    /// An upstream Task of the governed `skill`, through the guard; withheld when the
    /// bundle served no longer has the skill. A Task the guard fails while the upstream
    /// runs it on is cancelled upstream, and the gateway's verdict kept.
    fn guarded(&self, loaded: &Loaded, upstream: &OnBehalf, skill: &str, task: Task) -> Task {
        match guard_task(&loaded.bundle, skill, self.settings.task_limits, &task) {
            Some(shown) => {
                if shown.status.state == TaskState::Failed && task.status.state != TaskState::Failed
                {
                    self.refused("output_invalid");
                    if !is_terminal(&task.status.state) {
                        self.remember(&shown.id, Some(skill), Some(&shown));
                        self.cancel_upstream(upstream, &task.id);
                    }
                }
                shown
            }
            None => {
                self.refused("uncheckable");
                withheld(&task)
            }
        }
    }

    /// The upstream's answer about a Task, as the caller may see it (GetTask, ListTasks,
    /// CancelTask), with at most `history_length` Messages of history. A Task the index
    /// no longer remembers is recognised ([`recognise`]) from `task` if it names its
    /// skill, else from the upstream's whole Task (`whole`: `task` is that already).
    async fn checked(
        &self,
        loaded: &Loaded,
        upstream: &OnBehalf,
        task: Task,
        history_length: Option<i32>,
        whole: bool,
    ) -> Task {
        if let Some(decided) = self.decided(loaded, &task.id) {
            return trim_history(decided, history_length);
        }
        let entry = self.index().get(&task.id).cloned();
        let (kind, task) = match entry {
            Some(entry) => (
                entry
                    .skill_id
                    .map_or(Kind::Base, |s| Kind::Governed(s.to_string())),
                task,
            ),
            None => match recognise(&loaded.bundle, &task) {
                Kind::Governed(skill) => (Kind::Governed(skill), task),
                kind if whole => (kind, task),
                _ => match self.whole_task(upstream, &task.id).await {
                    Ok(whole) => (recognise(&loaded.bundle, &whole), whole),
                    Err(_) => (Kind::Uncheckable, task),
                },
            },
        };
        let shown = match kind {
            Kind::Governed(skill) => {
                self.remember(&task.id, Some(&skill), None);
                self.guarded(loaded, upstream, &skill, task)
            }
            Kind::Base => {
                self.remember(&task.id, None, None);
                task
            }
            Kind::Uncheckable => {
                self.refused("uncheckable");
                withheld(&task)
            }
        };
        trim_history(shown, history_length)
    }

    /// Tell the upstream to stop Task `id`, which the gateway failed (an invalid
    /// output, the upstream too slow or too large, a limit): in the background, with one
    /// short deadline, at most [`super::state::MAX_CANCELS`] under way, best effort. The
    /// caller's answer never waits for it.
    pub(super) fn cancel_upstream(&self, upstream: &OnBehalf, id: &str) {
        let Some(me) = self.me.upgrade() else {
            return;
        };
        let Ok(permit) = self.cancels.clone().try_acquire_owned() else {
            self.metrics.cancel("skipped");
            return;
        };
        let upstream = upstream.clone();
        let id = id.to_string();
        tokio::spawn(async move {
            me.cancel_now(&upstream, &id).await;
            drop(permit);
        });
    }

    async fn cancel_now(&self, upstream: &OnBehalf, id: &str) {
        let deadline = self.settings.upstream.timeout.min(CANCEL_DEADLINE);
        let params = serde_json::json!({ "id": id });
        let sent = tokio::time::timeout(deadline, upstream.unary(Op::CancelTask, &params)).await;
        let outcome = match sent {
            Ok(Ok(_)) => "ok",
            _ => "error",
        };
        self.metrics.cancel(outcome);
        self.log(
            LogRecord::info("upstream_cancel")
                .with_task(id)
                .with_message(format!("CancelTask sent upstream: {outcome}")),
        );
    }

    /// On shutdown, once in-flight requests had their grace: cancel upstream every Task
    /// a governed stream still follows (they end failed for their callers).
    pub async fn cancel_in_flight(&self) {
        let all = self.in_flight.take_all();
        futures::future::join_all(
            all.iter()
                .map(|(id, upstream)| self.cancel_now(upstream, id)),
        )
        .await;
    }

    async fn timed<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, UpstreamError>>,
    ) -> Result<T, UpstreamError> {
        let started = std::time::Instant::now();
        let result = f.await;
        self.metrics.upstream(started.elapsed(), result.is_ok());
        if let Err(e) = &result {
            self.log(LogRecord::warn("upstream_error").with_code(e.as_str()));
        }
        result
    }

    fn outgoing(message: &Message, request: &SendMessageRequest) -> Value {
        let mut forwarded = request.clone();
        forwarded.message = message.clone();
        serde_json::to_value(&forwarded).expect("an A2A request serializes")
    }
}

#[async_trait::async_trait]
impl RequestHandler for Gateway {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        let loaded = self.loaded();
        let message = normalized(req.message.clone());
        let configuration = req.configuration.as_ref();
        let operation = Operation::SendMessage {
            return_immediately: configuration.and_then(|c| c.return_immediately) == Some(true),
            push_config: configuration.is_some_and(|c| c.task_push_notification_config.is_some()),
        };
        let skill = match self.plan(&loaded, params, &message, operation).await? {
            Plan::Decided(task) => {
                self.remember(&task.id, None, Some(&task));
                self.log(
                    LogRecord::info("decided")
                        .with_task(&task.id)
                        .with_state(&task.status.state),
                );
                return Ok(SendMessageResponse::Task(*task));
            }
            Plan::Forward(skill) => skill,
        };
        let upstream = self.upstream(params)?;
        let answer = self
            .timed(upstream.unary(Op::SendMessage, &Shared::outgoing(&message, &req)))
            .await
            .and_then(|v| {
                upstream::decode::<SendMessageResponse>(v).map_err(|_| UpstreamError::Malformed)
            });
        let Some(skill) = skill else {
            // A base request: the upstream's answer, unchanged.
            let answer = answer.map_err(|e| upstream_error(&e))?;
            if let SendMessageResponse::Task(task) = &answer {
                self.remember(&task.id, None, None);
            }
            return Ok(answer);
        };
        let task = match answer {
            Ok(SendMessageResponse::Task(task)) => {
                self.remember(&task.id, Some(&skill), None);
                let shown = self.guarded(&loaded, &upstream, &skill, task);
                self.log(
                    LogRecord::info("forwarded")
                        .with_task(&shown.id)
                        .with_skill(&skill)
                        .with_state(&shown.status.state),
                );
                shown
            }
            Ok(SendMessageResponse::Message(_)) => {
                let error = loaded.bundle.check_result_object(&skill, None).err();
                self.refused("output_invalid");
                self.failed_task(&message, &skill, None, error)
            }
            Err(_) => self.failed_task(&message, &skill, None, None),
        };
        Ok(SendMessageResponse::Task(task))
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let loaded = self.loaded();
        let message = normalized(req.message.clone());
        let operation = Operation::SendStreamingMessage {
            push_config: req
                .configuration
                .as_ref()
                .is_some_and(|c| c.task_push_notification_config.is_some()),
        };
        let skill = match self.plan(&loaded, params, &message, operation).await? {
            Plan::Decided(task) => {
                self.remember(&task.id, None, Some(&task));
                return Ok(Box::pin(futures::stream::once(async move {
                    Ok(StreamResponse::Task(*task))
                })));
            }
            Plan::Forward(skill) => skill,
        };
        let upstream = self.upstream(params)?;
        let events = self
            .timed(upstream.stream(Op::SendStreamingMessage, &Shared::outgoing(&message, &req)))
            .await;
        let Some(skill) = skill else {
            let events = events.map_err(|e| upstream_error(&e))?;
            return Ok(Box::pin(events.map(|e| {
                e.map_err(|e| upstream_error(&e)).and_then(|v| {
                    upstream::decode::<StreamResponse>(v)
                        .map_err(|_| A2AError::invalid_agent_response())
                })
            })));
        };
        let this = self.inner.clone();
        match events {
            Ok(events) => Ok(guarded_stream(
                this,
                loaded,
                upstream,
                skill,
                Some(message),
                events,
            )),
            Err(_) => {
                let task = self.failed_task(&message, &skill, None, None);
                Ok(Box::pin(futures::stream::once(async move {
                    Ok(StreamResponse::Task(task))
                })))
            }
        }
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        let loaded = self.loaded();
        if let Some(task) = self.decided(&loaded, &req.id) {
            return Ok(trim_history(task, req.history_length));
        }
        let upstream = self.upstream(params)?;
        // A Task not remembered is asked for whole: its history tells what it is.
        let remembered = self.index().get(&req.id).is_some();
        let mut asked = req.clone();
        if !remembered {
            asked.history_length = None;
        }
        let params = serde_json::to_value(&asked).expect("an A2A request serializes");
        let value = self
            .timed(upstream.unary(Op::GetTask, &params))
            .await
            .map_err(|e| upstream_error(&e))?;
        let task: Task = upstream::decode(value).map_err(|_| A2AError::invalid_agent_response())?;
        if task.id != req.id {
            return Err(A2AError::invalid_agent_response());
        }
        Ok(self
            .checked(&loaded, &upstream, task, req.history_length, !remembered)
            .await)
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        let loaded = self.loaded();
        let upstream = self.upstream(params)?;
        // A governed Task is checked whole: its Artifacts are asked for even when the
        // caller does not want them shown.
        let mut asked = req.clone();
        asked.include_artifacts = Some(true);
        let params = serde_json::to_value(&asked).expect("an A2A request serializes");
        let value = self
            .timed(upstream.unary(Op::ListTasks, &params))
            .await
            .map_err(|e| upstream_error(&e))?;
        let mut list: ListTasksResponse =
            upstream::decode(value).map_err(|_| A2AError::invalid_agent_response())?;
        let tasks = std::mem::take(&mut list.tasks);
        let upstream = &upstream;
        let loaded = loaded.as_ref();
        let history_length = req.history_length;
        list.tasks = futures::stream::iter(tasks)
            .map(|t| self.checked(loaded, upstream, t, history_length, false))
            .buffered(8)
            .collect()
            .await;
        if req.include_artifacts != Some(true) {
            for task in &mut list.tasks {
                task.artifacts = None;
            }
        }
        Ok(list)
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        let loaded = self.loaded();
        if let Some(Entry {
            decided: Some(_), ..
        }) = self.index().get(&req.id)
        {
            return Err(A2AError::new(
                a2a_types::error_code::TASK_NOT_CANCELABLE,
                "the task has ended: it cannot be canceled",
            ));
        }
        let upstream = self.upstream(params)?;
        let skill = self.governed_skill(&loaded, &upstream, &req.id).await;
        self.interaction(&loaded, skill.as_deref(), Operation::CancelTask)?;
        let params = serde_json::to_value(&req).expect("an A2A request serializes");
        let value = self
            .timed(upstream.unary(Op::CancelTask, &params))
            .await
            .map_err(|e| upstream_error(&e))?;
        let task: Task = upstream::decode(value).map_err(|_| A2AError::invalid_agent_response())?;
        if task.id != req.id {
            return Err(A2AError::invalid_agent_response());
        }
        Ok(self.checked(&loaded, &upstream, task, None, false).await)
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let loaded = self.loaded();
        let entry = self.index().get(&req.id).cloned();
        if let Some(task) = self.decided(&loaded, &req.id) {
            return Ok(Box::pin(futures::stream::once(async move {
                Ok(StreamResponse::Task(task))
            })));
        }
        let upstream = self.upstream(params)?;
        let skill = match entry {
            Some(entry) => entry.skill_id.as_deref().map(str::to_string),
            // Not remembered: recognised from the whole Task before anything is relayed.
            None => {
                let task = self.whole_task(&upstream, &req.id).await?;
                match recognise(&loaded.bundle, &task) {
                    Kind::Governed(skill) => Some(skill),
                    Kind::Base => None,
                    Kind::Uncheckable => {
                        self.refused("uncheckable");
                        return Err(A2AError::unsupported_operation(UNCHECKABLE));
                    }
                }
            }
        };
        self.interaction(&loaded, skill.as_deref(), Operation::SubscribeToTask)?;
        let params = serde_json::to_value(&req).expect("an A2A request serializes");
        let events = self
            .timed(upstream.stream(Op::SubscribeToTask, &params))
            .await
            .map_err(|e| upstream_error(&e))?;
        match skill {
            Some(skill) => Ok(guarded_stream(
                self.inner.clone(),
                loaded,
                upstream,
                skill,
                None,
                events,
            )),
            None => Ok(Box::pin(events.map(|e| {
                e.map_err(|e| upstream_error(&e)).and_then(|v| {
                    upstream::decode::<StreamResponse>(v)
                        .map_err(|_| A2AError::invalid_agent_response())
                })
            }))),
        }
    }

    async fn create_push_config(
        &self,
        _: &ServiceParams,
        _: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        Err(A2AError::push_notification_not_supported())
    }

    async fn get_push_config(
        &self,
        _: &ServiceParams,
        _: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        Err(A2AError::push_notification_not_supported())
    }

    async fn list_push_configs(
        &self,
        _: &ServiceParams,
        _: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        Err(A2AError::push_notification_not_supported())
    }

    async fn delete_push_config(
        &self,
        _: &ServiceParams,
        _: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        Err(A2AError::push_notification_not_supported())
    }

    async fn get_extended_agent_card(
        &self,
        _: &ServiceParams,
        _: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        Err(A2AError::extended_card_not_configured())
    }
}

/// The upstream's events of a governed Task, as the caller may see them: each through
/// the Task's [`TaskView`]; the stream ends when the view does.
fn guarded_stream(
    gateway: Arc<Shared>,
    loaded: Arc<Loaded>,
    upstream: OnBehalf,
    skill: String,
    message: Option<Message>,
    events: BoxStream<'static, Result<Value, UpstreamError>>,
) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    struct Guarding {
        gateway: Arc<Shared>,
        loaded: Arc<Loaded>,
        upstream: OnBehalf,
        skill: String,
        message: Option<Message>,
        events: Option<BoxStream<'static, Result<Value, UpstreamError>>>,
        view: Option<TaskView>,
        upstream_task: Option<Task>,
        /// The upstream Task's last state, as its events said.
        upstream_state: Option<TaskState>,
        pending: VecDeque<StreamResponse>,
    }
    impl Drop for Guarding {
        fn drop(&mut self) {
            // The caller went away, or the stream ended: no longer followed (a caller
            // leaving does not cancel a Task, A2A's streams say so).
            if let Some(task) = &self.upstream_task {
                self.gateway.in_flight.remove(&task.id);
            }
        }
    }
    impl Guarding {
        fn view_for(&mut self, task_id: &str, context_id: &str) -> &mut TaskView {
            if self.view.is_none() {
                self.gateway.remember(task_id, Some(&self.skill), None);
                self.gateway.in_flight.add(task_id, self.upstream.clone());
                self.view = TaskView::new(
                    &self.loaded.bundle,
                    &self.skill,
                    self.gateway.settings.task_limits,
                    task_id,
                    context_id,
                );
            }
            self.view
                .as_mut()
                .expect("the bundle has the skill the router chose")
        }

        /// The upstream failed, or ended the stream: what the caller sees then.
        fn end(&mut self, error: Option<UpstreamError>) {
            self.events = None;
            let mut out = Vec::new();
            match (&mut self.view, &self.message) {
                (Some(view), _) => match error {
                    Some(_) => view.upstream_failed(&mut out),
                    None => view.ended(None, &mut out),
                },
                (None, Some(message)) => {
                    let task = self.gateway.failed_task(message, &self.skill, None, None);
                    out.push(StreamResponse::Task(task));
                }
                (None, None) => {}
            }
            self.finish(out);
        }

        fn finish(&mut self, out: Vec<StreamResponse>) {
            let failed = self.view.as_ref().is_some_and(|v| v.is_finished())
                && out.iter().any(|e| matches!(e, StreamResponse::StatusUpdate(s) if s.status.state == TaskState::Failed));
            if failed {
                if let (Some(view), Some(task)) = (&self.view, &self.upstream_task) {
                    // Remember the failure: GetTask shows what the stream showed.
                    let shown = view.shown_task(task);
                    self.gateway
                        .remember(&shown.id, Some(&self.skill), Some(&shown));
                    // The gateway failed a Task the upstream still runs: stop it there.
                    if !self.upstream_state.as_ref().is_some_and(is_terminal) {
                        self.gateway.cancel_upstream(&self.upstream, &task.id);
                    }
                }
            }
            self.pending.extend(out);
            let ended = self.view.as_ref().is_some_and(|v| v.is_finished())
                || self.upstream_state.as_ref().is_some_and(is_terminal);
            if ended {
                if let Some(task) = &self.upstream_task {
                    self.gateway.in_flight.remove(&task.id);
                }
            }
            if self.view.as_ref().is_some_and(|v| v.is_finished()) {
                self.events = None;
            }
        }

        fn apply(&mut self, event: StreamResponse) {
            let loaded = self.loaded.clone();
            let bundle = &loaded.bundle;
            let mut out = Vec::new();
            match event {
                StreamResponse::Task(task) => {
                    self.upstream_state = Some(task.status.state.clone());
                    let view = self.view_for(&task.id, &task.context_id);
                    view.task(bundle, &task, &mut out);
                    let shown = view.shown_task(&task);
                    self.upstream_task = Some(task);
                    out.clear();
                    out.push(StreamResponse::Task(shown));
                }
                StreamResponse::ArtifactUpdate(e) => {
                    self.upstream_task
                        .get_or_insert_with(|| stub_task(&e.task_id, &e.context_id));
                    let view = self.view_for(&e.task_id, &e.context_id);
                    view.artifact(
                        bundle,
                        &e.artifact,
                        e.append.unwrap_or(false),
                        e.last_chunk.unwrap_or(false),
                        &mut out,
                    );
                }
                StreamResponse::StatusUpdate(e) => {
                    self.upstream_state = Some(e.status.state.clone());
                    self.upstream_task
                        .get_or_insert_with(|| stub_task(&e.task_id, &e.context_id));
                    let view = self.view_for(&e.task_id, &e.context_id);
                    view.status(bundle, &e.status, &mut out);
                }
                StreamResponse::Message(m) => match self.view.as_mut() {
                    Some(view) => view.message(bundle, &mut out),
                    None => {
                        let error = bundle.check_result_object(&self.skill, None).err();
                        let message = self.message.clone().unwrap_or(m);
                        let task = self.gateway.failed_task(&message, &self.skill, None, error);
                        out.push(StreamResponse::Task(task));
                        self.events = None;
                    }
                },
            }
            self.finish(out);
        }
    }
    let state = Guarding {
        gateway,
        loaded,
        upstream,
        skill,
        message,
        events: Some(events),
        view: None,
        upstream_task: None,
        upstream_state: None,
        pending: VecDeque::new(),
    };
    Box::pin(futures::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(event) = s.pending.pop_front() {
                return Some((Ok(event), s));
            }
            let events = s.events.as_mut()?;
            match events.next().await {
                None => s.end(None),
                Some(Err(e)) => s.end(Some(e)),
                Some(Ok(value)) => match upstream::decode::<StreamResponse>(value) {
                    Ok(event) => s.apply(event),
                    Err(_) => s.end(Some(UpstreamError::Malformed)),
                },
            }
        }
    }))
}

fn stub_task(id: &str, context_id: &str) -> Task {
    Task {
        id: id.to_string(),
        context_id: context_id.to_string(),
        status: view::status(TaskState::Submitted, None),
        artifacts: None,
        history: None,
        metadata: None,
    }
}
