import asyncio
import base64
import contextlib
import hashlib
import json
import os
import random
import re
import string
import uuid
from asyncio.exceptions import CancelledError
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Iterable, Literal, Tuple, cast

import structlog
from openai.types.responses.response import Response as OpenAIResponse
from opentelemetry import trace as otel_trace
from playwright._impl._errors import TargetClosedError
from playwright.async_api import Page
from yutori.navigator.tools import GET_ELEMENT_BY_REF_SCRIPT, evaluate_tool_script

from skyvern import analytics
from skyvern.config import settings
from skyvern.constants import (
    BROWSER_DOWNLOAD_TIMEOUT,
    BROWSER_DOWNLOADING_SUFFIX,
    DEFAULT_MAX_SCREENSHOT_SCROLLS,
    GET_DOWNLOADED_FILES_TIMEOUT,
    SAVE_DOWNLOADED_FILES_TIMEOUT,
    SCRAPE_TYPE_ORDER,
    SPECIAL_FIELD_VERIFICATION_CODE,
    SPECULATIVE_COST_PERSIST_DRAIN_TIMEOUT,
    ScrapeType,
)
from skyvern.errors.errors import (
    GetTOTPVerificationCodeError,
    ReachMaxRetriesError,
    ReachMaxStepsError,
    TimeoutGetTOTPVerificationCodeError,
    UserDefinedError,
    filter_to_user_defined_codes,
)
from skyvern.exceptions import (
    BrowserSessionDegraded,
    BrowserSessionNotFound,
    DownloadFileMaxWaitingTime,
    DownloadSaveIncompleteError,
    EmptyScrapePage,
    FailedToGetTOTPVerificationCode,
    FailedToNavigateToUrl,
    FailedToParseActionInstruction,
    FailedToReloadPage,
    FailedToSendWebhook,
    FailedToTakeScreenshot,
    InvalidTaskStatusTransition,
    InvalidWorkflowTaskURLState,
    MissingBrowserStatePage,
    MissingExtractActionsResponse,
    NoTOTPVerificationCodeFound,
    PDFEmbedBase64DecodeError,
    ScrapingFailed,
    ScreenshotTargetClosed,
    SkyvernException,
    StepTerminationError,
    StepUnableToExecuteError,
    TaskAlreadyCanceled,
    TaskAlreadyTimeout,
    TaskNotFound,
    UnsupportedActionType,
    UnsupportedTaskType,
    get_user_facing_exception_message,
)
from skyvern.experimentation.wait_utils import get_or_create_wait_config, get_wait_time
from skyvern.forge import app
from skyvern.forge.async_operations import AgentPhase, AsyncOperationPool
from skyvern.forge.failure_classifier import classify_from_failure_reason
from skyvern.forge.prompts import prompt_engine
from skyvern.forge.sdk.api.aws import get_aws_client
from skyvern.forge.sdk.api.files import (
    get_path_for_workflow_download_directory,
    list_downloading_files_in_directory,
    list_files_in_directory,
    recover_download_extension,
    rename_file,
    resolve_run_download_id,
    wait_for_download_finished,
)
from skyvern.forge.sdk.api.llm.api_handler_factory import (
    LLMAPIHandlerFactory,
    LLMCaller,
    LLMCallerManager,
    get_org_aware_primary_llm_api_handler,
    get_org_aware_secondary_llm_api_handler,
)
from skyvern.forge.sdk.api.llm.config_registry import LLMConfigRegistry
from skyvern.forge.sdk.api.llm.custom_llm_registry import is_custom_llm_key
from skyvern.forge.sdk.api.llm.exceptions import (
    LLM_PROVIDER_ERROR_RETRYABLE_TASK_TYPE,
    LLM_PROVIDER_ERROR_TYPE,
    LLMResponseMissingActionsError,
)
from skyvern.forge.sdk.api.llm.ui_tars_llm_caller import UITarsLLMCaller
from skyvern.forge.sdk.api.llm.vertex_cache_manager import get_cache_manager
from skyvern.forge.sdk.api.llm.yutori_navigator_llm_caller import YutoriNavigatorLLMCaller
from skyvern.forge.sdk.api.llm.yutori_navigator_response import parse_navigator_response_to_actions
from skyvern.forge.sdk.api.real_gcp import get_gcs_client
from skyvern.forge.sdk.artifact.manager import BulkArtifactCreationRequest
from skyvern.forge.sdk.artifact.models import ArtifactType
from skyvern.forge.sdk.browser_action_preflight import (
    observed_page,
    preflight_action,
    preflight_batch,
    stamp_parsed_actions,
)
from skyvern.forge.sdk.cache import extraction_cache, extraction_shadow
from skyvern.forge.sdk.copilot.block_goal_wrapping import unwrap_goal_fields
from skyvern.forge.sdk.core import skyvern_context
from skyvern.forge.sdk.core.hashing import diagnostic_fingerprint
from skyvern.forge.sdk.core.security import generate_skyvern_webhook_signature
from skyvern.forge.sdk.core.skyvern_context import SkyvernContext
from skyvern.forge.sdk.db.datetime_utils import naive_utc_now
from skyvern.forge.sdk.db.enums import TaskType
from skyvern.forge.sdk.experimentation.enrich_tree import resolve_enrich_tree_for_context
from skyvern.forge.sdk.experimentation.llm_prompt_config import resolve_check_user_goal_handler
from skyvern.forge.sdk.experimentation.slim_llm_output import get_slim_output_template_value
from skyvern.forge.sdk.experimentation.transient_ui_capture import (
    decide_transient_ui_suppression,
    emit_transient_ui_popup_telemetry,
    resolve_transient_ui_capture_arm,
    transient_ui_capture_arm,
)
from skyvern.forge.sdk.experimentation.workflow_block_engine import task_v3_disabled
from skyvern.forge.sdk.fail_fast.shadow import record_fail_fast_shadow
from skyvern.forge.sdk.log_artifacts import save_step_logs, save_task_logs
from skyvern.forge.sdk.models import SpeculativeLLMMetadata, Step, StepStatus
from skyvern.forge.sdk.schemas.files import FileInfo
from skyvern.forge.sdk.schemas.organizations import Organization
from skyvern.forge.sdk.schemas.tasks import Task, TaskRequest, TaskResponse, TaskStatus
from skyvern.forge.sdk.schemas.totp_codes import OTPType
from skyvern.forge.sdk.services.bitwarden import BitwardenConstants
from skyvern.forge.sdk.services.credentials import AzureVaultConstants, OnePasswordConstants, parse_totp_config
from skyvern.forge.sdk.submission import shadow as submission_shadow
from skyvern.forge.sdk.trace import VerificationTrigger, apply_context_attrs, traced, traced_span
from skyvern.forge.sdk.workflow.context_manager import WorkflowRunContext
from skyvern.forge.sdk.workflow.models.block import (
    ActionBlock,
    BaseTaskBlock,
    CodeBlock,
    FileDownloadBlock,
    ValidationBlock,
    _task_block_supports_v3,
)
from skyvern.forge.sdk.workflow.models.workflow import Workflow, WorkflowRun, WorkflowRunStatus
from skyvern.forge.validation_evidence_router import (
    ValidationRouterMode,
    ValidationRouterResult,
    route_validation_evidence,
)
from skyvern.schemas.runs import CUA_ENGINES, RunEngine
from skyvern.schemas.steps import AgentStepOutput
from skyvern.services import run_service, service_utils
from skyvern.services.action_service import get_action_history
from skyvern.services.error_detection_service import detect_user_defined_errors_for_task
from skyvern.services.otp_service import (
    describe_webhook_contract_failure,
    extract_totp_from_navigation_inputs,
    poll_otp_value,
    resolve_otp_value,
)
from skyvern.services.webhook_delivery import (
    WEBHOOK_DELIVERY_MAX_ATTEMPTS,
    deliver_webhook_with_retries,
    describe_delivery_error,
)
from skyvern.utils.image_resizer import Resolution
from skyvern.utils.prompt_engine import (
    PROMPT_HARD_CEILING_TOKENS,
    MaxStepsReasonResponse,
    enforce_prompt_ceiling_tracked,
    load_prompt_with_elements,
)
from skyvern.utils.prompt_truncation import truncate_extraction_schema, truncate_page_html_for_summary
from skyvern.utils.secret_redaction import redact_console_log_bytes, redact_har_bytes, redact_secrets_from_text
from skyvern.utils.token_counter import count_tokens
from skyvern.utils.url_validators import strip_query_params
from skyvern.webeye.actions.action_types import ActionType
from skyvern.webeye.actions.actions import (
    Action,
    ActionStatus,
    ClickAction,
    CompleteAction,
    CompleteVerifyResult,
    DecisiveAction,
    DownloadFileAction,
    ExtractAction,
    GotoUrlAction,
    HoverAction,
    InputTextAction,
    KeypressAction,
    ReloadPageAction,
    SelectOption,
    SelectOptionAction,
    TerminateAction,
    UploadFileAction,
    VerificationStatus,
    WaitAction,
    WebAction,
)
from skyvern.webeye.actions.handler import ActionHandler
from skyvern.webeye.actions.handler_utils import should_stop_batch_after_dropdown_select
from skyvern.webeye.actions.models import DetailedAgentStepOutput
from skyvern.webeye.actions.parse_actions import (
    parse_actions,
    parse_anthropic_actions,
    parse_cua_actions,
    parse_ui_tars_actions,
)
from skyvern.webeye.actions.responses import ActionResult, ActionSuccess
from skyvern.webeye.browser_engine import BrowserEngineSelection
from skyvern.webeye.browser_state import BrowserState, get_browser_state_diagnostic
from skyvern.webeye.cdp_download_interceptor import (
    consume_unsolicited_download_error_for_context,
    download_filename_from_suffix,
    has_download_interceptor_for_context,
    record_download_artifact_outcome_for_context,
    settle_browser_downloads_for_context,
)
from skyvern.webeye.dom_inspection import read_current_url
from skyvern.webeye.scraper.scraped_page import ElementTreeFormat, ScrapedPage
from skyvern.webeye.utils.page import SkyvernFrame, build_open_tabs_context

LOG = structlog.get_logger()
BLANK_WORKFLOW_TASK_URLS = {"about:blank", ":"}
RECOVERABLE_BLANK_WORKFLOW_TASK_URLS = {":"}

EXTRACT_ACTION_TEMPLATE = "extract-action"
DECISIVE_CRITERION_VALIDATE_TEMPLATE = "decisive-criterion-validate"

CUA_EXECUTE_ACTIONS_DIRECTIVE = (
    "Now perform the required interaction yourself using computer actions on the current screenshot, "
    "working toward the goal. Do not merely describe the steps or ask the human to perform them. "
    "If the current screenshot does not give you enough information to act, or the required action is "
    "not supported, ask one specific clarifying question instead of guessing."
)


async def resolve_inherited_workflow_task_page(browser_state: BrowserState, workflow_run_id: str) -> Page:
    working_page = await browser_state.get_working_page()
    if not working_page:
        LOG.error(
            "BrowserState has no page",
            workflow_run_id=workflow_run_id,
        )
        raise MissingBrowserStatePage(
            workflow_run_id=workflow_run_id,
            diagnostic=get_browser_state_diagnostic(browser_state),
            detected_at=datetime.now(UTC),
        )

    if working_page.url not in BLANK_WORKFLOW_TASK_URLS:
        return working_page

    if working_page.url not in RECOVERABLE_BLANK_WORKFLOW_TASK_URLS:
        raise InvalidWorkflowTaskURLState(workflow_run_id)

    pages = await browser_state.list_valid_pages()
    for page_index, page in reversed(list(enumerate(pages))):
        if page.url not in BLANK_WORKFLOW_TASK_URLS:
            LOG.warning(
                "Inherited workflow task URL resolved from latest non-blank page",
                workflow_run_id=workflow_run_id,
                blank_url=working_page.url,
                fallback_url=page.url,
                page_index=page_index,
            )
            await browser_state.set_active_page(page)
            return page

    raise InvalidWorkflowTaskURLState(workflow_run_id)


def fail_step_if_browser_already_gone(task: Task, step: Step, browser_state: BrowserState) -> None:
    """Probe liveness and fail the step if the browser is already known to be gone.

    The probe is a local flag read that latches the disconnect diagnostic, so a state nothing upstream
    probed (caller-supplied, or a cached Skyvern-hosted one the manager never reconnects) is still
    caught here. ``check_and_fix_state`` clears the diagnostic whenever it rebuilds, so a latched one
    means every page access this step makes is guaranteed to raise; reconnecting instead (what
    ``block.py`` does at a block boundary) would hand a mid-flow task a blank browser with none of its
    cookies or page state.
    """
    browser_state.is_connected()
    diagnostic = get_browser_state_diagnostic(browser_state)
    if diagnostic is None:
        return
    detected_at = datetime.now(UTC)
    LOG.warning(
        "Browser is already gone; failing the step instead of starting it against a dead browser",
        task_id=task.task_id,
        workflow_run_id=task.workflow_run_id,
        step_order=step.order,
        step_retry=step.retry_index,
        disconnect_reason=diagnostic.reason,
        disconnect_observed_at=diagnostic.disconnect_observed_at.isoformat(),
        disconnect_observation_source=diagnostic.observation_source,
    )
    raise MissingBrowserStatePage(
        task_id=task.task_id,
        workflow_run_id=task.workflow_run_id,
        diagnostic=diagnostic,
        detected_at=detected_at,
        failure_reason="browser_disconnected_before_step",
    )


def should_auto_download_pdf(pdf_src: str) -> bool:
    context = skyvern_context.current()
    if not context:
        return True
    return hashlib.sha256(pdf_src.encode()).hexdigest() not in context.downloaded_pdf_sources


def mark_pdf_source_downloaded(pdf_src: str) -> None:
    context = skyvern_context.current()
    if context:
        context.downloaded_pdf_sources.add(hashlib.sha256(pdf_src.encode()).hexdigest())


_TASKV3_TOOL_ACTION_TYPES = {
    "click": ActionType.CLICK,
    "hover": ActionType.HOVER,
    "type": ActionType.INPUT_TEXT,
    "select_option": ActionType.SELECT_OPTION,
    "select_combobox": ActionType.SELECT_OPTION,
    "press_key": ActionType.KEYPRESS,
    "file_upload": ActionType.UPLOAD_FILE,
    "navigate": ActionType.GOTO_URL,
    "scroll": ActionType.SCROLL,
    "wait": ActionType.WAIT,
    "solve_captcha": ActionType.SOLVE_CAPTCHA,
}


def _redact_tool_args(args: dict[str, Any], secret_values: set[str]) -> dict[str, Any]:
    if not secret_values:
        return args
    return {key: _redact_tool_arg(value, secret_values) for key, value in args.items()}


def _redact_tool_arg(value: Any, secret_values: set[str]) -> Any:
    # Tool args are bare json.loads output and the builder stringifies scalars, so numbers and nested
    # values are matched as text too (bool/None are left alone). Selector/url are scrubbed as well: a
    # persisted element_id that diverges from the live action beats a secret at rest in the row.
    if isinstance(value, dict):
        return {key: _redact_tool_arg(item, secret_values) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_tool_arg(item, secret_values) for item in value]
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return redact_secrets_from_text(str(value), secret_values, boundary_all_lengths=True)
    return value


def _taskv3_action_for_tool_call(tool_name: str, args: dict[str, Any], **fields: Any) -> Action:
    """Build the Action a v3 tool call persists as, carrying the fields its typed subclass requires so
    the row hydrates as that subclass instead of falling back to base Action on every read."""
    selector = str(args.get("selector") or "")
    if tool_name == "click":
        return ClickAction(element_id=selector, **fields)
    if tool_name == "hover":
        return HoverAction(element_id=selector, **fields)
    if tool_name == "type":
        return InputTextAction(element_id=selector, text=str(args.get("text") or ""), **fields)
    if tool_name in ("select_option", "select_combobox"):
        label, value = args.get("label"), args.get("value")
        option = SelectOption(label=None if label is None else str(label), value=None if value is None else str(value))
        return SelectOptionAction(element_id=selector, option=option, **fields)
    if tool_name == "press_key":
        key = args.get("key")
        return KeypressAction(keys=[str(key)] if key else [], **fields)
    if tool_name == "file_upload":
        return UploadFileAction(element_id=selector, file_url=str(args.get("file") or ""), **fields)
    if tool_name == "navigate":
        return GotoUrlAction(url=str(args.get("url") or ""), **fields)
    return Action(action_type=_TASKV3_TOOL_ACTION_TYPES.get(tool_name, ActionType.CLICK), **fields)


class _PromptCeilingExceeded(Exception):
    """Internal signal: the cached split-template prompt blew past the
    PROMPT_HARD_CEILING_TOKENS budget. Raised inside the cached extract-action
    branch to trigger the fall-through to load_prompt_with_elements, which
    applies the per-template fallback drop chain."""


EXTRACT_ACTION_PROMPT_NAME = "extract-actions"
EXTRACT_ACTION_CACHE_KEY_PREFIX = f"{EXTRACT_ACTION_TEMPLATE}-static"

# Exception types that indicate an LLM-specific step failure (context window, provider errors,
# unusable responses).
# Used by summary_failure_reason_for_max_retries to distinguish LLM failures from browser/runtime crashes.
_LLM_STEP_EXCEPTIONS = frozenset(
    {
        "SkyvernContextWindowExceededError",
        "LLMProviderError",
        "LLMProviderErrorRetryableTask",
        "LLMResponseMissingActionsError",
    }
)


def _llm_error_category(reasoning: str) -> list[dict]:
    return [{"category": "LLM_ERROR", "confidence_float": 0.9, "reasoning": reasoning}]


def _require_actions_payload(json_response: dict[str, Any]) -> list[Any]:
    actions_payload = json_response.get("actions")
    if not isinstance(actions_payload, list):
        raise LLMResponseMissingActionsError(list(json_response.keys()))
    return actions_payload


def _model_is_abandoning_verification(json_response: dict[str, Any]) -> bool:
    """True when the actions that will actually execute are a pure give-up (TERMINATE or WAIT).

    Classifies on the executed batch, dropping WAIT from a mixed batch exactly as
    _execute_step_actions does, so [WAIT, TERMINATE] is abandonment while [WAIT, CLICK] is not.
    """
    raw_actions = json_response.get("actions")
    if not isinstance(raw_actions, list) or not raw_actions:
        return False
    action_types = {str(action.get("action_type") or "").upper() for action in raw_actions if isinstance(action, dict)}
    # Drop WAIT exactly as the executor does for a mixed batch; keep it for an all-WAIT batch.
    effective = (action_types - {ActionType.WAIT.name}) or action_types
    return effective == {ActionType.TERMINATE.name} or effective == {ActionType.WAIT.name}


# Phrases the verifier / validator LLMs use when they rely on exact-string
# matching rather than semantic interpretation. Tagging reasoning text as
# "literal" vs "semantic" gives us a post-hoc signal for how often the LLM
# narrow-matches on a criterion or goal — queryable via the
# validation.reasoning_kind / verification.reasoning_kind span attributes.
# The heuristic is imperfect by design; its purpose is a rough trend
# indicator across the copilot-v2 cohort and other callers.
_LITERAL_REASONING_SIGNALS: tuple[str, ...] = (
    "exact",
    "literal",
    "verbatim",
    "word-for-word",
    "word for word",
)


def _classify_reasoning_kind(reasoning: str | None) -> str:
    """Classify a verifier / validator LLM's reasoning text as ``"literal"``
    (relied on exact-string matching) or ``"semantic"``.

    Shared between ``record_validation_span_attrs`` (validation-block step
    spans) and ``record_verification_span_attrs`` (``complete_verify`` spans).
    The keyword heuristic is imperfect by design — its purpose is a rough
    trend signal, not a truth oracle.
    """
    text = (reasoning or "").lower()
    return "literal" if any(s in text for s in _LITERAL_REASONING_SIGNALS) else "semantic"


def _has_multi_field_totp_shape(observations: Iterable[tuple[str, Any]]) -> bool:
    """True when ``observations`` BEGIN with 4+ consecutive single-digit INPUT_TEXT actions.

    ``observations`` are normalized ``(action_type, text)`` pairs. The run must start at action-list
    index 0: the multi-field execution path (``_handle_multi_field_totp_sequence``) generates and
    caches the TOTP only for the digit whose absolute ``action_index == 0`` and expects that cache to
    already exist for every later digit. A leading non-TOTP action pushes the first digit to index 1,
    so the handler never seeds the cache and every digit fails with a cache miss. Requiring the
    single-digit run to begin at index 0 keeps this shared shape check aligned with that runtime
    invariant. Actions after the run (e.g. a model-requested submit click) are irrelevant and may
    remain. Shared behind both the raw-dict first-plan predicate and the parsed-Action detector.
    """
    single_digit_run = 0
    for action_type, text in observations:
        if action_type == ActionType.INPUT_TEXT.value and isinstance(text, str) and len(text) == 1 and text.isdigit():
            single_digit_run += 1
            if single_digit_run >= 4:
                return True
        else:
            return False
    return False


def _first_plan_carries_consumable_totp(actions: list[Any], multi_field_secret_ready: bool) -> bool:
    """Whether the first-pass plan already carries a shape the existing runtime materializes into a
    credential TOTP at DOM-write time: a multi-field single-digit sequence backed by a runtime secret
    stash. A literal digit string, a bare placeholder, a provider marker, or a
    ``get_verification_code`` action is not runtime-consumable on this v1 two-pass seam, so it keeps
    the polling re-plan.

    The multi-field arm is only consumable when the runtime already holds the code the multi-field
    execution path types per digit — the existing ``totp_codes[f"{task_id}_secret"]`` stash. Without
    it the runtime cannot materialize the digits, so ``multi_field_secret_ready`` gates that arm.
    """
    if not multi_field_secret_ready:
        return False
    observations = (
        (str(action.get("action_type") or "").lower(), action.get("text")) if isinstance(action, dict) else ("", None)
        for action in actions
    )
    return _has_multi_field_totp_shape(observations)


def _first_plan_carries_single_field_credential_totp(
    actions: list[Any], workflow_run_context: WorkflowRunContext | None, active_credential_parameter_key: str | None
) -> bool:
    """Recognize the single-field credential placeholder consumed by the input handler at runtime."""
    if not workflow_run_context or not actions:
        return False
    if any(not isinstance(action, dict) for action in actions):
        return False
    if str(actions[0].get("action_type") or "").upper() != ActionType.INPUT_TEXT.value.upper():
        return False
    if any(
        str(action.get("action_type") or "").upper() == ActionType.INPUT_TEXT.value.upper() for action in actions[1:]
    ):
        return False
    text = actions[0].get("text")
    if not isinstance(text, str) or text not in workflow_run_context.secrets:
        return False
    key = workflow_run_context.find_credential_parameter_key_for_secret(text)
    if not key or workflow_run_context.values.get(key, {}).get("totp") != text:
        return False
    if active_credential_parameter_key is not None and active_credential_parameter_key != key:
        return False
    resolved = workflow_run_context.get_original_secret_value_or_none(text)
    if resolved not in {BitwardenConstants.TOTP, OnePasswordConstants.TOTP, AzureVaultConstants.TOTP}:
        return False
    secret_key = workflow_run_context.totp_secret_value_key(text)
    if secret_key not in workflow_run_context.secrets:
        return False
    secret = workflow_run_context.get_original_secret_value_or_none(secret_key)
    return bool(secret and parse_totp_config(secret))


def record_validation_span_attrs(span: Any, task: Task, actions: list[Action]) -> None:
    """Attach ``validation.decision`` and ``validation.reasoning_kind`` to
    ``span`` when ``task`` is a ``TaskType.validation`` step whose first parsed
    action is a ``CompleteAction`` or ``TerminateAction``.

    Exposed as a module-level helper (rather than inlined at the call site) so
    the logic is unit-testable without driving the full agent step. No-op on
    non-validation tasks or non-decisive actions — callers don't need to guard.
    """
    if task.task_type != TaskType.validation or not actions:
        return
    decision = actions[0]
    if not isinstance(decision, (CompleteAction, TerminateAction)):
        return
    validation_decision = "complete" if isinstance(decision, CompleteAction) else "terminate"
    span.set_attribute("validation.decision", validation_decision)
    span.set_attribute("validation.reasoning_kind", _classify_reasoning_kind(decision.reasoning))


def record_verification_span_attrs(span: Any, verification_thoughts: str | None) -> None:
    """Attach ``verification.reasoning_kind`` to the current
    ``skyvern.agent.complete_verify`` span based on the verifier LLM's
    ``thoughts`` field.

    Complements ``verification.status`` / ``verification.template``, which
    ``complete_verify`` already sets. Pure, module-level helper so the
    classifier logic is unit-testable without driving the full verify path.
    """
    span.set_attribute("verification.reasoning_kind", _classify_reasoning_kind(verification_thoughts))


@dataclass
class SpeculativePlan:
    scraped_page: ScrapedPage
    extract_action_prompt: str
    use_caching: bool
    llm_json_response: dict[str, Any] | None
    llm_metadata: SpeculativeLLMMetadata | None = None
    prompt_name: str = "extract-actions"


class ActionLinkedNode:
    def __init__(self, action: Action) -> None:
        self.action = action
        self.next: ActionLinkedNode | None = None


def _schedule_summary_shadow_check_for_hit(
    *,
    task: Task,
    workflow_run_id: str,
    cache_key: str,
    cached_value: Any,
    cached_age_seconds: float,
    summary_prompt: str,
) -> None:
    """Mirrors the miss-path LLM invocation exactly so the comparison can't
    diverge for non-cache reasons."""

    async def _shadow_gate() -> bool:
        return await app.AGENT_FUNCTION.should_shadow_extraction_cache_hit(task)

    async def _shadow_llm_call() -> Any:
        return await get_org_aware_primary_llm_api_handler(default=app.EXTRACTION_LLM_API_HANDLER)(
            prompt=summary_prompt,
            step=None,
            prompt_name="data-extraction-summary",
            system_prompt=task.workflow_system_prompt,
        )

    shadow_logger = structlog.get_logger().bind(
        prompt_name="data-extraction-summary",
        cache_path="agent",
    )
    extraction_shadow.schedule_shadow_check(
        gate=_shadow_gate,
        cache_key=cache_key,
        workflow_run_id=workflow_run_id,
        cached_value=cached_value,
        cached_age_seconds=cached_age_seconds,
        llm_call=_shadow_llm_call,
        schema=None,
        logger=shadow_logger,
    )


_PENDING_DISCARDED_PLAN_PERSISTS: set[asyncio.Task] = set()


async def drain_speculative_persist_tasks(context: SkyvernContext | None) -> None:
    if context is None or not context.pending_speculative_persist_tasks:
        return
    pending = context.pending_speculative_persist_tasks
    context.pending_speculative_persist_tasks = []
    try:
        results = await asyncio.wait_for(
            asyncio.gather(*pending, return_exceptions=True),
            timeout=SPECULATIVE_COST_PERSIST_DRAIN_TIMEOUT,
        )
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                LOG.warning("Speculative cost persistence task failed, cost may be unattributed", exc_info=result)
    except TimeoutError:
        # Bounded so a hung speculative call can't stall the run: we're back to losing
        # the cost write, which is what happened on every path before the drain existed.
        LOG.warning(
            "Speculative cost persistence did not finish before clean-up, cost may be unattributed",
            pending=len(pending),
        )


def _discard_background_task_result(task: asyncio.Task) -> None:
    # Retrieve the exception so asyncio does not warn about an unretrieved task failure.
    if not task.cancelled():
        task.exception()


async def _cancel_pending_prefetch_task(task: asyncio.Task | None) -> None:
    if task is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


class _BackgroundArtifactTaskTracker:
    # Instantiated fresh per agent_step call so the in-flight artifact task is isolated
    # to that call. A shared (module-global or instance) tracker would let concurrent
    # agent_step invocations await each other's background writes.
    def __init__(self) -> None:
        self.task: asyncio.Task | None = None

    async def drain(self) -> None:
        if self.task is None:
            return
        task = self.task
        self.task = None
        try:
            await task
        except Exception:
            LOG.warning("Background artifact task failed, continuing", exc_info=True)


def _build_totp_timeout_reasoning(task: Task, webhook_diagnostics: str | None = None) -> str:
    # Mirror poll_otp_value's URL-then-identifier precedence so we only report the
    # source that was actually queried. URL goes through strip_query_params to keep
    # query-string tokens out of the customer-visible failure_reason.
    if not (task.totp_verification_url or task.totp_identifier):
        raise SkyvernException(
            "_build_totp_timeout_reasoning called with no TOTP source; "
            "NoTOTPVerificationCodeFound should only fire when poll_otp_value was invoked"
        )
    if task.totp_verification_url:
        polled = f"totp_verification_url={strip_query_params(task.totp_verification_url)}"
    else:
        polled = f"totp_identifier={task.totp_identifier}"
    reasoning = f"No TOTP verification code found. Going to terminate. Polled source: {polled}."
    return reasoning + describe_webhook_contract_failure(webhook_diagnostics)


VALIDATION_EVIDENCE_ROUTER_MODE_FLAG = "VALIDATION_EVIDENCE_ROUTER_MODE"
DEFAULT_VALIDATION_ROUTER_MIN_CONFIDENCE = 0.90


async def resolve_validation_evidence_route(
    task: Task,
    step: Step | None,
    complete_criterion: str | None,
    terminate_criterion: str | None,
    navigation_payload_str: str,
    error_code_mapping_str: str | None,
    local_datetime: str,
) -> ValidationRouterResult:
    try:
        mode_value = await app.EXPERIMENTATION_PROVIDER.get_value_cached(
            VALIDATION_EVIDENCE_ROUTER_MODE_FLAG,
            task.workflow_run_id or task.task_id,
            properties={"organization_id": task.organization_id},
        )
    except Exception:
        LOG.warning("VALIDATION_EVIDENCE_ROUTER_MODE flag read failed, defaulting to off", exc_info=True)
        mode_value = "off"

    mode_str = str(mode_value).strip().lower() if mode_value else "off"
    try:
        mode = ValidationRouterMode(mode_str)
    except ValueError:
        LOG.warning(
            "Unrecognized VALIDATION_EVIDENCE_ROUTER_MODE value; defaulting to off",
            mode_str=mode_str,
        )
        mode = ValidationRouterMode.OFF

    min_confidence = DEFAULT_VALIDATION_ROUTER_MIN_CONFIDENCE

    return await route_validation_evidence(
        complete_criterion=complete_criterion,
        terminate_criterion=terminate_criterion,
        navigation_payload_str=navigation_payload_str,
        error_code_mapping_str=error_code_mapping_str,
        local_datetime=local_datetime,
        mode=mode,
        min_confidence=min_confidence,
        llm_handler=get_org_aware_secondary_llm_api_handler(default=app.SECONDARY_LLM_API_HANDLER),
        step=step,
    )


@dataclass(frozen=True)
class PromptBuildResult:
    prompt: str
    use_caching: bool
    prompt_name: str
    without_page_information: bool


@dataclass(frozen=True)
class StepPromptResult:
    scraped_page: ScrapedPage
    extract_action_prompt: str
    use_caching: bool
    prompt_name: str
    without_page_information: bool


async def _read_task_v3_llm_name_override(
    task_id: str, organization_id: str, workflow_permanent_id: str | None
) -> str | None:
    """Return the registered llm_key named by the TASK_V3_LLM_NAME PostHog flag, or None.

    The multivariate value is validated against the registry per task. An unset, invalid, or
    unregistered value returns None so the caller falls back to the configured model.
    """
    try:
        variant = await app.EXPERIMENTATION_PROVIDER.get_value_cached(
            "TASK_V3_LLM_NAME",
            task_id,
            properties={
                "organization_id": organization_id,
                "workflow_permanent_id": workflow_permanent_id or "not_workflow",
            },
        )
    except Exception:
        LOG.warning("Failed to read TASK_V3_LLM_NAME; using configured v3 model", exc_info=True)
        return None
    if not isinstance(variant, str) or not variant:
        return None
    # get_config synthesizes a config for unknown keys, so require an explicitly registered,
    # non-custom (not org-owned BYO) llm_key.
    if is_custom_llm_key(variant) or not LLMConfigRegistry.is_registered(variant):
        LOG.warning("TASK_V3_LLM_NAME is not a usable registered llm_key; ignoring", variant=variant)
        return None
    return variant


async def _resolve_task_v3_llm_key(task: Task) -> str:
    """Choose the LLM the native Task V3 engine runs on.

    Order: explicit task.llm_key -> TASK_V3_LLM_NAME PostHog flag (per-task runtime override, so the
    model can change without a redeploy, like LLM_NAME) -> TASK_V3_LLM_KEY setting -> LLM_KEY setting.
    LLMCaller now dispatches router/flex keys too, so any of these may be a router group.
    """
    if task.llm_key:
        return task.llm_key
    # get_task builds Task without workflow_permanent_id; the run context is the reliable source.
    context = skyvern_context.current()
    workflow_permanent_id = task.workflow_permanent_id or (context.workflow_permanent_id if context else None)
    override = await _read_task_v3_llm_name_override(task.task_id, task.organization_id, workflow_permanent_id)
    return override or settings.TASK_V3_LLM_KEY or settings.LLM_KEY


def _redact_extracted_information(value: Any, secret_values: set[str]) -> Any:
    """Scrub registered secrets from a (possibly deeply nested) extraction result.

    Iterative by design: an extraction can nest arbitrarily deep, and Python's call-stack recursion
    limit is a few hundred to a thousand frames. String and dict-key matching is boundary-anchored
    at every secret length (unlike the free-text log/HAR redaction path), since a short secret here
    can legitimately be a substring of an unrelated longer value in structured customer data.
    """

    def redact_str(text: str) -> str:
        return redact_secrets_from_text(text, secret_values, boundary_all_lengths=True)

    if isinstance(value, str):
        return redact_str(value)
    if isinstance(value, dict):
        root: Any = {}
    elif isinstance(value, list):
        root = []
    else:
        return value

    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        if isinstance(source, dict):
            for key, item in source.items():
                redacted_key = redact_str(key) if isinstance(key, str) else key
                # Distinct secret keys all redact to the same placeholder; suffix on collision
                # (in source insertion order) so no entry is silently overwritten.
                if isinstance(redacted_key, str) and redacted_key in target:
                    suffix = 2
                    while f"{redacted_key}#{suffix}" in target:
                        suffix += 1
                    redacted_key = f"{redacted_key}#{suffix}"
                if isinstance(item, str):
                    target[redacted_key] = redact_str(item)
                elif isinstance(item, dict):
                    child_dict: dict[Any, Any] = {}
                    target[redacted_key] = child_dict
                    stack.append((item, child_dict))
                elif isinstance(item, list):
                    child_list: list[Any] = []
                    target[redacted_key] = child_list
                    stack.append((item, child_list))
                else:
                    target[redacted_key] = item
        else:
            for item in source:
                if isinstance(item, str):
                    target.append(redact_str(item))
                elif isinstance(item, dict):
                    child_dict = {}
                    target.append(child_dict)
                    stack.append((item, child_dict))
                elif isinstance(item, list):
                    child_list = []
                    target.append(child_list)
                    stack.append((item, child_list))
                else:
                    target.append(item)
    return root


class ForgeAgent:
    def __init__(self) -> None:
        self.async_operation_pool = AsyncOperationPool()

    async def _finalize_downloaded_files_for_task(
        self,
        task: Task,
        *,
        organization_id: str,
        download_suffix: str | None,
        list_files_before: list[str],
        randomize_if_missing: bool,
    ) -> list[str]:
        """Rename newly downloaded files for a task before persistence.

        Returns the list of pre-rename file names discovered as new since
        ``list_files_before``, for logging continuity with the legacy inline
        path.
        """
        if not task.workflow_run_id:
            return []

        context = skyvern_context.current()
        workflow_download_directory = get_path_for_workflow_download_directory(
            resolve_run_download_id(context, fallback_run_id=task.workflow_run_id)
        )
        list_files_after = list_files_in_directory(workflow_download_directory)
        if task.browser_session_id:
            browser_session_downloaded_files_after = await app.STORAGE.list_downloaded_files_in_browser_session(
                organization_id=organization_id,
                browser_session_id=task.browser_session_id,
            )
            list_files_after = list_files_after + browser_session_downloaded_files_after

        files_to_rename = [
            file
            for file in set(list_files_after) - set(list_files_before)
            if Path(file).suffix != BROWSER_DOWNLOADING_SUFFIX
        ]
        if not files_to_rename:
            return []
        for file in files_to_rename:
            local_file_name = file
            if file.startswith(("s3://", "gs://")):
                if file.startswith("s3://"):
                    file_data = await get_aws_client().download_file(file, log_exception=False)
                else:
                    file_data = await get_gcs_client().download_file(file, log_exception=False)
                if not file_data:
                    continue
                local_file_name = file.split("/")[-1]
                with open(os.path.join(workflow_download_directory, local_file_name), "wb") as f:
                    f.write(file_data)

            file_extension = Path(local_file_name).suffix
            if file_extension == BROWSER_DOWNLOADING_SUFFIX:
                LOG.warning(
                    "Detecting incompleted download file, skip the rename",
                    file=local_file_name,
                    task_id=task.task_id,
                    workflow_run_id=task.workflow_run_id,
                )
                continue

            if not file_extension:
                file_extension = recover_download_extension(
                    os.path.join(workflow_download_directory, local_file_name), download_suffix
                )
                if file_extension:
                    LOG.info(
                        "Recovered missing download file extension from file content",
                        file=local_file_name,
                        extension=file_extension,
                        task_id=task.task_id,
                        workflow_run_id=task.workflow_run_id,
                    )

            if download_suffix:
                # local_file_name is a bare basename for session (s3/gs) files but an absolute path for
                # run-dir files; compare on basenames so a file already named by download_suffix is not
                # treated as its own collision and bumped to ``<name>_1``.
                local_basename = Path(local_file_name).name
                existing_names = {
                    Path(f).name
                    for f in list_files_in_directory(workflow_download_directory)
                    if Path(f).name != local_basename
                }
                desired_name = download_filename_from_suffix(download_suffix, file_extension, existing_names)
                # finalize_* keys avoid the forge_log processor, which overwrites bare task_id/
                # workflow_run_id with the ambient context's values; under a stale/shared context those
                # would otherwise mask the task actually being finalized (the divergence to diagnose).
                LOG.info(
                    "download_suffix_finalize_rename",
                    execution_path="agent_finalize",
                    finalize_task_id=task.task_id,
                    finalize_workflow_run_id=task.workflow_run_id,
                    context_task_id=context.task_id if context else None,
                    pre_rename_filename_fp=diagnostic_fingerprint(local_basename),
                    passed_download_suffix_fp=diagnostic_fingerprint(download_suffix),
                    context_download_suffix_fp=diagnostic_fingerprint(context.download_suffix if context else None),
                    desired_name_fp=diagnostic_fingerprint(desired_name),
                    will_rename=local_basename != desired_name,
                )
                if local_basename != desired_name:
                    rename_file(os.path.join(workflow_download_directory, local_file_name), desired_name)
                continue

            if randomize_if_missing:
                random_file_id = "".join(random.choices(string.ascii_uppercase + string.digits, k=4))
                final_file_name = f"download-{datetime.now().strftime('%Y%m%d%H%M%S%f')}-{random_file_id}"
            else:
                continue

            base_final_file_name = final_file_name
            target_path = os.path.join(workflow_download_directory, final_file_name + file_extension)
            counter = 1
            while os.path.exists(target_path):
                final_file_name = f"{base_final_file_name}_{counter}"
                target_path = os.path.join(workflow_download_directory, final_file_name + file_extension)
                counter += 1

            rename_file(
                os.path.join(workflow_download_directory, local_file_name),
                final_file_name + file_extension,
            )

        return files_to_rename

    async def create_task_and_step_from_block(
        self,
        task_block: BaseTaskBlock,
        workflow: Workflow,
        workflow_run: WorkflowRun,
        workflow_run_context: WorkflowRunContext,
        task_order: int,
        task_retry: int,
    ) -> tuple[Task, Step]:
        task_block_parameters = task_block.parameters
        navigation_payload = {}
        for parameter in task_block_parameters:
            navigation_payload[parameter.key] = workflow_run_context.get_value(parameter.key)

        task_url = task_block.url
        if task_url is None:
            browser_state = app.BROWSER_MANAGER.get_for_workflow_run(
                workflow_run_id=workflow_run.workflow_run_id, parent_workflow_run_id=workflow_run.parent_workflow_run_id
            )
            if browser_state is not None:
                working_page = await resolve_inherited_workflow_task_page(
                    browser_state=browser_state,
                    workflow_run_id=workflow_run.workflow_run_id,
                )
                task_url = working_page.url
            else:
                LOG.info("No browser state found for workflow run, setting task url to empty string")
                task_url = ""

        task = await app.DATABASE.tasks.create_task(
            url=task_url,
            task_type=task_block.task_type,
            complete_criterion=task_block.complete_criterion,
            terminate_criterion=task_block.terminate_criterion,
            title=task_block.title or task_block.label,
            webhook_callback_url=None,
            totp_verification_url=task_block.totp_verification_url,
            totp_identifier=task_block.totp_identifier,
            navigation_goal=task_block.navigation_goal,
            data_extraction_goal=task_block.data_extraction_goal,
            navigation_payload=navigation_payload,
            organization_id=workflow_run.organization_id,
            proxy_location=workflow_run.proxy_location,
            extracted_information_schema=task_block.data_schema,
            workflow_run_id=workflow_run.workflow_run_id,
            order=task_order,
            retry=task_retry,
            max_steps_per_run=task_block.max_steps_per_run,
            error_code_mapping=task_block.error_code_mapping,
            workflow_system_prompt=task_block.workflow_system_prompt,
            include_action_history_in_verification=task_block.include_action_history_in_verification,
            model=task_block.model,
            max_screenshot_scrolling_times=workflow_run.max_screenshot_scrolls,
            extra_http_headers=workflow_run.extra_http_headers,
            cdp_connect_headers=workflow_run.cdp_connect_headers,
            browser_address=workflow_run.browser_address,
            browser_session_id=workflow_run.browser_session_id,
            download_timeout=task_block.download_timeout,
            include_extracted_text=task_block.include_extracted_text,
        )
        LOG.info(
            "Created a new task for workflow run",
            sampling=True,
            workflow_id=workflow.workflow_id,
            workflow_run_id=workflow_run.workflow_run_id,
            task_id=task.task_id,
            url=task.url,
            title=task.title,
            proxy_location=task.proxy_location,
            task_order=task_order,
            task_retry=task_retry,
        )
        # Update task status to running
        task = await app.DATABASE.tasks.update_task(
            task_id=task.task_id,
            organization_id=task.organization_id,
            status=TaskStatus.running,
        )

        step = await app.DATABASE.tasks.create_step(
            task.task_id,
            order=0,
            retry_index=0,
            organization_id=task.organization_id,
        )
        LOG.info(
            "Created new step for workflow run",
            sampling=True,
            workflow_id=workflow.workflow_id,
            workflow_run_id=workflow_run.workflow_run_id,
            order=step.order,
            retry_index=step.retry_index,
        )
        return task, step

    async def create_task_and_step_from_code_block(
        self,
        code_block: CodeBlock,
        organization_id: str | None,
        workflow_run_id: str,
        task_url: str,
    ) -> tuple[Task, Step]:
        """Container task v1 for a code block's recorded actions, also the seat for future agent fallback."""
        task_order, task_retry = await BaseTaskBlock.get_task_order(workflow_run_id, 0)
        task: Task | None = None
        try:
            task = await app.DATABASE.tasks.create_task(
                url=task_url,
                title=code_block.label,
                navigation_goal=code_block.prompt or None,
                data_extraction_goal=None,
                navigation_payload=None,
                organization_id=organization_id,
                workflow_run_id=workflow_run_id,
                order=task_order,
                retry=task_retry,
            )
            task = await app.DATABASE.tasks.update_task(
                task_id=task.task_id,
                organization_id=organization_id,
                status=TaskStatus.running,
            )
            step = await app.DATABASE.tasks.create_step(
                task.task_id,
                order=0,
                retry_index=0,
                organization_id=organization_id,
            )
        except Exception:
            if task is not None:
                with contextlib.suppress(Exception):
                    await app.DATABASE.tasks.update_task(
                        task_id=task.task_id,
                        organization_id=organization_id,
                        status=TaskStatus.failed,
                    )
            raise
        return task, step

    async def create_task(self, task_request: TaskRequest, organization_id: str) -> Task:
        webhook_callback_url = str(task_request.webhook_callback_url) if task_request.webhook_callback_url else None
        totp_verification_url = str(task_request.totp_verification_url) if task_request.totp_verification_url else None
        # validate browser session id
        if task_request.browser_session_id:
            browser_session = await app.DATABASE.browser_sessions.get_persistent_browser_session(
                session_id=task_request.browser_session_id,
                organization_id=organization_id,
            )
            if not browser_session:
                raise BrowserSessionNotFound(browser_session_id=task_request.browser_session_id)

        task = await app.DATABASE.tasks.create_task(
            url=str(task_request.url),
            title=task_request.title,
            webhook_callback_url=webhook_callback_url,
            totp_verification_url=totp_verification_url,
            totp_identifier=task_request.totp_identifier,
            navigation_goal=task_request.navigation_goal,
            complete_criterion=task_request.complete_criterion,
            terminate_criterion=task_request.terminate_criterion,
            data_extraction_goal=task_request.data_extraction_goal,
            navigation_payload=task_request.navigation_payload,
            organization_id=organization_id,
            proxy_location=task_request.proxy_location,
            extracted_information_schema=task_request.extracted_information_schema,
            error_code_mapping=task_request.error_code_mapping,
            workflow_system_prompt=task_request.workflow_system_prompt,
            application=task_request.application,
            include_action_history_in_verification=task_request.include_action_history_in_verification,
            model=task_request.model,
            max_screenshot_scrolling_times=task_request.max_screenshot_scrolls,
            extra_http_headers=task_request.extra_http_headers,
            cdp_connect_headers=task_request.cdp_connect_headers,
            browser_session_id=task_request.browser_session_id,
            browser_address=task_request.browser_address,
            include_extracted_text=task_request.include_extracted_text,
        )
        LOG.info(
            "Created new task",
            task_id=task.task_id,
            url=task.url,
            proxy_location=task.proxy_location,
            organization_id=organization_id,
        )
        return task

    async def register_async_operations(self, organization: Organization, task: Task, page: Page) -> None:
        operations = await app.AGENT_FUNCTION.generate_async_operations(organization, task, page)
        self.async_operation_pool.add_operations(task.task_id, operations)

    async def _execute_task_v3(
        self,
        *,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        organization: Organization,
        api_key: str | None,
        close_browser_on_completion: bool,
        browser_session_id: str | None,
        task_block: BaseTaskBlock | None = None,
    ) -> tuple[Step, Task]:
        """Run a whole task via the native Task V3 tool-loop (one persistent conversation).

        The loop owns the page for the entire task and returns a single outcome, which we
        map onto the task's terminal state here. Runs exactly once: the caller returns
        next_step=None for this engine, so neither retry nor execute-all-steps recursion fires.
        """
        from skyvern.forge.sdk.api.files import get_download_dir, resolve_run_download_id
        from skyvern.forge.sdk.api.llm.schema_validator import (
            extraction_shape_matches,
            validate_and_fill_extraction_result,
        )
        from skyvern.forge.taskv3.auth_tools import build_auth_tools
        from skyvern.forge.taskv3.captcha_tools import build_captcha_tools
        from skyvern.forge.taskv3.engine import (
            MIN_ACTION_STEPS,
            coerce_v3_parameters,
            run_task_v3_agent_loop,
            taskv3_runaway_backstops,
        )
        from skyvern.forge.taskv3.loop import DEFAULT_MAX_SETTLE_DEFERRALS

        # Workflow-block tasks re-resolve the live working page on every tool call, so a click that
        # opens a new tab/popup is followed (mirrors the step engine's get_working_page re-fetch).
        # Bare tasks keep today's exact semantics: one page grabbed up front, for the run's duration.
        if task_block is not None:
            # Fail fast (with the same recovery attempt bare tasks get) when the page is already
            # gone at block start; mid-run losses surface through the per-call provider instead.
            await browser_state.must_get_working_page()

            async def _page_provider() -> Any:
                # must_get (not get): recovers a crashed/closed page via _reopen_lost_working_page,
                # matching the step engine's per-action re-acquisition; its raise on unrecoverable
                # loss is contained by the loop's per-tool-call error handling.
                return await browser_state.must_get_working_page()

            async def _fingerprint_page() -> Any:
                # get (not must_get): recovery at finish time could navigate and induce duplicate
                # actions, so a lost page yields None and the verdict is accepted as-is.
                return await browser_state.get_working_page()

        else:
            initial_page = await browser_state.must_get_working_page()

            async def _page_provider() -> Any:
                return initial_page

            async def _fingerprint_page() -> Any:
                # The fingerprint MUST sample the page the tools act on. Bare tasks pin one page for
                # the run, and browser_state.get_working_page() would both return the newest tab
                # (wrong page after any popup) and repoint the working page as a side effect.
                return None if initial_page.is_closed() else initial_page

        llm_caller = LLMCaller(llm_key=await _resolve_task_v3_llm_key(task))
        parameters = coerce_v3_parameters(task.navigation_payload)
        context = skyvern_context.current()
        goal = task.navigation_goal or ""
        if task.data_extraction_goal:
            goal = (
                f"{goal}\n\nWhen the page goal is met, extract the requested data and return it as the "
                f"`extracted_output` argument to finish. Data to extract: {task.data_extraction_goal}"
            ).strip()
        if task.extracted_information_schema:
            goal = (
                f"{goal}\n\nThe extracted_output MUST be valid JSON conforming to this schema:\n"
                f"{json.dumps(task.extracted_information_schema, default=str)}"
            ).strip()
        # Surface the customer's completion/termination criteria (trusted task config, like the
        # navigation goal). Skip a complete_criterion flagged untrusted (LLM-derived from page content)
        # so it can't be injected into the goal raw — unreachable on v3 today, but keeps the boundary
        # if a future change ever routes such tasks here.
        if task.complete_criterion and not (context and context.complete_criterion_is_untrusted):
            goal = (
                f"{goal}\n\nConsider the goal complete, and finish with status=completed, only when: "
                f"{task.complete_criterion}"
            ).strip()
        if task.terminate_criterion:
            goal = (
                f"{goal}\n\nIf this becomes true, stop and finish with status=terminated: {task.terminate_criterion}"
            ).strip()
        page_free_validation = bool(
            task_block is not None
            and task.task_type == TaskType.validation
            and context
            and context.validation_without_page_information
        )
        if task_block is not None and task.task_type == TaskType.validation and not page_free_validation:
            # Same evidence router v1 consults: a router-selected data-only validation goes
            # page-free on v3 too. Conservative — any router error keeps the page-aware path.
            try:
                router_result = await resolve_validation_evidence_route(
                    task=task,
                    step=step,
                    complete_criterion=task.complete_criterion.strip() if task.complete_criterion else None,
                    terminate_criterion=task.terminate_criterion.strip() if task.terminate_criterion else None,
                    navigation_payload_str=json.dumps(parameters) if parameters else "{}",
                    error_code_mapping_str=json.dumps(task.error_code_mapping) if task.error_code_mapping else None,
                    local_datetime=datetime.now(context.tz_info if context else None).isoformat(),
                )
                page_free_validation = bool(router_result.effective_without_page_information)
            except Exception:
                LOG.warning("task_v3 validation evidence router failed; staying page-aware", task_id=task.task_id)
        if task_block is not None and not page_free_validation:
            # A block resumes mid-workflow: an earlier block may already have satisfied this one's
            # criterion (the step engine's per-step goal check gives it this for free).
            goal = (
                f"{goal}\n\nThis task is one block of a larger workflow and starts mid-flow. First read "
                "the full page text (get_html) and check whether the completion criterion is ALREADY "
                "satisfied by the page's settled, loaded content - a loading indicator, skeleton, or "
                "empty container does NOT satisfy a criterion about visible content."
                + (
                    " When the goal names an action (open/click/submit), perform it unless the page "
                    "already shows that action's RESULT."
                    if task.task_type != TaskType.validation
                    else ""
                )
                + " If the criterion is genuinely satisfied, finish with status=completed "
                "immediately without acting. Stay "
                "within this block's goal: never sign out, navigate away from the current flow, or undo "
                "prior progress unless the goal explicitly asks for it."
            ).strip()
        if page_free_validation:
            # This mode judges only durable inputs/prior outputs; any perception instruction would
            # contradict it, so it replaces (not extends) the read-the-page framing above.
            goal = (
                f"{goal}\n\nThis is a page-free assessment task: judge ONLY from the information already "
                "provided above and prior workflow context. Do not call observe or get_html, and do not "
                "modify page state. Evaluate the completion and termination criteria and finish with the "
                "matching status."
            ).strip()
        elif task_block is not None and task.task_type == TaskType.validation:
            # ValidationBlock tasks judge, not act; without this the loop can treat the criteria
            # above as something to accomplish by interacting with the page.
            goal = (
                f"{goal}\n\nThis is an assessment task: do not modify page state. Evaluate the completion "
                "and termination criteria above and finish with the matching status. Ground the judgment "
                "in the page's actual content: read the full page text (get_html) before concluding, and "
                "never finish with status=terminated on element summaries alone — absence must be "
                "confirmed against the full text."
            ).strip()
        elif task_block is not None and task.task_type == TaskType.action:
            goal = f"{goal}\n\nThis is a single, focused action: perform it and finish.".strip()

        async def _should_cancel() -> bool:
            refreshed = await app.DATABASE.tasks.get_task(
                task_id=task.task_id, organization_id=organization.organization_id
            )
            if refreshed and refreshed.status in (TaskStatus.canceled, TaskStatus.timed_out):
                return True
            # A workflow task also stops when its parent run is canceled or reaped to timed_out, not
            # just the task row. Fail open on a lookup error: a DB blip must not fail a healthy run.
            if task.workflow_run_id:
                try:
                    workflow_run = await app.DATABASE.workflow_runs.get_workflow_run(
                        workflow_run_id=task.workflow_run_id, organization_id=organization.organization_id
                    )
                except Exception:
                    LOG.warning("task_v3 cancel poll failed to read workflow run", task_id=task.task_id, exc_info=True)
                    return False
                if workflow_run and workflow_run.status in (WorkflowRunStatus.canceled, WorkflowRunStatus.timed_out):
                    return True
            return False

        download_id = resolve_run_download_id(context, fallback_run_id=task.task_id)
        # Honor a step cap (per-request override, task, or org, else the same MAX_STEPS_PER_RUN default
        # the step engine uses) as the ACTION-round budget: a v3 step is one action round (a turn that
        # mutates the page), matching a step-engine step, so perception rounds (observe/get_html) don't
        # consume it. The turn / tool-call runaway guards are sized off that cap so they only catch a
        # no-progress spiral, never binding before the action budget on a productive run.
        step_cap = (
            (context.max_steps_override if context else None)
            or task.max_steps_per_run
            or organization.max_steps_per_run
            or settings.MAX_STEPS_PER_RUN
        )
        # An action or validation block owns its small budget deliberately; every other cap is sized in
        # step-engine steps, which starves the less round-efficient v3 loop. Either signal alone marks
        # the budget as owned — the block class settles it when task_type was left at its `general`
        # default, which would otherwise floor an action block to many times its intended rounds.
        atomic_block_budget = task_block is not None and (
            isinstance(task_block, (ActionBlock, ValidationBlock))
            or (task.task_type or TaskType.general) != TaskType.general
        )
        if not atomic_block_budget:
            floored_step_cap = max(step_cap, MIN_ACTION_STEPS)
            if floored_step_cap != step_cap and task_block is not None:
                LOG.info(
                    "task_v3 raised a block's action-step budget to the v3 floor",
                    log_code="taskv3_action_budget_floored",
                    task_id=task.task_id,
                    block_label=task_block.label,
                    block_type=task_block.block_type,
                    configured_step_cap=step_cap,
                    floored_step_cap=floored_step_cap,
                )
            step_cap = floored_step_cap
        if task_block is not None:
            # The org's workflow-run-wide step ceiling binds v3 blocks too: an action round is the
            # budget unit (round-stamped action rows make prior v3 rounds count exactly).
            workflow_run_budget = await self._check_workflow_run_step_budget(organization, task)
            if workflow_run_budget is not None:
                total_workflow_run_steps, max_steps_per_workflow_run = workflow_run_budget
                # The count already includes THIS block's freshly created Step(order=0), which has
                # performed nothing yet — credit it back so a cap of N allows N actual rounds.
                remaining_workflow_steps = max_steps_per_workflow_run - max(0, total_workflow_run_steps - 1)
                if remaining_workflow_steps <= 0:
                    LOG.info(
                        "task_v3 block not started: workflow-run max steps reached",
                        task_id=task.task_id,
                        total_workflow_run_steps=total_workflow_run_steps,
                        max_steps_per_workflow_run=max_steps_per_workflow_run,
                    )
                    step = await self.update_step(step, status=StepStatus.failed, is_last=True)
                    task = await self.update_task(
                        task,
                        status=TaskStatus.failed,
                        failure_reason=f"Workflow run reached the maximum steps ({max_steps_per_workflow_run})",
                    )
                    await self.clean_up_task(
                        task=task,
                        last_step=step,
                        api_key=api_key,
                        need_call_webhook=True,
                        close_browser_on_completion=close_browser_on_completion,
                        browser_session_id=browser_session_id,
                    )
                    return step, task
                step_cap = min(step_cap, remaining_workflow_steps)
        max_turns, max_tool_calls = taskv3_runaway_backstops(step_cap)
        # Per-action persistence (parity with the step engine): the loop hands us each successful
        # action round, and we persist one DB row per action + one screenshot per round, so the Task
        # API's action_screenshot_urls and GET /tasks/{id}/actions are populated for v3. Additive and
        # best-effort — billing still meters off outcome.billable_actions below.
        _billable_tool_names = frozenset(
            {"click", "hover", "type", "select_option", "select_combobox", "press_key", "file_upload"}
        )
        v3_persisted_actions: list[Action] = []
        v3_round_index = 0

        async def _on_action_round(round_actions: list[tuple[str, dict[str, Any], bool]]) -> None:
            nonlocal v3_round_index
            screenshot_artifact_id: str | None = None
            try:
                screenshot = await browser_state.take_post_action_screenshot(scrolling_number=0)
                screenshot_artifact_id = await app.ARTIFACT_MANAGER.create_artifact(
                    step=step, artifact_type=ArtifactType.SCREENSHOT_ACTION, data=screenshot
                )
            except Exception:
                LOG.warning("task_v3 failed to capture post-action screenshot", task_id=task.task_id, exc_info=True)
            secret_values: set[str] = set()
            if app.WORKFLOW_CONTEXT_MANAGER.artifact_redaction_enabled(task.workflow_run_id):
                secret_values = app.WORKFLOW_CONTEXT_MANAGER.get_secret_values_for_run(task.workflow_run_id)
            for name, args, succeeded in round_actions:
                try:
                    tool_args = _redact_tool_args(args if isinstance(args, dict) else {}, secret_values)
                    selector = tool_args.get("selector", "")
                    action = _taskv3_action_for_tool_call(
                        name,
                        tool_args,
                        status=ActionStatus.completed if succeeded else ActionStatus.failed,
                        organization_id=task.organization_id,
                        workflow_run_id=task.workflow_run_id,
                        task_id=task.task_id,
                        step_id=step.step_id,
                        # Round index, not the single Step's order: makes each v3 action ROUND count
                        # as one unit of the workflow-run step budget (distinct (task, order) pairs).
                        step_order=v3_round_index,
                        action_order=len(v3_persisted_actions),
                        description=f"task_v3 {name} {selector}".strip(),
                        screenshot_artifact_id=screenshot_artifact_id,
                    )
                    v3_persisted_actions.append(action)
                    await app.DATABASE.workflow_params.create_action(action=action)
                except Exception:
                    LOG.warning("task_v3 failed to persist action row", task_id=task.task_id, exc_info=True)
            if any(name in _billable_tool_names for name, _args, _ok in round_actions):
                # Only billable rounds consume the budget unit; recordable-only rounds (navigate/
                # scroll/wait) keep the current index so they never inflate the workflow-run count.
                v3_round_index += 1

        # Disambiguates multi-credential TOTP the way v1's action handler does (handler.py
        # get_actual_value_of_parameter_if_secret), but resolved once per block instead of per keystroke:
        # only an unambiguous single login credential is worth pinning for the whole loop.
        credential_parameter_key: str | None = None
        if task_block is not None:
            login_credential_keys = [
                parameter.key for parameter in task_block.parameters if parameter.parameter_type.is_login_credential()
            ]
            if len(login_credential_keys) == 1:
                credential_parameter_key = login_credential_keys[0]

        # One cheap DOM sample per call: a content hash plus length and element count, so a swap
        # that preserves the page's shape still changes the fingerprint. A lost page returns None
        # (nothing to verify; accept the verdict as-is). Errors propagate: the finish gate treats
        # them as unknown, never as settled. Timing and its deadline/cancellation bounds live with
        # the gate, not here. Built for both populations — the failure-evidence gate needs a sampler
        # to run at all — over the same page accessor each population's tools use, so the evidence
        # is sampled from the page the model actually acted on.
        async def _page_fingerprint() -> str | None:
            peek = await _fingerprint_page()
            if peek is None:
                return None
            probe_js = (
                "() => { if (!document.body) return '0'; const s = document.body.innerHTML;"
                " let h = 0; for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;"
                " return h + ':' + s.length + ':' + document.querySelectorAll('*').length; }"
            )
            return await peek.evaluate(probe_js)

        resolve_typed_text = None
        if task_block is not None:
            # Local import: handler.py transitively imports this module (agent registration), so a
            # top-level import would be circular; matches this function's other lazy imports.
            from skyvern.webeye.actions.handler import get_actual_value_of_parameter_if_secret_with_task

            def resolve_typed_text(text: str) -> Any:
                return get_actual_value_of_parameter_if_secret_with_task(task, text)

        prev_active_credential_parameter_key = context.active_credential_parameter_key if context else None
        if context and credential_parameter_key is not None:
            context.active_credential_parameter_key = credential_parameter_key
        try:
            # Built AFTER the credential pin: the tool-offer gate (has_credential_totp_candidate)
            # must see the pinned key, or a multi-credential context hides get_verification_code.
            auth_tools, auth_guidance = build_auth_tools(task)
            # Offered on any page-aware run (a captcha can appear mid-run, so there is no build-time
            # source to gate on); solving routes through the AGENT_FUNCTION seam (OSS no-op, cloud solves).
            # Withheld in page-free mode: like browser_tools, a page-operating tool must not be offered
            # when the run structurally never touches the live DOM.
            captcha_tools: list[Any] = []
            captcha_guidance = ""
            if not page_free_validation:
                captcha_tools, captcha_guidance = build_captcha_tools(
                    task, _page_provider, organization_id=organization.organization_id
                )
            outcome = await run_task_v3_agent_loop(
                page_provider=_page_provider,
                resolve_typed_text=resolve_typed_text,
                page_free=page_free_validation,
                page_fingerprint=_page_fingerprint,
                # The 2026-08-18 scoping decision kept the completed-side settle probe off the
                # bare-task arm. Fenced by its own deferral budget so it does not also disable
                # the failure-evidence gate that shares the sampler (SKY-14598).
                max_settle_deferrals=DEFAULT_MAX_SETTLE_DEFERRALS if task_block is not None else 0,
                llm_caller=llm_caller,
                goal=goal,
                parameters=parameters,
                starting_url=task.url,
                downloads_dir=get_download_dir(download_id),
                organization_id=organization.organization_id,
                max_action_steps=step_cap,
                max_turns=max_turns,
                max_tool_calls=max_tool_calls,
                step=step,
                should_cancel=_should_cancel,
                on_action_round=_on_action_round,
                extra_tools=auth_tools + captcha_tools,
                extra_system_guidance="\n\n".join(
                    part for part in (auth_guidance, captcha_guidance, task.workflow_system_prompt) if part
                ),
            )
        finally:
            if context and credential_parameter_key is not None:
                context.active_credential_parameter_key = prev_active_credential_parameter_key
        LOG.info(
            "Task V3 loop finished",
            task_id=task.task_id,
            status=outcome.status,
            turns=outcome.turns,
            tool_calls=outcome.tool_calls,
            action_steps=outcome.action_steps,
        )
        completion_vetoed = False
        if outcome.status == "completed":
            # Same deployment gate the step engine applies before accepting a completion verdict
            # (e.g. a submit block that must show a deterministic confirmation). The loop has already
            # returned, so a veto fails safe instead of falsely completing.
            try:
                gate_page = await browser_state.get_working_page()
                completion_vetoed = not await app.AGENT_FUNCTION.gate_step_completion(
                    task=task,
                    step=step,
                    task_block=task_block,
                    page=gate_page,
                    browser_state=browser_state,
                )
            except Exception:
                LOG.warning(
                    "task_v3 completion gate errored; accepting completion", task_id=task.task_id, exc_info=True
                )
            if completion_vetoed:
                LOG.info("task_v3 completion vetoed by completion gate", task_id=task.task_id)
        status_map = {
            "completed": TaskStatus.completed,
            "terminated": TaskStatus.terminated,
            "canceled": TaskStatus.canceled,
        }
        task_status = status_map.get(outcome.status, TaskStatus.failed)
        if completion_vetoed:
            task_status = TaskStatus.failed
        # A completed run with a data-extraction goal must actually carry data. The model declaring
        # completion with no extracted_output is a failed extraction, not an empty success — report it
        # as failed rather than fabricate an empty object that reads as a successful-but-empty result.
        # An explicit empty structure ({}/[]) is a real answer and is left as completed.
        extraction_requested = bool(task.data_extraction_goal or task.extracted_information_schema)
        missing_extraction = (
            task_status == TaskStatus.completed and extraction_requested and outcome.extracted_output is None
        )
        if missing_extraction:
            task_status = TaskStatus.failed
        completed = task_status == TaskStatus.completed
        if task_status == TaskStatus.canceled:
            step_status = StepStatus.canceled
        elif task_status in (TaskStatus.completed, TaskStatus.terminated):
            # A terminate decision is itself a successful step; only a real error fails the step.
            step_status = StepStatus.completed
        else:
            step_status = StepStatus.failed
        # This one step is the whole run's billing unit: a failure AFTER real page actions must still
        # bill them (post-step billing only meters completed steps), so chargeable work completes the
        # step even when the task fails. Canceled runs stay unbilled, matching the step engine.
        if step_status == StepStatus.failed and outcome.billable_actions:
            step_status = StepStatus.completed
        extracted_information = outcome.extracted_output if completed else None
        if completed and task.extracted_information_schema is not None and extracted_information is not None:
            # Repair the model's output against the schema (fill missing required fields, drop
            # hallucinated array items), matching the step engine — but only when the output's shape
            # matches the schema's root type. On a mismatch (e.g. a string under an object schema)
            # validate_and_fill replaces it with an all-default stub, which would silently launder a
            # non-conforming extraction into a fake empty success (the very thing the check above
            # refuses); leave a mismatched output raw instead.
            if extraction_shape_matches(extracted_information, task.extracted_information_schema):
                extracted_information = validate_and_fill_extraction_result(
                    extracted_information, task.extracted_information_schema
                )
        if extracted_information is not None and app.WORKFLOW_CONTEXT_MANAGER.artifact_redaction_enabled(
            task.workflow_run_id
        ):
            secret_values = app.WORKFLOW_CONTEXT_MANAGER.get_secret_values_for_run(task.workflow_run_id)
            if secret_values:
                extracted_information = _redact_extracted_information(extracted_information, secret_values)
        # Emit one action-result per billable browser action so the per-step billing hook meters a
        # task_v3 run per action, exactly like the step engine — no billing-model change. (Reuses the
        # _TASKV3_TOOL_ACTION_TYPES map for per-action persistence.)
        billable_action_results: list[tuple[Action, list[ActionResult]]] = [
            (
                Action(
                    action_type=_TASKV3_TOOL_ACTION_TYPES.get(name, ActionType.CLICK),
                    task_id=task.task_id,
                    step_id=step.step_id,
                    description=f"task_v3 {name}",
                ),
                [ActionSuccess()],
            )
            for name in outcome.billable_actions
        ]
        step = await self.update_step(
            step,
            status=step_status,
            is_last=True,
            output=AgentStepOutput(action_results=[], actions_and_results=billable_action_results),
        )
        # Meter the run through the same hook the step engine uses (the v3 branch returns before
        # execute_step's own post_step_execution call). Contain any billing error: if it propagated,
        # the caller's `step, task = ...` assignment would never complete and execute_step's generic
        # handler would fail_task a run that actually finished — dropping its extracted_information
        # after credits were already consumed. send_meter_event re-raises on Stripe errors, so this
        # is reachable, not theoretical.
        try:
            await app.AGENT_FUNCTION.post_step_execution(task, step)
        except Exception:
            LOG.warning(
                "task_v3 post-step billing hook failed; run already finalized, not failing it",
                task_id=task.task_id,
                step_id=step.step_id,
                exc_info=True,
            )
        failure_category = None
        if task_status in (TaskStatus.completed, TaskStatus.canceled):
            failure_reason = None
        elif completion_vetoed:
            failure_reason = "task_v3 reported completion but the deployment completion gate rejected it"
        elif missing_extraction:
            failure_reason = "task_v3 reported completion but returned no extracted_output for the data-extraction goal"
        else:
            failure_reason = outcome.reason or outcome.status
        if task_status == TaskStatus.failed:
            # Same code-level failure classification fail_task records, so v3 failures carry a
            # failure_category like step-engine failures.
            failure_category = classify_from_failure_reason(failure_reason, fallback_to_unknown=True)
        if task.error_code_mapping and task_status in (TaskStatus.failed, TaskStatus.terminated):
            # Same user-defined error detection the step engine runs on failure, so workflows that
            # consume configured error codes keep that contract on v3.
            try:
                detected_errors = await detect_user_defined_errors_for_task(
                    task=task,
                    step=step,
                    browser_state=browser_state,
                    failure_reason=failure_reason,
                )
                if detected_errors:
                    await app.DATABASE.tasks.update_task(
                        task_id=task.task_id,
                        organization_id=task.organization_id,
                        errors=[error.model_dump() for error in detected_errors],
                    )
            except Exception:
                LOG.warning("task_v3 user-defined error detection failed", task_id=task.task_id, exc_info=True)
        need_call_webhook = True
        try:
            task = await self.update_task(
                task,
                status=task_status,
                extracted_information=extracted_information,
                failure_reason=failure_reason,
                failure_category=failure_category,
            )
        except (TaskAlreadyTimeout, TaskAlreadyCanceled) as finalized:
            # A reaper or cancel API finalized the row while the loop was stopping; that terminal
            # status wins — keep it rather than routing this run through the failure path. The cancel
            # API already webhooks synchronously, so suppress the duplicate there (v1 parity on both axes).
            need_call_webhook = not isinstance(finalized, TaskAlreadyCanceled)
            LOG.info(
                "task_v3 task already finalized externally; keeping the existing terminal status",
                task_id=task.task_id,
                attempted_status=task_status,
            )
            refreshed = await app.DATABASE.tasks.get_task(
                task_id=task.task_id, organization_id=organization.organization_id
            )
            if refreshed:
                task = refreshed
        await self.clean_up_task(
            task=task,
            last_step=step,
            api_key=api_key,
            need_call_webhook=need_call_webhook,
            close_browser_on_completion=close_browser_on_completion,
            browser_session_id=browser_session_id,
        )
        return step, task

    # Span name intentionally differs from the method: this is the outer wrapper
    # that handles cancellation checks, status updates, retries, and cleanup around
    # the inner step body. "step_orchestration" reads better on the trace dashboard
    # than "execute_step", which was easy to confuse with the inner span below.
    # code.function still carries the qualname for grep.
    @traced(name="skyvern.agent.step_orchestration", role="wrapper")
    async def execute_step(
        self,
        organization: Organization,
        task: Task,
        step: Step,
        api_key: str | None = None,
        close_browser_on_completion: bool = True,
        task_block: BaseTaskBlock | None = None,
        browser_session_id: str | None = None,
        complete_verification: bool = True,
        engine: RunEngine = RunEngine.skyvern_v1,
        cua_response: OpenAIResponse | None = None,
        llm_caller: LLMCaller | None = None,
        download_baseline_files: list[str] | None = None,
        pre_resolved_browser_state: BrowserState | None = None,
    ) -> Tuple[Step, DetailedAgentStepOutput | None, Step | None]:
        # set the step_id and task_id in the context
        context = skyvern_context.ensure_context()
        context.step_id = step.step_id
        context.step_retry_index = step.retry_index
        context.task_id = task.task_id
        context.navigation_goal = task.navigation_goal
        context.navigation_payload = task.navigation_payload
        context.download_suffix = task_block.download_suffix if task_block else None

        # do not need to do complete verification when it's a CUA task
        # 1. CUA executes only one action step by step -- it's pretty less likely to have a hallucination for completion or forget to return a complete
        # 2. It will significantly slow down CUA tasks
        if engine in CUA_ENGINES:
            complete_verification = False

        close_browser_on_completion = (
            close_browser_on_completion and browser_session_id is None and not task.browser_address
        )

        workflow_run: WorkflowRun | None = None
        if task.workflow_run_id:
            workflow_run = await app.DATABASE.workflow_runs.get_workflow_run(
                workflow_run_id=task.workflow_run_id,
                organization_id=organization.organization_id,
            )
            if workflow_run and workflow_run.status == WorkflowRunStatus.canceled:
                LOG.info(
                    "Workflow run is canceled, stopping execution inside task",
                    workflow_run_id=workflow_run.workflow_run_id,
                )
                step = await self.update_step(
                    step,
                    status=StepStatus.canceled,
                    is_last=True,
                )
                task = await self.update_task(
                    task,
                    status=TaskStatus.canceled,
                )
                return step, None, None

            if workflow_run and workflow_run.status == WorkflowRunStatus.timed_out:
                LOG.info(
                    "Workflow run is timed out, stopping execution inside task",
                    workflow_run_id=workflow_run.workflow_run_id,
                )
                step = await self.update_step(
                    step,
                    status=StepStatus.canceled,
                    is_last=True,
                )
                task = await self.update_task(
                    task,
                    status=TaskStatus.timed_out,
                )
                return step, None, None

        refreshed_task = await app.DATABASE.tasks.get_task(
            task_id=task.task_id, organization_id=organization.organization_id
        )
        if refreshed_task:
            task = refreshed_task

        if task.status == TaskStatus.canceled:
            LOG.info(
                "Task is canceled, stopping execution",
                task_id=task.task_id,
            )
            step = await self.update_step(
                step,
                status=StepStatus.canceled,
                is_last=True,
            )
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                need_call_webhook=True,
                browser_session_id=browser_session_id,
                close_browser_on_completion=close_browser_on_completion,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=download_baseline_files,
            )
            return step, None, None

        override_max_steps_per_run = context.max_steps_override or None
        max_steps_per_run = (
            override_max_steps_per_run
            or task.max_steps_per_run
            or organization.max_steps_per_run
            or settings.MAX_STEPS_PER_RUN
        )
        if max_steps_per_run and task.max_steps_per_run != max_steps_per_run:
            await app.DATABASE.tasks.update_task(
                task_id=task.task_id,
                organization_id=organization.organization_id,
                max_steps_per_run=max_steps_per_run,
            )
        next_step: Step | None = None
        detailed_output: DetailedAgentStepOutput | None = None
        list_files_before: list[str] = download_baseline_files.copy() if download_baseline_files is not None else []
        browser_state: BrowserState | None = None
        try:
            if download_baseline_files is None and task.workflow_run_id:
                list_files_before = list_files_in_directory(
                    get_path_for_workflow_download_directory(
                        resolve_run_download_id(context, fallback_run_id=task.workflow_run_id)
                    )
                )
            if task.browser_session_id and download_baseline_files is None:
                browser_session_downloaded_files = await app.STORAGE.list_downloaded_files_in_browser_session(
                    organization_id=organization.organization_id,
                    browser_session_id=task.browser_session_id,
                )
                list_files_before = list_files_before + browser_session_downloaded_files
            # Check some conditions before executing the step, throw an exception if the step can't be executed
            await app.AGENT_FUNCTION.validate_step_execution(task, step)

            (
                step,
                browser_state,
                detailed_output,
            ) = await self.initialize_execution_state(
                task,
                step,
                workflow_run,
                browser_session_id,
                pre_resolved_browser_state=pre_resolved_browser_state,
            )

            # mark step as completed and mark task as completed
            if (
                not task.navigation_goal
                and not task.data_extraction_goal
                and not task.complete_criterion
                and not task.terminate_criterion
            ):
                # most likely a GOTO_URL task block
                page = await browser_state.must_get_working_page()
                current_url = page.url
                if current_url.rstrip("/") != task.url.rstrip("/"):
                    await browser_state.navigate_to_url(page=page, url=task.url)
                step = await self.update_step(
                    step, status=StepStatus.completed, is_last=True, output=AgentStepOutput(action_results=[])
                )
                task = await self.update_task(task, status=TaskStatus.completed)
                await self.clean_up_task(
                    task=task,
                    last_step=step,
                    api_key=api_key,
                    need_call_webhook=True,
                    close_browser_on_completion=close_browser_on_completion,
                    browser_session_id=browser_session_id,
                )
                return step, detailed_output, None

            # A bare task always qualifies; a workflow block must be an allowed type with no
            # download semantics (v3 doesn't implement complete_on_download/download_suffix).
            task_block_supports_v3 = task_block is None or _task_block_supports_v3(task_block)
            if engine == RunEngine.skyvern_v3 and task_block is not None and not task_block_supports_v3:
                LOG.info(
                    "Task V3 block type unsupported; falling back to the step engine",
                    task_id=task.task_id,
                    block_label=task_block.label,
                    block_type=task_block.block_type,
                    reason="taskv3_unsupported_block",
                )

            # Task V3 native engine: run the whole task as one persistent tool-loop and
            # complete here. Returns next_step=None, so neither retry nor execute-all-steps
            # recursion re-invokes the loop. DISABLE_TASK_V3 falls through to the step engine.
            if (
                engine == RunEngine.skyvern_v3
                and task_block_supports_v3
                # v3 now resolves TOTP via get_verification_code; only a totp_verification_url task
                # (needs step-engine webhook delivery) stays excluded on that axis.
                and not task.totp_verification_url
                and not await task_v3_disabled(task.workflow_run_id or task.task_id, task.organization_id)
            ):
                try:
                    step, task = await self._execute_task_v3(
                        task=task,
                        step=step,
                        browser_state=browser_state,
                        organization=organization,
                        api_key=api_key,
                        close_browser_on_completion=close_browser_on_completion,
                        browser_session_id=browser_session_id,
                        task_block=task_block,
                    )
                finally:
                    await app.ARTIFACT_MANAGER.flush_step_archive(step.step_id)
                return step, detailed_output, None

            if page := await browser_state.get_working_page():
                await self.register_async_operations(organization, task, page)

            if engine == RunEngine.anthropic_cua and not llm_caller:
                # see if the llm_caller is already set in memory
                llm_caller = LLMCallerManager.get_llm_caller(task.task_id)
                if not llm_caller:
                    # if not, create a new llm_caller
                    llm_key = task.llm_key
                    llm_caller = LLMCaller(
                        llm_key=llm_key or settings.ANTHROPIC_CUA_LLM_KEY, screenshot_scaling_enabled=True
                    )

            if engine == RunEngine.ui_tars and not llm_caller:
                # see if the llm_caller is already set in memory
                llm_caller = LLMCallerManager.get_llm_caller(task.task_id)
                if not llm_caller:
                    # create a new UI-TARS llm_caller
                    llm_key = task.llm_key or settings.VOLCENGINE_CUA_LLM_KEY
                    ui_tars_llm_caller = UITarsLLMCaller(llm_key=llm_key, screenshot_scaling_enabled=True)
                    ui_tars_llm_caller.initialize_conversation(task)
                    llm_caller = ui_tars_llm_caller

            if engine == RunEngine.yutori_navigator and not llm_caller:
                llm_caller = LLMCallerManager.get_llm_caller(task.task_id)
                if not llm_caller:
                    llm_key = task.llm_key or settings.YUTORI_LLM_KEY
                    yutori_caller = YutoriNavigatorLLMCaller(llm_key=llm_key, screenshot_scaling_enabled=False)
                    yutori_caller.initialize_conversation(task)
                    llm_caller = yutori_caller

            # TODO: remove the code after migrating everything to llm callers
            # currently, only anthropic cua and ui_tars tasks use llm_caller
            if engine in [RunEngine.anthropic_cua, RunEngine.ui_tars, RunEngine.yutori_navigator] and llm_caller:
                LLMCallerManager.set_llm_caller(task.task_id, llm_caller)

            step, detailed_output = await self.agent_step(
                task,
                step,
                browser_state,
                organization=organization,
                task_block=task_block,
                complete_verification=complete_verification,
                engine=engine,
                cua_response=cua_response,
                llm_caller=llm_caller,
            )
            await app.AGENT_FUNCTION.post_step_execution(task, step)
            task = await self.update_task_errors_from_detailed_output(task, detailed_output)  # type: ignore
            # Shadow-only loop-stall observability; never raises, never terminates (see shadow.py).
            await record_fail_fast_shadow(
                task=task,
                step=step,
                organization=organization,
                scraped_page=detailed_output.scraped_page if detailed_output else None,
            )
            retry = False

            if task_block and task_block.complete_on_download and task.workflow_run_id:
                workflow_download_directory = get_path_for_workflow_download_directory(
                    resolve_run_download_id(context, fallback_run_id=task.workflow_run_id)
                )

                downloading_files = list_downloading_files_in_directory(workflow_download_directory)
                if task.browser_session_id:
                    browser_session_downloading_files = await app.STORAGE.list_downloading_files_in_browser_session(
                        organization_id=organization.organization_id,
                        browser_session_id=task.browser_session_id,
                    )
                    downloading_files = downloading_files + browser_session_downloading_files
                if len(downloading_files) > 0:
                    LOG.info(
                        "Detecting files are still downloading, waiting for files to be completely downloaded.",
                        downloading_files=downloading_files,
                    )
                    try:
                        await wait_for_download_finished(
                            downloading_files=downloading_files,
                            timeout=task_block.download_timeout or BROWSER_DOWNLOAD_TIMEOUT,
                        )
                    except DownloadFileMaxWaitingTime as e:
                        LOG.warning(
                            "There're several long-time downloading files, these files might be broken",
                            downloading_files=e.downloading_files,
                            workflow_run_id=task.workflow_run_id,
                        )

                files_to_rename = await self._finalize_downloaded_files_for_task(
                    task,
                    organization_id=organization.organization_id,
                    download_suffix=task_block.download_suffix,
                    list_files_before=list_files_before,
                    randomize_if_missing=True,
                )
                if files_to_rename:
                    LOG.info(
                        "Task marked as completed due to download",
                        task_id=task.task_id,
                        num_files_before=len(list_files_before),
                        num_files_after=len(list_files_before) + len(files_to_rename),
                        new_files=files_to_rename,
                    )
                    last_step = await self.update_step(step, is_last=True)
                    completed_task = await self.update_task(
                        task,
                        status=TaskStatus.completed,
                    )
                    await app.ARTIFACT_MANAGER.flush_step_archive(step.step_id)
                    # Skip per-step video sync: clean_up_task performs the authoritative final upload.
                    # Do not pass download finalization inputs into cleanup here:
                    # the early complete_on_download path already finalized files
                    # against the pre-step baseline and cleanup must not do it again.
                    await self.clean_up_task(
                        task=completed_task,
                        last_step=last_step,
                        api_key=api_key,
                        close_browser_on_completion=close_browser_on_completion,
                        browser_session_id=browser_session_id,
                    )
                    return last_step, detailed_output, None

            # If the step failed, mark the step as failed and retry
            if step.status == StepStatus.failed:
                maybe_next_step = await self.handle_failed_step(organization, task, step)
                # Flush after handle_failed_step (no verification runs for failed steps).
                await app.ARTIFACT_MANAGER.flush_step_archive(step.step_id)
                # If there is no next step, it means that the task has failed
                if maybe_next_step:
                    # Only sync on retry; clean_up_task handles the final upload on terminal paths.
                    await self._sync_video_artifact_after_step(task, browser_state)
                    next_step = maybe_next_step
                    retry = True
                else:
                    await self.clean_up_task(
                        task=task,
                        last_step=step,
                        api_key=api_key,
                        close_browser_on_completion=close_browser_on_completion,
                        browser_session_id=browser_session_id,
                        download_suffix=task_block.download_suffix if task_block else None,
                        list_files_before=list_files_before,
                    )
                    return step, detailed_output, None
            elif step.status == StepStatus.completed:
                # TODO (kerem): keep the task object uptodate at all times so that clean_up_task can just use it
                (
                    is_task_completed,
                    maybe_last_step,
                    maybe_next_step,
                ) = await self.handle_completed_step(
                    organization=organization,
                    task=task,
                    step=step,
                    page=await browser_state.get_working_page(),
                    task_block=task_block,
                    browser_state=browser_state,
                    scraped_page=detailed_output.scraped_page if detailed_output else None,
                    engine=engine,
                    complete_verification=complete_verification,
                )
                # Flush here (after handle_completed_step) so that verification LLM artifacts
                # from check_user_goal_complete/complete_verify are included in the same
                # step archive as the rest of the step data.
                await app.ARTIFACT_MANAGER.flush_step_archive(step.step_id)
                if is_task_completed is not None and maybe_last_step:
                    last_step = maybe_last_step
                    # Skip per-step video sync: clean_up_task performs the authoritative final upload.
                    await self.clean_up_task(
                        task=task,
                        last_step=last_step,
                        api_key=api_key,
                        close_browser_on_completion=close_browser_on_completion,
                        browser_session_id=browser_session_id,
                        download_suffix=task_block.download_suffix if task_block else None,
                        list_files_before=list_files_before,
                    )
                    return last_step, detailed_output, None
                elif maybe_next_step:
                    # Only sync when continuing to the next step; clean_up_task handles terminal paths.
                    await self._sync_video_artifact_after_step(task, browser_state)
                    next_step = maybe_next_step
                    retry = False
                else:
                    LOG.error(
                        "Step completed but task is not completed and next step is not created.",
                        is_task_completed=is_task_completed,
                        maybe_last_step=maybe_last_step,
                        maybe_next_step=maybe_next_step,
                    )
            else:
                LOG.error(
                    "Unexpected step status after agent_step",
                    step_status=step.status,
                )
                # Flush for unexpected step status to release any buffered data.
                await app.ARTIFACT_MANAGER.flush_step_archive(step.step_id)
                await self._sync_video_artifact_after_step(task, browser_state)

            cua_response_param = detailed_output.cua_response if detailed_output else None
            if not cua_response_param and cua_response:
                cua_response_param = cua_response

            # Forward the initial download baseline into recursive execute_step calls so
            # files downloaded on this step are still seen as "new" by cleanup on a later step.
            # Any additional recursive execute_step call site must preserve this kwarg.
            if retry and next_step:
                # This step's scraped_page has already been consumed above; drop the only
                # remaining reference so it is not pinned on the stack for the whole recursion.
                if detailed_output is not None:
                    detailed_output.scraped_page = None
                return await self.execute_step(
                    organization,
                    task,
                    next_step,
                    api_key=api_key,
                    close_browser_on_completion=close_browser_on_completion,
                    browser_session_id=browser_session_id,
                    task_block=task_block,
                    complete_verification=complete_verification,
                    engine=engine,
                    cua_response=cua_response_param,
                    llm_caller=llm_caller,
                    download_baseline_files=list_files_before,
                )
            elif settings.execute_all_steps() and next_step:
                if detailed_output is not None:
                    detailed_output.scraped_page = None
                return await self.execute_step(
                    organization,
                    task,
                    next_step,
                    api_key=api_key,
                    close_browser_on_completion=close_browser_on_completion,
                    browser_session_id=browser_session_id,
                    task_block=task_block,
                    complete_verification=complete_verification,
                    engine=engine,
                    cua_response=cua_response_param,
                    llm_caller=llm_caller,
                    download_baseline_files=list_files_before,
                )
            else:
                LOG.info(
                    "Step executed but continuous execution is disabled.",
                    is_cloud_env=settings.is_cloud_environment(),
                    execute_all_steps=settings.execute_all_steps(),
                    next_step_id=next_step.step_id if next_step else None,
                )

            return step, detailed_output, next_step
        # TODO (kerem): Let's add other exceptions that we know about here as custom exceptions as well
        except StepUnableToExecuteError:
            LOG.exception("Step cannot be executed. Task execution stopped")
            raise
        except TaskAlreadyTimeout:
            LOG.warning("Task is timed out, stopping execution")
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                close_browser_on_completion=close_browser_on_completion,
                browser_session_id=browser_session_id,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=list_files_before,
            )
            return step, detailed_output, None
        except StepTerminationError as e:
            LOG.warning(
                "Step cannot be executed, marking task as failed",
                exc_info=True,
            )
            is_task_marked_as_failed = await self.fail_task(task, step, e.message, browser_state, exception=e)
            if is_task_marked_as_failed:
                await self.clean_up_task(
                    task=task,
                    last_step=step,
                    api_key=api_key,
                    close_browser_on_completion=close_browser_on_completion,
                    browser_session_id=browser_session_id,
                    download_suffix=task_block.download_suffix if task_block else None,
                    list_files_before=list_files_before,
                )
            else:
                LOG.warning("Task isn't marked as failed, after step termination. NOT clean up the task")
            return step, detailed_output, None
        except FailedToSendWebhook:
            LOG.exception(
                "Failed to send webhook",
                task_id=task.task_id,
                step_id=step.step_id,
            )
            return step, detailed_output, next_step
        except FailedToNavigateToUrl as e:
            # Fail the task if we can't navigate to the URL and send the response
            LOG.exception(
                "Failed to navigate to URL, marking task as failed, and sending webhook response",
                url=e.url,
            )
            failure_reason = f"Failed to navigate to URL. URL:{e.url}, Error:{e.error_message}"
            is_task_marked_as_failed = await self.fail_task(task, step, failure_reason, browser_state, exception=e)
            if is_task_marked_as_failed:
                await self.clean_up_task(
                    task=task,
                    last_step=step,
                    api_key=api_key,
                    close_browser_on_completion=close_browser_on_completion,
                    need_final_screenshot=False,
                    browser_session_id=browser_session_id,
                    download_suffix=task_block.download_suffix if task_block else None,
                    list_files_before=list_files_before,
                )
            else:
                LOG.warning("Task isn't marked as failed, after navigation failure. NOT clean up the task")
            return step, detailed_output, next_step
        except TaskAlreadyCanceled:
            LOG.info(
                "Task is already canceled, stopping execution",
                task_id=task.task_id,
            )
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                need_call_webhook=False,
                browser_session_id=browser_session_id,
                close_browser_on_completion=close_browser_on_completion,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=list_files_before,
            )
            return step, detailed_output, None
        except InvalidTaskStatusTransition:
            LOG.warning("Invalid task status transition")
            # TODO: shall we send task response here?
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                need_call_webhook=False,
                browser_session_id=browser_session_id,
                close_browser_on_completion=close_browser_on_completion,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=list_files_before,
            )
            return step, detailed_output, None
        except (UnsupportedActionType, UnsupportedTaskType, FailedToParseActionInstruction) as e:
            LOG.warning(
                "unsupported task type or action type, marking the task as failed",
                step_order=step.order,
                step_retry=step.retry_index,
            )
            await self.fail_task(task, step, e.message, browser_state, exception=e)
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                need_call_webhook=False,
                browser_session_id=browser_session_id,
                close_browser_on_completion=close_browser_on_completion,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=list_files_before,
            )
            return step, detailed_output, None
        except ScrapingFailed as sfe:
            LOG.warning(
                "Scraping failed, marking the task as failed",
                exc_info=True,
            )

            await self.fail_task(
                task,
                step,
                sfe.reason
                or "Skyvern failed to load the website. The page may have navigated unexpectedly or become unresponsive during analysis.",
                browser_state,
                exception=sfe,
            )
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                close_browser_on_completion=close_browser_on_completion,
                browser_session_id=browser_session_id,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=list_files_before,
            )
            return step, detailed_output, None
        except MissingBrowserStatePage as e:
            LOG.warning("Missing browser state page, marking the task as failed")
            await self.fail_task(
                task,
                step,
                get_user_facing_exception_message(e),
                browser_state,
                exception=e,
            )
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                close_browser_on_completion=close_browser_on_completion,
                browser_session_id=browser_session_id,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=list_files_before,
            )
            return step, detailed_output, None
        except BrowserSessionDegraded as e:
            LOG.warning("Browser session stopped responding mid-run, marking the task as failed")
            await self.fail_task(
                task,
                step,
                "The browser Skyvern was driving stopped responding to its commands and did not recover. This is a fault in the browser itself rather than in the website, so retrying the run should get a healthy one.",
                browser_state,
                exception=e,
            )
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                close_browser_on_completion=close_browser_on_completion,
                browser_session_id=browser_session_id,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=list_files_before,
            )
            return step, detailed_output, None
        except ScreenshotTargetClosed as e:
            LOG.warning("Browser target closed mid-run, marking the task as failed")
            await self.fail_task(
                task,
                step,
                "The browser page closed while Skyvern was working on it. This can happen when the site, the browser, or the run itself closes the page mid-run.",
                browser_state,
                exception=e,
            )
            await self.clean_up_task(
                task=task,
                last_step=step,
                api_key=api_key,
                close_browser_on_completion=close_browser_on_completion,
                browser_session_id=browser_session_id,
                download_suffix=task_block.download_suffix if task_block else None,
                list_files_before=list_files_before,
            )
            return step, detailed_output, None
        except Exception as e:
            LOG.exception("Got an unexpected exception in step, marking task as failed")

            failure_reason = get_user_facing_exception_message(e)

            is_task_marked_as_failed = await self.fail_task(task, step, failure_reason, browser_state, exception=e)
            if is_task_marked_as_failed:
                await self.clean_up_task(
                    task=task,
                    last_step=step,
                    api_key=api_key,
                    close_browser_on_completion=close_browser_on_completion,
                    browser_session_id=browser_session_id,
                    download_suffix=task_block.download_suffix if task_block else None,
                    list_files_before=list_files_before,
                )
            else:
                LOG.warning("Task isn't marked as failed, after unexpected exception. NOT clean up the task")
            return step, detailed_output, None
        finally:
            # remove the step_id from the context
            context = skyvern_context.ensure_context()
            context.step_id = None
            context.task_id = None
            context.navigation_goal = None
            context.navigation_payload = None

    async def fail_task(
        self,
        task: Task,
        step: Step | None,
        reason: str | None,
        browser_state: BrowserState | None = None,
        exception: Exception | None = None,
    ) -> bool:
        try:
            if step is not None and step.status != StepStatus.completed:
                await self.update_step(
                    step=step,
                    status=StepStatus.failed,
                )

            # Update task status first
            failure_category = classify_from_failure_reason(reason, exception=exception, fallback_to_unknown=True)
            LOG.info(
                "Task failure classified",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
                organization_id=task.organization_id,
                task_status="failed",
                failure_category=failure_category,
                primary_failure_category=failure_category[0].get("category") if failure_category else None,
                failure_category_source="code_level",
                failure_category_path="exception",
            )
            await self.update_task(
                task,
                status=TaskStatus.failed,
                failure_reason=reason,
                failure_category=failure_category,
            )

            # Detect user-defined errors if error_code_mapping is provided
            if task.error_code_mapping and step is not None:
                LOG.info(
                    "Task has error_code_mapping, attempting to detect user-defined errors",
                    task_id=task.task_id,
                    step_id=step.step_id,
                    error_code_mapping=task.error_code_mapping,
                )

                try:
                    detected_errors = await detect_user_defined_errors_for_task(
                        task=task,
                        step=step,
                        browser_state=browser_state,
                        failure_reason=reason,
                    )

                    # Update task errors if any were detected
                    # Only pass new errors — update_task() appends to existing errors
                    if detected_errors:
                        new_errors = [error.model_dump() for error in detected_errors]
                        await app.DATABASE.tasks.update_task(
                            task_id=task.task_id,
                            organization_id=task.organization_id,
                            errors=new_errors,
                        )
                        LOG.info(
                            "Updated task with detected user-defined errors",
                            task_id=task.task_id,
                            error_codes=[e.error_code for e in detected_errors],
                        )
                except Exception:
                    LOG.exception(
                        "Failed to detect or store user-defined errors during task failure",
                        task_id=task.task_id,
                    )

            return True
        except TaskAlreadyCanceled:
            LOG.info(
                "Task is already canceled. Can't fail the task.",
            )
            return False
        except TaskAlreadyTimeout:
            LOG.info(
                "Task is already timed out. Can't fail the task.",
            )
            return False
        except InvalidTaskStatusTransition:
            LOG.warning(
                "Invalid task status transition while failing a task",
            )
            return False
        except Exception:
            LOG.exception(
                "Failed to update status and failure reason in database. Task might going to be time_out",
                reason=reason,
            )
            return True

    # Span name intentionally differs from the method: this is the inner body
    # that actually runs a step (scrape, LLM call, action execution). It sits
    # under the "step_orchestration" span above. "step_body" vs the old
    # "skyvern.agent.step" makes the parent/child relationship obvious at a glance
    # on the dashboard. code.function still carries the qualname for grep.
    @traced(name="skyvern.agent.step_body", role="wrapper")
    async def agent_step(
        self,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        engine: RunEngine = RunEngine.skyvern_v1,
        organization: Organization | None = None,
        task_block: BaseTaskBlock | None = None,
        complete_verification: bool = True,
        cua_response: OpenAIResponse | None = None,
        llm_caller: LLMCaller | None = None,
    ) -> tuple[Step, DetailedAgentStepOutput]:
        # task_id, step_id, workflow_run_id, organization_id overlap with auto-
        # attached context attrs from @traced. Kept because the Task/Step objects
        # are authoritative — context can lag if populated asynchronously.
        _step_span = otel_trace.get_current_span()
        _step_span.set_attribute("task_id", task.task_id)
        _step_span.set_attribute("step_id", step.step_id)
        _step_span.set_attribute("step_order", step.order)
        _step_span.set_attribute("step_retry", step.retry_index)
        _step_span.set_attribute("engine", str(engine))
        if task.workflow_run_id:
            _step_span.set_attribute("workflow_run_id", task.workflow_run_id)
        if task.organization_id:
            _step_span.set_attribute("organization_id", task.organization_id)
        detailed_agent_step_output = DetailedAgentStepOutput(
            scraped_page=None,
            extract_action_prompt=None,
            llm_response=None,
            actions=None,
            action_results=None,
            actions_and_results=None,
            cua_response=None,
        )
        prefetched_summary_task: asyncio.Task[dict[str, Any]] | None = None
        artifact_tracker = _BackgroundArtifactTaskTracker()

        try:
            LOG.info(
                "Starting agent step",
                sampling=True,
                step_order=step.order,
                step_retry=step.retry_index,
            )

            # Update context with step_id for auto action/screenshot creation
            context = skyvern_context.current()
            if context:
                context.step_id = step.step_id
                context.step_retry_index = step.retry_index
                if not task.workflow_run_id and step.order == 0 and step.retry_index == 0:
                    await resolve_enrich_tree_for_context(
                        context,
                        task.task_id,
                        task.organization_id,
                        task_url=task.url,
                        log_context={"task_id": task.task_id},
                    )

            step = await self.update_step(step=step, status=StepStatus.running)
            injected_actions = await app.AGENT_FUNCTION.prepare_step_execution(
                organization=organization, task=task, step=step, browser_state=browser_state
            )

            speculative_plan: SpeculativePlan | None = None
            reuse_speculative_llm_response = False
            speculative_llm_metadata: SpeculativeLLMMetadata | None = None
            without_page_information = False
            is_extraction_task = not task.navigation_goal and not isinstance(task_block, ValidationBlock)
            if context:
                speculative_plan = context.speculative_plans.pop(step.step_id, None)

            if speculative_plan:
                step.is_speculative = False
                scraped_page = speculative_plan.scraped_page
                extract_action_prompt = speculative_plan.extract_action_prompt
                use_caching = speculative_plan.use_caching
                json_response = speculative_plan.llm_json_response
                reuse_speculative_llm_response = json_response is not None
                speculative_llm_metadata = speculative_plan.llm_metadata
                prompt_name = speculative_plan.prompt_name
                await self._persist_scrape_artifacts(
                    task=task,
                    step=step,
                    scraped_page=scraped_page,
                    context=context,
                )
            else:
                if is_extraction_task and engine not in CUA_ENGINES and injected_actions is None:
                    prefetched_summary_task = asyncio.create_task(
                        self._fetch_data_extraction_summary_response(task, step)
                    )
                    prefetched_summary_task.add_done_callback(_discard_background_task_result)

                step_prompt = await self.build_and_record_step_prompt(
                    task,
                    step,
                    browser_state,
                    engine,
                )
                scraped_page = step_prompt.scraped_page
                extract_action_prompt = step_prompt.extract_action_prompt
                use_caching = step_prompt.use_caching
                prompt_name = step_prompt.prompt_name
                without_page_information = step_prompt.without_page_information
                json_response = None

            detailed_agent_step_output.scraped_page = scraped_page
            detailed_agent_step_output.extract_action_prompt = extract_action_prompt
            actions, pdf_auto_download_src, pdf_auto_download_used_bytes = await self._generate_step_actions(
                task=task,
                step=step,
                browser_state=browser_state,
                engine=engine,
                scraped_page=scraped_page,
                detailed_agent_step_output=detailed_agent_step_output,
                injected_actions=injected_actions,
                is_extraction_task=is_extraction_task,
                prefetched_summary_task=prefetched_summary_task,
                cua_response=cua_response,
                llm_caller=llm_caller,
                extract_action_prompt=extract_action_prompt,
                prompt_name=prompt_name,
                use_caching=use_caching,
                without_page_information=without_page_information,
                json_response=json_response,
                reuse_speculative_llm_response=reuse_speculative_llm_response,
                speculative_llm_metadata=speculative_llm_metadata,
                context=context,
            )

            detailed_agent_step_output.actions = actions
            record_validation_span_attrs(_step_span, task, actions)
            if len(actions) == 0:
                LOG.info(
                    "No actions to execute, marking step as failed",
                    step_order=step.order,
                    step_retry=step.retry_index,
                )
                step = await self.update_step(
                    step=step,
                    status=StepStatus.failed,
                    output=detailed_agent_step_output.to_agent_step_output(),
                )
                return step, detailed_agent_step_output

            actions, early_return = await self._execute_step_actions(
                task=task,
                step=step,
                browser_state=browser_state,
                engine=engine,
                scraped_page=scraped_page,
                complete_verification=complete_verification,
                actions=actions,
                detailed_agent_step_output=detailed_agent_step_output,
                pdf_auto_download_src=pdf_auto_download_src,
                pdf_auto_download_used_bytes=pdf_auto_download_used_bytes,
                file_download_false_click_eligible=isinstance(task_block, FileDownloadBlock),
                _step_span=_step_span,
                artifact_tracker=artifact_tracker,
            )
            if early_return is not None:
                return early_return
            return await self._finalize_step_execution(
                task=task,
                step=step,
                browser_state=browser_state,
                engine=engine,
                scraped_page=scraped_page,
                complete_verification=complete_verification,
                task_block=task_block,
                actions=actions,
                detailed_agent_step_output=detailed_agent_step_output,
            )
        except CancelledError:
            # A cancellation here is a deliberate stop (elapsed-time timeout / user cancel). Persist
            # the step as failed (shielded, so the write survives the cancel) for observability, then
            # re-raise so the cancellation actually halts the run. Returning instead would let the step
            # loop treat it as a retryable failure and keep executing past the timeout.
            LOG.info(
                "CancelledError in agent_step, marking step failed and re-raising",
                step_order=step.order,
                step_retry=step.retry_index,
            )
            detailed_agent_step_output.step_exception = "CancelledError"
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    self.update_step(
                        step=step,
                        status=StepStatus.failed,
                        output=detailed_agent_step_output.to_agent_step_output(),
                    )
                )
            raise
        except (
            UnsupportedActionType,
            UnsupportedTaskType,
            FailedToParseActionInstruction,
            ScrapingFailed,
            MissingBrowserStatePage,
            ScreenshotTargetClosed,
            BrowserSessionDegraded,
        ):
            raise

        except Exception as e:
            LOG.exception(
                "Unexpected exception in agent_step, marking step as failed",
                step_order=step.order,
                step_retry=step.retry_index,
            )
            detailed_agent_step_output.step_exception = e.__class__.__name__
            failed_step = await self.update_step(
                step=step,
                status=StepStatus.failed,
                output=detailed_agent_step_output.to_agent_step_output(),
            )
            return failed_step, detailed_agent_step_output.get_clean_detailed_output()
        finally:
            await _cancel_pending_prefetch_task(prefetched_summary_task)
            await artifact_tracker.drain()

    async def _execute_step_actions(
        self,
        *,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        engine: RunEngine,
        scraped_page: ScrapedPage,
        complete_verification: bool,
        actions: list[Action],
        detailed_agent_step_output: DetailedAgentStepOutput,
        pdf_auto_download_src: str | None,
        pdf_auto_download_used_bytes: bool,
        file_download_false_click_eligible: bool,
        _step_span: otel_trace.Span,
        artifact_tracker: _BackgroundArtifactTaskTracker,
    ) -> tuple[list[Action], tuple[Step, DetailedAgentStepOutput] | None]:
        # Execute the actions
        LOG.info(
            "Executing actions",
            sampling=True,
            step_order=step.order,
            step_retry=step.retry_index,
            actions=actions,
        )
        action_results: list[ActionResult] = []
        detailed_agent_step_output.action_results = action_results
        # filter out wait action if there are other actions in the list
        # we do this because WAIT action is considered as a failure
        # which will block following actions if we don't remove it from the list
        # if the list only contains WAIT action, we will execute WAIT action(s)
        if len(actions) > 1:
            wait_actions_to_skip = [action for action in actions if action.action_type == ActionType.WAIT]
            wait_actions_len = len(wait_actions_to_skip)
            # if there are wait actions and there are other actions in the list, skip wait actions
            # if we are using cached action plan, we don't skip wait actions
            if wait_actions_len > 0 and wait_actions_len < len(actions):
                actions = [action for action in actions if action.action_type != ActionType.WAIT]
                LOG.info(
                    "Skipping wait actions",
                    wait_actions_to_skip=wait_actions_to_skip,
                    actions=actions,
                )

        # The complete batch is evaluated here — after WAIT filtering, and before any of it is
        # persisted, reported through a callback, slept on or executed.
        preflight_batch(actions, site="step_action_batch")

        # initialize list of tuples and set actions as the first element of each tuple so that in the case
        # of an exception, we can still see all the actions
        detailed_agent_step_output.actions_and_results = [(action, []) for action in actions]

        # build a linked action chain by the action_idx
        action_linked_list: list[ActionLinkedNode] = []
        element_id_to_action_index: dict[str, int] = dict()
        for action_idx, action in enumerate(actions):
            node = ActionLinkedNode(action=action)
            action_linked_list.append(node)

            if not isinstance(action, WebAction):
                continue

            previous_action_idx = element_id_to_action_index.get(action.element_id)
            if previous_action_idx is not None:
                previous_node = action_linked_list[previous_action_idx]
                previous_node.next = node

            element_id_to_action_index[action.element_id] = action_idx

        element_id_to_last_action: dict[str, int] = dict()
        try:
            wait_config = await get_or_create_wait_config(task.task_id, task.workflow_run_id, task.organization_id)
            base_delay = get_wait_time(wait_config, "inter_action_delay", default=0.5)
        except Exception:
            base_delay = 0.5
        for action_idx, action_node in enumerate(action_linked_list):
            await artifact_tracker.drain()

            context = skyvern_context.ensure_context()
            if context.refresh_working_page:
                LOG.warning(
                    "Detected the signal to reload the page, going to reload and skip the rest of the actions",
                    step_order=step.order,
                )
                reload_started_at = naive_utc_now()
                await browser_state.reload_page()
                context.refresh_working_page = False
                action_result = ActionSuccess()
                action_result.step_order = step.order
                action_result.step_retry_number = step.retry_index
                action = ReloadPageAction(
                    reasoning="Something wrong with the current page, reload to continue",
                    status=ActionStatus.completed,
                    organization_id=task.organization_id,
                    workflow_run_id=task.workflow_run_id,
                    task_id=task.task_id,
                    step_id=step.step_id,
                    step_order=step.order,
                    action_order=action_idx,
                )
                # The reload it follows happened after the last scrape, so it carries no
                # observation of the page it is about to act on. Unstamped by construction: only
                # _generate_step_actions stamps, and this action never went through it.
                preflight_action(action, observed_page(), site="internal_refresh")
                detailed_agent_step_output.actions_and_results[action_idx] = (action, [action_result])
                action.started_at = reload_started_at
                action.finished_at = naive_utc_now()
                action.action_id = (await app.DATABASE.workflow_params.create_action(action=action)).action_id
                artifact_tracker.task = asyncio.create_task(
                    self.record_artifacts_after_action(task, step, browser_state, engine, action)
                )
                break

            action = action_node.action
            if isinstance(action, WebAction):
                previous_action_idx = element_id_to_last_action.get(action.element_id)
                if previous_action_idx is not None:
                    LOG.warning(
                        "Duplicate action element id.",
                        step_order=step.order,
                        action=action,
                    )

                    previous_action, previous_result = detailed_agent_step_output.actions_and_results[
                        previous_action_idx
                    ]
                    if len(previous_result) > 0 and previous_result[-1].success:
                        LOG.info(
                            "Previous action succeeded, but we'll still continue.",
                            step_order=step.order,
                            previous_action=previous_action,
                            previous_result=previous_result,
                        )
                    else:
                        LOG.warning(
                            "Previous action failed, so handle the next action.",
                            step_order=step.order,
                            previous_action=previous_action,
                            previous_result=previous_result,
                        )

                element_id_to_last_action[action.element_id] = action_idx

            if engine != RunEngine.openai_cua:
                self.async_operation_pool.run_operation(task.task_id, AgentPhase.action)
            current_page = await browser_state.must_get_working_page()
            if isinstance(action, CompleteAction) and not complete_verification:
                # Do not verify the complete action when complete_verification is False
                # set verified to True will skip the completion verification
                action.verified = True

            # Pass TOTP secret to handler for multi-field TOTP sequences
            # Handler will generate TOTP at execution time
            if (
                action.action_type == ActionType.INPUT_TEXT
                and self._is_multi_field_totp_sequence(actions)
                and (totp_secret := skyvern_context.ensure_context().totp_codes.get(f"{task.task_id}_secret"))
            ):
                # Pass TOTP secret to handler for execution-time generation
                action.totp_timing_info = {
                    "is_totp_sequence": True,
                    "action_index": action_idx,
                    "totp_secret": totp_secret,
                    "is_retry": step.retry_index > 0,
                }

            # Tell the handler to skip the auto-completion Tab hack when the
            # next batched action would be broken by a focus change — e.g. a
            # KEYPRESS Enter or another action on the same element.
            if action.action_type == ActionType.INPUT_TEXT:
                next_action = (
                    action_linked_list[action_idx + 1].action if action_idx + 1 < len(action_linked_list) else None
                )
                if isinstance(next_action, KeypressAction) or (
                    isinstance(next_action, WebAction) and next_action.element_id == action.element_id
                ):
                    action.skip_auto_complete_tab = True
                action.stop_batch_after_dropdown_select = should_stop_batch_after_dropdown_select(next_action)

            results = await ActionHandler.handle_action(
                scraped_page=scraped_page,
                task=task,
                step=step,
                page=current_page,
                action=action,
                file_download_false_click_eligible=file_download_false_click_eligible,
            )
            await app.AGENT_FUNCTION.post_action_execution(action)
            detailed_agent_step_output.actions_and_results[action_idx] = (
                action,
                results,
            )

            # Determine wait time between actions
            wait_time = random.uniform(base_delay, base_delay * 2) if base_delay > 0 else 0.0

            # For multi-field TOTP sequences, use zero delay between all digits for fast execution
            if action.action_type == ActionType.INPUT_TEXT and self._is_multi_field_totp_sequence(actions):
                current_text = action.text if hasattr(action, "text") else None

                if current_text and len(current_text) == 1 and current_text.isdigit():
                    # Zero delay between all TOTP digits for fast execution
                    wait_time = 0.0
                    LOG.debug(
                        "TOTP: zero delay for digit",
                        task_id=task.task_id,
                        action_idx=action_idx,
                        digit=current_text,
                    )

            # Skip sleep and post-action artifacts for page-level SCROLL to preserve
            # scroll-driven JS state. Many pages enable buttons only while scrolled to
            # bottom (e.g. T&C "Agree" buttons) and re-disable them after any delay or
            # programmatic scroll. Sub-container scrolls (strategies 1 & 2) don't affect
            # page position, so they keep normal sleep and artifact recording.
            is_page_level_scroll = action.action_type == ActionType.SCROLL and any(
                r.success and isinstance(r.data, dict) and r.data.get("page_level_scroll") for r in results
            )
            if is_page_level_scroll:
                wait_time = 0.0

            _step_span.add_event(
                "action.post_wait",
                attributes={"wait_time_ms": int(wait_time * 1000), "action_idx": action_idx},
            )
            await asyncio.sleep(wait_time)
            if not is_page_level_scroll:
                artifact_tracker.task = asyncio.create_task(
                    self.record_artifacts_after_action(task, step, browser_state, engine, action)
                )
            else:
                LOG.info(
                    "Skipping post-action artifacts for page-level scroll",
                    step_order=step.order,
                    step_retry=step.retry_index,
                    action_idx=action_idx,
                )
            for result in results:
                result.step_retry_number = step.retry_index
                result.step_order = step.order
            step.output = detailed_agent_step_output.to_agent_step_output()
            action_results.extend(results)
            # Check the last result for this action. If that succeeded, assume the entire action is successful
            if results and results[-1].success:
                if pdf_auto_download_src and isinstance(action, DownloadFileAction):
                    actually_downloaded = pdf_auto_download_used_bytes or results[-1].download_triggered
                    if actually_downloaded:
                        mark_pdf_source_downloaded(pdf_auto_download_src)
                    pdf_auto_download_src = None
                LOG.info(
                    "Action succeeded",
                    sampling=True,
                    step_order=step.order,
                    step_retry=step.retry_index,
                    action_idx=action_idx,
                    action=action,
                    action_result=results,
                )
                if results[-1].skip_remaining_actions:
                    LOG.warning(
                        "Going to stop executing the remaining actions",
                        step_order=step.order,
                        step_retry=step.retry_index,
                        action_idx=action_idx,
                        action=action,
                        action_result=results,
                    )
                    break

            elif results and isinstance(action, DecisiveAction):
                LOG.warning(
                    "DecisiveAction failed, but not stopping execution and not retrying the step",
                    step_order=step.order,
                    step_retry=step.retry_index,
                    action_idx=action_idx,
                    action=action,
                    action_result=results,
                )
            elif results and not results[-1].success and not results[-1].stop_execution_on_failure:
                LOG.warning(
                    "Action failed, but not stopping execution",
                    step_order=step.order,
                    step_retry=step.retry_index,
                    action_idx=action_idx,
                    action=action,
                    action_result=results,
                )
            else:
                # A failure that set skip_remaining_actions must not fall through to the duplicate
                # element id, or the action it was protecting against gets replayed anyway.
                if action_node.next is not None and (not results or not results[-1].skip_remaining_actions):
                    LOG.warning(
                        "Action failed, but have duplicated element id in the action list. Continue excuting.",
                        step_order=step.order,
                        step_retry=step.retry_index,
                        action_idx=action_idx,
                        action=action,
                        next_action=action_node.next.action,
                        action_result=results,
                    )
                    continue

                LOG.warning(
                    "Action failed, marking step as failed",
                    step_order=step.order,
                    step_retry=step.retry_index,
                    action_idx=action_idx,
                    action=action,
                    action_result=results,
                    actions_and_results=detailed_agent_step_output.actions_and_results,
                )
                # if the action failed, don't execute the rest of the actions, mark the step as failed, and retry
                failed_step = await self.update_step(
                    step=step,
                    status=StepStatus.failed,
                    output=detailed_agent_step_output.to_agent_step_output(),
                )
                return actions, (failed_step, detailed_agent_step_output.get_clean_detailed_output())

        await artifact_tracker.drain()
        return actions, None

    async def _finalize_step_execution(
        self,
        *,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        engine: RunEngine,
        scraped_page: ScrapedPage,
        complete_verification: bool,
        task_block: BaseTaskBlock | None,
        actions: list[Action],
        detailed_agent_step_output: DetailedAgentStepOutput,
    ) -> tuple[Step, DetailedAgentStepOutput]:
        assert detailed_agent_step_output.actions_and_results is not None

        LOG.info(
            "Actions executed successfully, marking step as completed",
            sampling=True,
            step_order=step.order,
            step_retry=step.retry_index,
            action_results=detailed_agent_step_output.action_results,
        )

        # Clean up TOTP cache after multi-field TOTP sequence completion
        if self._is_multi_field_totp_sequence(actions):
            context = skyvern_context.ensure_context()
            cache_key = f"{task.task_id}_totp_cache"
            removed_totp_cache = False
            for key in (cache_key, f"{cache_key}_valid_from", f"{cache_key}_valid_until"):
                if key in context.totp_codes:
                    context.totp_codes.pop(key)
                    removed_totp_cache = True

            if removed_totp_cache:
                LOG.debug(
                    "Cleaned up TOTP cache after multi-field sequence completion",
                    task_id=task.task_id,
                )

            secret_key = f"{task.task_id}_secret"
            if secret_key in context.totp_codes:
                context.totp_codes.pop(secret_key)

        # Update Navigator caller with actual action results so the next
        # step's tool responses include real execution data.
        if (
            engine == RunEngine.yutori_navigator
            and detailed_agent_step_output
            and detailed_agent_step_output.actions_and_results
        ):
            nav_caller = LLMCallerManager.get_llm_caller(task.task_id)
            if isinstance(nav_caller, YutoriNavigatorLLMCaller):
                for action, results in detailed_agent_step_output.actions_and_results:
                    if not results or not action.tool_call_id:
                        continue
                    r = results[-1]
                    result_str: str | None
                    if isinstance(action, WaitAction):
                        # Skyvern's handle_wait_action always returns ActionFailure by
                        # design (to discourage v1/v2 engines from leaning on wait), but
                        # Navigator emits wait as a deliberate cooperative pause —
                        # surface a positive tool result so the model sees WaitAction success.
                        result_str = f"Waited {action.seconds}s"
                    elif r.success:
                        # Use actual data when available (JS output, etc.)
                        result_str = str(r.data) if r.data is not None else None
                    else:
                        # Provide error details so the model can recover
                        result_str = f"ERROR: {r.exception_message or 'Action failed'}"
                    nav_caller.update_pending_result(action.tool_call_id, result_str)

        # Check if Skyvern already returned a complete action, if so, don't run user goal check
        has_decisive_action = False
        if detailed_agent_step_output and detailed_agent_step_output.actions_and_results:
            for action, results in detailed_agent_step_output.actions_and_results:
                if isinstance(action, DecisiveAction):
                    has_decisive_action = True
                    break

        task_completes_on_download = task_block and task_block.complete_on_download and task.workflow_run_id
        enable_parallel_verification = False
        if (
            not has_decisive_action
            and not task_completes_on_download
            and not isinstance(task_block, ActionBlock)
            and complete_verification
            and (task.navigation_goal or task.complete_criterion)
        ):
            disable_user_goal_check = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                "DISABLE_USER_GOAL_CHECK",
                task.task_id,
                properties={"task_url": task.url, "organization_id": task.organization_id},
            )

            # Parallel verification is always enabled (user goal check deferred to handle_completed_step)
            enable_parallel_verification = not disable_user_goal_check

        # if the last action is complete and is successful, check if there's a data extraction goal
        # if task has navigation goal and extraction goal at the same time, handle ExtractAction before marking step as completed
        # skip when the step already ran a successful planner-emitted EXTRACT action — re-extracting would be a duplicate
        step_has_successful_extract = any(
            executed_action.action_type == ActionType.EXTRACT and any(result.success for result in results)
            for executed_action, results in detailed_agent_step_output.actions_and_results
        )
        if (
            task.navigation_goal
            and task.data_extraction_goal
            and not step_has_successful_extract
            and self.step_has_completed_goal(detailed_agent_step_output)
        ):
            working_page = await browser_state.must_get_working_page()
            # refresh task in case the extracted information is updated previously
            refreshed_task = await app.DATABASE.tasks.get_task(task.task_id, task.organization_id)
            assert refreshed_task is not None
            task = refreshed_task
            extract_action = await self.create_extract_action(task, step, scraped_page)
            extract_results = await ActionHandler.handle_action(scraped_page, task, step, working_page, extract_action)
            await app.AGENT_FUNCTION.post_action_execution(extract_action)
            detailed_agent_step_output.actions_and_results.append((extract_action, extract_results))

        # If no action errors return the agent state and output
        completed_step = await self.update_step(
            step=step,
            status=StepStatus.completed,
            output=detailed_agent_step_output.to_agent_step_output(),
        )
        if enable_parallel_verification:
            completed_step.speculative_original_status = StepStatus.completed
        return completed_step, detailed_agent_step_output.get_clean_detailed_output()

    async def _generate_step_actions(
        self,
        *,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        engine: RunEngine,
        scraped_page: ScrapedPage,
        detailed_agent_step_output: DetailedAgentStepOutput,
        injected_actions: list[Action] | None,
        is_extraction_task: bool,
        prefetched_summary_task: asyncio.Task[dict[str, Any]] | None,
        cua_response: OpenAIResponse | None,
        llm_caller: LLMCaller | None,
        extract_action_prompt: str,
        prompt_name: str,
        use_caching: bool,
        without_page_information: bool,
        json_response: dict[str, Any] | None,
        reuse_speculative_llm_response: bool,
        speculative_llm_metadata: SpeculativeLLMMetadata | None,
        context: SkyvernContext | None,
    ) -> tuple[list[Action], str | None, bool]:
        pdf_auto_download_src: str | None = None
        pdf_auto_download_used_bytes = False
        actions: list[Action]
        # Provenance is opt-in per branch, so a branch added later is unstamped until someone
        # decides it was derived from the scrape. A blanket stamp at the end of this method had the
        # opposite default and silently gave runtime-synthesized actions provenance they never had.
        derived_from_scrape = False
        # If prepare_step_execution injected actions (e.g. proactive captcha solving),
        # skip LLM entirely and use the injected actions directly.
        if injected_actions is not None:
            LOG.info(
                "Using injected actions from prepare_step_execution, skipping LLM",
                step_id=step.step_id,
                num_actions=len(injected_actions),
                action_types=[a.action_type for a in injected_actions],
            )
            actions = injected_actions
        elif engine == RunEngine.openai_cua:
            derived_from_scrape = True
            actions, new_cua_response = await self._generate_cua_actions(
                task=task,
                step=step,
                scraped_page=scraped_page,
                previous_response=cua_response,
                engine=engine,
            )
            detailed_agent_step_output.cua_response = new_cua_response
        elif engine == RunEngine.anthropic_cua:
            assert llm_caller is not None
            derived_from_scrape = True
            actions = await self._generate_anthropic_actions(
                task=task,
                step=step,
                scraped_page=scraped_page,
                llm_caller=llm_caller,
            )
        elif engine == RunEngine.ui_tars and not await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
            "DISABLE_UI_TARS_CUA",
            task.workflow_run_id or task.task_id,
            properties={"organization_id": task.organization_id},
        ):
            assert llm_caller is not None
            derived_from_scrape = True
            actions = await self._generate_ui_tars_actions(
                task=task,
                step=step,
                scraped_page=scraped_page,
                llm_caller=llm_caller,
            )
        elif engine == RunEngine.yutori_navigator:
            assert llm_caller is not None
            derived_from_scrape = True
            actions = await self._generate_yutori_navigator_actions(
                task=task,
                step=step,
                scraped_page=scraped_page,
                llm_caller=llm_caller,
            )

        else:
            if is_extraction_task:
                derived_from_scrape = True
                actions = [
                    await self.create_extract_action(
                        task,
                        step,
                        scraped_page,
                        prefetched_summary_task=prefetched_summary_task,
                    )
                ]
            else:
                llm_key_override = task.llm_key
                # FIXME: Redundant engine check?
                if engine in CUA_ENGINES:
                    self.async_operation_pool.run_operation(task.task_id, AgentPhase.llm)
                    llm_key_override = None

                llm_api_handler = LLMAPIHandlerFactory.get_override_llm_api_handler(
                    llm_key_override, default=get_org_aware_primary_llm_api_handler()
                )
                # Add caching flag to context for monitoring
                if use_caching:
                    context = skyvern_context.current()
                    if context:
                        context.use_prompt_caching = True

                if not reuse_speculative_llm_response:
                    json_response = await llm_api_handler(
                        prompt=extract_action_prompt,
                        prompt_name=prompt_name,
                        step=step,
                        screenshots=[] if without_page_information else scraped_page.screenshots,
                        system_prompt=task.workflow_system_prompt,
                    )
                else:
                    LOG.debug(
                        "Using speculative extract-actions response",
                        step_id=step.step_id,
                    )
                if json_response is None:
                    raise MissingExtractActionsResponse()
                try:
                    # Check for PDF viewer: either <embed type="application/pdf"> or
                    # Edge's PDF interstitial <iframe src="data:application/pdf;base64,...">
                    pdf_src = scraped_page.check_pdf_viewer_embed()
                    if not pdf_src:
                        pdf_src = await scraped_page.check_pdf_iframe()
                    if pdf_src and not should_auto_download_pdf(pdf_src):
                        LOG.info(
                            "PDF source already downloaded, skipping auto-download",
                            step_id=step.step_id,
                        )
                        pdf_src = None
                    if pdf_src:
                        LOG.info("Generate DownloadFileAction for PDF viewer page", step_id=step.step_id)
                        pdf_bytes: bytes | None = None
                        download_url: str | None = None

                        # Check if the src is a data URI with base64 encoded PDF
                        # Format: data:application/pdf[;charset=...];base64,<base64_data>
                        if pdf_src.startswith("data:application/pdf"):
                            # Use more precise regex to extract base64 data after the base64, prefix
                            # This pattern matches: data:application/pdf[;optional_params];base64,<data>
                            m = re.search(r"data:application/pdf[^;]*;base64,(.+)", pdf_src, re.S)
                            if not m:
                                raise PDFEmbedBase64DecodeError(
                                    pdf_embed_src=pdf_src,
                                    reason="Failed to extract base64 data from PDF embed src. Expected format: data:application/pdf[;charset=...];base64,<data>",
                                )

                            base64_data = m.group(1)
                            LOG.info(
                                "Found base64 data in PDF src",
                                step_id=step.step_id,
                                base64_data_length=len(base64_data),
                            )

                            # Decode base64 data with error handling
                            try:
                                pdf_bytes = base64.b64decode(base64_data, validate=True)
                            except Exception as e:
                                raise PDFEmbedBase64DecodeError(
                                    pdf_embed_src=pdf_src,
                                    reason=f"Failed to decode base64 data: {str(e)}",
                                ) from e
                        else:
                            # If not a data URI, treat it as a URL
                            LOG.info(
                                "Found PDF src as URL (not base64 data)",
                                step_id=step.step_id,
                                download_url=pdf_src,
                            )
                            download_url = pdf_src

                        # The PDF src came out of the scraped element tree.
                        derived_from_scrape = True
                        actions = [
                            DownloadFileAction(
                                reasoning="Downloading the file from the PDF viewer.",
                                organization_id=task.organization_id,
                                workflow_run_id=task.workflow_run_id,
                                task_id=task.task_id,
                                step_id=step.step_id,
                                step_order=step.order,
                                action_order=0,
                                file_name=f"{uuid.uuid4()}.pdf",
                                byte=pdf_bytes,
                                download_url=download_url,
                                download=True,
                            )
                        ]
                        pdf_auto_download_src = pdf_src
                        pdf_auto_download_used_bytes = pdf_bytes is not None
                    else:
                        otp_json_response, otp_actions = await self.handle_potential_OTP_actions(
                            task, step, scraped_page, browser_state, json_response
                        )
                        if otp_actions:
                            detailed_agent_step_output.llm_response = otp_json_response
                            actions = otp_actions
                        else:
                            derived_from_scrape = True
                            actions = parse_actions(
                                task, step.step_id, step.order, scraped_page, _require_actions_payload(json_response)
                            )

                    if context:
                        context.pop_totp_code(task.task_id)
                except NoTOTPVerificationCodeFound as e:
                    # Surface only the source poll_otp_value actually queried so
                    # the failure_reason tells the customer which delivery endpoint
                    # went silent.
                    timeout_reasoning = _build_totp_timeout_reasoning(task, e.webhook_diagnostics)
                    LOG.warning(
                        "TOTP polling timed out — terminating task",
                        task_id=task.task_id,
                        workflow_run_id=task.workflow_run_id,
                        totp_verification_url=strip_query_params(task.totp_verification_url)
                        if task.totp_verification_url
                        else None,
                        totp_identifier=task.totp_identifier,
                        organization_id=task.organization_id,
                    )
                    actions = [
                        TerminateAction(
                            organization_id=task.organization_id,
                            workflow_run_id=task.workflow_run_id,
                            task_id=task.task_id,
                            step_id=step.step_id,
                            step_order=step.order,
                            action_order=0,
                            reasoning=timeout_reasoning,
                            intention=timeout_reasoning,
                            errors=[TimeoutGetTOTPVerificationCodeError().to_user_defined_error()],
                        )
                    ]
                except FailedToGetTOTPVerificationCode as e:
                    actions = [
                        TerminateAction(
                            reasoning=f"Failed to get TOTP verification code. Going to terminate. Reason: {e.reason}",
                            intention=f"Failed to get TOTP verification code. Going to terminate. Reason: {e.reason}",
                            organization_id=task.organization_id,
                            workflow_run_id=task.workflow_run_id,
                            task_id=task.task_id,
                            step_id=step.step_id,
                            step_order=step.order,
                            action_order=0,
                            errors=[GetTOTPVerificationCodeError(reason=e.reason).to_user_defined_error()],
                        )
                    ]

                if reuse_speculative_llm_response and speculative_llm_metadata:
                    await self._persist_speculative_llm_metadata(
                        step,
                        speculative_llm_metadata,
                        screenshots=scraped_page.screenshots,
                    )
                    speculative_llm_metadata = None
        if derived_from_scrape:
            # Only actions the scrape produced may carry its provenance. Everything else here —
            # actions injected before the scrape ran, a magic-link navigation aimed at a page nobody
            # scraped, a TOTP timeout terminate — stays unstamped and is judged on that.
            stamp_parsed_actions(actions)
        return actions, pdf_auto_download_src, pdf_auto_download_used_bytes

    async def _generate_cua_actions(
        self,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        previous_response: OpenAIResponse | None = None,
        engine: RunEngine = RunEngine.openai_cua,
    ) -> tuple[list[Action], OpenAIResponse | None]:
        cua_model = app.OPENAI_CUA_MODEL
        # The CUA tool must declare the browser's real viewport so returned coordinates land in the
        # page's own space. The live viewport can be smaller than the settings default, so read it
        # from the scraped page rather than assuming BROWSER_WIDTH/HEIGHT.
        cua_window_dimension = (
            cast(Resolution, scraped_page.window_dimension)
            if scraped_page.window_dimension
            else Resolution(width=settings.BROWSER_WIDTH, height=settings.BROWSER_HEIGHT)
        )
        if not previous_response:
            # this is the first step
            first_response: OpenAIResponse = await app.OPENAI_CLIENT.responses.create(
                model=cua_model,
                tools=[
                    {
                        "type": "computer_use_preview",
                        "display_width": cua_window_dimension["width"],
                        "display_height": cua_window_dimension["height"],
                        "environment": "browser",
                    }
                ],
                input=[
                    {
                        "role": "user",
                        "content": task.navigation_goal,
                    }
                ],
                reasoning={
                    "generate_summary": "concise",
                },
                truncation="auto",
                temperature=0,
            )
            previous_response = first_response
            input_tokens = first_response.usage.input_tokens or 0
            output_tokens = first_response.usage.output_tokens or 0
            first_response.usage.total_tokens or 0
            cached_tokens = first_response.usage.input_tokens_details.cached_tokens or 0
            reasoning_tokens = first_response.usage.output_tokens_details.reasoning_tokens or 0
            llm_cost = (3.0 / 1000000) * input_tokens + (12.0 / 1000000) * output_tokens
            await app.DATABASE.tasks.update_step(
                task_id=task.task_id,
                step_id=step.step_id,
                organization_id=task.organization_id,
                incremental_cost=llm_cost,
                incremental_input_tokens=input_tokens if input_tokens > 0 else None,
                incremental_output_tokens=output_tokens if output_tokens > 0 else None,
                incremental_reasoning_tokens=reasoning_tokens if reasoning_tokens > 0 else None,
                incremental_cached_tokens=cached_tokens if cached_tokens > 0 else None,
            )
        if not scraped_page.screenshots:
            return [], previous_response

        computer_calls = [item for item in previous_response.output if item.type == "computer_call"]
        reasonings = [item for item in previous_response.output if item.type == "reasoning"]
        assistant_messages = [
            item for item in previous_response.output if item.type == "message" and item.role == "assistant"
        ]
        last_call_id = None
        if computer_calls:
            last_call_id = computer_calls[-1].call_id

        screenshot_base64 = base64.b64encode(scraped_page.screenshots[0]).decode("utf-8")
        if last_call_id is None:
            current_context = skyvern_context.ensure_context()
            reasoning = reasonings[0].summary[0].text if reasonings and reasonings[0].summary else None
            assistant_message: str | None = None
            if assistant_messages:
                assistant_message = "\n".join(
                    part.text for part in assistant_messages[-1].content if getattr(part, "text", None)
                )
            cua_question = assistant_message
            resp_content = None
            if task.task_id in current_context.totp_codes:
                verification_code = current_context.totp_codes[task.task_id]
                current_context.totp_codes.pop(task.task_id)
                LOG.info(
                    "Using verification code from context",
                    task_id=task.task_id,
                    verification_code=verification_code,
                )
                resp_content = f"Here is the verification code: {verification_code}"
            else:
                # try address the conversation with the context we have
                skyvern_repsonse_prompt = load_prompt_with_elements(
                    element_tree_builder=scraped_page,
                    prompt_engine=prompt_engine,
                    template_name="cua-answer-question",
                    navigation_goal=task.navigation_goal,
                    assistant_reasoning=reasoning,
                    assistant_message=assistant_message,
                )
                skyvern_response = await get_org_aware_primary_llm_api_handler(default=app.LLM_API_HANDLER)(
                    prompt=skyvern_repsonse_prompt,
                    prompt_name="cua-answer-question",
                    step=step,
                    screenshots=scraped_page.screenshots,
                    system_prompt=task.workflow_system_prompt,
                )
                LOG.info("Skyvern response to CUA question", skyvern_response=skyvern_response)
                cua_question = cua_question or skyvern_response.get("question_or_decision")
                resp_content = skyvern_response.get("answer")
                if not resp_content:
                    resp_content = "I don't know. Can you help me make the best decision to achieve the goal?"
                else:
                    resp_content = f"{resp_content}\n\n{CUA_EXECUTE_ACTIONS_DIRECTIVE}"
            # The Computer tool rejects a user-supplied input_image when the request also threads a
            # previous response, so this visual turn must be a fresh, self-contained request. Restate
            # the navigation goal and the question being answered so a context-dependent answer (e.g.
            # "yes", "the second option") is not detached from what it responds to.
            continuation_sections = [f"Task: {task.navigation_goal}"]
            if cua_question:
                continuation_sections.append(f"Question or decision to address: {cua_question}")
            continuation_sections.append(resp_content)
            continuation_content = "\n\n".join(continuation_sections)
            current_response = await app.OPENAI_CLIENT.responses.create(
                model=cua_model,
                tools=[
                    {
                        "type": "computer_use_preview",
                        "display_width": cua_window_dimension["width"],
                        "display_height": cua_window_dimension["height"],
                        "environment": "browser",
                    }
                ],
                input=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": continuation_content},
                            {
                                "type": "input_image",
                                "image_url": f"data:image/png;base64,{screenshot_base64}",
                            },
                        ],
                    },
                ],
                reasoning={"generate_summary": "concise"},
                truncation="auto",
                temperature=0,
            )
        else:
            last_computer_call = computer_calls[-1]
            computer_call_input = {
                "call_id": last_call_id,
                "type": "computer_call_output",
                "output": {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{screenshot_base64}",
                },
            }
            if last_computer_call.pending_safety_checks:
                pending_checks = [check.model_dump() for check in last_computer_call.pending_safety_checks]
                computer_call_input["acknowledged_safety_checks"] = pending_checks

            current_response = await app.OPENAI_CLIENT.responses.create(
                model=cua_model,
                previous_response_id=previous_response.id,
                tools=[
                    {
                        "type": "computer_use_preview",
                        "display_width": cua_window_dimension["width"],
                        "display_height": cua_window_dimension["height"],
                        "environment": "browser",
                    }
                ],
                input=[computer_call_input],
                reasoning={
                    "generate_summary": "concise",
                },
                truncation="auto",
                temperature=0,
            )
        input_tokens = current_response.usage.input_tokens or 0
        output_tokens = current_response.usage.output_tokens or 0
        current_response.usage.total_tokens or 0
        cached_tokens = current_response.usage.input_tokens_details.cached_tokens or 0
        reasoning_tokens = current_response.usage.output_tokens_details.reasoning_tokens or 0
        llm_cost = (3.0 / 1000000) * input_tokens + (12.0 / 1000000) * output_tokens
        await app.DATABASE.tasks.update_step(
            task_id=task.task_id,
            step_id=step.step_id,
            organization_id=task.organization_id,
            incremental_cost=llm_cost,
            incremental_input_tokens=input_tokens if input_tokens > 0 else None,
            incremental_output_tokens=output_tokens if output_tokens > 0 else None,
            incremental_reasoning_tokens=reasoning_tokens if reasoning_tokens > 0 else None,
            incremental_cached_tokens=cached_tokens if cached_tokens > 0 else None,
        )

        return await parse_cua_actions(task, step, current_response), current_response

    async def _generate_anthropic_actions(
        self,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        llm_caller: LLMCaller,
    ) -> list[Action]:
        LOG.info(
            "Anthropic CU call starts",
            tool_results=llm_caller.current_tool_results,
            message_length=len(llm_caller.message_history),
        )
        if llm_caller.current_tool_results:
            llm_caller.message_history.append({"role": "user", "content": llm_caller.current_tool_results})
            llm_caller.clear_tool_results()
            LOG.info(
                "Anthropic CU call - appended tool result message to message history and cleared cached tool results",
                message=llm_caller.current_tool_results,
                message_length=len(llm_caller.message_history),
            )
        type = "computer_20250124"
        betas = ["computer-use-2025-01-24"]
        # according to https://platform.claude.com/docs/en/agents-and-tools/tool-use/computer-use-tool
        # "computer-use-2025-11-24" for Claude Opus 4.7, Claude Opus 4.6, Claude Sonnet 4.6, Claude Opus 4.5
        # "computer-use-2025-01-24" for Sonnet 4.5, Haiku 4.5, Opus 4.1, Sonnet 4, Opus 4, and Sonnet 3.7 (deprecated)

        key = llm_caller.llm_key
        uses_new_computer_tool = ("OPUS" in key and any(v in key for v in ("4.5", "4.6", "4.7"))) or (
            "SONNET" in key and "4.6" in key
        )
        if uses_new_computer_tool:
            type = "computer_20251124"
            betas = ["computer-use-2025-11-24"]
        # These are placeholder dimensions: LLMCaller.call rewrites display_*_px to the screenshot
        # resize target derived from the live window_dimension (passed below) before the request, so
        # a dynamic viewport is already reflected there. Do not special-case it here.
        tools = [
            {
                "type": type,
                "name": "computer",
                "display_height_px": settings.BROWSER_HEIGHT,
                "display_width_px": settings.BROWSER_WIDTH,
            }
        ]
        thinking: dict[str, Any]
        output_config: dict[str, Any] | None
        if LLMAPIHandlerFactory.requires_adaptive_thinking(llm_caller.llm_config.model_name):
            thinking = {"type": "adaptive"}
            output_config = {"effort": LLMAPIHandlerFactory.ADAPTIVE_THINKING_EFFORT}
        else:
            thinking = {"type": "enabled", "budget_tokens": 1024}
            output_config = None
        window_dimension = cast(Resolution, scraped_page.window_dimension) if scraped_page.window_dimension else None
        call_kwargs: dict[str, Any] = {
            "step": step,
            "screenshots": scraped_page.screenshots,
            "prompt_name": "anthropic-cua",
            "use_message_history": True,
            "tools": tools,
            "raw_response": True,
            "betas": betas,
            "thinking": thinking,
            "window_dimension": window_dimension,
        }
        if output_config is not None:
            call_kwargs["output_config"] = output_config
        if not llm_caller.message_history:
            # ExtractionBlock stores its prompt in data_extraction_goal rather than navigation_goal.
            # Fall back so the first CUA turn still carries an instruction.
            first_turn_prompt = task.navigation_goal or task.data_extraction_goal
            llm_response = await llm_caller.call(
                prompt=first_turn_prompt,
                **call_kwargs,
            )
        else:
            current_context = skyvern_context.ensure_context()
            resp_content = None
            if task.task_id in current_context.totp_codes:
                verification_code = current_context.totp_codes[task.task_id]
                current_context.totp_codes.pop(task.task_id)
                LOG.info(
                    "Using verification code from context for anthropic CU call",
                    task_id=task.task_id,
                    verification_code=verification_code,
                )
                resp_content = f"Here is the verification code: {verification_code}"

            llm_response = await llm_caller.call(
                prompt=resp_content,
                **call_kwargs,
            )
        assistant_content = llm_response["content"]
        llm_caller.message_history.append({"role": "assistant", "content": assistant_content})

        actions = await parse_anthropic_actions(
            task,
            step,
            assistant_content,
            window_dimension or llm_caller.browser_window_dimension,
            llm_caller.get_screenshot_resize_target_dimension(window_dimension),
        )
        return actions

    async def _generate_ui_tars_actions(
        self,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        llm_caller: LLMCaller,
    ) -> list[Action]:
        """Generate actions using UI-TARS (Seed1.5-VL) model through the LLMCaller pattern."""

        LOG.info(
            "UI-TARS action generation starts",
            step_order=step.order,
        )

        # Ensure we have a UITarsLLMCaller instance
        if not isinstance(llm_caller, UITarsLLMCaller):
            raise ValueError(f"Expected UITarsLLMCaller, got {type(llm_caller)}")

        # Add the current screenshot to conversation
        if scraped_page.screenshots:
            llm_caller.add_screenshot(scraped_page.screenshots[0])
        else:
            LOG.error("No screenshots found, skipping UI-TARS action generation")
            raise ValueError("No screenshots found, skipping UI-TARS action generation")

        # Generate response using the LLMCaller
        response_content = await llm_caller.generate_ui_tars_response(step)

        LOG.info(f"UI-TARS raw response: {response_content}")

        window_dimension = (
            cast(Resolution, scraped_page.window_dimension)
            if scraped_page.window_dimension
            else Resolution(width=1920, height=1080)
        )
        LOG.info(f"UI-TARS browser window dimension: {window_dimension}")

        actions = await parse_ui_tars_actions(task, step, response_content, window_dimension)

        LOG.info(
            "UI-TARS action generation completed",
            actions_count=len(actions),
        )

        return actions

    async def _generate_yutori_navigator_actions(
        self,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        llm_caller: LLMCaller,
    ) -> list[Action]:
        if not isinstance(llm_caller, YutoriNavigatorLLMCaller):
            raise ValueError(f"Expected YutoriNavigatorLLMCaller, got {type(llm_caller)}")
        if not scraped_page.screenshots:
            raise ValueError("No screenshots found for Yutori Navigator action generation")
        # Only initialize the conversation on the very first step. Step retries
        # share the same order with an incremented retry_index — we must keep
        # the existing message_history (including overridden tool results like
        # "Waited Ns") so Navigator can recover instead of replaying.
        if step.order == 0 and step.retry_index == 0:
            llm_caller.initialize_conversation(task)

        # Detect last step — send stop-and-summarize instead of normal tool result.
        context = skyvern_context.current()
        override_max_steps = context.max_steps_override if context else None
        max_steps = override_max_steps or task.max_steps_per_run or settings.MAX_STEPS_PER_RUN
        is_last_step = step.order + 1 >= max_steps

        if is_last_step:
            llm_caller.add_stop_and_summarize(scraped_page.screenshots[0], scraped_page.url)
        elif not llm_caller.message_history:
            llm_caller.add_initial_message(scraped_page.screenshots[0])
        else:
            llm_caller.flush_pending_tool_results(scraped_page.screenshots[0], scraped_page.url)

        nav_resp = await llm_caller.generate_response(step)

        # Resolve ref-based targeting to coordinates before parsing.
        # Navigator can target elements by ref ID instead of coordinates;
        # we resolve inline so the parser always sees coordinates.
        if nav_resp.tool_calls:
            page = await scraped_page._browser_state.get_working_page()
            for tc in nav_resp.tool_calls:
                args = json.loads(tc["function"]["arguments"])
                if args.get("ref") and not args.get("coordinates"):
                    result = await evaluate_tool_script(page, GET_ELEMENT_BY_REF_SCRIPT, args["ref"])
                    if result.get("success"):
                        args["coordinates"] = result["coordinates"]
                        tc["function"]["arguments"] = json.dumps(args)

        window_dimension = (
            cast(Resolution, scraped_page.window_dimension)
            if scraped_page.window_dimension
            else Resolution(width=settings.BROWSER_WIDTH, height=settings.BROWSER_HEIGHT)
        )

        actions = parse_navigator_response_to_actions(
            nav_resp,
            window_dimension["width"],
            window_dimension["height"],
            task=task,
            step=step,
        )
        if nav_resp.tool_calls and not actions:
            tool_names = [tool_call["function"]["name"] for tool_call in nav_resp.tool_calls]
            LOG.warning(
                "Unsupported Yutori Navigator tool calls returned no executable actions",
                task_id=task.task_id,
                step_order=step.order,
                tool_calls=tool_names,
            )
            raise FailedToParseActionInstruction(
                reason=f"Unsupported Yutori Navigator tool calls: {', '.join(tool_names)}",
                error_type="UNSUPPORTED_YUTORI_TOOL_CALLS",
            )
        return actions

    async def _speculate_next_step_plan(
        self,
        organization: Organization,
        task: Task,
        current_step: Step,
        next_step: Step,
        browser_state: BrowserState,
        engine: RunEngine,
    ) -> SpeculativePlan | None:
        if engine in CUA_ENGINES:
            LOG.info(
                "Skipping speculative extract-actions for CUA engine",
                step_id=current_step.step_id,
                task_id=task.task_id,
            )
            return None

        ctx = skyvern_context.current()
        if ctx and ctx.script_mode:
            LOG.debug(
                "Skipping speculative extract-actions in script_mode workflow",
                step_id=current_step.step_id,
                task_id=task.task_id,
            )
            return None

        # Brief back-off so verification can short-circuit cheap CompleteAction cases
        # before we start the speculative scrape.
        await asyncio.sleep(0.3)

        try:
            next_step.is_speculative = True

            if page := await browser_state.get_working_page():
                await self.register_async_operations(organization, task, page)

            step_prompt = await self.build_and_record_step_prompt(
                task,
                next_step,
                browser_state,
                engine,
                persist_artifacts=False,
            )
            scraped_page = step_prompt.scraped_page
            extract_action_prompt = step_prompt.extract_action_prompt
            use_caching = step_prompt.use_caching
            prompt_name = step_prompt.prompt_name
            without_page_information = step_prompt.without_page_information

            if scraped_page.check_pdf_viewer_embed():
                next_step.is_speculative = False
                LOG.info("Skipping speculative extract-actions for PDF viewer page", step_id=current_step.step_id)
                return None

            llm_api_handler = LLMAPIHandlerFactory.get_override_llm_api_handler(
                task.llm_key,
                default=get_org_aware_primary_llm_api_handler(),
            )

            self.async_operation_pool.run_operation(task.task_id, AgentPhase.llm)

            llm_json_response = await llm_api_handler(
                prompt=extract_action_prompt,
                prompt_name=prompt_name,
                step=next_step,
                screenshots=[] if without_page_information else scraped_page.screenshots,
                system_prompt=task.workflow_system_prompt,
            )

            LOG.info(
                "Speculative extract-actions completed",
                sampling=True,
                current_step_id=current_step.step_id,
                synthetic_step_id=next_step.step_id,
            )

            metadata_copy = None
            if next_step.speculative_llm_metadata is not None:
                metadata_copy = next_step.speculative_llm_metadata.model_copy()
                next_step.speculative_llm_metadata = None
            next_step.is_speculative = False

            return SpeculativePlan(
                scraped_page=scraped_page,
                extract_action_prompt=extract_action_prompt,
                use_caching=use_caching,
                llm_json_response=llm_json_response,
                llm_metadata=metadata_copy,
                prompt_name=prompt_name,
            )
        except Exception:
            LOG.warning(
                "Failed to run speculative extract-actions",
                step_id=current_step.step_id,
                exc_info=True,
            )
            next_step.is_speculative = False
            return None

    async def _persist_speculative_llm_metadata(
        self,
        step: Step,
        metadata: SpeculativeLLMMetadata,
        *,
        screenshots: list[bytes] | None = None,
    ) -> None:
        if not metadata:
            return

        LOG.debug("Persisting speculative LLM metadata")

        _ctx = skyvern_context.current()
        if _ctx and not step.is_speculative:
            if screenshots:
                app.ARTIFACT_MANAGER.accumulate_screenshot_to_step_archive(
                    step=step,
                    screenshots=screenshots,
                    artifact_type=ArtifactType.SCREENSHOT_LLM,
                )
            app.ARTIFACT_MANAGER.accumulate_llm_call_to_archive(
                step=step,
                prompt=metadata.prompt.encode("utf-8") if metadata.prompt else None,
                request=metadata.llm_request_json.encode("utf-8") if metadata.llm_request_json else None,
                response=metadata.llm_response_json.encode("utf-8") if metadata.llm_response_json else None,
                parsed_response=metadata.parsed_response_json.encode("utf-8")
                if metadata.parsed_response_json
                else None,
                rendered_response=metadata.rendered_response_json.encode("utf-8")
                if metadata.rendered_response_json
                else None,
            )
            return

        artifacts = []
        if metadata.prompt:
            artifacts.append(
                await app.ARTIFACT_MANAGER.prepare_llm_artifact(
                    data=metadata.prompt.encode("utf-8"),
                    artifact_type=ArtifactType.LLM_PROMPT,
                    screenshots=screenshots,
                    step=step,
                )
            )

        if metadata.llm_request_json:
            artifacts.append(
                await app.ARTIFACT_MANAGER.prepare_llm_artifact(
                    data=metadata.llm_request_json.encode("utf-8"),
                    artifact_type=ArtifactType.LLM_REQUEST,
                    step=step,
                )
            )

        if metadata.llm_response_json:
            artifacts.append(
                await app.ARTIFACT_MANAGER.prepare_llm_artifact(
                    data=metadata.llm_response_json.encode("utf-8"),
                    artifact_type=ArtifactType.LLM_RESPONSE,
                    step=step,
                )
            )

        if metadata.parsed_response_json:
            artifacts.append(
                await app.ARTIFACT_MANAGER.prepare_llm_artifact(
                    data=metadata.parsed_response_json.encode("utf-8"),
                    artifact_type=ArtifactType.LLM_RESPONSE_PARSED,
                    step=step,
                )
            )

        if metadata.rendered_response_json:
            artifacts.append(
                await app.ARTIFACT_MANAGER.prepare_llm_artifact(
                    data=metadata.rendered_response_json.encode("utf-8"),
                    artifact_type=ArtifactType.LLM_RESPONSE_RENDERED,
                    step=step,
                )
            )

        if artifacts:
            await app.ARTIFACT_MANAGER.bulk_create_artifacts(artifacts)

        incremental_cost = metadata.llm_cost if metadata.llm_cost and metadata.llm_cost > 0 else None
        incremental_input_tokens = (
            metadata.input_tokens if metadata.input_tokens and metadata.input_tokens > 0 else None
        )
        incremental_output_tokens = (
            metadata.output_tokens if metadata.output_tokens and metadata.output_tokens > 0 else None
        )
        incremental_reasoning_tokens = (
            metadata.reasoning_tokens if metadata.reasoning_tokens and metadata.reasoning_tokens > 0 else None
        )
        incremental_cached_tokens = (
            metadata.cached_tokens if metadata.cached_tokens and metadata.cached_tokens > 0 else None
        )

        if (
            incremental_cost is not None
            or incremental_input_tokens is not None
            or incremental_output_tokens is not None
            or incremental_reasoning_tokens is not None
            or incremental_cached_tokens is not None
        ):
            await app.DATABASE.tasks.update_step(
                task_id=step.task_id,
                step_id=step.step_id,
                organization_id=step.organization_id,
                incremental_cost=incremental_cost,
                incremental_input_tokens=incremental_input_tokens,
                incremental_output_tokens=incremental_output_tokens,
                incremental_reasoning_tokens=incremental_reasoning_tokens,
                incremental_cached_tokens=incremental_cached_tokens,
            )

            if incremental_input_tokens:
                step.input_token_count += incremental_input_tokens
            if incremental_output_tokens:
                step.output_token_count += incremental_output_tokens
            if incremental_reasoning_tokens:
                step.reasoning_token_count = (step.reasoning_token_count or 0) + incremental_reasoning_tokens
            if incremental_cached_tokens:
                step.cached_token_count = (step.cached_token_count or 0) + incremental_cached_tokens
            if incremental_cost:
                step.step_cost += incremental_cost

        step.speculative_llm_metadata = None

    async def _persist_speculative_metadata_for_discarded_plan(
        self,
        step: Step,
        speculative_task: asyncio.Future[SpeculativePlan | None],
        *,
        cancel_step: bool = False,
    ) -> None:
        try:
            plan = await asyncio.shield(speculative_task)
        except CancelledError:
            LOG.debug(
                "Speculative extract-actions cancelled before metadata persistence",
                step_id=step.step_id,
            )
            step.is_speculative = False
            if cancel_step:
                await self._cancel_speculative_step(step)
            return
        except Exception:
            LOG.debug(
                "Speculative extract-actions failed before metadata persistence",
                step_id=step.step_id,
                exc_info=True,
            )
            step.is_speculative = False
            if cancel_step:
                await self._cancel_speculative_step(step)
            return

        if not plan or not plan.llm_metadata:
            step.is_speculative = False
            if cancel_step:
                await self._cancel_speculative_step(step)
            return

        try:
            await self._persist_speculative_llm_metadata(
                step,
                plan.llm_metadata,
            )
            step.is_speculative = False
            if cancel_step:
                await self._cancel_speculative_step(step)
        except Exception:
            LOG.warning(
                "Failed to persist speculative llm metadata for discarded plan",
                step_id=step.step_id,
                exc_info=True,
            )

    async def _cancel_speculative_step(self, step: Step) -> None:
        if step.status == StepStatus.canceled:
            return
        try:
            updated_step = await self.update_step(step, status=StepStatus.canceled)
            step.status = updated_step.status
            step.is_speculative = False
        except Exception:
            LOG.warning(
                "Failed to cancel speculative step",
                step_id=step.step_id,
                exc_info=True,
            )

    @traced(name="skyvern.agent.complete_verify")
    async def complete_verify(
        self,
        page: Page,
        scraped_page: ScrapedPage,
        task: Task,
        step: Step,
        *,
        verification_trigger: VerificationTrigger,
    ) -> CompleteVerifyResult:
        otel_trace.get_current_span().set_attribute("verification.trigger", verification_trigger)
        LOG.debug(
            "Checking if user goal is achieved after re-scraping the page",
            workflow_run_id=task.workflow_run_id,
        )
        scroll = True
        llm_key_override = task.llm_key
        if await service_utils.is_cua_task(task=task):
            scroll = False
            llm_key_override = None

        _ctx = skyvern_context.current()
        if _ctx:
            _ctx.scrape_trigger = "verification"
            _ctx.scrape_screenshots_consumed = bool(
                _ctx.llm_screenshots_enabled_for_prompt(retry_index=step.retry_index)
            )
        scraped_page_refreshed = await scraped_page.refresh(draw_boxes=False, scroll=scroll)

        # SKY-11295: verify MINI_GOAL_TEMPLATE-wrapped goals against the mini goal only —
        # passed verbatim, the verifier judges the big goal and under-claims to max-steps.
        unwrapped_goals = unwrap_goal_fields(
            task.navigation_goal,
            task.complete_criterion,
            task.terminate_criterion,
        )
        if unwrapped_goals.big_goal_context is not None:
            LOG.info(
                "Unwrapped mini-goal for completion verification",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
            )

        actions_and_results_str = ""
        # A step-scale mini goal is often action-phrased ("Click X"); once the page
        # navigates, page state alone can't certify it — wrapped goals verify with history.
        if task.include_action_history_in_verification or unwrapped_goals.big_goal_context is not None:
            # Evidence must be complete: the default 1-step window drops earlier actions of a
            # multi-step goal, making every-action verification unsatisfiable on 3+-step heals.
            full_run_window = task.max_steps_per_run or settings.MAX_STEPS_PER_RUN
            actions_and_results_str = await self._get_action_results(
                task, current_step=step, history_window=full_run_window
            )

        # Check if we should use the termination-aware prompt (experiment)
        use_termination_prompt = False
        try:
            distinct_id = task.workflow_run_id if task.workflow_run_id else task.task_id
            use_termination_prompt = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                "USE_TERMINATION_AWARE_COMPLETE_VERIFICATION",
                distinct_id,
                properties={"organization_id": task.organization_id, "task_url": task.url},
            )
            if use_termination_prompt:
                LOG.info(
                    "Experiment enabled: using termination-aware complete verification prompt for file download block",
                    task_id=task.task_id,
                    workflow_run_id=task.workflow_run_id,
                    organization_id=task.organization_id,
                    block_type="file_download",
                )
        except Exception as e:
            LOG.warning(
                "Failed to check USE_TERMINATION_AWARE_COMPLETE_VERIFICATION experiment; using legacy behavior",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
                error=str(e),
            )

        # Select the appropriate template based on experiment
        template_name = "check-user-goal-with-termination" if use_termination_prompt else "check-user-goal"
        prompt_name = "check-user-goal-with-termination" if use_termination_prompt else "check-user-goal"

        slim_output = await get_slim_output_template_value(template_name)

        # SKY-9718 Layer 1: gate the lean recipe on the PostHog flag at the
        # call site. complete_verify only needs the visual page state to
        # decide is_complete / is_terminate / continue — no element-id refs,
        # no new_elements_ids threading — so we also drop Skyvern IDs.
        _ctx = skyvern_context.current()
        lean_enabled = bool(_ctx and _ctx.enable_lean_element_tree)
        llm_screenshots_enabled = bool(_ctx and _ctx.llm_screenshots_enabled_for_prompt(retry_index=step.retry_index))
        verification_prompt = load_prompt_with_elements(
            element_tree_builder=scraped_page_refreshed,
            prompt_engine=prompt_engine,
            template_name=template_name,
            navigation_goal=unwrapped_goals.navigation_goal,
            navigation_payload=task.navigation_payload,
            complete_criterion=unwrapped_goals.complete_criterion,
            complete_criterion_is_untrusted=bool(
                unwrapped_goals.complete_criterion and _ctx and _ctx.complete_criterion_is_untrusted
            ),
            terminate_criterion=unwrapped_goals.terminate_criterion,
            big_goal_context=unwrapped_goals.big_goal_context,
            action_history=actions_and_results_str,
            action_history_evidence=bool(actions_and_results_str),
            slim_output=slim_output,
            local_datetime=datetime.now(skyvern_context.ensure_context().tz_info).isoformat(),
            without_screenshots=not llm_screenshots_enabled,
            html_need_skyvern_attrs=False,
            lean_compress_long_href=lean_enabled,
            lean_compress_image_src=lean_enabled,
            lean_strip_url_query_strings=lean_enabled,
            lean_compress_nonnavigable_href=lean_enabled,
        )

        # This prompt is critical for our agent, we probably should use the primary LLM handler
        # but we're experimenting with using the dedicated check-user-goal handler
        use_check_user_goal_handler = False
        try:
            # Use task_id or workflow_run_id as distinct_id
            distinct_id = task.workflow_run_id if task.workflow_run_id else task.task_id
            use_check_user_goal_handler = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                "USE_CHECK_USER_GOAL_HANDLER_FOR_VERIFICATION",
                distinct_id,
                properties={"organization_id": task.organization_id},
            )
            if use_check_user_goal_handler:
                LOG.info(
                    "Experiment enabled: using CHECK_USER_GOAL_LLM_API_HANDLER for complete verification",
                    task_id=task.task_id,
                    workflow_run_id=task.workflow_run_id,
                    organization_id=task.organization_id,
                )
        except Exception as e:
            LOG.warning(
                "Failed to check USE_CHECK_USER_GOAL_HANDLER_FOR_VERIFICATION experiment; using legacy behavior",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
                error=str(e),
            )

        if use_check_user_goal_handler:
            default_handler = get_org_aware_secondary_llm_api_handler(default=app.CHECK_USER_GOAL_LLM_API_HANDLER)
        else:
            default_handler = get_org_aware_primary_llm_api_handler(default=app.LLM_API_HANDLER)

        distinct_id_for_override = task.workflow_run_id if task.workflow_run_id else task.task_id
        default_handler = await resolve_check_user_goal_handler(
            distinct_id_for_override, task.organization_id, default_handler
        )
        llm_api_handler = LLMAPIHandlerFactory.get_override_llm_api_handler(llm_key_override, default=default_handler)

        verification_result = await llm_api_handler(
            prompt=verification_prompt,
            step=step,
            screenshots=scraped_page_refreshed.screenshots,
            prompt_name=prompt_name,
            system_prompt=task.workflow_system_prompt,
        )
        result = CompleteVerifyResult.model_validate(verification_result)
        if result.is_complete:
            verification_status = VerificationStatus.complete
        elif result.is_terminate:
            verification_status = VerificationStatus.terminate
        else:
            verification_status = VerificationStatus.continue_step
        span = otel_trace.get_current_span()
        span.set_attribute("verification.status", verification_status.value)
        span.set_attribute("verification.template", template_name)
        span.set_attribute("verification.goal_unwrapped", unwrapped_goals.big_goal_context is not None)
        record_verification_span_attrs(span, result.thoughts)
        return result

    async def check_user_goal_complete(
        self,
        page: Page,
        scraped_page: ScrapedPage,
        task: Task,
        step: Step,
        *,
        verification_trigger: VerificationTrigger,
    ) -> CompleteAction | TerminateAction | None:
        try:
            verification_result = await self.complete_verify(
                page=page,
                scraped_page=scraped_page,
                task=task,
                step=step,
                verification_trigger=verification_trigger,
            )

            # Check if we should terminate instead of complete
            # Note: This requires the USE_TERMINATION_AWARE_COMPLETE_VERIFICATION experiment to be enabled
            if verification_result.is_terminate:
                LOG.warning(
                    "Periodic verification determined task should terminate (termination-aware experiment)",
                    workflow_run_id=task.workflow_run_id,
                    thoughts=verification_result.thoughts,
                    status=verification_result.status if verification_result.status else "legacy",
                )
                return TerminateAction(
                    reasoning=verification_result.thoughts,
                    failure_categories=verification_result.failure_categories or [],
                )

            # We don't want to return a complete action if the user goal is not achieved since we're checking at every step
            if not verification_result.is_complete:
                return None

            return CompleteAction(
                reasoning=verification_result.thoughts,
                data_extraction_goal=task.data_extraction_goal,
                verified=True,
            )

        except SkyvernException:
            # Expected transient failures (LLM response/scrape errors); the check re-runs next step.
            LOG.warning(
                "Failed to check user goal complete, skipping",
                workflow_run_id=task.workflow_run_id,
                exc_info=True,
            )
            return None
        except Exception:
            LOG.exception(
                "Failed to check user goal complete, skipping",
                workflow_run_id=task.workflow_run_id,
            )
            return None

    async def _sync_video_artifact_after_step(self, task: Task, browser_state: BrowserState | None) -> None:
        """Upload the current video snapshot once per step so in-progress recordings are visible.

        The video file is still open while recording, so this is a partial snapshot rather than a
        finalized recording. The authoritative final upload happens in cleanup_and_persist_task after
        the browser closes and Playwright writes the complete file.
        """
        if not browser_state:
            return
        try:
            video_artifacts = await app.BROWSER_MANAGER.get_video_artifacts(
                task_id=task.task_id, browser_state=browser_state, finalize=False
            )
            for video_artifact in video_artifacts:
                await app.ARTIFACT_MANAGER.update_artifact_data(
                    artifact_id=video_artifact.video_artifact_id,
                    organization_id=task.organization_id,
                    data=video_artifact.video_data,
                )
        except Exception:
            LOG.warning(
                "Failed to sync video artifact after step",
                task_id=task.task_id,
                organization_id=task.organization_id,
                exc_info=True,
            )

    @traced(name="skyvern.agent.record_artifacts_after_action")
    async def record_artifacts_after_action(
        self,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        engine: RunEngine,
        action: Action,
    ) -> None:
        _span = otel_trace.get_current_span()
        _span.set_attribute("action_type", str(action.action_type))
        _span.set_attribute("step_order", step.order if step else -1)

        working_page = await browser_state.get_working_page()
        if not working_page:
            raise MissingBrowserStatePage(
                diagnostic=get_browser_state_diagnostic(browser_state),
                detected_at=datetime.now(UTC),
            )

        skyvern_frame: SkyvernFrame | None = None
        try:
            skyvern_frame = await SkyvernFrame.create_instance(
                frame=working_page,
                engine_selection=browser_state.engine_selection,
            )
            await skyvern_frame.safe_wait_for_animation_end(caller="post_action_artifact")
        except Exception:
            LOG.info("Failed to wait for animation end, ignore it", exc_info=True)

        context = skyvern_context.ensure_context()
        scrolling_number = context.max_screenshot_scrolls
        if scrolling_number is None:
            scrolling_number = DEFAULT_MAX_SCREENSHOT_SCROLLS

        if engine in CUA_ENGINES:
            scrolling_number = 0
        elif scrolling_number > 0 and skyvern_frame is not None:
            arm = transient_ui_capture_arm(context)
            if arm != "off":
                # Shadow-detect an open transient popup in control; only treatment suppresses the
                # scroll that would dismiss it (e.g. a portal date-picker popup) before the next step.
                # This post-action screenshot shares the per-run consecutive-suppression cap with the
                # agent-step scrape so a stale expanded trigger cannot pin captures at one viewport.
                popup_trigger = await skyvern_frame.get_open_aria_popup_trigger()
                _span.set_attribute("transient_ui_arm", arm)
                if popup_trigger is not None:
                    _span.set_attribute("transient_ui_detected", True)
                    emit_transient_ui_popup_telemetry(_span, popup_trigger)
                decision = decide_transient_ui_suppression(context, arm, detected=popup_trigger is not None)
                if decision.suppress:
                    scrolling_number = 0
                    _span.set_attribute("transient_ui_scroll_suppressed", True)
                elif decision.capped:
                    _span.set_attribute("transient_ui_suppression_capped", True)

        artifacts: list[BulkArtifactCreationRequest | None] = []
        screenshot_artifact_id: str | None = None
        try:
            # get current x, y position of the page
            x: int | None = None
            y: int | None = None
            try:
                x, y = await skyvern_frame.get_scroll_x_y() if skyvern_frame else (None, None)
                LOG.debug("Current x, y position of the page before taking screenshot", x=x, y=y)
            except Exception:
                LOG.warning("Failed to get current x, y position of the page", exc_info=True)

            screenshot = await browser_state.take_post_action_screenshot(
                scrolling_number=scrolling_number,
            )
            # scroll back to the original x, y position of the page
            if skyvern_frame and x is not None and y is not None:
                await skyvern_frame.safe_scroll_to_x_y(x, y)
                LOG.debug("Scrolled back to the original x, y position of the page after taking screenshot", x=x, y=y)
                _ctx = skyvern_context.current()
                # step=None and speculative steps use the non-archive path.
                _bundled = bool(step and not step.is_speculative and _ctx)
                _tracer = otel_trace.get_tracer("skyvern")
                with traced_span(_tracer, "skyvern.agent.artifact.screenshot_action") as _ss_art_span:
                    apply_context_attrs(_ss_art_span)
                    _ss_art_span.set_attribute("screenshot_bytes", len(screenshot))
                    _ss_art_span.set_attribute("bundled", _bundled)
                    _ss_art_span.set_attribute("action_type", str(action.action_type))
                    if _bundled:
                        ids = app.ARTIFACT_MANAGER.accumulate_screenshot_to_step_archive(
                            step=step,
                            screenshots=[screenshot],
                            artifact_type=ArtifactType.SCREENSHOT_ACTION,
                        )
                        if ids:
                            screenshot_artifact_id = ids[0]
                    else:
                        screenshot_request = await app.ARTIFACT_MANAGER.prepare_llm_artifact(
                            data=screenshot,
                            artifact_type=ArtifactType.SCREENSHOT_ACTION,
                            step=step,
                        )
                        if screenshot_request:
                            artifacts.append(screenshot_request)
                            for artifact_data in screenshot_request.artifacts:
                                if artifact_data.artifact_model.artifact_type == ArtifactType.SCREENSHOT_ACTION:
                                    screenshot_artifact_id = artifact_data.artifact_model.artifact_id
                                    break
        except ScreenshotTargetClosed:
            # Teardown, browser death, or the site closing the tab. HTML capture below reads the same
            # dead target, so returning here avoids trading this for an ERROR from get_content().
            LOG.info("Skipping post-action artifacts because the browser target closed")
            return
        except Exception:
            LOG.error(
                "Failed to record screenshot after action",
                exc_info=True,
            )

        try:
            if skyvern_frame is None:
                skyvern_frame = await SkyvernFrame.create_instance(
                    frame=working_page,
                    engine_selection=browser_state.engine_selection,
                )
            html = await skyvern_frame.get_content()
            _ctx = skyvern_context.current()
            # Encode once to fix the html_bytes char-vs-byte mismatch and avoid a
            # second pass through html.encode() in the chosen branch.
            html_bytes = html.encode("utf-8")
            _bundled = bool(step and not step.is_speculative and _ctx)
            _tracer = otel_trace.get_tracer("skyvern")
            with traced_span(_tracer, "skyvern.agent.artifact.html_action") as _html_art_span:
                apply_context_attrs(_html_art_span)
                _html_art_span.set_attribute("html_bytes", len(html_bytes))
                _html_art_span.set_attribute("bundled", _bundled)
                if _bundled:
                    app.ARTIFACT_MANAGER.accumulate_action_html_to_archive(step=step, html_action=html_bytes)
                else:
                    artifacts.append(
                        await app.ARTIFACT_MANAGER.prepare_llm_artifact(
                            data=html_bytes,
                            artifact_type=ArtifactType.HTML_ACTION,
                            step=step,
                        )
                    )
        except Exception:
            LOG.exception("Failed to record html after action")

        if artifacts:
            _tracer = otel_trace.get_tracer("skyvern")
            with traced_span(_tracer, "skyvern.agent.artifact.bulk_create") as _bulk_span:
                apply_context_attrs(_bulk_span)
                # Count underlying artifacts (main + screenshots per request), not request wrappers.
                _bulk_span.set_attribute("artifact_count", sum(len(a.artifacts) for a in artifacts if a is not None))
                try:
                    await app.ARTIFACT_MANAGER.bulk_create_artifacts(artifacts)
                except Exception:
                    LOG.warning("Failed to bulk create artifacts after action", exc_info=True)

        if screenshot_artifact_id and action.action_id and action.organization_id:
            action.screenshot_artifact_id = screenshot_artifact_id
            _ctx = skyvern_context.current()
            if step and _ctx:
                # Defer the DB write until _flush_step_archive so the artifact row
                # exists before the action row references it.
                app.ARTIFACT_MANAGER.queue_action_screenshot_update(
                    step=step,
                    organization_id=action.organization_id,
                    action_id=action.action_id,
                    artifact_id=screenshot_artifact_id,
                )
            else:
                _tracer = otel_trace.get_tracer("skyvern")
                with traced_span(_tracer, "skyvern.agent.artifact.update_action_screenshot_fk") as _fk_span:
                    apply_context_attrs(_fk_span)
                    try:
                        await app.DATABASE.artifacts.update_action_screenshot_artifact_id(
                            organization_id=action.organization_id,
                            action_id=action.action_id,
                            screenshot_artifact_id=screenshot_artifact_id,
                        )
                    except Exception:
                        LOG.warning(
                            "Failed to update action with screenshot artifact id",
                            action_id=action.action_id,
                            screenshot_artifact_id=screenshot_artifact_id,
                            exc_info=True,
                        )

    async def initialize_execution_state(
        self,
        task: Task,
        step: Step,
        workflow_run: WorkflowRun | None = None,
        browser_session_id: str | None = None,
        pre_resolved_browser_state: BrowserState | None = None,
    ) -> tuple[Step, BrowserState, DetailedAgentStepOutput]:
        if pre_resolved_browser_state is not None:
            browser_state = pre_resolved_browser_state
        elif workflow_run:
            browser_state = await app.BROWSER_MANAGER.get_or_create_for_workflow_run(
                workflow_run=workflow_run,
                url=task.url,
                browser_session_id=browser_session_id,
                browser_profile_id=workflow_run.browser_profile_id,
            )
        else:
            browser_state = await app.BROWSER_MANAGER.get_or_create_for_task(
                task=task,
                browser_session_id=browser_session_id,
            )
        # Every way a step can acquire a browser converges here, including a caller-supplied one.
        fail_step_if_browser_already_gone(task=task, step=step, browser_state=browser_state)
        # Initialize video artifact for the task here, afterwards it'll only get updated.
        # The recording file is still open here, so skip the ffmpeg remux — matches the
        # per-step sync path; the finalized upload happens in cleanup_and_persist_task.
        if browser_state and browser_state.browser_artifacts:
            video_artifacts = await app.BROWSER_MANAGER.get_video_artifacts(
                task_id=task.task_id, browser_state=browser_state, finalize=False
            )
            for idx, video_artifact in enumerate(video_artifacts):
                if video_artifact.video_artifact_id:
                    continue
                video_artifact_id = await app.ARTIFACT_MANAGER.create_artifact(
                    step=step,
                    artifact_type=ArtifactType.RECORDING,
                    data=video_artifact.video_data,
                )
                video_artifacts[idx].video_artifact_id = video_artifact_id
            app.BROWSER_MANAGER.set_video_artifact_for_task(task, video_artifacts)

        detailed_output = DetailedAgentStepOutput(
            scraped_page=None,
            extract_action_prompt=None,
            llm_response=None,
            actions=None,
            action_results=None,
            actions_and_results=None,
            step_exception=None,
        )
        return step, browser_state, detailed_output

    async def _scrape_with_type(
        self,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        scrape_type: ScrapeType,
        engine: RunEngine,
    ) -> ScrapedPage:
        if scrape_type == ScrapeType.NORMAL:
            pass

        elif scrape_type == ScrapeType.STOPLOADING:
            LOG.info("Try to stop loading the page before scraping")
            await browser_state.stop_page_loading()
        elif scrape_type == ScrapeType.RELOAD:
            LOG.info("Try to reload the page before scraping")
            await browser_state.reload_page(degradation=True)

        max_screenshot_number = settings.MAX_NUM_SCREENSHOTS
        # DEPRECATED: visual bounding box overlays are no longer rendered during scraping.
        # ``draw_boxes`` is wired through the scrape pipeline as False; the overlay helpers
        # are retained briefly for backwards compatibility and scheduled for removal.
        draw_boxes = False
        scroll = True
        if engine in CUA_ENGINES:
            max_screenshot_number = 1
            scroll = False

        return await browser_state.scrape_website(
            url=task.url,
            cleanup_element_tree=app.AGENT_FUNCTION.cleanup_element_tree_factory(
                task=task,
                step=step,
                engine_selection=browser_state.engine_selection,
            ),
            scrape_exclude=app.scrape_exclude,
            max_screenshot_number=max_screenshot_number,
            draw_boxes=draw_boxes,
            scroll=scroll,
            # Only this agent-step scrape opts into transient-UI scroll suppression (SKY-12735);
            # verification / extraction / error-detection scrapes keep legacy scrolling.
            allow_transient_ui_suppression=True,
        )

    @traced(name="skyvern.agent.scrape_and_prompt", role="wrapper")
    async def build_and_record_step_prompt(
        self,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        engine: RunEngine,
        *,
        persist_artifacts: bool = True,
    ) -> StepPromptResult:
        _scrape_span = otel_trace.get_current_span()
        _scrape_span.set_attribute("engine", str(engine))
        _scrape_span.set_attribute("pre_scraped", False)
        if task.url:
            _scrape_span.set_attribute("page_url", strip_query_params(task.url))
        # Check if we have pre-scraped data from parallel verification optimization
        context = skyvern_context.current()
        scraped_page: ScrapedPage | None = None

        if (
            context
            and context.next_step_pre_scraped_data
            and context.next_step_pre_scraped_data.get("step_id") == step.step_id
        ):
            scraped_page = context.next_step_pre_scraped_data.get("scraped_page")
            if scraped_page:
                timestamp = context.next_step_pre_scraped_data.get("timestamp")
                age_seconds = (datetime.now(UTC) - timestamp).total_seconds() if timestamp else 0
                LOG.info(
                    "Using pre-scraped data from parallel verification optimization",
                    step_id=step.step_id,
                    num_elements=len(scraped_page.elements),
                    age_seconds=age_seconds,
                )
                _scrape_span.set_attribute("pre_scraped", True)
                # Clear the cached data
                context.next_step_pre_scraped_data = None

        # If we don't have pre-scraped data, scrape normally
        if scraped_page is None:
            if context:
                # SKY-9718 Layer 1: local-override env var for bench / debugging.
                # `FORCE_ENABLE_LEAN_ELEMENT_TREE=true` bypasses the PostHog gate
                # and forces lean ON for every run in this process. Never set in
                # production — the PostHog flag is the only prod control.
                if os.getenv("FORCE_ENABLE_LEAN_ELEMENT_TREE", "").lower() in ("true", "1", "yes"):
                    context.enable_lean_element_tree = True
                    LOG.info(
                        "ENABLE_LEAN_ELEMENT_TREE forced ON via env var (bypasses PostHog gate)",
                        task_id=task.task_id,
                    )
                else:
                    try:
                        distinct_id = task.workflow_run_id if task.workflow_run_id else task.task_id
                        context.enable_lean_element_tree = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                            "ENABLE_LEAN_ELEMENT_TREE",
                            distinct_id,
                            properties={"organization_id": task.organization_id},
                        )
                    except Exception:
                        LOG.warning(
                            "Failed to check ENABLE_LEAN_ELEMENT_TREE feature flag",
                            exc_info=True,
                            task_id=task.task_id,
                        )
                        context.enable_lean_element_tree = False

                await resolve_transient_ui_capture_arm(context)

            # start the async tasks while running scrape_website
            if engine not in CUA_ENGINES:
                self.async_operation_pool.run_operation(task.task_id, AgentPhase.scrape)

            if context:
                context.scrape_trigger = "step_body"
                context.scrape_screenshots_consumed = bool(
                    context.llm_screenshots_enabled_for_prompt(retry_index=step.retry_index)
                )

            extract_action_prompt = ""
            use_caching = False
            # Probed between steps, not inside the ladder below: the ladder's RELOAD rung is what
            # rescues a page whose own JS wedged the renderer, so it keeps every attempt it has.
            if context and context.browser_health.is_degraded:
                stuck_operations = context.browser_health.describe_stuck_operations()
                LOG.error(
                    "Browser session stopped responding; failing the run instead of starting another step",
                    consecutive_timeouts=context.browser_health.consecutive_timeouts,
                    stuck_operations=stuck_operations,
                    step_order=step.order,
                    step_retry=step.retry_index,
                    url=task.url,
                )
                raise BrowserSessionDegraded(
                    consecutive_timeouts=context.browser_health.consecutive_timeouts,
                    stuck_operations=stuck_operations,
                )
            for idx, scrape_type in enumerate(SCRAPE_TYPE_ORDER):
                try:
                    scraped_page = await self._scrape_with_type(
                        task=task,
                        step=step,
                        browser_state=browser_state,
                        scrape_type=scrape_type,
                        engine=engine,
                    )
                    break
                except (FailedToTakeScreenshot, ScrapingFailed, FailedToReloadPage) as e:
                    if idx < len(SCRAPE_TYPE_ORDER) - 1:
                        LOG.warning(
                            "Scrape attempt failed, will retry with next strategy",
                            attempt=idx + 1,
                            scrape_type=scrape_type.value if hasattr(scrape_type, "value") else str(scrape_type),
                            error_type=e.__class__.__name__,
                            url=task.url,
                        )
                        continue
                    if isinstance(e, ScreenshotTargetClosed):
                        LOG.warning(
                            "All scrape attempts failed because the browser target closed",
                            total_attempts=len(SCRAPE_TYPE_ORDER),
                            url=task.url,
                            step_order=step.order,
                            step_retry=step.retry_index,
                        )
                        raise e
                    LOG.error(
                        "All scrape attempts failed",
                        total_attempts=len(SCRAPE_TYPE_ORDER),
                        error_type=e.__class__.__name__,
                        url=task.url,
                        step_order=step.order,
                        step_retry=step.retry_index,
                        exc_info=True,
                    )
                    raise e

        if scraped_page is None:
            raise EmptyScrapePage()

        extract_action_prompt = ""
        use_caching = False

        if persist_artifacts:
            await self._persist_scrape_artifacts(
                task=task,
                step=step,
                scraped_page=scraped_page,
                context=context,
            )
        LOG.info(
            "Scraped website",
            sampling=True,
            step_order=step.order,
            step_retry=step.retry_index,
            num_elements=len(scraped_page.elements),
            url=task.url,
        )
        extract_action_prompt = ""
        prompt_name = EXTRACT_ACTION_PROMPT_NAME  # Default; overwritten below for non-CUA engines
        without_page_information = False
        if engine not in CUA_ENGINES:
            build_result = await self._build_extract_action_prompt(
                task,
                step,
                browser_state,
                scraped_page,
                verification_code_check=bool(task.totp_verification_url or task.totp_identifier),
                expire_verification_code=True,
            )
            extract_action_prompt = build_result.prompt
            use_caching = build_result.use_caching
            prompt_name = build_result.prompt_name
            without_page_information = build_result.without_page_information

        _scrape_span.set_attribute("element_count", len(scraped_page.elements))
        _scrape_span.set_attribute("prompt_name", prompt_name)
        _scrape_span.set_attribute("use_caching", bool(use_caching))
        return StepPromptResult(
            scraped_page=scraped_page,
            extract_action_prompt=extract_action_prompt,
            use_caching=use_caching,
            prompt_name=prompt_name,
            without_page_information=without_page_information,
        )

    @traced(name="skyvern.agent.persist_artifacts")
    async def _persist_scrape_artifacts(
        self,
        *,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        context: SkyvernContext | None,
    ) -> None:
        """
        Persist the core scrape artifacts (HTML + element metadata) for a step.
        This is used both for regular runs and when adopting a speculative plan.
        """
        _artifacts_span = otel_trace.get_current_span()
        _artifacts_span.set_attribute("artifact_archive_enabled", bool(context))
        _artifacts_span.set_attribute("element_count", len(scraped_page.elements))
        _artifacts_span.set_attribute("html_bytes", len(scraped_page.html) if scraped_page.html else 0)

        element_tree_format = ElementTreeFormat.HTML
        element_tree_in_prompt = scraped_page.build_element_tree(element_tree_format)

        if context:
            app.ARTIFACT_MANAGER.accumulate_scrape_to_archive(
                step=step,
                html=scraped_page.html.encode("utf-8"),
                id_css_map=json.dumps(scraped_page.id_to_css_dict, indent=2).encode("utf-8"),
                id_frame_map=json.dumps(scraped_page.id_to_frame_dict, indent=2).encode("utf-8"),
                element_tree=json.dumps(scraped_page.element_tree, indent=2).encode("utf-8"),
                element_tree_trimmed=json.dumps(scraped_page.element_tree_trimmed, indent=2).encode("utf-8"),
                element_tree_in_prompt=element_tree_in_prompt.encode("utf-8"),
            )
        else:
            scrape_artifact_types = [
                ArtifactType.HTML_SCRAPE,
                ArtifactType.VISIBLE_ELEMENTS_ID_CSS_MAP,
                ArtifactType.VISIBLE_ELEMENTS_ID_FRAME_MAP,
                ArtifactType.VISIBLE_ELEMENTS_TREE,
                ArtifactType.VISIBLE_ELEMENTS_TREE_TRIMMED,
                ArtifactType.VISIBLE_ELEMENTS_TREE_IN_PROMPT,
            ]
            results = await asyncio.gather(
                app.ARTIFACT_MANAGER.create_artifact(
                    step=step, artifact_type=ArtifactType.HTML_SCRAPE, data=scraped_page.html.encode("utf-8")
                ),
                app.ARTIFACT_MANAGER.create_artifact(
                    step=step,
                    artifact_type=ArtifactType.VISIBLE_ELEMENTS_ID_CSS_MAP,
                    data=json.dumps(scraped_page.id_to_css_dict, indent=2).encode("utf-8"),
                ),
                app.ARTIFACT_MANAGER.create_artifact(
                    step=step,
                    artifact_type=ArtifactType.VISIBLE_ELEMENTS_ID_FRAME_MAP,
                    data=json.dumps(scraped_page.id_to_frame_dict, indent=2).encode("utf-8"),
                ),
                app.ARTIFACT_MANAGER.create_artifact(
                    step=step,
                    artifact_type=ArtifactType.VISIBLE_ELEMENTS_TREE,
                    data=json.dumps(scraped_page.element_tree, indent=2).encode("utf-8"),
                ),
                app.ARTIFACT_MANAGER.create_artifact(
                    step=step,
                    artifact_type=ArtifactType.VISIBLE_ELEMENTS_TREE_TRIMMED,
                    data=json.dumps(scraped_page.element_tree_trimmed, indent=2).encode("utf-8"),
                ),
                app.ARTIFACT_MANAGER.create_artifact(
                    step=step,
                    artifact_type=ArtifactType.VISIBLE_ELEMENTS_TREE_IN_PROMPT,
                    data=element_tree_in_prompt.encode("utf-8"),
                ),
                return_exceptions=True,
            )
            failures = [
                (artifact_type, result)
                for artifact_type, result in zip(scrape_artifact_types, results, strict=True)
                if isinstance(result, BaseException)
            ]
            for artifact_type, exc in failures:
                LOG.error(
                    "Failed to persist scrape artifact",
                    artifact_type=artifact_type,
                    step_id=step.step_id,
                    task_id=task.task_id,
                    step_order=step.order,
                    step_retry=step.retry_index,
                    error=str(exc),
                )
            if failures:
                raise failures[0][1]

    @staticmethod
    def _build_extract_action_cache_variant(
        verification_code_check: bool,
        show_close_page_action: bool,
        complete_criterion: str | None,
        show_new_tab_action: bool = False,
        show_switch_tab_action: bool = False,
        enriched_tree_enabled: bool = False,
        llm_screenshots_enabled: bool = True,
        slim_output: str | None = None,
        has_data_extraction_goal: bool = False,
        enable_new_planner_actions: bool = False,
        planner_mini_goal_improvements: bool = False,
        extra_action_guidance: str | None = None,
    ) -> str:
        """
        Build a short-but-unique cache variant identifier so extract-action prompts that
        differ meaningfully (OTP, close-page availability, complete-criterion presence, slim output,
        data extraction goal availability, new planner actions) do not reuse the same Vertex cache object.
        """
        variant_parts: list[str] = []
        if verification_code_check:
            variant_parts.append("vc")
        if extra_action_guidance:
            digest = hashlib.sha256(extra_action_guidance.encode("utf-8"), usedforsecurity=False).hexdigest()[:8]
            variant_parts.append(f"g{digest}")
        if show_close_page_action:
            variant_parts.append("cp")
        if show_new_tab_action:
            variant_parts.append("nt")
        if show_switch_tab_action:
            variant_parts.append("st")
        if has_data_extraction_goal:
            variant_parts.append("de")
        if enable_new_planner_actions:
            variant_parts.append("np")
        if planner_mini_goal_improvements:
            variant_parts.append("oi")
        if enriched_tree_enabled:
            variant_parts.append("et")
        if enriched_tree_enabled and not llm_screenshots_enabled:
            variant_parts.append("ni")
        if complete_criterion:
            variant_parts.append("cc")
        if slim_output:
            variant_parts.append(f"slim_{slim_output}")
        return "-".join(variant_parts) if variant_parts else "std"

    async def _create_vertex_cache_for_task(
        self,
        task: Task,
        static_prompt: str,
        context: SkyvernContext,
        llm_key_override: str | None,
        prompt_variant: str | None = None,
    ) -> None:
        """
        Create a Vertex AI cache for the task's static prompt.

        Uses llm_key as cache key to enable cache sharing across tasks with the same model.

        Args:
            task: The task to create cache for
            static_prompt: The static prompt content to cache
            context: The Skyvern context to store the cache name in
            llm_key_override: Optional override when we explicitly pick an LLM key
            prompt_variant: Cache variant identifier (std/vc/ml/etc.)
        """
        resolved_llm_key = llm_key_override or task.llm_key

        if not resolved_llm_key:
            LOG.warning(
                "Cannot create Vertex AI cache without llm_key, skipping cache creation",
                task_id=task.task_id,
            )
            return

        cache_variant = prompt_variant or "std"

        try:
            LOG.debug(
                "Attempting Vertex AI cache creation",
                task_id=task.task_id,
                llm_key=resolved_llm_key,
                cache_variant=cache_variant,
            )
            cache_manager = get_cache_manager()

            variant_suffix = f"-{cache_variant}" if cache_variant else ""

            cache_key = f"{EXTRACT_ACTION_CACHE_KEY_PREFIX}{variant_suffix}-{resolved_llm_key}"

            # Get the actual model name from LLM config to ensure correct format
            # (e.g., "gemini-2.5-flash" with decimal, not "gemini-2-5-flash")
            model_name = "gemini-2.5-flash"  # Default

            try:
                llm_config = LLMConfigRegistry.get_config(resolved_llm_key)
                extracted_name = None

                # For router configs (LLMRouterConfig), extract from model_list primary model FIRST
                # This must be checked before model_name since router model_name is just an identifier
                # (e.g., "gemini-3.0-flash-gpt-5-mini-fallback-router"), not an actual Vertex model
                if hasattr(llm_config, "model_list") and hasattr(llm_config, "main_model_group"):
                    # Find the primary model in model_list by matching main_model_group
                    for model_entry in llm_config.model_list:
                        if model_entry.model_name == llm_config.main_model_group:
                            # Extract actual model name from litellm_params
                            model_param = model_entry.litellm_params.get("model", "")
                            if "vertex_ai/" in model_param:
                                extracted_name = model_param.split("/")[-1]
                            elif model_param.startswith("gemini-"):
                                extracted_name = model_param
                            break

                # Try to extract from model_name if it contains "vertex_ai/" or starts with "gemini-"
                if not extracted_name and hasattr(llm_config, "model_name") and isinstance(llm_config.model_name, str):
                    if "vertex_ai/" in llm_config.model_name:
                        # Direct Vertex config: "vertex_ai/gemini-2.5-flash" -> "gemini-2.5-flash"
                        extracted_name = llm_config.model_name.split("/")[-1]
                    elif llm_config.model_name.startswith("gemini-"):
                        # Already in correct format
                        extracted_name = llm_config.model_name

                # For router/fallback configs, extract from api_base or infer from key name
                if not extracted_name and hasattr(llm_config, "litellm_params") and llm_config.litellm_params:
                    params = llm_config.litellm_params
                    api_base = getattr(params, "api_base", None)
                    if api_base and isinstance(api_base, str) and "/models/" in api_base:
                        # Extract from URL: .../models/gemini-2.5-flash -> "gemini-2.5-flash"
                        extracted_name = api_base.split("/models/")[-1]

                # For router configs without api_base, infer from the llm_key itself
                if not extracted_name:
                    # Extract version from llm_key (e.g., VERTEX_GEMINI_1_5_FLASH -> "1_5" or VERTEX_GEMINI_2.5_FLASH -> "2.5")
                    # Pattern: GEMINI_{version}_{flavor} where version can use dots, underscores, or dashes
                    version_match = re.search(r"GEMINI[_-](\d+[._-]\d+)", resolved_llm_key, re.IGNORECASE)
                    version = version_match.group(1).replace("_", ".").replace("-", ".") if version_match else "2.5"

                    # Determine flavor
                    if "_PRO_" in resolved_llm_key or resolved_llm_key.endswith("_PRO"):
                        extracted_name = f"gemini-{version}-pro"
                    elif "_FLASH_LITE_" in resolved_llm_key or resolved_llm_key.endswith("_FLASH_LITE"):
                        extracted_name = f"gemini-{version}-flash-lite"
                    else:
                        # Default to flash flavor
                        extracted_name = f"gemini-{version}-flash"

                if extracted_name:
                    model_name = extracted_name
            except Exception as e:
                LOG.debug("Failed to extract model name from config, using default", error=str(e))

            # Normalize model name to the canonical Vertex identifier (e.g., gemini-2.5-pro).
            # Preserve preview suffixes so we don't strip required identifiers (e.g., gemini-3-flash-preview).
            match = re.search(
                r"(gemini-\d+(?:\.\d+)?-(?:flash-lite|flash|pro)(?:-preview)?)", model_name, re.IGNORECASE
            )
            if match:
                model_name = match.group(1).lower()

            # Create cache for this task
            # Use asyncio.to_thread to offload blocking HTTP request (requests.post)
            # This prevents freezing the event loop during cache creation
            cache_data = await asyncio.to_thread(
                cache_manager.create_cache,
                model_name=model_name,
                static_content=static_prompt,
                cache_key=cache_key,
                ttl_seconds=3600,  # 1 hour
            )

            # Store cache metadata in context
            context.vertex_cache_name = cache_data["name"]
            context.vertex_cache_key = cache_key
            context.vertex_cache_variant = cache_variant

            LOG.debug(
                "Created Vertex AI cache for task",
                task_id=task.task_id,
                cache_key=cache_key,
                cache_name=cache_data["name"],
                model_name=model_name,
                cache_variant=cache_variant,
            )
        except Exception as e:
            LOG.warning(
                "Failed to create Vertex AI cache, proceeding without caching",
                task_id=task.task_id,
                error=str(e),
                exc_info=True,
            )

    @traced(name="skyvern.agent.prompt_build")
    async def _build_extract_action_prompt(
        self,
        task: Task,
        step: Step,
        browser_state: BrowserState,
        scraped_page: ScrapedPage,
        verification_code_check: bool = False,
        expire_verification_code: bool = False,
    ) -> PromptBuildResult:
        actions_and_results_str = await self._get_action_results(task)

        # Generate the extract action prompt
        navigation_goal = task.navigation_goal
        context = skyvern_context.ensure_context()
        complete_criterion_is_untrusted = bool(task.complete_criterion and context.complete_criterion_is_untrusted)
        starting_url = task.url
        page = await browser_state.get_working_page()
        current_url = await read_current_url(page) if page else starting_url
        final_navigation_payload = self._build_navigation_payload(
            task, expire_verification_code=expire_verification_code, step=step, scraped_page=scraped_page
        )
        navigation_payload_str = json.dumps(final_navigation_payload)

        task_type = task.task_type if task.task_type else TaskType.general
        template = ""
        without_page_information = False
        if task_type == TaskType.general:
            template = EXTRACT_ACTION_TEMPLATE
        elif task_type == TaskType.validation:
            template = DECISIVE_CRITERION_VALIDATE_TEMPLATE
        elif task_type == TaskType.action:
            prompt = prompt_engine.load_prompt(
                "infer-action-type", navigation_goal=navigation_goal, prompt_name="infer-action-type"
            )
            llm_api_handler = LLMAPIHandlerFactory.get_override_llm_api_handler(
                task.llm_key, default=get_org_aware_primary_llm_api_handler()
            )
            json_response = await llm_api_handler(
                prompt=prompt, step=step, prompt_name="infer-action-type", system_prompt=task.workflow_system_prompt
            )
            if json_response.get("error"):
                raise FailedToParseActionInstruction(
                    reason=json_response.get("thought"), error_type=json_response.get("error")
                )

            inferred_actions: list[dict[str, Any]] = json_response.get("inferred_actions", [])
            if not inferred_actions:
                raise FailedToParseActionInstruction(reason=json_response.get("thought"), error_type="EMPTY_ACTION")

            action_type: str = inferred_actions[0].get("action_type") or ""
            action_type = ActionType[action_type.upper()]

            if action_type == ActionType.CLICK:
                template = "single-click-action"
            elif action_type == ActionType.INPUT_TEXT:
                template = "single-input-action"
            elif action_type == ActionType.UPLOAD_FILE:
                template = "single-upload-action"
            elif action_type == ActionType.SELECT_OPTION:
                template = "single-select-action"
            elif action_type == ActionType.HOVER:
                template = "single-hover-action"
            else:
                raise UnsupportedActionType(action_type=action_type)

        if not template:
            raise UnsupportedTaskType(task_type=task_type)

        # Validation evidence router (SKY-10620 Route B)
        error_code_mapping_str = json.dumps(task.error_code_mapping) if task.error_code_mapping else None
        local_datetime = datetime.now(context.tz_info).isoformat()
        if task_type == TaskType.validation:
            router_result = await resolve_validation_evidence_route(
                task=task,
                step=step,
                complete_criterion=task.complete_criterion.strip() if task.complete_criterion else None,
                terminate_criterion=task.terminate_criterion.strip() if task.terminate_criterion else None,
                navigation_payload_str=navigation_payload_str,
                error_code_mapping_str=error_code_mapping_str,
                local_datetime=local_datetime,
            )
            without_page_information = (
                router_result.effective_without_page_information or context.validation_without_page_information
            )

            _prompt_build_span = otel_trace.get_current_span()
            _prompt_build_span.set_attribute("validation.router.mode", str(router_result.mode))
            _prompt_build_span.set_attribute("validation.router.decision", str(router_result.decision))
            if router_result.evidence_kind is not None:
                _prompt_build_span.set_attribute("validation.router.evidence_kind", str(router_result.evidence_kind))
            if router_result.confidence is not None:
                _prompt_build_span.set_attribute("validation.router.confidence", float(router_result.confidence))
            if router_result.failure_reason is not None:
                _prompt_build_span.set_attribute("validation.router.failure_reason", str(router_result.failure_reason))
            _prompt_build_span.set_attribute("validation.without_page_information", bool(without_page_information))

            LOG.info(
                "Validation evidence router decision",
                task_id=task.task_id,
                mode=str(router_result.mode),
                decision=str(router_result.decision),
                evidence_kind=str(router_result.evidence_kind) if router_result.evidence_kind else None,
                confidence=router_result.confidence,
                failure_reason=str(router_result.failure_reason) if router_result.failure_reason else None,
                without_page_information=without_page_information,
            )

        slim_output = await get_slim_output_template_value(template)

        # Reset cached prompt and cache reference by default; we will set them below if caching is enabled.
        # This prevents extract-action cache from being attached to other prompts (e.g. validation).
        context.cached_static_prompt = None
        context.vertex_cache_name = None

        # Check if prompt caching is enabled for extract-action
        use_caching = False
        prompt_caching_settings = await self._get_prompt_caching_settings(context)
        effective_llm_key = task.llm_key
        if not effective_llm_key:
            handler_for_key = LLMAPIHandlerFactory.get_override_llm_api_handler(
                task.llm_key, default=get_org_aware_primary_llm_api_handler()
            )
            effective_llm_key = getattr(handler_for_key, "llm_key", None)
        cache_enabled = prompt_caching_settings.get(EXTRACT_ACTION_PROMPT_NAME) or prompt_caching_settings.get(
            EXTRACT_ACTION_TEMPLATE
        )
        LOG.debug(
            "Extract-action prompt caching evaluation",
            template=template,
            cache_enabled=cache_enabled,
            prompt_caching_settings=prompt_caching_settings,
            task_llm_key=task.llm_key,
            effective_llm_key=effective_llm_key,
        )
        element_tree_format = ElementTreeFormat.HTML
        # SKY-9718 Layer 1: extract-action is a planner template — keep Skyvern
        # internal IDs (default `html_need_skyvern_attrs=True`) and apply the
        # 3 lean transforms.
        use_lean_tree = context.enable_lean_element_tree
        if use_lean_tree:
            elements_for_prompt = scraped_page.build_lean_elements_tree(
                element_tree_format,
                # compress_long_href stays OFF — the planner reads the href
                # to decide whether to click a link (destination signal).
                compress_long_href=False,
                compress_image_src=True,
                strip_url_query_strings=True,
                # non-navigable hrefs (javascript:/empty/'#') carry no
                # destination signal, so they're safe to drop for the planner.
                compress_nonnavigable_href=True,
            )
        else:
            elements_for_prompt = scraped_page.build_element_tree(element_tree_format)

        open_tabs_context = await build_open_tabs_context(browser_state, page)
        show_close_page_action = open_tabs_context is not None
        # NEW_TAB/SWITCH_TAB are gated behind a flag (default off) so single-tab tasks are
        # unaffected. SWITCH_TAB additionally requires >= 2 open tabs, like CLOSE_PAGE.
        multi_tab_enabled = await self._is_multi_tab_control_enabled(context)
        show_new_tab_action = multi_tab_enabled
        show_switch_tab_action = multi_tab_enabled and open_tabs_context is not None
        llm_screenshots_enabled = context.llm_screenshots_enabled_for_prompt(retry_index=step.retry_index)
        enriched_tree_enabled = context.enriched_tree_enabled()

        # Off keeps pre-PR behavior: the planner is never offered these actions, so the parser and
        # is_goal_achieved branches stay dormant. Per-run randomization, like DISABLE_USER_GOAL_CHECK.
        enable_new_planner_actions = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
            "ENABLE_NEW_PLANNER_ACTIONS",
            task.workflow_run_id if task.workflow_run_id else task.task_id,
            properties={"task_url": task.url, "organization_id": task.organization_id},
        )
        extra_action_guidance = await app.AGENT_FUNCTION.get_extra_extract_action_guidance(task)

        # SKY-9983: render per-step-changing sections (action history, dialogs, tabs) after the
        # element tree so provider prefix caches can hit the tree across steps on the same page.
        stable_prefix_ordering = False
        if template == EXTRACT_ACTION_TEMPLATE:
            stable_prefix_ordering = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                "EXTRACT_ACTION_STABLE_PREFIX",
                task.workflow_run_id if task.workflow_run_id else task.task_id,
                properties={"task_url": task.url, "organization_id": task.organization_id},
            )

        # Offer PASTE_TEXT (fill a spreadsheet grid with one tab/newline block) only under the umbrella,
        # so grid-fill guidance is scoped to the eval org until proven out.
        planner_mini_goal_improvements = settings.PLANNER_MINI_GOAL_IMPROVEMENTS
        if not planner_mini_goal_improvements:
            try:
                planner_mini_goal_improvements = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                    "PLANNER_MINI_GOAL_IMPROVEMENTS",
                    task.organization_id,
                    properties={"organization_id": task.organization_id},
                )
            except Exception:
                LOG.warning(
                    "Failed to resolve PLANNER_MINI_GOAL_IMPROVEMENTS feature flag; using settings default",
                    organization_id=task.organization_id,
                    exc_info=True,
                )
                planner_mini_goal_improvements = settings.PLANNER_MINI_GOAL_IMPROVEMENTS

        # Format-then-clear so a render failure can't drop the signal permanently;
        # gate on extract-action template since other task types don't render it.
        recent_dialog_messages_str = (
            context.format_recent_dialog_messages() if template == EXTRACT_ACTION_TEMPLATE else None
        )

        if template == DECISIVE_CRITERION_VALIDATE_TEMPLATE and cache_enabled:
            LOG.warning("Prompt caching is not supported for validation prompts; using uncached render")
            cache_enabled = False

        if template == EXTRACT_ACTION_TEMPLATE and cache_enabled:
            try:
                # Try to load split templates for caching
                prompt_kwargs = {
                    "navigation_goal": navigation_goal,
                    "navigation_payload_str": navigation_payload_str,
                    "starting_url": starting_url,
                    "current_url": current_url,
                    "data_extraction_goal": task.data_extraction_goal,
                    "enable_new_planner_actions": enable_new_planner_actions,
                    "planner_mini_goal_improvements": planner_mini_goal_improvements,
                    "action_history": actions_and_results_str,
                    "error_code_mapping_str": error_code_mapping_str,
                    "local_datetime": local_datetime,
                    "verification_code_check": verification_code_check,
                    "extra_action_guidance": extra_action_guidance,
                    "complete_criterion": task.complete_criterion.strip() if task.complete_criterion else None,
                    "complete_criterion_is_untrusted": complete_criterion_is_untrusted,
                    "terminate_criterion": task.terminate_criterion.strip() if task.terminate_criterion else None,
                    "show_close_page_action": show_close_page_action,
                    "show_new_tab_action": show_new_tab_action,
                    "show_switch_tab_action": show_switch_tab_action,
                    "open_tabs_context": open_tabs_context,
                    "recent_dialog_messages_str": recent_dialog_messages_str,
                    "llm_screenshots_enabled": llm_screenshots_enabled,
                    "enriched_tree_enabled": enriched_tree_enabled,
                    "slim_output": slim_output,
                    "stable_prefix_ordering": stable_prefix_ordering,
                }
                cache_variant = self._build_extract_action_cache_variant(
                    verification_code_check=verification_code_check,
                    extra_action_guidance=extra_action_guidance,
                    show_close_page_action=show_close_page_action,
                    show_new_tab_action=show_new_tab_action,
                    show_switch_tab_action=show_switch_tab_action,
                    complete_criterion=task.complete_criterion.strip() if task.complete_criterion else None,
                    enriched_tree_enabled=enriched_tree_enabled,
                    llm_screenshots_enabled=llm_screenshots_enabled,
                    slim_output=slim_output,
                    has_data_extraction_goal=bool(task.data_extraction_goal),
                    enable_new_planner_actions=enable_new_planner_actions,
                    planner_mini_goal_improvements=planner_mini_goal_improvements,
                )
                static_prompt = prompt_engine.load_prompt(f"{template}-static", **prompt_kwargs)
                dynamic_prompt = prompt_engine.load_prompt(
                    f"{template}-dynamic",
                    elements=elements_for_prompt,
                    **prompt_kwargs,
                )
                secret_values = app.WORKFLOW_CONTEXT_MANAGER.get_secret_values_for_run(task.workflow_run_id)
                if settings.ENABLE_SECRET_ARTIFACT_REDACTION and secret_values:
                    static_prompt = redact_secrets_from_text(static_prompt, secret_values)

                # Store static prompt for caching and continue sending it alongside the dynamic section.
                # Vertex explicit caching expects the static content to still be present in the request so the
                # first call succeeds even if the cache is cold. The cached reference simply lets the service
                # reuse the static portion internally.
                context.cached_static_prompt = static_prompt
                context.use_prompt_caching = True
                use_caching = True

                # Create Vertex AI cache for Gemini models
                if effective_llm_key and "GEMINI" in effective_llm_key:
                    await self._create_vertex_cache_for_task(
                        task,
                        static_prompt,
                        context,
                        effective_llm_key,
                        prompt_variant=cache_variant,
                    )

                combined_prompt = f"{static_prompt.rstrip()}\n\n{dynamic_prompt.lstrip()}"

                combined_token_count = count_tokens(combined_prompt)

                # SKY-9718: stash the breakdown on the cached split-template path too —
                # load_prompt_with_elements_tracked never sees this prompt, so the
                # downstream LLM API handler would otherwise log nothing for it.
                context.last_prompt_breakdown = {
                    "total_tokens_local": combined_token_count,
                    "template_name": f"{template}-cached",
                }

                if combined_token_count > PROMPT_HARD_CEILING_TOKENS:
                    # The cached split-template path renders static+dynamic separately,
                    # so the load_prompt_with_elements ceiling logic never sees this
                    # prompt. Raise the dedicated sentinel to trigger the except below,
                    # which falls through to the full load_prompt_with_elements render
                    # where the fallback drop chain can apply.
                    raise _PromptCeilingExceeded(
                        f"cached extract-action prompt exceeded {PROMPT_HARD_CEILING_TOKENS} tokens"
                    )

                LOG.info(
                    "Using cached prompt",
                    sampling=True,
                    task_id=task.task_id,
                    prompt_name=EXTRACT_ACTION_PROMPT_NAME,
                    cache_variant=cache_variant,
                    stable_prefix_ordering=stable_prefix_ordering,
                )
                # Map template to prompt_name for logging/caching guards
                prompt_name = EXTRACT_ACTION_PROMPT_NAME if template == EXTRACT_ACTION_TEMPLATE else template
                if recent_dialog_messages_str is not None:
                    context.clear_recent_dialog_messages()
                return PromptBuildResult(
                    prompt=combined_prompt,
                    use_caching=use_caching,
                    prompt_name=prompt_name,
                    without_page_information=False,
                )

            except Exception as e:
                LOG.warning("Failed to load cached prompt templates, falling back to original", error=str(e))
                # Fall through to original behavior

        # Original behavior - load full prompt
        if template == DECISIVE_CRITERION_VALIDATE_TEMPLATE and without_page_information:
            full_prompt = prompt_engine.load_prompt(
                template,
                navigation_goal=navigation_goal,
                navigation_payload_str=navigation_payload_str,
                data_extraction_goal=task.data_extraction_goal,
                error_code_mapping_str=error_code_mapping_str,
                local_datetime=local_datetime,
                complete_criterion=task.complete_criterion.strip() if task.complete_criterion else None,
                terminate_criterion=task.terminate_criterion.strip() if task.terminate_criterion else None,
                without_page_information=True,
                prompt_name=template,
            )
        else:
            full_prompt = load_prompt_with_elements(
                element_tree_builder=scraped_page,
                prompt_engine=prompt_engine,
                template_name=template,
                navigation_goal=navigation_goal,
                navigation_payload_str=navigation_payload_str,
                starting_url=starting_url,
                current_url=current_url,
                data_extraction_goal=task.data_extraction_goal,
                enable_new_planner_actions=enable_new_planner_actions,
                planner_mini_goal_improvements=planner_mini_goal_improvements,
                action_history=actions_and_results_str,
                error_code_mapping_str=error_code_mapping_str,
                local_datetime=local_datetime,
                verification_code_check=verification_code_check,
                extra_action_guidance=extra_action_guidance,
                complete_criterion=task.complete_criterion.strip() if task.complete_criterion else None,
                complete_criterion_is_untrusted=complete_criterion_is_untrusted,
                terminate_criterion=task.terminate_criterion.strip() if task.terminate_criterion else None,
                show_close_page_action=show_close_page_action,
                show_new_tab_action=show_new_tab_action,
                show_switch_tab_action=show_switch_tab_action,
                open_tabs_context=open_tabs_context,
                recent_dialog_messages_str=recent_dialog_messages_str,
                llm_screenshots_enabled=llm_screenshots_enabled,
                enriched_tree_enabled=enriched_tree_enabled,
                slim_output=slim_output,
                stable_prefix_ordering=stable_prefix_ordering,
                lean_compress_long_href=False,
                lean_compress_image_src=context.enable_lean_element_tree,
                lean_strip_url_query_strings=context.enable_lean_element_tree,
                lean_compress_nonnavigable_href=context.enable_lean_element_tree,
            )

        # Map template to prompt_name for logging/caching guards
        prompt_name = EXTRACT_ACTION_PROMPT_NAME if template == EXTRACT_ACTION_TEMPLATE else template

        # Tag the span so we can explain the 26x p95/p50 variance — prompt size
        # is almost always the reason prompt_build gets slow.
        _prompt_build_span = otel_trace.get_current_span()
        _prompt_build_span.set_attribute("prompt_name", prompt_name)
        _prompt_build_span.set_attribute("prompt_tokens", count_tokens(full_prompt))
        _prompt_build_span.set_attribute("use_caching", bool(use_caching))
        _prompt_build_span.set_attribute("stable_prefix_ordering", stable_prefix_ordering)

        if recent_dialog_messages_str is not None:
            context.clear_recent_dialog_messages()

        return PromptBuildResult(
            prompt=full_prompt,
            use_caching=use_caching,
            prompt_name=prompt_name,
            without_page_information=without_page_information,
        )

    async def _get_prompt_caching_settings(self, context: SkyvernContext) -> dict[str, bool]:
        """
        Resolve prompt caching settings for the current run.

        We prefer explicit overrides via LLMAPIHandlerFactory.set_prompt_caching_settings(), which
        are mostly used by scripts/tests. When no override exists, evaluate the PostHog experiment
        once per context and cache the result on the context to avoid repeated lookups.
        """
        if LLMAPIHandlerFactory._prompt_caching_settings is not None:
            return LLMAPIHandlerFactory._prompt_caching_settings

        if context.prompt_caching_settings is not None:
            return context.prompt_caching_settings

        distinct_id = context.run_id or context.workflow_run_id or context.task_id
        organization_id = context.organization_id
        context.prompt_caching_settings = {}

        if not distinct_id or not organization_id:
            return context.prompt_caching_settings

        try:
            enabled = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                "PROMPT_CACHING_OPTIMIZATION",
                distinct_id,
                properties={"organization_id": organization_id},
            )
        except Exception as exc:
            LOG.warning(
                "Failed to evaluate prompt caching experiment; defaulting to disabled",
                distinct_id=distinct_id,
                organization_id=organization_id,
                error=str(exc),
            )
            return context.prompt_caching_settings

        if enabled:
            context.prompt_caching_settings = {
                EXTRACT_ACTION_PROMPT_NAME: True,
                EXTRACT_ACTION_TEMPLATE: True,
            }
            LOG.info(
                "Prompt caching optimization enabled",
                distinct_id=distinct_id,
                organization_id=organization_id,
            )

        return context.prompt_caching_settings

    async def _is_multi_tab_control_enabled(self, context: SkyvernContext) -> bool:
        distinct_id = context.run_id or context.workflow_run_id or context.task_id
        organization_id = context.organization_id
        if not distinct_id or not organization_id:
            return False
        try:
            return await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                "MULTI_TAB_CONTROL",
                distinct_id,
                properties={"organization_id": organization_id},
            )
        except Exception as exc:
            LOG.warning(
                "Failed to evaluate multi-tab control experiment; defaulting to disabled",
                distinct_id=distinct_id,
                organization_id=organization_id,
                error=str(exc),
            )
            return False

    def _should_process_totp(self, scraped_page: ScrapedPage | None) -> bool:
        """Detect TOTP pages by checking for multiple input fields or verification keywords."""
        if not scraped_page:
            return False

        try:
            # Count input fields that could be for TOTP (more flexible than maxlength="1")
            input_fields = [
                element
                for element in scraped_page.elements
                if element.get("tagName", "").lower() == "input"
                and element.get("attributes", {}).get("type", "text").lower() in ["text", "number", "tel"]
            ]

            # Check for multiple input fields (potential multi-field TOTP)
            if len(input_fields) >= 4:
                # Additional check: look for patterns that suggest multi-field TOTP
                # Check if inputs are close together or have similar attributes
                has_maxlength_1 = any(elem.get("attributes", {}).get("maxlength") == "1" for elem in input_fields)

                # Check for input fields with numeric patterns (type="number", pattern for digits)
                has_numeric_patterns = any(
                    elem.get("attributes", {}).get("type") == "number"
                    or elem.get("attributes", {}).get("pattern", "").isdigit()
                    or "digit" in elem.get("attributes", {}).get("pattern", "").lower()
                    for elem in input_fields
                )

                if has_maxlength_1 or has_numeric_patterns:
                    return True

            # Check for TOTP-related keywords in page content
            page_text = scraped_page.html.lower() if scraped_page.html else ""
            totp_keywords = [
                "verification code",
                "authentication code",
                "security code",
                "2fa",
                "two-factor",
                "totp",
                "authenticator",
                "verification",
                "enter code",
                "verification number",
                "security number",
            ]

            keyword_matches = sum(1 for keyword in totp_keywords if keyword in page_text)

            # If we have multiple TOTP keywords and multiple input fields, likely TOTP
            if keyword_matches >= 2 and len(input_fields) >= 6:
                return True

            # Strong single keyword match with multiple inputs
            strong_keywords = ["verification code", "authentication code", "2fa", "two-factor"]
            if any(keyword in page_text for keyword in strong_keywords) and len(input_fields) >= 3:
                return True

            return False

        except Exception:
            return False

    def _is_multi_field_totp_sequence(self, actions: list) -> bool:
        """
        Check if the action sequence represents a multi-field TOTP input (6 single-digit fields).

        Args:
            actions: List of actions to analyze

        Returns:
            bool: True if this is a multi-field TOTP sequence
        """
        observations = (
            (
                action.action_type.value if isinstance(action.action_type, ActionType) else "",
                getattr(action, "text", None),
            )
            for action in actions
        )
        is_multi_field_totp = _has_multi_field_totp_shape(observations)

        if is_multi_field_totp:
            LOG.debug("Detected multi-field TOTP sequence", total_actions=len(actions))

        return is_multi_field_totp

    def _build_navigation_payload(
        self,
        task: Task,
        expire_verification_code: bool = False,
        step: Step | None = None,
        scraped_page: ScrapedPage | None = None,
    ) -> dict[str, Any] | list | str | None:
        final_navigation_payload = task.navigation_payload

        # Represent any plaintext parameter value that exactly equals a stored credential value as
        # that credential's resolvable placeholder token BEFORE the synthetic values below (the real
        # verification code and the "123456" TOTP format hint) are injected, so those synthetic
        # values can never be turned into resolvable credential tokens. Otherwise such a value would
        # be one-way-redacted to [REDACTED_SECRET] at the LLM boundary and typed verbatim; here the
        # planner never sees the raw value and the existing input path resolves the token before
        # browser input.
        if (
            task.workflow_run_id is not None
            and task.workflow_run_id in app.WORKFLOW_CONTEXT_MANAGER.workflow_run_contexts
        ):
            workflow_run_context = app.WORKFLOW_CONTEXT_MANAGER.get_workflow_run_context(task.workflow_run_id)
            final_navigation_payload = workflow_run_context.represent_plaintext_secrets_as_placeholders(
                final_navigation_payload
            )

        current_context = skyvern_context.ensure_context()
        verification_code = current_context.totp_codes.get(task.task_id)
        if verification_code:
            if (
                isinstance(final_navigation_payload, dict)
                and SPECIAL_FIELD_VERIFICATION_CODE not in final_navigation_payload
            ):
                final_navigation_payload[SPECIAL_FIELD_VERIFICATION_CODE] = verification_code
            elif (
                isinstance(final_navigation_payload, str)
                and SPECIAL_FIELD_VERIFICATION_CODE not in final_navigation_payload
            ):
                final_navigation_payload = (
                    final_navigation_payload + "\n" + str({SPECIAL_FIELD_VERIFICATION_CODE: verification_code})
                )
            elif isinstance(final_navigation_payload, list):
                verification_code_dict = str({SPECIAL_FIELD_VERIFICATION_CODE: verification_code})
                if verification_code_dict not in final_navigation_payload:
                    final_navigation_payload.append(verification_code_dict)
                else:
                    LOG.warning(
                        "Verification code already exists in navigation payload",
                        final_navigation_payload=final_navigation_payload,
                    )

            elif final_navigation_payload is None:
                final_navigation_payload = {SPECIAL_FIELD_VERIFICATION_CODE: verification_code}
            else:
                LOG.warning(
                    "Didn't add verification code to navigation payload",
                    final_navigation_payload=final_navigation_payload,
                )
            if expire_verification_code:
                current_context.totp_codes.pop(task.task_id)

        # Store TOTP secrets and provide placeholder TOTP for LLM to see format
        # Only when on a TOTP page to avoid premature processing
        if (
            task.workflow_run_id
            and step
            and isinstance(final_navigation_payload, dict)
            and self._should_process_totp(scraped_page)
        ):
            workflow_run_context = app.WORKFLOW_CONTEXT_MANAGER.get_workflow_run_context(task.workflow_run_id)

            for key, value in list(final_navigation_payload.items()):
                if isinstance(value, dict) and "totp" in value:
                    totp_placeholder = value.get("totp")
                    if totp_placeholder and isinstance(totp_placeholder, str):
                        totp_secret_key = workflow_run_context.totp_secret_value_key(totp_placeholder)
                        totp_secret = workflow_run_context.get_original_secret_value_or_none(totp_secret_key)

                        if totp_secret:
                            # Store TOTP secret for handler to use during execution
                            current_context = skyvern_context.ensure_context()
                            current_context.totp_codes[f"{task.task_id}_secret"] = totp_secret

                            # Send a placeholder TOTP for the LLM to see the format
                            final_navigation_payload[key]["totp"] = "123456"

        return final_navigation_payload

    async def _get_action_results(
        self, task: Task, current_step: Step | None = None, history_window: int | None = None
    ) -> str:
        if history_window is None:
            return json.dumps(await get_action_history(task=task, current_step=current_step))
        return json.dumps(await get_action_history(task=task, current_step=current_step, history_window=history_window))

    async def get_extracted_information_for_task(self, task: Task) -> dict[str, Any] | list | str | None:
        """
        Find the last successful ScrapeAction for the task and return the extracted information.
        """
        # TODO: make sure we can get extracted information with the ExtractAction change
        steps = await app.DATABASE.tasks.get_task_steps(
            task_id=task.task_id,
            organization_id=task.organization_id,
        )
        complete_action_content: str | None = None
        for step in reversed(steps):
            if step.status != StepStatus.completed:
                continue
            if not step.output or not step.output.actions_and_results:
                continue
            for action, action_results in step.output.actions_and_results:
                if action.action_type == ActionType.EXTRACT:
                    for action_result in action_results:
                        if action_result.success:
                            LOG.info(
                                "Extracted information for task",
                                extracted_information=action_result.data,
                            )
                            return action_result.data
                # For CUA-style engines (e.g. yutori-navigator), the model returns its answer
                # inside the CompleteAction's output field. Surface that as
                # extracted_information when no EXTRACT action result is found.
                if action.action_type == ActionType.COMPLETE and complete_action_content is None:
                    content = getattr(action, "output", None)
                    if content:
                        complete_action_content = content

        if complete_action_content:
            LOG.info("Using CompleteAction content as extracted information", task_id=task.task_id)
            return complete_action_content

        if task.data_extraction_goal:
            LOG.warning(
                "Failed to find extracted information for task",
                task_id=task.task_id,
            )
        return None

    async def get_failure_reason_for_task(self, task: Task) -> str | None:
        """
        Find the TerminateAction for the task and return the reasoning.
        # TODO (kerem): Also return meaningful exceptions when we add them [WYV-311]
        """
        steps = await app.DATABASE.tasks.get_task_steps(
            task_id=task.task_id,
            organization_id=task.organization_id,
        )
        for step in reversed(steps):
            if step.status != StepStatus.completed:
                continue
            if not step.output:
                continue

            if step.output.actions_and_results:
                for action, action_results in step.output.actions_and_results:
                    if action.action_type == ActionType.TERMINATE:
                        return action.reasoning

        LOG.error(
            "Failed to find failure reasoning for task",
            task_id=task.task_id,
        )
        return None

    @traced(name="skyvern.agent.cleanup")
    async def clean_up_task(
        self,
        task: Task,
        last_step: Step,
        api_key: str | None = None,
        need_call_webhook: bool = True,
        close_browser_on_completion: bool = True,
        need_final_screenshot: bool = True,
        browser_session_id: str | None = None,
        download_suffix: str | None = None,
        list_files_before: list[str] | None = None,
    ) -> None:
        """
        send the task response to the webhook callback url
        """
        _cleanup_span = otel_trace.get_current_span()
        # task_id, workflow_run_id auto-attached by @traced from SkyvernContext.
        _cleanup_span.set_attribute("close_browser_on_completion", bool(close_browser_on_completion))
        _cleanup_span.set_attribute("need_call_webhook", bool(need_call_webhook))
        _cleanup_span.set_attribute("need_final_screenshot", bool(need_final_screenshot))
        # refresh the task from the db to get the latest status
        try:
            refreshed_task = await app.DATABASE.tasks.get_task(
                task_id=task.task_id, organization_id=task.organization_id
            )
            if not refreshed_task:
                LOG.error("Failed to get task from db when clean up task", task_id=task.task_id)
                raise TaskNotFound(task_id=task.task_id)
        except Exception as e:
            LOG.exception(
                "Failed to get task from db when clean up task",
                task_id=task.task_id,
            )
            raise TaskNotFound(task_id=task.task_id) from e
        task = refreshed_task

        # Caches expire based on TTL (1 hour) or can be cleaned up via scheduled job
        # This allows multiple tasks with the same llm_key to share the same cache

        # log the task status as an event
        analytics.capture("skyvern-oss-agent-task-status", {"status": task.status})

        # Add task completion tag to trace
        otel_trace.get_current_span().set_attribute("task.completion_status", task.status.value)
        if need_final_screenshot:
            # Take one last screenshot and create an artifact before closing the browser to see the final state
            # We don't need the artifacts and send the webhook response directly only when there is an issue with the browser
            # initialization. In this case, we don't have any artifacts to send and we can't take final screenshots etc.
            # since the browser is not initialized properly or the proxy is not working.

            browser_state = app.BROWSER_MANAGER.get_for_task(task.task_id)
            if browser_state is not None and await browser_state.get_working_page() is not None:
                try:
                    screenshot = await browser_state.take_fullpage_screenshot()
                    await app.ARTIFACT_MANAGER.create_artifact(
                        step=last_step,
                        artifact_type=ArtifactType.SCREENSHOT_FINAL,
                        data=screenshot,
                    )
                except (TargetClosedError, ScreenshotTargetClosed):
                    LOG.warning(
                        "Failed to take screenshot before sending task response, page is closed",
                    )
                except Exception:
                    LOG.exception("Failed to take screenshot before sending task response")

        if task.organization_id:
            _tracer = otel_trace.get_tracer("skyvern")
            with traced_span(_tracer, "skyvern.agent.cleanup.save_downloaded_files") as _cl_save_span:
                apply_context_attrs(_cl_save_span)
                browser_state = app.BROWSER_MANAGER.get_for_task(task.task_id)
                browser_context = browser_state.browser_context if browser_state is not None else None
                track_download_outcome = has_download_interceptor_for_context(browser_context)
                context = skyvern_context.current()
                finalization_run_id = (
                    resolve_run_download_id(context, fallback_run_id=task.workflow_run_id) or task.task_id
                )
                registered_file_count = 0
                artifact_outcome: Literal["registered", "partial", "failed", "unknown"] = "unknown"
                artifact_error: str | None = None
                try:
                    # Keep both finalize and save inside a single timeout budget so a hung
                    # finalize call cannot block persistence forever; accept the trade-off
                    # that a very slow finalize on many files could crowd out save.
                    async with asyncio.timeout(SAVE_DOWNLOADED_FILES_TIMEOUT):
                        async with settle_browser_downloads_for_context(browser_context):
                            pass
                        if download_suffix and list_files_before is not None:
                            await self._finalize_downloaded_files_for_task(
                                task,
                                organization_id=task.organization_id,
                                download_suffix=download_suffix,
                                list_files_before=list_files_before,
                                randomize_if_missing=False,
                            )
                        try:
                            await app.STORAGE.save_downloaded_files(
                                organization_id=task.organization_id,
                                run_id=finalization_run_id,
                            )
                        except DownloadSaveIncompleteError as exc:
                            # Session-artifact claiming below must still run for the files that saved.
                            LOG.warning(
                                "Some downloaded files were skipped during cleanup save",
                                task_id=task.task_id,
                                workflow_run_id=task.workflow_run_id,
                                skipped_file_count=len(exc.skipped_files),
                            )
                            artifact_outcome = "partial"
                            artifact_error = "storage_partial"
                        # Reconcile session-scoped DOWNLOAD rows the watcher left unbound, so
                        # GET /v1/runs/{id} surfaces them (see
                        # cloud_docs/BROWSER_SESSION_DOWNLOAD_ARTIFACTS.md).
                        browser_session_id = context.browser_session_id if context else None
                        if browser_session_id and task.organization_id and finalization_run_id:
                            try:
                                claimed = await app.DATABASE.artifacts.claim_session_download_artifacts_for_run(
                                    run_id=finalization_run_id,
                                    browser_session_id=browser_session_id,
                                    organization_id=task.organization_id,
                                    run_started_at=task.created_at,
                                )
                                if claimed:
                                    LOG.debug(
                                        "Claimed session-scoped download artifacts for run",
                                        run_id=finalization_run_id,
                                        browser_session_id=browser_session_id,
                                        claimed=claimed,
                                    )
                            except Exception:
                                artifact_outcome = "partial"
                                artifact_error = "session_claim_failed"
                                LOG.warning(
                                    "Failed to claim session-scoped download artifacts for run",
                                    run_id=finalization_run_id,
                                    browser_session_id=browser_session_id,
                                    exc_info=True,
                                )
                        if track_download_outcome:
                            try:
                                download_artifacts = await app.DATABASE.artifacts.list_artifacts_for_run_by_type(
                                    run_id=finalization_run_id,
                                    organization_id=task.organization_id,
                                    artifact_type=ArtifactType.DOWNLOAD,
                                )
                                registered_file_count = len(download_artifacts)
                                if artifact_outcome == "unknown":
                                    artifact_outcome = "registered"
                            except Exception:
                                artifact_error = artifact_error or "artifact_lookup_failed"
                                LOG.warning(
                                    "Failed to read registered download artifact count",
                                    task_id=task.task_id,
                                    workflow_run_id=task.workflow_run_id,
                                )
                except asyncio.TimeoutError:
                    artifact_outcome = "failed"
                    artifact_error = "storage_timeout"
                    LOG.warning(
                        "Timeout to save downloaded files",
                        task_id=task.task_id,
                        workflow_run_id=task.workflow_run_id,
                    )
                except Exception:
                    artifact_outcome = "failed"
                    artifact_error = "storage_failed"
                    LOG.warning(
                        "Failed to save downloaded files",
                        exc_info=True,
                        task_id=task.task_id,
                        workflow_run_id=task.workflow_run_id,
                    )
                finally:
                    if track_download_outcome:
                        record_download_artifact_outcome_for_context(
                            browser_context,
                            registered_file_count=registered_file_count,
                            outcome=artifact_outcome,
                            error=artifact_error,
                        )
                        unsolicited_download_error = consume_unsolicited_download_error_for_context(browser_context)
                        if unsolicited_download_error is not None:
                            try:
                                task = await app.DATABASE.tasks.update_task(
                                    task_id=task.task_id,
                                    organization_id=task.organization_id,
                                    errors=[unsolicited_download_error],
                                )
                            except Exception:
                                LOG.warning(
                                    "Failed to persist browser download error summary",
                                    task_id=task.task_id,
                                    workflow_run_id=task.workflow_run_id,
                                )

        # Last point common to every terminal path, and late enough that the screenshot and
        # download work above has already given the billed speculative call time to land.
        await drain_speculative_persist_tasks(skyvern_context.current())

        # if it's a task block from workflow run,
        # we don't need to close the browser, save browser artifacts, or call webhook
        if task.workflow_run_id:
            LOG.info(
                "Task is part of a workflow run, not sending a webhook response",
                sampling=True,
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
            )
            return

        await self.async_operation_pool.remove_task(task.task_id)

        _tracer = otel_trace.get_tracer("skyvern")
        with traced_span(_tracer, "skyvern.agent.cleanup.browser_and_artifacts") as _cl_br_span:
            apply_context_attrs(_cl_br_span)
            await self.cleanup_browser_and_create_artifacts(
                close_browser_on_completion, last_step, task, browser_session_id=browser_session_id
            )

        # Wait for all tasks to complete before generating the links for the artifacts
        with traced_span(_tracer, "skyvern.agent.cleanup.wait_for_upload") as _cl_wait_span:
            apply_context_attrs(_cl_wait_span)
            await app.ARTIFACT_MANAGER.wait_for_upload_aiotasks([task.task_id])

        if need_call_webhook:
            with traced_span(_tracer, "skyvern.agent.cleanup.webhook") as _cl_wh_span:
                apply_context_attrs(_cl_wh_span)
                await self.execute_task_webhook(task=task, api_key=api_key)

    async def execute_task_webhook(
        self,
        task: Task,
        api_key: str | None,
        enable_retries: bool = True,
    ) -> None:
        if not api_key:
            LOG.warning(
                "Request has no api key. Not sending task response",
                task_id=task.task_id,
            )
            return

        if not task.webhook_callback_url:
            LOG.warning(
                "Task has no webhook callback url. Not sending task response",
                task_id=task.task_id,
            )
            return

        # Strip whitespace from the webhook URL to handle user input with leading/trailing spaces
        task.webhook_callback_url = task.webhook_callback_url.strip()

        last_step = await app.DATABASE.tasks.get_latest_step(task.task_id, organization_id=task.organization_id)

        task_response = await self.build_task_response(task=task, last_step=last_step)
        # try to build the new TaskRunResponse for backward compatibility
        task_run_response_json: str | None = None
        try:
            run_response = await run_service.get_run_response(
                run_id=task.task_id,
                organization_id=task.organization_id,
            )
            if run_response is not None:
                task_run_response_json = run_response.model_dump_json(exclude={"run_request"})

            # send task_response to the webhook callback url
            payload_json = task_response.model_dump_json(exclude={"request"})
            payload_dict = json.loads(payload_json)
            if task_run_response_json:
                payload_dict.update(json.loads(task_run_response_json))

            signed_data = generate_skyvern_webhook_signature(payload=payload_dict, api_key=api_key)

            LOG.info(
                "Sending task response to webhook callback url",
                task_id=task.task_id,
                webhook_callback_url=task.webhook_callback_url,
                headers=signed_data.headers,
            )

            try:
                resp = await deliver_webhook_with_retries(
                    url=task.webhook_callback_url,
                    payload=signed_data.signed_payload,
                    headers=signed_data.headers,
                    timeout_seconds=30.0,
                    organization_id=task.organization_id,
                    run_id=task.task_id,
                    max_attempts=WEBHOOK_DELIVERY_MAX_ATTEMPTS if enable_retries else 1,
                )
            except Exception as delivery_error:
                LOG.warning(
                    "Task webhook delivery failed after attempting delivery",
                    task_id=task.task_id,
                    organization_id=task.organization_id,
                    error=describe_delivery_error(delivery_error),
                    exc_info=True,
                )
                try:
                    await app.DATABASE.tasks.update_task(
                        task_id=task.task_id,
                        organization_id=task.organization_id,
                        webhook_failure_reason=f"Webhook delivery failed before receiving a response: {describe_delivery_error(delivery_error)}",
                    )
                except Exception:
                    LOG.warning(
                        "Failed to record task webhook delivery error",
                        task_id=task.task_id,
                        exc_info=True,
                    )
                raise
            if resp.status_code >= 200 and resp.status_code < 300:
                LOG.info(
                    "Webhook sent successfully",
                    sampling=True,
                    task_id=task.task_id,
                    resp_code=resp.status_code,
                    resp_text=resp.text,
                )
                await app.DATABASE.tasks.update_task(
                    task_id=task.task_id,
                    organization_id=task.organization_id,
                    webhook_failure_reason="",
                )
            else:
                LOG.info(
                    "Webhook failed",
                    task_id=task.task_id,
                    resp_code=resp.status_code,
                    resp_text=resp.text,
                )
                await app.DATABASE.tasks.update_task(
                    task_id=task.task_id,
                    organization_id=task.organization_id,
                    webhook_failure_reason=f"Webhook failed with status code {resp.status_code}, error message: {resp.text}",
                )
        except Exception as e:
            raise FailedToSendWebhook(task_id=task.task_id) from e

    async def build_task_response(
        self,
        task: Task,
        last_step: Step | None = None,
        failure_reason: str | None = None,
        need_browser_log: bool = False,
        step_count: int | None = None,
    ) -> TaskResponse:
        # no last step means the task didn't start, so we don't have any other artifacts
        if last_step is None:
            return task.to_task_response(
                failure_reason=failure_reason,
                step_count=step_count,
            )

        screenshot_url = None
        recording_url = None
        recording_archived = False
        browser_console_log_url: str | None = None
        latest_action_screenshot_urls: list[str] | None = None
        downloaded_files: list[FileInfo] | None = None

        # get the artifact of the screenshot and get the screenshot_url
        screenshot_artifact = await app.DATABASE.artifacts.get_artifact(
            task_id=task.task_id,
            step_id=last_step.step_id,
            artifact_type=ArtifactType.SCREENSHOT_FINAL,
            organization_id=task.organization_id,
        )
        if screenshot_artifact:
            screenshot_url = await app.ARTIFACT_MANAGER.get_share_link(screenshot_artifact)

        # Get recording url from browser session first,
        # if not found, get the recording url from the first step
        recording_artifact = None
        if task.browser_session_id:
            try:
                async with asyncio.timeout(GET_DOWNLOADED_FILES_TIMEOUT):
                    recordings = await app.STORAGE.get_shared_recordings_in_browser_session(
                        organization_id=task.organization_id,
                        browser_session_id=task.browser_session_id,
                    )
                    # FIXME: we only support one recording for now
                    recording_url = recordings[0].url if recordings else None
            except asyncio.TimeoutError:
                LOG.warning("Timeout getting recordings", browser_session_id=task.browser_session_id)

        if recording_url is None:
            first_step = await app.DATABASE.tasks.get_first_step(
                task_id=task.task_id, organization_id=task.organization_id
            )
            if first_step:
                recording_artifact = await app.DATABASE.artifacts.get_artifact(
                    task_id=task.task_id,
                    step_id=first_step.step_id,
                    artifact_type=ArtifactType.RECORDING,
                    organization_id=task.organization_id,
                )
                if recording_artifact:
                    recording_archived = await app.ARTIFACT_MANAGER.is_recording_archived(recording_artifact)
                    if not recording_archived:
                        recording_url = await app.ARTIFACT_MANAGER.get_share_link(recording_artifact)

        # get the artifact of the last TASK_RESPONSE_ACTION_SCREENSHOT_COUNT screenshots and get the screenshot_url
        latest_action_screenshot_artifacts = await app.DATABASE.artifacts.get_latest_n_artifacts(
            task_id=task.task_id,
            organization_id=task.organization_id,
            artifact_types=[ArtifactType.SCREENSHOT_ACTION],
            n=settings.TASK_RESPONSE_ACTION_SCREENSHOT_COUNT,
        )
        if latest_action_screenshot_artifacts:
            raw_urls = await app.ARTIFACT_MANAGER.get_share_links_with_bundle_support(
                latest_action_screenshot_artifacts
            )
            filtered_urls = [url for url in raw_urls if url is not None]
            latest_action_screenshot_urls = filtered_urls if filtered_urls else None

        if task.organization_id:
            try:
                async with asyncio.timeout(GET_DOWNLOADED_FILES_TIMEOUT):
                    context = skyvern_context.current()
                    downloaded_files = await app.STORAGE.get_downloaded_files(
                        organization_id=task.organization_id,
                        run_id=resolve_run_download_id(context, fallback_run_id=task.workflow_run_id) or task.task_id,
                    )
            except asyncio.TimeoutError:
                LOG.warning(
                    "Timeout to get downloaded files",
                    task_id=task.task_id,
                    workflow_run_id=task.workflow_run_id,
                )
            except Exception:
                LOG.warning(
                    "Failed to get downloaded files",
                    exc_info=True,
                    task_id=task.task_id,
                    workflow_run_id=task.workflow_run_id,
                )

        if need_browser_log:
            browser_console_log = await app.DATABASE.artifacts.get_latest_artifact(
                task_id=task.task_id,
                artifact_types=[ArtifactType.BROWSER_CONSOLE_LOG],
                organization_id=task.organization_id,
            )
            if browser_console_log:
                browser_console_log_url = await app.ARTIFACT_MANAGER.get_share_link(browser_console_log)

        # get the latest task from the db to get the latest status, extracted_information, and failure_reason
        task_from_db = await app.DATABASE.tasks.get_task(task_id=task.task_id, organization_id=task.organization_id)
        if not task_from_db:
            LOG.error("Failed to get task from db when sending task response")
            raise TaskNotFound(task_id=task.task_id)

        task = task_from_db
        return task.to_task_response(
            action_screenshot_urls=latest_action_screenshot_urls,
            screenshot_url=screenshot_url,
            recording_url=recording_url,
            recording_archived=recording_archived,
            browser_console_log_url=browser_console_log_url,
            downloaded_files=downloaded_files,
            failure_reason=failure_reason,
            step_count=step_count,
        )

    async def cleanup_browser_and_create_artifacts(
        self,
        close_browser_on_completion: bool,
        last_step: Step,
        task: Task,
        browser_session_id: str | None = None,
    ) -> None:
        """
        Developer notes: we should not expect any exception to be raised here.
        This function should handle exceptions gracefully.
        If errors are raised and not caught inside this function, please catch and handle them.
        """
        # We need to close the browser even if there is no webhook callback url or api key
        browser_state = await app.BROWSER_MANAGER.cleanup_for_task(
            task.task_id,
            close_browser_on_completion,
            browser_session_id,
            task.organization_id,
        )
        if browser_state:
            # Only remux via ffmpeg when the browser was actually closed — otherwise
            # the recording file is still open (persistent/remote sessions) and the
            # remux would fail on the partial container anyway.
            video_artifacts = await app.BROWSER_MANAGER.get_video_artifacts(
                task_id=task.task_id, browser_state=browser_state, finalize=close_browser_on_completion
            )
            LOG.debug("Uploading video artifacts", number_of_video_artifacts=len(video_artifacts))
            for video_artifact in video_artifacts:
                if video_artifact.video_artifact_id:
                    try:
                        if video_artifact.video_file_extension:
                            await app.ARTIFACT_MANAGER.update_artifact_data(
                                artifact_id=video_artifact.video_artifact_id,
                                organization_id=task.organization_id,
                                data=video_artifact.video_data,
                                file_extension=video_artifact.video_file_extension,
                            )
                        else:
                            await app.ARTIFACT_MANAGER.update_artifact_data(
                                artifact_id=video_artifact.video_artifact_id,
                                organization_id=task.organization_id,
                                data=video_artifact.video_data,
                            )
                    except Exception:
                        LOG.warning(
                            "Failed to upload task video artifact",
                            task_id=task.task_id,
                            organization_id=task.organization_id,
                            video_artifact_id=video_artifact.video_artifact_id,
                            exc_info=True,
                        )
                    continue

                video_path = video_artifact.video_path
                if video_artifact.video_data:
                    if video_artifact.video_file_extension:
                        video_artifact.video_artifact_id = await app.ARTIFACT_MANAGER.create_artifact(
                            step=last_step,
                            artifact_type=ArtifactType.RECORDING,
                            data=video_artifact.video_data,
                            file_extension=video_artifact.video_file_extension,
                        )
                    else:
                        video_artifact.video_artifact_id = await app.ARTIFACT_MANAGER.create_artifact(
                            step=last_step,
                            artifact_type=ArtifactType.RECORDING,
                            data=video_artifact.video_data,
                        )
                elif video_path and os.path.exists(video_path):
                    if video_artifact.video_file_extension:
                        video_artifact.video_artifact_id = await app.ARTIFACT_MANAGER.create_artifact(
                            step=last_step,
                            artifact_type=ArtifactType.RECORDING,
                            path=video_path,
                            file_extension=video_artifact.video_file_extension,
                        )
                    else:
                        video_artifact.video_artifact_id = await app.ARTIFACT_MANAGER.create_artifact(
                            step=last_step,
                            artifact_type=ArtifactType.RECORDING,
                            path=video_path,
                        )
                else:
                    continue

            redaction_enabled = app.WORKFLOW_CONTEXT_MANAGER.artifact_redaction_enabled(task.workflow_run_id)
            # Opted-out runs still floor runtime-resolved secrets (e.g. verification codes) out of
            # browser diagnostics, matching the workflow-finalization sites.
            secret_values = (
                app.WORKFLOW_CONTEXT_MANAGER.get_secret_values_for_run(task.workflow_run_id)
                if redaction_enabled
                else app.WORKFLOW_CONTEXT_MANAGER.runtime_secret_values_for_artifacts()
            )
            should_redact = redaction_enabled or bool(secret_values)

            har_data = await app.BROWSER_MANAGER.get_har_data(task_id=task.task_id, browser_state=browser_state)
            if should_redact:
                har_data = await asyncio.to_thread(redact_har_bytes, har_data, secret_values)
            if settings.SKYVERN_SUBMISSION_SIGNAL_SHADOW:
                submission_shadow.schedule_submission_signal_shadow(
                    har_data=har_data,
                    browser_state=browser_state,
                    last_step=last_step,
                    task=task,
                    browser_session_id=browser_session_id,
                )
            LOG.debug("Uploading har data", har_size=len(har_data))

            browser_log = await app.BROWSER_MANAGER.get_browser_console_log(
                task_id=task.task_id, browser_state=browser_state
            )
            if should_redact:
                browser_log = await asyncio.to_thread(redact_console_log_bytes, browser_log, secret_values)
            LOG.debug("Uploading browser log", browser_log_size=len(browser_log))

            trace_data: bytes | None = None
            if browser_state.browser_context and browser_state.browser_artifacts.traces_dir:
                trace_path = f"{browser_state.browser_artifacts.traces_dir}/{task.task_id}.zip"
                try:
                    with open(trace_path, "rb") as f:
                        trace_data = f.read()
                except Exception:
                    LOG.warning("Failed to read trace file", trace_path=trace_path, exc_info=True)

            task_archive_entries: dict[str, tuple[ArtifactType, bytes]] = {}
            if har_data:
                task_archive_entries["har.har"] = (ArtifactType.HAR, har_data)
            if browser_log:
                task_archive_entries["browser_console.log"] = (ArtifactType.BROWSER_CONSOLE_LOG, browser_log)
            if trace_data:
                task_archive_entries["trace.zip"] = (ArtifactType.TRACE, trace_data)
            if task_archive_entries:
                await app.ARTIFACT_MANAGER.create_task_archive(
                    step=last_step,
                    entries=task_archive_entries,
                )
        else:
            LOG.warning(
                "BrowserState is missing before sending response to webhook_callback_url",
                web_hook_url=task.webhook_callback_url,
            )

    async def update_step(
        self,
        step: Step,
        status: StepStatus | None = None,
        output: AgentStepOutput | None = None,
        is_last: bool | None = None,
        retry_index: int | None = None,
    ) -> Step:
        step.validate_update(status, output, is_last)
        updates: dict[str, Any] = {}
        if status is not None:
            updates["status"] = status
        if output is not None:
            updates["output"] = output
        if is_last is not None:
            updates["is_last"] = is_last
        if retry_index is not None:
            updates["retry_index"] = retry_index
        update_comparison = {
            key: {"old": getattr(step, key), "new": value}
            for key, value in updates.items()
            if getattr(step, key) != value and key != "output"
        }
        LOG.debug(
            "Updating step in db",
            diff=update_comparison,
        )

        # Track step duration when step is completed or failed
        if status in [StepStatus.completed, StepStatus.failed]:
            duration_seconds = (datetime.now(UTC) - step.created_at.replace(tzinfo=UTC)).total_seconds()
            LOG.info(
                "Step duration metrics",
                duration_seconds=duration_seconds,
                step_status=status,
                organization_id=step.organization_id,
            )

        await save_step_logs(step.step_id)

        return await app.DATABASE.tasks.update_step(
            task_id=step.task_id,
            step_id=step.step_id,
            organization_id=step.organization_id,
            **updates,
        )

    async def update_task(
        self,
        task: Task,
        status: TaskStatus,
        extracted_information: dict[str, Any] | list | str | None = None,
        failure_reason: str | None = None,
        webhook_failure_reason: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        failure_category: list[dict[str, Any]] | None = None,
    ) -> Task:
        # refresh task from db to get the latest status
        task_from_db = await app.DATABASE.tasks.get_task(task_id=task.task_id, organization_id=task.organization_id)
        if task_from_db:
            task = task_from_db

        task.validate_update(status, extracted_information, failure_reason)
        updates: dict[str, Any] = {}
        if status is not None:
            updates["status"] = status
        if extracted_information is not None:
            updates["extracted_information"] = extracted_information
        if failure_reason is not None:
            updates["failure_reason"] = failure_reason
        if errors is not None:
            updates["errors"] = errors
        if failure_category is not None:
            updates["failure_category"] = failure_category
        update_comparison = {
            key: {"old": getattr(task, key), "new": value}
            for key, value in updates.items()
            if getattr(task, key) != value
        }

        # Track task duration when task is completed, failed, or terminated
        if status in [TaskStatus.completed, TaskStatus.failed, TaskStatus.terminated]:
            start_time = task.started_at.replace(tzinfo=UTC) if task.started_at else task.created_at.replace(tzinfo=UTC)
            duration_seconds = (datetime.now(UTC) - start_time).total_seconds()
            queued_seconds = (start_time - task.created_at.replace(tzinfo=UTC)).total_seconds()
            LOG.info(
                "Task duration metrics",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
                duration_seconds=duration_seconds,
                queued_seconds=queued_seconds,
                task_status=status,
                organization_id=task.organization_id,
                failure_reason=failure_reason,
            )
        await save_task_logs(task.task_id)
        LOG.info("Updating task in db", task_id=task.task_id, diff=update_comparison, sampling=True)
        updated_task, finish_claimed = await app.DATABASE.tasks.update_task_and_claim_finish(
            task.task_id,
            organization_id=task.organization_id,
            **updates,
        )
        # Minutes emit only when THIS write atomically flipped finished_at from NULL
        # -- the shared claim every task_v1 finalizer rides -- so a concurrent
        # finalizer (the stuck-task sweep's CAS, the temporal timeout activity, a
        # retried write) cannot double-count the run. Both the duration and the
        # exclusion come from the post-claim row, never the entry read: a worker can
        # stamp started_at between the two, and the stale read would bill that
        # compute as never_started.
        if updated_task.workflow_run_id is None and finish_claimed:
            if updated_task.started_at and updated_task.finished_at:
                await app.AGENT_FUNCTION.record_run_duration(
                    run_type="task_v1",
                    status=str(status),
                    duration_seconds=(updated_task.finished_at - updated_task.started_at).total_seconds(),
                )
            else:
                # Never started: no compute, but export the exclusion.
                await app.AGENT_FUNCTION.record_run_duration(
                    run_type="task_v1",
                    status=str(status),
                    duration_seconds=0.0,
                    excluded_reason="never_started",
                )
        return updated_task

    async def _handle_completed_step_with_parallel_verification(
        self,
        organization: Organization,
        task: Task,
        step: Step,
        page: Page | None,
        browser_state: BrowserState,
        scraped_page: ScrapedPage,
        engine: RunEngine,
        task_block: BaseTaskBlock | None = None,
    ) -> tuple[bool | None, Step | None, Step | None]:
        """
        Handle completed step with parallel verification optimization.

        Runs two tasks in parallel:
        1. Verify if user goal is complete (check-user-goal)
        2. Pre-scrape page for next step

        If goal is complete, cancel pre-scraping and mark task done.
        If goal not complete, use pre-scraped data for next step execution.

        Note: This should only be called when verification is needed (i.e., when
        the standard flow would have called check_user_goal_complete in agent_step).
        """
        verification_task = asyncio.create_task(
            self.check_user_goal_complete(
                page=page,
                scraped_page=scraped_page,
                task=task,
                step=step,
                verification_trigger="periodic_after_step",
            ),
            name=f"verify_goal_{step.step_id}",
        )

        next_step = await app.DATABASE.tasks.create_step(
            task_id=task.task_id,
            order=step.order + 1,
            retry_index=0,
            organization_id=task.organization_id,
        )

        speculative_task: asyncio.Task[SpeculativePlan | None] = asyncio.create_task(
            self._speculate_next_step_plan(
                organization=organization,
                task=task,
                current_step=step,
                next_step=next_step,
                browser_state=browser_state,
                engine=engine,
            ),
            name=f"speculate_next_step_{step.step_id}",
        )

        try:
            complete_action = await verification_task
        except Exception:
            LOG.warning(
                "User goal verification failed in parallel mode, will continue with next step",
                step_id=step.step_id,
                exc_info=True,
            )
            complete_action = None

        if isinstance(complete_action, CompleteAction) and not await app.AGENT_FUNCTION.gate_step_completion(
            task=task,
            step=step,
            task_block=task_block,
            page=page,
            browser_state=browser_state,
        ):
            LOG.info(
                "Step completion vetoed by completion gate; continuing with next step",
                task_id=task.task_id,
                step_id=step.step_id,
            )
            complete_action = None

        if complete_action is not None:
            persist_task = asyncio.create_task(
                self._persist_speculative_metadata_for_discarded_plan(
                    next_step,
                    speculative_task,
                    cancel_step=True,
                ),
                name=f"persist_discarded_plan_{next_step.step_id}",
            )
            # The speculative call is already billed, so its cost write has to outlive this
            # branch. The module-level set keeps a strong reference (an unreferenced task can be
            # garbage collected mid-flight); the context registration is what clean_up_task
            # drains so the write also survives run teardown.
            _PENDING_DISCARDED_PLAN_PERSISTS.add(persist_task)
            persist_task.add_done_callback(_PENDING_DISCARDED_PLAN_PERSISTS.discard)
            if context := skyvern_context.current():
                context.pending_speculative_persist_tasks.append(persist_task)

            working_page = page or await browser_state.must_get_working_page()

            if step.output is None:
                step.output = AgentStepOutput(action_results=[], actions_and_results=[], errors=[])
            if step.output.action_results is None:
                step.output.action_results = []
            if step.output.actions_and_results is None:
                step.output.actions_and_results = []

            persisted_action = cast(Action, complete_action)
            if isinstance(persisted_action, (CompleteAction, TerminateAction)):
                persisted_action.organization_id = task.organization_id
                persisted_action.workflow_run_id = task.workflow_run_id
                persisted_action.task_id = task.task_id
                persisted_action.step_id = step.step_id
                persisted_action.step_order = step.order
                persisted_action.action_order = len(step.output.actions_and_results)

            action_results = await ActionHandler.handle_action(scraped_page, task, step, working_page, persisted_action)
            await self.record_artifacts_after_action(task, step, browser_state, engine, persisted_action)
            step.output.action_results.extend(action_results)
            step.output.actions_and_results.append((persisted_action, action_results))
            if isinstance(persisted_action, DecisiveAction) and persisted_action.errors:
                step.output.errors.extend(persisted_action.errors)
                step.output.terminal_user_errors = True

            if isinstance(persisted_action, TerminateAction):
                LOG.warning(
                    "Parallel verification: termination required, marking task as terminated",
                    step_id=step.step_id,
                    task_id=task.task_id,
                    reasoning=complete_action.reasoning,
                )
                final_status = step.speculative_original_status or StepStatus.completed
                step.speculative_original_status = None
                step.status = final_status
                last_step = await self.update_step(
                    step,
                    status=final_status,
                    output=step.output,
                    is_last=True,
                )
                task_errors = None
                if persisted_action.errors:
                    task_errors = [error.model_dump() for error in persisted_action.errors]
                failure_reason = persisted_action.reasoning
                if persisted_action.errors:
                    failure_reason = "; ".join(error.reasoning for error in persisted_action.errors)
                failure_category = persisted_action.failure_categories or classify_from_failure_reason(failure_reason)
                LOG.info(
                    "Task failure classified",
                    task_id=task.task_id,
                    workflow_run_id=task.workflow_run_id,
                    organization_id=task.organization_id,
                    task_status="terminated",
                    failure_category=failure_category,
                    primary_failure_category=failure_category[0].get("category") if failure_category else None,
                    failure_category_source="llm" if persisted_action.failure_categories else "code_level",
                    failure_category_path="terminate_check_goal",
                )
                await self.update_task(
                    task,
                    status=TaskStatus.terminated,
                    failure_reason=failure_reason,
                    errors=task_errors,
                    failure_category=failure_category,
                )
                return True, last_step, None

            if isinstance(persisted_action, CompleteAction) and task.navigation_goal and task.data_extraction_goal:
                task = await self._run_data_extraction_after_complete_action(
                    task=task,
                    step=step,
                    scraped_page=scraped_page,
                    working_page=working_page,
                )

            LOG.info(
                "Parallel verification: goal achieved, marking task as completed",
                step_id=step.step_id,
                task_id=task.task_id,
            )
            final_status = step.speculative_original_status or StepStatus.completed
            step.speculative_original_status = None
            step.status = final_status
            last_step = await self.update_step(
                step,
                status=final_status,
                output=step.output,
                is_last=True,
            )
            extracted_information = await self.get_extracted_information_for_task(task)
            await self.update_task(
                task,
                status=TaskStatus.completed,
                extracted_information=extracted_information,
            )
            return True, last_step, None

        LOG.info(
            "Parallel verification: goal not achieved, awaiting speculative extract-actions",
            sampling=True,
            step_id=step.step_id,
            task_id=task.task_id,
        )

        # Budget check must precede speculative_task await so exhausted steps cancel early.
        context = skyvern_context.current()
        override_max_steps_per_run = context.max_steps_override if context else None
        max_steps_per_run = (
            override_max_steps_per_run
            or task.max_steps_per_run
            or organization.max_steps_per_run
            or settings.MAX_STEPS_PER_RUN
        )

        try:
            workflow_run_budget = await self._check_workflow_run_step_budget(organization, task)
        except Exception:
            LOG.warning("Budget preflight failed, cancelling speculative task", exc_info=True)
            speculative_task.cancel()
            try:
                await speculative_task
            except (CancelledError, Exception):
                pass
            raise
        budget_exhausted = workflow_run_budget is not None and workflow_run_budget[0] >= workflow_run_budget[1]
        steps_exhausted = step.order + 1 >= max_steps_per_run

        if budget_exhausted or steps_exhausted:
            speculative_task.cancel()
            LOG.info(
                "Cancelled speculative task — budget or max-steps exhausted",
                step_id=step.step_id,
                budget_exhausted=budget_exhausted,
                steps_exhausted=steps_exhausted,
            )
            try:
                await speculative_task
            except (CancelledError, Exception):
                pass
            speculative_plan = None
        else:
            try:
                speculative_plan = await speculative_task
            except CancelledError:
                LOG.debug("Speculative extract-actions cancelled after verification finished", step_id=step.step_id)
                speculative_plan = None
            except Exception:
                LOG.warning(
                    "Speculative extract-actions failed, next step will run sequentially",
                    step_id=step.step_id,
                    exc_info=True,
                )
                speculative_plan = None

        if budget_exhausted and workflow_run_budget is not None:
            last_step = await self._terminate_for_workflow_run_step_budget(
                organization=organization,
                task=task,
                step=step,
                total_workflow_run_steps=workflow_run_budget[0],
                max_steps_per_workflow_run=workflow_run_budget[1],
                speculative_next_step=next_step,
            )
            return False, last_step, None

        if steps_exhausted:
            LOG.info(
                "Step completed but max steps reached, marking task as failed",
                step_order=step.order,
                step_retry=step.retry_index,
                max_steps=max_steps_per_run,
            )
            final_status = step.speculative_original_status or StepStatus.completed
            step.speculative_original_status = None
            step.status = final_status
            last_step = await self.update_step(
                step,
                status=final_status,
                output=step.output,
                is_last=True,
            )

            generated_failure_reason = await self.summary_failure_reason_for_max_steps(
                organization=organization,
                task=task,
                step=step,
                page=page,
                engine_selection=browser_state.engine_selection,
            )
            failure_reason = f"Reached the maximum steps ({max_steps_per_run}). Possible failure reasons: {generated_failure_reason.reasoning}"
            errors = [ReachMaxStepsError().model_dump()] + [
                error.model_dump() for error in generated_failure_reason.errors
            ]
            failure_category = generated_failure_reason.failure_categories or classify_from_failure_reason(
                failure_reason, fallback_to_unknown=True
            )
            LOG.info(
                "Task failure classified",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
                organization_id=task.organization_id,
                task_status="failed",
                failure_category=failure_category,
                primary_failure_category=failure_category[0].get("category") if failure_category else None,
                failure_category_source="llm" if generated_failure_reason.failure_categories else "code_level",
                failure_category_path="max_steps",
            )

            await self._cancel_speculative_step(next_step)

            await self.update_task(
                task,
                status=TaskStatus.failed,
                failure_reason=failure_reason,
                errors=errors,
                failure_category=failure_category,
            )
            return False, last_step, None

        if speculative_plan:
            context = skyvern_context.ensure_context()
            context.speculative_plans[next_step.step_id] = speculative_plan
            LOG.info(
                "Stored speculative extract-actions plan for next step",
                current_step_id=step.step_id,
                next_step_id=next_step.step_id,
            )

        step.status = step.speculative_original_status or StepStatus.completed
        step.speculative_original_status = None

        return None, None, next_step

    async def handle_failed_step(self, organization: Organization, task: Task, step: Step) -> Step | None:
        max_retries_per_step = (
            organization.max_retries_per_step
            # we need to check by None because 0 is a valid value for max_retries_per_step
            if organization.max_retries_per_step is not None
            else settings.MAX_RETRIES_PER_STEP
        )
        step_errors = (
            step.output.errors if step.output and step.output.errors and step.output.terminal_user_errors else []
        )
        if step_errors:
            failure_reason = "; ".join(error.reasoning for error in step_errors)
            failure_category = classify_from_failure_reason(failure_reason, fallback_to_unknown=True)
            existing_errors = {
                (error.get("error_code"), error.get("reasoning"))
                for error in (task.errors or [])
                if isinstance(error, dict)
            }
            new_step_errors = [
                error.model_dump()
                for error in step_errors
                if (error.error_code, error.reasoning) not in existing_errors
            ]
            LOG.warning(
                "Step failed with user-defined errors, marking task as failed without retry",
                task_id=task.task_id,
                step_id=step.step_id,
                step_order=step.order,
                step_retry=step.retry_index,
                error_codes=[error.error_code for error in step_errors],
            )
            await self.update_task(
                task,
                TaskStatus.failed,
                failure_reason=failure_reason,
                errors=new_step_errors,
                failure_category=failure_category,
            )
            return None

        if step.retry_index >= max_retries_per_step:
            LOG.warning(
                "Step failed after max retries, marking task as failed",
                step_order=step.order,
                step_retry=step.retry_index,
                max_retries=settings.MAX_RETRIES_PER_STEP,
            )
            browser_state = app.BROWSER_MANAGER.get_for_task(task_id=task.task_id, workflow_run_id=task.workflow_run_id)
            page = None
            if browser_state is not None:
                page = await browser_state.get_working_page()

            failure_response = await self.summary_failure_reason_for_max_retries(
                organization=organization,
                task=task,
                step=step,
                page=page,
                max_retries=max_retries_per_step,
                engine_selection=browser_state.engine_selection if browser_state is not None else None,
            )

            # Only pass new errors — update_task() appends to existing errors in the DB
            new_errors: list[dict[str, Any]] = [ReachMaxRetriesError().model_dump()]
            if failure_response.errors:
                new_errors.extend([error.model_dump() for error in failure_response.errors])
                LOG.info(
                    "Detected user-defined errors for max retries failure",
                    task_id=task.task_id,
                    error_codes=[e.error_code for e in failure_response.errors],
                )

            summary_reasoning = (failure_response.reasoning or "").strip()
            if summary_reasoning:
                failure_reason = (
                    f"Max retries per step ({max_retries_per_step}) exceeded."
                    f" Possible failure reasons: {summary_reasoning}"
                )
            else:
                failure_reason = (
                    f"Max retries per step ({max_retries_per_step}) exceeded. {ReachMaxRetriesError().reasoning}"
                )
            failure_category = failure_response.failure_categories or classify_from_failure_reason(
                failure_reason, fallback_to_unknown=True
            )
            LOG.info(
                "Task failure classified",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
                organization_id=task.organization_id,
                task_status="failed",
                failure_category=failure_category,
                primary_failure_category=failure_category[0].get("category") if failure_category else None,
                failure_category_source=(
                    failure_response.failure_category_source
                    or ("llm" if failure_response.failure_categories else "code_level")
                ),
                failure_category_path="max_retries",
            )
            await self.update_task(
                task,
                TaskStatus.failed,
                failure_reason=failure_reason,
                errors=new_errors,
                failure_category=failure_category,
            )
            return None
        else:
            LOG.warning(
                "Step failed, retrying",
                step_order=step.order,
                step_retry=step.retry_index,
            )
            next_step = await app.DATABASE.tasks.create_step(
                task_id=task.task_id,
                organization_id=task.organization_id,
                order=step.order,
                retry_index=step.retry_index + 1,
            )
            return next_step

    def _filter_response_errors(self, task: Task, step: Step, errors: list[UserDefinedError]) -> list[UserDefinedError]:
        kept, dropped = filter_to_user_defined_codes(errors, task.error_code_mapping)
        if dropped:
            LOG.warning(
                "Dropped LLM-returned error codes not in user error_code_mapping",
                task_id=task.task_id,
                step_id=step.step_id,
                dropped_codes=dropped,
                allowed_codes=sorted((task.error_code_mapping or {}).keys()),
            )
        return kept

    async def summary_failure_reason_for_max_steps(
        self,
        organization: Organization,
        task: Task,
        step: Step,
        page: Page | None,
        engine_selection: BrowserEngineSelection | None,
    ) -> MaxStepsReasonResponse:
        steps_results = []
        llm_errors: list[str] = []

        try:
            steps = await app.DATABASE.tasks.get_task_steps(
                task_id=task.task_id, organization_id=organization.organization_id
            )
            for step_cnt, cur_step in enumerate(steps):
                if cur_step.output is None:
                    continue

                if len(cur_step.output.errors) > 0:
                    failure_reason = ";".join([repr(err) for err in cur_step.output.errors])
                    return MaxStepsReasonResponse(
                        page_info="",
                        reasoning=failure_reason,
                        errors=cur_step.output.errors,
                    )

                if cur_step.output.actions_and_results is None:
                    continue

                action_result_summary: list[str] = []
                step_result: dict[str, Any] = {
                    "order": step_cnt,
                }
                for action, action_results in cur_step.output.actions_and_results:
                    if len(action_results) == 0:
                        continue
                    last_result = action_results[-1]

                    # Check if this is an LLM provider error
                    if not last_result.success:
                        exception_type = last_result.exception_type or ""
                        exception_message = last_result.exception_message or ""
                        if (
                            exception_type in (LLM_PROVIDER_ERROR_TYPE, LLM_PROVIDER_ERROR_RETRYABLE_TASK_TYPE)
                            or "LLMProvider" in exception_message
                        ):
                            llm_errors.append(f"Step {step_cnt}: {exception_message}")

                    action_result_summary.append(
                        f"{action.reasoning}(action_type={action.action_type}, result={'success' if last_result.success else 'failed'})"
                    )
                step_result["actions_result"] = action_result_summary
                steps_results.append(step_result)

            # If we detected LLM errors, return a clear message without calling the LLM
            if llm_errors:
                llm_error_details = "; ".join(llm_errors)
                return MaxStepsReasonResponse(
                    page_info="",
                    reasoning=(
                        f"The task failed due to LLM service errors. The LLM provider encountered errors and was unable to process the requests. "
                        f"This is typically caused by rate limiting, service outages, or resource exhaustion from the LLM provider. "
                        f"Error details: {llm_error_details}"
                    ),
                    errors=[],
                )

            scroll = True
            if await service_utils.is_cua_task(task=task):
                scroll = False

            screenshots: list[bytes] = []
            if page is not None:
                screenshots = await SkyvernFrame.take_split_screenshots(
                    page=page,
                    url=page.url,
                    scroll=scroll,
                    engine_selection=engine_selection,
                )

            prompt = prompt_engine.load_prompt(
                "summarize-max-steps-reason",
                step_count=len(steps),
                navigation_goal=task.navigation_goal,
                navigation_payload=task.navigation_payload,
                steps=steps_results,
                error_code_mapping_str=(json.dumps(task.error_code_mapping) if task.error_code_mapping else None),
                local_datetime=datetime.now(skyvern_context.ensure_context().tz_info).isoformat(),
            )
            json_response = await get_org_aware_primary_llm_api_handler(default=app.LLM_API_HANDLER)(
                prompt=prompt,
                screenshots=screenshots,
                step=step,
                prompt_name="summarize-max-steps-reason",
                system_prompt=task.workflow_system_prompt,
            )
            response = MaxStepsReasonResponse.model_validate(json_response)
            response.errors = self._filter_response_errors(task=task, step=step, errors=response.errors)
            return response
        except Exception:
            LOG.warning("Failed to summary the failure reason")
            # Check if we have LLM errors even if the summarization failed
            if llm_errors:
                llm_error_details = "; ".join(llm_errors)
                return MaxStepsReasonResponse(
                    page_info="",
                    reasoning=(
                        f"The task failed due to LLM service errors. The LLM provider encountered errors and was unable to process the requests. "
                        f"Error details: {llm_error_details}"
                    ),
                    errors=[],
                )
            if steps_results:
                last_step_result = steps_results[-1]
                return MaxStepsReasonResponse(
                    page_info="",
                    reasoning=f"Step {last_step_result['order']}: {last_step_result['actions_result']}",
                    errors=[],
                )
            return MaxStepsReasonResponse(
                page_info="",
                reasoning="",
                errors=[],
            )

    async def summary_failure_reason_for_max_retries(
        self,
        organization: Organization,
        task: Task,
        step: Step,
        page: Page | None,
        max_retries: int,
        engine_selection: BrowserEngineSelection | None,
    ) -> MaxStepsReasonResponse:
        html = ""
        screenshots: list[bytes] = []
        steps_results = []
        llm_errors: list[str] = []
        steps_without_actions = 0

        try:
            steps = await app.DATABASE.tasks.get_task_steps(
                task_id=task.task_id, organization_id=organization.organization_id
            )

            # Check for LLM provider errors in the failed steps
            for step_cnt, cur_step in enumerate(steps[-max_retries:]):
                if cur_step.status == StepStatus.failed:
                    # Count steps that failed without producing actions due to LLM issues:
                    # - No output at all (catastrophic failure before any result persisted)
                    # - Output exists but no actions AND step_exception confirms an
                    #   LLM-specific failure (e.g. context window exceeded)
                    if not cur_step.output or (
                        not cur_step.output.actions_and_results
                        and cur_step.output.step_exception in _LLM_STEP_EXCEPTIONS
                    ):
                        steps_without_actions += 1

                if cur_step.output and cur_step.output.actions_and_results:
                    action_result_summary: list[str] = []
                    step_result: dict[str, Any] = {
                        "order": step_cnt,
                    }
                    for action, action_results in cur_step.output.actions_and_results:
                        if len(action_results) == 0:
                            continue
                        last_result = action_results[-1]
                        if last_result.success:
                            continue
                        reason = last_result.exception_message or ""

                        # Check if this is an LLM provider error
                        exception_type = last_result.exception_type or ""
                        if (
                            exception_type in (LLM_PROVIDER_ERROR_TYPE, LLM_PROVIDER_ERROR_RETRYABLE_TASK_TYPE)
                            or "LLMProvider" in reason
                        ):
                            llm_errors.append(f"Step {step_cnt}: {reason}")

                        action_result_summary.append(
                            f"{action.reasoning}(action_type={action.action_type}, result=failed, reason={reason})"
                        )
                    step_result["actions_result"] = action_result_summary
                    steps_results.append(step_result)

            # If we detected LLM errors, return a clear message without calling the LLM
            if llm_errors:
                llm_error_details = "; ".join(llm_errors)
                return MaxStepsReasonResponse(
                    page_info="",
                    reasoning=(
                        f"The task failed due to LLM service errors. The LLM provider encountered errors and was unable to process the requests. "
                        f"This is typically caused by rate limiting, service outages, or resource exhaustion from the LLM provider. "
                        f"Error details: {llm_error_details}"
                    ),
                    errors=[],
                    failure_categories=_llm_error_category(
                        f"LLM provider errors detected across retry steps: {llm_error_details}"
                    ),
                    failure_category_source="code_level",
                )

            # If multiple steps failed without producing any actions, it's likely an LLM error during action extraction
            if steps_without_actions >= max_retries:
                return MaxStepsReasonResponse(
                    page_info="",
                    reasoning=(
                        f"The task failed because all {max_retries} retry attempts failed to generate actions. "
                        f"This is typically caused by the page content exceeding the LLM context window, "
                        f"LLM service errors during action extraction (rate limiting, service outages), "
                        f"a malformed model response that could not be parsed into actions, "
                        f"or oversized input data. If the input is large, try reducing the page content or input data size."
                    ),
                    errors=[],
                    failure_categories=_llm_error_category(
                        "All retry steps failed without producing actions — "
                        "LLM context window exceeded, malformed response, or provider error during action extraction."
                    ),
                    failure_category_source="code_level",
                )

            if page is not None:
                skyvern_frame = await SkyvernFrame.create_instance(frame=page, engine_selection=engine_selection)
                html = truncate_page_html_for_summary(await skyvern_frame.get_content())
                # scroll=False: one current-viewport shot (the failing region) is enough for a
                # failure summary; avoids 10 full-page strips. SKY-10626.
                screenshots = await SkyvernFrame.take_split_screenshots(
                    page=page,
                    url=page.url,
                    scroll=False,
                    engine_selection=engine_selection,
                )

            prompt = prompt_engine.load_prompt(
                "summarize-max-retries-reason",
                navigation_goal=task.navigation_goal,
                navigation_payload=task.navigation_payload,
                steps=steps_results,
                page_html=html,
                max_retries=max_retries,
                error_code_mapping_str=(json.dumps(task.error_code_mapping) if task.error_code_mapping else None),
                local_datetime=datetime.now(skyvern_context.ensure_context().tz_info).isoformat(),
            )
            json_response = await get_org_aware_secondary_llm_api_handler(default=app.SECONDARY_LLM_API_HANDLER)(
                prompt=prompt,
                screenshots=screenshots,
                step=step,
                prompt_name="summarize-max-retries-reason",
                system_prompt=task.workflow_system_prompt,
            )
            response = MaxStepsReasonResponse.model_validate(json_response)
            response.errors = self._filter_response_errors(task=task, step=step, errors=response.errors)
            return response
        except Exception:
            LOG.warning("Failed to summarize the failure reason for max retries")
            # Check if we have LLM errors even if the summarization failed
            if llm_errors:
                llm_error_details = "; ".join(llm_errors)
                return MaxStepsReasonResponse(
                    page_info="",
                    reasoning=(
                        f"The task failed due to LLM service errors. The LLM provider encountered errors and was unable to process the requests. "
                        f"Error details: {llm_error_details}"
                    ),
                    errors=[],
                    failure_categories=_llm_error_category(
                        f"LLM provider errors detected across retry steps: {llm_error_details}"
                    ),
                    failure_category_source="code_level",
                )
            # If multiple steps failed without actions during summarization failure, still report it
            if steps_without_actions >= max_retries:
                return MaxStepsReasonResponse(
                    page_info="",
                    reasoning=(
                        f"The task failed because all {max_retries} retry attempts failed to generate actions. "
                        f"This is typically caused by LLM service errors during action extraction."
                    ),
                    errors=[],
                    failure_categories=_llm_error_category(
                        "All retry steps failed without producing actions — "
                        "LLM context window exceeded or provider error during action extraction."
                    ),
                    failure_category_source="code_level",
                )
            if steps_results:
                last_step_result = steps_results[-1]
                return MaxStepsReasonResponse(
                    page_info="",
                    reasoning=f"Retry Step {last_step_result['order']}: {last_step_result['actions_result']}",
                    errors=[],
                )
            return MaxStepsReasonResponse(
                page_info="",
                reasoning="",
                errors=[],
            )

    async def _check_workflow_run_step_budget(
        self,
        organization: Organization,
        task: Task,
    ) -> tuple[int, int] | None:
        """Returns (total_steps_so_far, max_steps_per_workflow_run) when the org has a
        run-level cap and this task belongs to a workflow run; otherwise None.

        ``max_steps_per_workflow_run`` is a per-org cap on total step count summed across
        all task blocks within a single workflow run. Distinct from the per-block
        ``max_steps_per_run`` ceiling.
        """
        if not task.workflow_run_id or not organization.max_steps_per_workflow_run:
            return None
        workflow_run_tasks = await app.DATABASE.tasks.get_tasks_by_workflow_run_id(task.workflow_run_id)
        task_ids = [t.task_id for t in workflow_run_tasks]
        if not task_ids:
            return 0, organization.max_steps_per_workflow_run
        total_steps = await app.DATABASE.tasks.get_total_unique_progress_round_count_by_task_ids(
            task_ids=task_ids,
            organization_id=organization.organization_id,
        )
        return total_steps or 0, organization.max_steps_per_workflow_run

    async def _terminate_for_workflow_run_step_budget(
        self,
        *,
        organization: Organization,
        task: Task,
        step: Step,
        total_workflow_run_steps: int,
        max_steps_per_workflow_run: int,
        speculative_next_step: Step | None = None,
    ) -> Step:
        """Mark ``step`` as the last step of ``task`` and fail the task because the
        workflow run has hit its total-step budget. Returns the updated last step.

        ``speculative_next_step`` is the parallel-verification path's pre-created next
        step that must be cancelled when present.
        """
        LOG.info(
            "Step completed but workflow-run max steps reached, marking task as failed",
            step_order=step.order,
            step_retry=step.retry_index,
            workflow_run_id=task.workflow_run_id,
            total_workflow_run_steps=total_workflow_run_steps,
            max_steps_per_workflow_run=max_steps_per_workflow_run,
        )
        if speculative_next_step is not None:
            final_status = step.speculative_original_status or StepStatus.completed
            step.speculative_original_status = None
            step.status = final_status
            last_step = await self.update_step(
                step,
                status=final_status,
                output=step.output,
                is_last=True,
            )
        else:
            last_step = await self.update_step(step, is_last=True)

        failure_reason = (
            f"Workflow run reached the maximum total steps ({max_steps_per_workflow_run}) set on the organization."
        )
        errors = [ReachMaxStepsError().model_dump()]
        failure_category = classify_from_failure_reason(failure_reason, fallback_to_unknown=True)
        LOG.info(
            "Task failure classified",
            task_id=task.task_id,
            workflow_run_id=task.workflow_run_id,
            organization_id=task.organization_id,
            task_status="failed",
            failure_category=failure_category,
            primary_failure_category=failure_category[0].get("category") if failure_category else None,
            failure_category_source="code_level",
            failure_category_path="max_steps_per_workflow_run",
        )
        if speculative_next_step is not None:
            await self._cancel_speculative_step(speculative_next_step)
        await self.update_task(
            task,
            status=TaskStatus.failed,
            failure_reason=failure_reason,
            errors=errors,
            failure_category=failure_category,
        )
        return last_step

    async def handle_completed_step(
        self,
        organization: Organization,
        task: Task,
        step: Step,
        page: Page | None,
        task_block: BaseTaskBlock | None = None,
        browser_state: BrowserState | None = None,
        scraped_page: ScrapedPage | None = None,
        engine: RunEngine = RunEngine.skyvern_v1,
        complete_verification: bool = True,
    ) -> tuple[bool | None, Step | None, Step | None]:
        # Check if parallel verification should be used
        # Only use it when we have the required data AND when verification would normally happen
        task_completes_on_download = task_block and task_block.complete_on_download and task.workflow_run_id
        should_verify = (
            complete_verification
            and not step.is_goal_achieved(has_navigation_goal=bool(task.navigation_goal))
            and not step.is_terminated()
            and not isinstance(task_block, ActionBlock)
            and not task_completes_on_download
            and (task.navigation_goal or task.complete_criterion)
        )

        if should_verify and browser_state and scraped_page:
            disable_user_goal_check = await app.EXPERIMENTATION_PROVIDER.is_feature_enabled_cached(
                "DISABLE_USER_GOAL_CHECK",
                task.workflow_run_id if task.workflow_run_id else task.task_id,
                properties={"task_url": task.url, "organization_id": task.organization_id},
            )

            if disable_user_goal_check:
                LOG.info(
                    "User goal verification disabled via feature flag",
                    step_id=step.step_id,
                    task_id=task.task_id,
                )
            else:
                return await self._handle_completed_step_with_parallel_verification(
                    organization=organization,
                    task=task,
                    step=step,
                    page=page,
                    browser_state=browser_state,
                    scraped_page=scraped_page,
                    engine=engine,
                    task_block=task_block,
                )

        goal_achieved = step.is_goal_achieved(has_navigation_goal=bool(task.navigation_goal))
        # A decisive COMPLETE action skips parallel verification, so this is the other place a
        # completion is accepted — gate it too, or the veto is bypassed whenever the agent emits
        # complete directly.
        if (
            goal_achieved
            and browser_state is not None
            and not await app.AGENT_FUNCTION.gate_step_completion(
                task=task,
                step=step,
                task_block=task_block,
                page=page,
                browser_state=browser_state,
            )
        ):
            LOG.info(
                "Decisive step completion vetoed by completion gate; continuing with next step",
                task_id=task.task_id,
                step_id=step.step_id,
            )
            goal_achieved = False
        if goal_achieved:
            LOG.info(
                "Step completed and goal achieved, marking task as completed",
                step_order=step.order,
                step_retry=step.retry_index,
                output=step.output,
            )
            last_step = await self.update_step(step, is_last=True)
            extracted_information = await self.get_extracted_information_for_task(task)
            await self.update_task(
                task,
                status=TaskStatus.completed,
                extracted_information=extracted_information,
            )
            return True, last_step, None
        if step.is_terminated():
            LOG.info(
                "Step completed and terminated by the agent, marking task as terminated",
                step_order=step.order,
                step_retry=step.retry_index,
                output=step.output,
            )
            last_step = await self.update_step(step, is_last=True)
            failure_reason = await self.get_failure_reason_for_task(task)
            failure_category = classify_from_failure_reason(failure_reason)
            LOG.info(
                "Task failure classified",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
                organization_id=task.organization_id,
                task_status="terminated",
                failure_category=failure_category,
                primary_failure_category=failure_category[0].get("category") if failure_category else None,
                failure_category_source="code_level",
                failure_category_path="terminate_extract_action",
            )
            await self.update_task(
                task,
                status=TaskStatus.terminated,
                failure_reason=failure_reason,
                failure_category=failure_category,
            )
            return False, last_step, None
        # If the max steps are exceeded, mark the current step as the last step and conclude the task
        context = skyvern_context.current()
        override_max_steps_per_run = context.max_steps_override if context else None
        max_steps_per_run = (
            override_max_steps_per_run
            or task.max_steps_per_run
            or organization.max_steps_per_run
            or settings.MAX_STEPS_PER_RUN
        )

        # HACK: action block only have one step to execute without complete action, so we consider the task is completed as long as the step is completed
        if isinstance(task_block, ActionBlock) and step.is_success():
            LOG.info(
                "Step completed for the action block, marking task as completed",
                step_order=step.order,
                step_retry=step.retry_index,
                output=step.output,
            )
            last_step = await self.update_step(step, is_last=True)
            await self.update_task(
                task,
                status=TaskStatus.completed,
            )
            return True, last_step, None

        workflow_run_budget = await self._check_workflow_run_step_budget(organization, task)
        if workflow_run_budget is not None and workflow_run_budget[0] >= workflow_run_budget[1]:
            last_step = await self._terminate_for_workflow_run_step_budget(
                organization=organization,
                task=task,
                step=step,
                total_workflow_run_steps=workflow_run_budget[0],
                max_steps_per_workflow_run=workflow_run_budget[1],
            )
            return False, last_step, None

        if step.order + 1 >= max_steps_per_run:
            LOG.info(
                "Step completed but max steps reached, marking task as failed",
                step_order=step.order,
                step_retry=step.retry_index,
                max_steps=max_steps_per_run,
            )
            last_step = await self.update_step(step, is_last=True)

            generated_failure_reason = await self.summary_failure_reason_for_max_steps(
                organization=organization,
                task=task,
                step=step,
                page=page,
                engine_selection=browser_state.engine_selection if browser_state is not None else None,
            )
            failure_reason = f"Reached the maximum steps ({max_steps_per_run}). Possible failure reasons: {generated_failure_reason.reasoning}"
            errors = [ReachMaxStepsError().model_dump()] + [
                error.model_dump() for error in generated_failure_reason.errors
            ]
            failure_category = generated_failure_reason.failure_categories or classify_from_failure_reason(
                failure_reason, fallback_to_unknown=True
            )
            LOG.info(
                "Task failure classified",
                task_id=task.task_id,
                workflow_run_id=task.workflow_run_id,
                organization_id=task.organization_id,
                task_status="failed",
                failure_category=failure_category,
                primary_failure_category=failure_category[0].get("category") if failure_category else None,
                failure_category_source="llm" if generated_failure_reason.failure_categories else "code_level",
                failure_category_path="max_steps",
            )

            await self.update_task(
                task,
                status=TaskStatus.failed,
                failure_reason=failure_reason,
                errors=errors,
                failure_category=failure_category,
            )
            return False, last_step, None
        else:
            LOG.info(
                "Step completed, creating next step",
                step_order=step.order,
                step_retry=step.retry_index,
            )
            next_step = await app.DATABASE.tasks.create_step(
                task_id=task.task_id,
                order=step.order + 1,
                retry_index=0,
                organization_id=task.organization_id,
            )

            if step.order == int(max_steps_per_run * settings.LONG_RUNNING_TASK_WARNING_RATIO - 1):
                LOG.info(
                    "Long running task warning",
                    order=step.order,
                    max_steps=max_steps_per_run,
                    warning_ratio=settings.LONG_RUNNING_TASK_WARNING_RATIO,
                )
            return None, None, next_step

    async def handle_potential_OTP_actions(
        self,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        browser_state: BrowserState,
        json_response: dict[str, Any],
    ) -> tuple[dict[str, Any], list[Action]]:
        if not task.organization_id:
            return json_response, []

        if not task.totp_verification_url and not task.totp_identifier:
            return json_response, []

        should_verify_by_magic_link = json_response.get("should_verify_by_magic_link")
        place_to_enter_verification_code = json_response.get("place_to_enter_verification_code")
        should_enter_verification_code = json_response.get("should_enter_verification_code")

        # On a verification page with a configured OTP source, route a pure give-up into the
        # deterministic resolver so the 15-minute poll budget is reachable instead of being skipped.
        # Yields to magic-link verification: the fallback only forces the verification-code resolver
        # when magic-link verification is not requested.
        model_abandoning_verification = _model_is_abandoning_verification(json_response)
        should_resolve_verification_code = bool(place_to_enter_verification_code) and (
            bool(should_enter_verification_code) or (model_abandoning_verification and not should_verify_by_magic_link)
        )
        LOG.info(
            "OTP action gating",
            task_id=task.task_id,
            place_to_enter_verification_code=bool(place_to_enter_verification_code),
            should_enter_verification_code=bool(should_enter_verification_code),
            should_verify_by_magic_link=bool(should_verify_by_magic_link),
            model_abandoning_verification=model_abandoning_verification,
            resolving_verification_code=should_resolve_verification_code,
        )

        # If no OTP verification needed, return early to avoid unnecessary processing
        if (
            not should_verify_by_magic_link
            and not place_to_enter_verification_code
            and not should_enter_verification_code
        ):
            return json_response, []

        # The first plan may already carry a runtime-consumable multi-field TOTP shape backed by the
        # runtime secret stash. In that case the existing per-digit execution path resolves it, so the
        # polling verification re-plan is redundant and would discard the first plan. Magic-link
        # verification and payload OTP both outrank it and are resolved on their own paths, so the skip
        # never runs ahead of them.
        runtime_context = skyvern_context.current()
        workflow_run_id = getattr(task, "workflow_run_id", None)
        workflow_run_context = None
        if workflow_run_id and app.WORKFLOW_CONTEXT_MANAGER.has_workflow_run_context(workflow_run_id):
            workflow_run_context = app.WORKFLOW_CONTEXT_MANAGER.get_workflow_run_context(workflow_run_id)
        multi_field_secret_ready = bool(runtime_context and runtime_context.totp_codes.get(f"{task.task_id}_secret"))
        first_plan_actions = json_response.get("actions")
        if (
            should_resolve_verification_code
            and not should_verify_by_magic_link
            and isinstance(first_plan_actions, list)
            and _first_plan_carries_consumable_totp(first_plan_actions, multi_field_secret_ready)
            and extract_totp_from_navigation_inputs(task.navigation_payload) is None
        ):
            LOG.info(
                "Keeping first-pass credential TOTP plan; skipping verification re-plan",
                task_id=task.task_id,
            )
            return json_response, []

        if (
            should_resolve_verification_code
            and not should_verify_by_magic_link
            and isinstance(first_plan_actions, list)
            and _first_plan_carries_single_field_credential_totp(
                first_plan_actions,
                workflow_run_context,
                getattr(runtime_context, "active_credential_parameter_key", None),
            )
            and extract_totp_from_navigation_inputs(task.navigation_payload) is None
        ):
            LOG.info("Keeping first-pass single-field credential TOTP plan", task_id=task.task_id)
            return json_response, []

        if should_resolve_verification_code:
            json_response = await self.handle_potential_verification_code(
                task, step, scraped_page, browser_state, json_response
            )
            actions = parse_actions(
                task, step.step_id, step.order, scraped_page, _require_actions_payload(json_response)
            )
            # Parsed from the current scrape, so stamped here rather than by the caller: this return
            # shares its shape with the magic-link one below, which is runtime-derived and must stay
            # unstamped. Distinguishing them at the caller would mean guessing which branch ran.
            stamp_parsed_actions(actions)
            return json_response, actions

        if should_verify_by_magic_link:
            actions = await self.handle_potential_magic_link(task, step, scraped_page, browser_state, json_response)
            return json_response, actions

        return json_response, []

    async def handle_potential_magic_link(
        self,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        browser_state: BrowserState,
        json_response: dict[str, Any],
    ) -> list[Action]:
        should_verify_by_magic_link = json_response.get("should_verify_by_magic_link")
        if not should_verify_by_magic_link:
            return []

        LOG.info("Handling magic link verification", task_id=task.task_id)
        otp_value = await poll_otp_value(
            organization_id=task.organization_id,
            task_id=task.task_id,
            workflow_run_id=task.workflow_run_id,
            totp_verification_url=task.totp_verification_url,
            totp_identifier=task.totp_identifier,
            expected_otp_type=OTPType.MAGIC_LINK,
        )
        if not otp_value or otp_value.get_otp_type() != OTPType.MAGIC_LINK:
            return []

        # always open a new tab to navigate to the magic link
        page = await browser_state.new_page()
        context = skyvern_context.ensure_context()
        context.add_magic_link_page(task.task_id, page)

        return [
            GotoUrlAction(
                reasoning="Navigating to the magic link URL to verify the login",
                intention="Navigating to the magic link URL to verify the login",
                url=otp_value.value,
                organization_id=task.organization_id,
                workflow_run_id=task.workflow_run_id,
                task_id=task.task_id,
                step_id=step.step_id,
                step_order=step.order,
                action_order=0,
                is_magic_link=True,
            ),
        ]

    async def handle_potential_verification_code(
        self,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        browser_state: BrowserState,
        json_response: dict[str, Any],
    ) -> dict[str, Any]:
        # The caller decides when to resolve; place_to_enter_verification_code alone is sufficient.
        place_to_enter_verification_code = json_response.get("place_to_enter_verification_code")
        if not place_to_enter_verification_code:
            return json_response

        LOG.info("Need verification code")
        otp_value = await resolve_otp_value(task, expected_otp_type=OTPType.TOTP)

        if not otp_value or otp_value.get_otp_type() != OTPType.TOTP:
            return json_response

        current_context = skyvern_context.ensure_context()
        current_context.totp_codes[task.task_id] = otp_value.value

        build_result = await self._build_extract_action_prompt(
            task,
            step,
            browser_state,
            scraped_page,
            verification_code_check=False,
        )
        extract_action_prompt = build_result.prompt
        use_caching = build_result.use_caching
        prompt_name = build_result.prompt_name
        without_page_information = build_result.without_page_information
        llm_key_override = task.llm_key
        if await service_utils.is_cua_task(task=task):
            llm_key_override = None
        llm_api_handler = LLMAPIHandlerFactory.get_override_llm_api_handler(
            llm_key_override, default=get_org_aware_primary_llm_api_handler()
        )
        # Add caching flag to context for monitoring
        if use_caching:
            context = skyvern_context.current()
            if context:
                context.use_prompt_caching = True

        return await llm_api_handler(
            prompt=extract_action_prompt,
            step=step,
            screenshots=[] if without_page_information else scraped_page.screenshots,
            prompt_name=prompt_name,
            system_prompt=task.workflow_system_prompt,
        )

    @staticmethod
    async def get_task_errors(task: Task) -> list[UserDefinedError]:
        steps = await app.DATABASE.tasks.get_task_steps(task_id=task.task_id, organization_id=task.organization_id)
        errors = []
        for step in steps:
            if step.output and step.output.errors:
                errors.extend(step.output.errors)

        return errors

    @staticmethod
    async def update_task_errors_from_detailed_output(
        task: Task, detailed_step_output: DetailedAgentStepOutput
    ) -> Task:
        task_errors = task.errors
        step_errors = detailed_step_output.extract_errors() or []
        task_errors.extend([error.model_dump() for error in step_errors])

        return await app.DATABASE.tasks.update_task(
            task_id=task.task_id,
            organization_id=task.organization_id,
            errors=task_errors,
        )

    @staticmethod
    async def _fetch_data_extraction_summary_response(task: Task, step: Step) -> dict[str, Any]:
        context = skyvern_context.ensure_context()
        local_datetime_str = datetime.now(context.tz_info).isoformat()
        capped_schema = truncate_extraction_schema(task.extracted_information_schema)
        summary_kwargs: dict[str, Any] = {
            "data_extraction_goal": task.data_extraction_goal,
            "data_extraction_schema": capped_schema,
            "local_datetime": local_datetime_str,
        }
        prompt = prompt_engine.load_prompt("data-extraction-summary", **summary_kwargs)
        prompt, post_ceiling_kwargs = enforce_prompt_ceiling_tracked(
            prompt,
            prompt_engine=prompt_engine,
            template_name="data-extraction-summary",
            kwargs=summary_kwargs,
        )

        workflow_run_id = context.workflow_run_id if context else None
        wpid_for_cache = task.workflow_permanent_id or (context.workflow_permanent_id if context else None)
        cache_key: str | None = None
        lookup_result: extraction_cache.LookupResult | None = None
        try:
            cache_key = extraction_cache.compute_cache_key(
                call_path="agent",
                data_extraction_goal=task.data_extraction_goal,
                extracted_information_schema=post_ceiling_kwargs["data_extraction_schema"],
                llm_key=None,
                workflow_system_prompt=task.workflow_system_prompt,
            )
            lookup_result = extraction_cache.lookup(workflow_run_id, cache_key)
        except Exception:
            LOG.warning(
                "data-extraction-summary cache lookup failed",
                workflow_run_id=workflow_run_id,
                cache_key=cache_key,
                cache_hit=False,
                cache_scope=extraction_cache.SCOPE_RUN,
                cache_age_seconds=None,
                fallback_reason=extraction_cache.FALLBACK_LOOKUP_ERROR,
                cache_path="agent",
                exc_info=True,
            )

        if lookup_result is not None and lookup_result.hit and isinstance(lookup_result.value, dict):
            LOG.info(
                "data-extraction-summary cache hit — skipping LLM call",
                workflow_run_id=workflow_run_id,
                cache_key=cache_key,
                cache_hit=True,
                cache_scope=lookup_result.scope,
                cache_age_seconds=lookup_result.age_seconds,
                fallback_reason=None,
                cache_path="agent",
            )
            data_extraction_summary_resp = lookup_result.value
        else:
            if lookup_result is not None and lookup_result.hit and not isinstance(lookup_result.value, dict):
                LOG.warning(
                    "data-extraction-summary cache hit returned non-dict value; falling through to LLM",
                    workflow_run_id=workflow_run_id,
                    cache_key=cache_key,
                    value_type=type(lookup_result.value).__name__,
                    cache_path="agent",
                )
            elif lookup_result is not None:
                LOG.info(
                    "data-extraction-summary cache miss",
                    workflow_run_id=workflow_run_id,
                    cache_key=cache_key,
                    cache_hit=False,
                    cache_scope=lookup_result.scope,
                    cache_age_seconds=None,
                    fallback_reason=lookup_result.fallback_reason,
                    cache_path="agent",
                )

            cross_run_value: dict[str, Any] | None = None
            if cache_key is not None:
                try:
                    raw = await app.AGENT_FUNCTION.lookup_cross_run_extraction_cache(wpid_for_cache, cache_key)
                except Exception:
                    LOG.warning(
                        "data-extraction-summary cross-run cache lookup raised",
                        workflow_run_id=workflow_run_id,
                        cache_key=cache_key,
                        exc_info=True,
                    )
                    raw = None
                if raw is not None and not isinstance(raw, dict):
                    LOG.warning(
                        "data-extraction-summary cross-run cache hit returned non-dict value; falling through to LLM",
                        workflow_run_id=workflow_run_id,
                        cache_key=cache_key,
                        value_type=type(raw).__name__,
                        cache_path="agent",
                    )
                    raw = None
                cross_run_value = raw if isinstance(raw, dict) else None

            if cache_key is not None and cross_run_value is not None:
                LOG.info(
                    "data-extraction-summary cache hit — skipping LLM call (cross-run)",
                    workflow_run_id=workflow_run_id,
                    cache_key=cache_key,
                    cache_hit=True,
                    cache_scope=extraction_cache.SCOPE_WPID,
                    cache_age_seconds=None,
                    fallback_reason=None,
                    cache_path="agent",
                )
                try:
                    extraction_cache.store(workflow_run_id, cache_key, cross_run_value)
                except Exception:
                    LOG.warning(
                        "data-extraction-summary cross-run cache backfill to in-run failed",
                        exc_info=True,
                    )
                if workflow_run_id is not None:
                    _schedule_summary_shadow_check_for_hit(
                        task=task,
                        workflow_run_id=workflow_run_id,
                        cache_key=cache_key,
                        cached_value=cross_run_value,
                        cached_age_seconds=extraction_shadow.UNKNOWN_CACHE_AGE_SENTINEL,
                        summary_prompt=prompt,
                    )
                data_extraction_summary_resp = cross_run_value
            else:
                if cache_key is not None:
                    LOG.info(
                        "data-extraction-summary cache miss (cross-run)",
                        workflow_run_id=workflow_run_id,
                        cache_key=cache_key,
                        cache_hit=False,
                        cache_scope=extraction_cache.SCOPE_WPID,
                        cache_age_seconds=None,
                        fallback_reason="cross_run_miss",
                        cache_path="agent",
                    )
                data_extraction_summary_resp = await get_org_aware_primary_llm_api_handler(
                    default=app.EXTRACTION_LLM_API_HANDLER
                )(
                    prompt=prompt,
                    step=step,
                    prompt_name="data-extraction-summary",
                    system_prompt=task.workflow_system_prompt,
                )
                if cache_key and isinstance(data_extraction_summary_resp, dict):
                    extraction_cache.store(workflow_run_id, cache_key, data_extraction_summary_resp)
                    try:
                        await app.AGENT_FUNCTION.store_cross_run_extraction_cache(
                            wpid_for_cache, cache_key, data_extraction_summary_resp
                        )
                    except Exception:
                        LOG.warning(
                            "data-extraction-summary cross-run cache store raised; ignoring",
                            workflow_run_id=workflow_run_id,
                            cache_key=cache_key,
                            exc_info=True,
                        )

        if data_extraction_summary_resp is None:
            raise RuntimeError(
                "data_extraction_summary_resp unexpectedly None after cache/LLM block "
                f"(workflow_run_id={workflow_run_id!r}, cache_key={cache_key!r})"
            )
        return data_extraction_summary_resp

    @staticmethod
    async def create_extract_action(
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        prefetched_summary_task: asyncio.Task[dict[str, Any]] | None = None,
    ) -> ExtractAction:
        if prefetched_summary_task is not None:
            try:
                data_extraction_summary_resp = await prefetched_summary_task
            except Exception as exc:
                LOG.warning(
                    "Prefetched extraction summary failed, falling back to inline call",
                    error_type=type(exc).__name__,
                    exc_info=True,
                )
                data_extraction_summary_resp = await ForgeAgent._fetch_data_extraction_summary_response(task, step)
        else:
            data_extraction_summary_resp = await ForgeAgent._fetch_data_extraction_summary_response(task, step)
        return ExtractAction(
            reasoning=data_extraction_summary_resp.get("summary", "Extracting information from the page"),
            data_extraction_goal=task.data_extraction_goal,
            data_extraction_schema=task.extracted_information_schema,
            organization_id=task.organization_id,
            task_id=task.task_id,
            workflow_run_id=task.workflow_run_id,
            step_id=step.step_id,
            step_order=step.order,
            action_order=0,
            confidence_float=1.0,
        )

    @staticmethod
    def step_has_completed_goal(detailed_agent_step_output: DetailedAgentStepOutput) -> bool:
        if not detailed_agent_step_output.actions_and_results:
            return False

        last_action, last_action_results = detailed_agent_step_output.actions_and_results[-1]
        if last_action.action_type not in [ActionType.COMPLETE, ActionType.EXTRACT]:
            return False

        return any(action_result.success for action_result in last_action_results)

    async def _run_data_extraction_after_complete_action(
        self,
        task: Task,
        step: Step,
        scraped_page: ScrapedPage,
        working_page: Page,
    ) -> Task:
        """
        Run the extraction flow when a task with a data extraction goal completes during parallel verification.
        """
        refreshed_task = await app.DATABASE.tasks.get_task(task.task_id, task.organization_id)
        if refreshed_task:
            task = refreshed_task

        extract_action = await self.create_extract_action(task, step, scraped_page)
        extract_results = await ActionHandler.handle_action(scraped_page, task, step, working_page, extract_action)
        await app.AGENT_FUNCTION.post_action_execution(extract_action)

        if step.output is None:
            step.output = AgentStepOutput(action_results=[], actions_and_results=[], errors=[])
        if step.output.action_results is None:
            step.output.action_results = []
        if step.output.actions_and_results is None:
            step.output.actions_and_results = []

        step.output.action_results.extend(extract_results)
        step.output.actions_and_results.append((extract_action, extract_results))

        return task
