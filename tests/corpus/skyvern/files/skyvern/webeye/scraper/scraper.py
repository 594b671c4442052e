import asyncio
import copy
import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import structlog
from opentelemetry import trace as otel_trace
from playwright._impl._errors import TimeoutError
from playwright.async_api import ElementHandle, Frame, Locator, Page

from skyvern.config import settings
from skyvern.constants import DEFAULT_MAX_TOKENS, SKYVERN_ID_ATTR
from skyvern.exceptions import (
    FailedToTakeScreenshot,
    MissingBrowserStatePage,
    NoElementFound,
    ScrapingFailed,
    ScrapingFailedBlankPage,
    ScreenshotTargetClosed,
    SkyvernPageAnalysisTimeout,
    UnknownElementTreeFormat,
)
from skyvern.experimentation.wait_utils import empty_page_retry_wait
from skyvern.forge.sdk.api.crypto import calculate_sha256
from skyvern.forge.sdk.browser_action_preflight import advance_observation_epoch
from skyvern.forge.sdk.core import skyvern_context
from skyvern.forge.sdk.experimentation.transient_ui_capture import (
    decide_transient_ui_suppression,
    emit_transient_ui_popup_telemetry,
    transient_ui_capture_arm,
)
from skyvern.forge.sdk.settings_manager import SettingsManager
from skyvern.forge.sdk.trace import apply_context_attrs, traced, traced_span
from skyvern.utils.image_resizer import Resolution
from skyvern.utils.token_counter import approx_count_tokens
from skyvern.utils.url_validators import strip_query_params
from skyvern.webeye.browser_state import BrowserState
from skyvern.webeye.scraper.scraped_page import (
    CleanupElementTreeFunc,
    ElementTreeBuilder,
    ElementTreeFormat,
    ScrapedPage,
    ScrapeExcludeFunc,
    json_to_html,
)
from skyvern.webeye.utils.page import SkyvernFrame, load_js_script

if TYPE_CHECKING:
    from skyvern.webeye.browser_engine import BrowserEngineSelection

LOG = structlog.get_logger()


async def build_scraping_failed_reason(
    browser_state: BrowserState, requested_url: str, *, timed_out: bool = False
) -> str:
    """Build the user-facing ScrapingFailed reason with the requested URL plus the landed URL when they differ.

    Query strings are stripped because OAuth/SSO URLs commonly carry secrets in query params.
    ``timed_out`` keeps the word "timeout" in the reason so failure_classifier routes page-analysis
    timeouts to PAGE_LOAD_TIMEOUT instead of lumping them into DATA_EXTRACTION_FAILURE.
    """
    safe_requested = strip_query_params(requested_url)
    safe_landed: str | None = None
    try:
        page = await browser_state.get_working_page()
        if page is not None and page.url:
            safe_landed = strip_query_params(page.url)
    except asyncio.CancelledError:
        raise
    except Exception:
        LOG.debug("Could not resolve landed URL for ScrapingFailed reason", exc_info=True)

    if timed_out:
        base = (
            "Skyvern hit a page-analysis timeout while loading the website. "
            "The page took too long to load or become responsive during analysis."
        )
    else:
        base = (
            "Skyvern failed to load the website. "
            "The page may have navigated unexpectedly or become unresponsive during analysis."
        )
    if safe_landed and safe_landed != safe_requested and safe_landed not in {"about:blank", ""}:
        return f"{base} Requested URL: {safe_requested}. Current URL: {safe_landed}."
    return f"{base} URL: {safe_requested}."


def _is_page_analysis_timeout(engine_selection: "BrowserEngineSelection | None", error: BaseException) -> bool:
    """Whether ``error`` is a page-analysis timeout attributable to THIS run's selected browser engine.

    The Skyvern-owned analyzer deadline (``SkyvernPageAnalysisTimeout``) is always a page-analysis
    timeout; otherwise the driver-native decision routes through the per-run engine selection so a run
    pinned to a non-Playwright engine recognizes its native timeout while a foreign driver's timeout is
    rejected. Falls back to the stock Playwright timeout identity when no engine is pinned (callers or
    states built outside the per-run engine seam).
    """
    if isinstance(error, SkyvernPageAnalysisTimeout):
        return True
    if engine_selection is not None:
        return engine_selection.is_engine_timeout_error(error)
    return isinstance(error, TimeoutError)


def _scrape_timed_out(browser_state: BrowserState, error: BaseException) -> bool:
    """Whether ``error`` is a page-analysis timeout from THIS run's selected browser engine."""
    return _is_page_analysis_timeout(browser_state.engine_selection, error)


RESERVED_ATTRIBUTES = {
    "accept",  # for input file
    "alt",
    "aria-checked",  # for option tag
    "aria-current",
    "aria-disabled",
    "aria-label",
    "aria-readonly",
    "aria-required",
    "aria-role",
    "aria-selected",  # for option tag
    "checked",
    "data-original-title",  # for bootstrap tooltip
    "data-ui",
    "disabled",  # for button
    "for",
    "href",  # For a tags
    "maxlength",
    "name",
    "pattern",
    "placeholder",
    "readonly",
    "required",
    "selected",  # for option tag
    "shape-description",  # for css shape
    "src",  # do we need this?
    "text-value",
    "title",
    "type",
    "value",
}

ENRICHED_ONLY_ATTRIBUTES = {
    "aria-describedby",
    "aria-errormessage",
    "aria-expanded",
    "aria-haspopup",
    "aria-invalid",
    "aria-labelledby",
    "errorText",
    "invalid",
    "validationMessage",
}

ENRICHED_RESERVED_ATTRIBUTES = RESERVED_ATTRIBUTES | ENRICHED_ONLY_ATTRIBUTES


def _reserved_attributes_for_context() -> set[str]:
    context = skyvern_context.current()
    if context and context.enriched_tree_enabled():
        return ENRICHED_RESERVED_ATTRIBUTES
    return RESERVED_ATTRIBUTES


BASE64_INCLUDE_ATTRIBUTES = {
    "href",
    "src",
    "poster",
    "srcset",
    "icon",
}


JS_FUNCTION_DEFS = load_js_script()


def clean_element_before_hashing(element: dict) -> dict:
    def clean_nested(element: dict) -> dict:
        element_cleaned = {key: value for key, value in element.items() if key not in {"id", "rect", "frame_index"}}
        if "attributes" in element:
            attributes_cleaned = {key: value for key, value in element["attributes"].items() if key != SKYVERN_ID_ATTR}
            element_cleaned["attributes"] = attributes_cleaned
        if "children" in element:
            children_cleaned = [clean_nested(child) for child in element["children"]]
            element_cleaned["children"] = children_cleaned
        return element_cleaned

    return clean_nested(element)


_ELEMENT_TREE_IMMUTABLE_LEAF = (str, bytes, bool, int, float, type(None))


def _deepcopy_element_tree(element_tree: list[dict]) -> list[dict]:
    """Deep copy the scraped element tree without ``copy.deepcopy``'s generic overhead.

    The tree is normally pure JSON-like data (only dict/list mutable containers with immutable
    leaves, as proven by ``hash_element``'s ``json.dumps``), so recursing dict/list and sharing
    immutable leaves is equivalent to ``copy.deepcopy``. A page-controlled payload can, however,
    introduce cycles or repeated/shared containers, so a memo keyed by object id preserves cycle
    and alias identity exactly as ``copy.deepcopy`` does. Any unexpected non-scalar leaf falls back
    to ``copy.deepcopy`` sharing the same memo to keep aliasing consistent across both paths.
    """

    memo: dict[int, Any] = {}

    def copy_value(value: Any) -> Any:
        if isinstance(value, _ELEMENT_TREE_IMMUTABLE_LEAF):
            return value
        existing = memo.get(id(value))
        if existing is not None:
            return existing
        if isinstance(value, dict):
            copied_dict: dict = {}
            memo[id(value)] = copied_dict
            for key, item in value.items():
                copied_dict[key] = copy_value(item)
            return copied_dict
        if isinstance(value, list):
            copied_list: list = []
            memo[id(value)] = copied_list
            for item in value:
                copied_list.append(copy_value(item))
            return copied_list
        return copy.deepcopy(value, memo)

    return copy_value(element_tree)


def hash_element(element: dict) -> str:
    hash_ready_element = clean_element_before_hashing(element)
    # Sort the keys to ensure consistent ordering
    element_string = json.dumps(hash_ready_element, sort_keys=True)

    return calculate_sha256(element_string)


def build_element_dict(
    elements: list[dict],
) -> tuple[dict[str, str], dict[str, dict], dict[str, str], dict[str, str], dict[str, list[str]]]:
    id_to_css_dict: dict[str, str] = {}
    id_to_element_dict: dict[str, dict] = {}
    id_to_frame_dict: dict[str, str] = {}
    id_to_element_hash: dict[str, str] = {}
    hash_to_element_ids: dict[str, list[str]] = {}

    for element in elements:
        element_id: str = element.get("id", "")
        # get_interactable_element_tree marks each interactable element with a SKYVERN_ID_ATTR attribute
        id_to_css_dict[element_id] = f"[{SKYVERN_ID_ATTR}='{element_id}']"
        id_to_element_dict[element_id] = element
        id_to_frame_dict[element_id] = element["frame"]
        element_hash = hash_element(element)
        id_to_element_hash[element_id] = element_hash
        hash_to_element_ids[element_hash] = hash_to_element_ids.get(element_hash, []) + [element_id]

    return id_to_css_dict, id_to_element_dict, id_to_frame_dict, id_to_element_hash, hash_to_element_ids


async def scrape_website(
    browser_state: BrowserState,
    url: str,
    cleanup_element_tree: CleanupElementTreeFunc,
    num_retry: int = 0,
    max_retries: int = settings.MAX_SCRAPING_RETRIES,
    scrape_exclude: ScrapeExcludeFunc | None = None,
    take_screenshots: bool = True,
    # DEPRECATED: visual bounding box overlays are no longer rendered during scraping.
    # The parameter is retained for backwards compatibility and is scheduled for removal.
    # New call sites must not pass ``draw_boxes=True``.
    draw_boxes: bool = False,
    max_screenshot_number: int = settings.MAX_NUM_SCREENSHOTS,
    scroll: bool = True,
    support_empty_page: bool = False,
    wait_seconds: float = 0,
    must_included_tags: list[str] | None = None,
    allow_transient_ui_suppression: bool = False,
) -> ScrapedPage:
    """
    ************************************************************************************************
    ************ NOTE: MAX_SCRAPING_RETRIES is set to 0 in both staging and production *************
    ************************************************************************************************
    High-level asynchronous function to scrape a web page. It sets up the Playwright environment, handles browser and
    page initialization, and calls the safe scraping function. This function is ideal for general use where initial
    setup and safety measures are required.

    Asynchronous function that safely scrapes a web page. It handles exceptions and retries scraping up to a maximum
    number of attempts. This function should be used when reliability and error handling are crucial, such as in
    automated scraping tasks.

    :param browser_context: BrowserContext instance used for scraping.
    :param url: URL of the web page to be scraped.
    :param page: Optional Page instance for scraping, a new page is created if None.
    :param num_retry: Tracks number of retries if scraping fails, defaults to 0.

    :return: Tuple containing Page instance, base64 encoded screenshot, and page elements.

    :raises Exception: When scraping fails after maximum retries.
    """

    async def scrape_once() -> ScrapedPage:
        return await scrape_web_unsafe(
            browser_state=browser_state,
            url=url,
            cleanup_element_tree=cleanup_element_tree,
            scrape_exclude=scrape_exclude,
            take_screenshots=take_screenshots,
            draw_boxes=draw_boxes,
            max_screenshot_number=max_screenshot_number,
            scroll=scroll,
            support_empty_page=support_empty_page,
            wait_seconds=wait_seconds,
            must_included_tags=must_included_tags,
            allow_transient_ui_suppression=allow_transient_ui_suppression,
        )

    try:
        num_retry += 1
        try:
            return await scrape_once()
        except NoElementFound:
            LOG.info("Retrying scrape after empty element tree", url=url, attempt=1)
            await asyncio.sleep(3)

        try:
            return await scrape_once()
        except NoElementFound:
            LOG.info("Retrying scrape after empty element tree", url=url, attempt=2)
            page = await browser_state.must_get_working_page()
            # Re-fetch with an explicit GET: page.reload() on a POST-result document can resubmit the form.
            await page.goto(page.url, timeout=settings.BROWSER_LOADING_TIMEOUT_MS)
            await asyncio.sleep(3)

        return await scrape_once()
    except ScrapingFailedBlankPage:
        raise
    except Exception as e:
        if isinstance(e, MissingBrowserStatePage) and e.diagnostic is not None:
            # A disconnect was observed and never recovered, so the browser context is gone for
            # good: check_and_fix_state only rebuilds a None context, and a lost page cannot be
            # reopened on a disconnected one. Neither a retry here nor a later rung of the caller's
            # scrape ladder can change that, and calling it ScrapingFailed blames the site for a
            # browser-lifecycle failure. A missing page with no observed disconnect may still be a
            # transient reopen failure, so that case keeps its retries.
            raise
        # NOTE: MAX_SCRAPING_RETRIES is set to 0 in both staging and production
        if num_retry > max_retries:
            if isinstance(e, ScreenshotTargetClosed):
                # Expected teardown/site-initiated close, and this log is duplicative either way: a
                # caller with strategies left treats it as retryable, and one out of attempts logs
                # its own terminal record.
                LOG.warning("Scraping stopped because the browser target closed", url=url)
                raise e
            LOG.warning(
                "Scraping failed after max retries, aborting.",
                max_retries=max_retries,
                num_retry=num_retry,
                url=url,
                exc_info=True,
            )
            if isinstance(e, FailedToTakeScreenshot):
                raise e
            else:
                raise ScrapingFailed(
                    reason=await build_scraping_failed_reason(
                        browser_state, url, timed_out=_scrape_timed_out(browser_state, e)
                    )
                ) from e
        LOG.info("Scraping failed, will retry", max_retries=max_retries, num_retry=num_retry, url=url, wait_seconds=0.5)
        await asyncio.sleep(0.5)
        return await scrape_website(
            browser_state,
            url,
            cleanup_element_tree,
            num_retry=num_retry,
            max_retries=max_retries,
            scrape_exclude=scrape_exclude,
            take_screenshots=take_screenshots,
            draw_boxes=draw_boxes,
            max_screenshot_number=max_screenshot_number,
            scroll=scroll,
            must_included_tags=must_included_tags,
            allow_transient_ui_suppression=allow_transient_ui_suppression,
        )


async def get_frame_text(iframe: Frame, scrape_exclude: ScrapeExcludeFunc | None = None) -> str:
    """
    Get all the visible text in the iframe.
    :param iframe: Frame instance to get the text from.
    :param scrape_exclude: Optional ``filter_frames``-style predicate returning a
        ``ScrapeFrameDecision``; ``exclude`` means skip. The top-level caller must pass
        a starting frame the predicate would not itself exclude.
    :return: All the visible text from the iframe.
    """
    js_script = "() => document.body.innerText"

    try:
        text = await SkyvernFrame.evaluate(frame=iframe, expression=js_script)
        if text is None:
            text = ""
    except Exception:
        LOG.warning(
            "failed to get text from iframe",
            exc_info=True,
        )
        return ""

    for child_frame in iframe.child_frames:
        if child_frame.is_detached():
            continue

        # Skip excluded frames before any CDP probe.
        if scrape_exclude is not None and (await scrape_exclude(child_frame.page, child_frame)).exclude:
            continue

        try:
            child_frame_element = await child_frame.frame_element()
        except Exception:
            LOG.warning(
                "Unable to get child_frame_element",
                exc_info=True,
            )
            continue

        # it will get stuck when we `frame.evaluate()` on an invisible iframe
        if not await child_frame_element.is_visible():
            continue

        text += await get_frame_text(child_frame, scrape_exclude)

    return text


def _should_use_page_ready_wait() -> bool:
    """Check if the enhanced page-ready wait is enabled via context (set by agent before scraping)."""
    context = skyvern_context.current()
    return bool(context and context.enable_page_ready_wait)


async def _wait_for_scrape_ready(skyvern_frame: SkyvernFrame) -> None:
    if _should_use_page_ready_wait():
        await skyvern_frame.wait_for_page_ready(
            network_idle_timeout_ms=settings.PAGE_READY_NETWORK_IDLE_TIMEOUT_MS,
            loading_indicator_timeout_ms=settings.PAGE_READY_LOADING_INDICATOR_TIMEOUT_MS,
            dom_stable_ms=settings.PAGE_READY_DOM_STABLE_MS,
            dom_stability_timeout_ms=settings.PAGE_READY_DOM_STABILITY_TIMEOUT_MS,
        )
    else:
        await skyvern_frame.safe_wait_for_animation_end(caller="scraper.scrape_ready")


def _record_scrape_span_attrs(
    *,
    elements: list,
    html: str,
    text_content: str,
    url: str,
    take_screenshots: bool,
    draw_boxes: bool,
    scroll: bool,
    max_screenshot_number: int,
    screenshots: list[bytes],
    id_to_frame_dict: dict,
    empty_page_retry: bool,
) -> None:
    """Attach coarse scrape attribution to the active ``skyvern.agent.scrape`` span.

    Falls back to ``scrape_trigger="unspecified"`` when the caller did not set
    SkyvernContext.scrape_trigger, so dashboards can quantify the unattributed
    bucket instead of dropping the data point.
    """
    span = otel_trace.get_current_span()
    span.set_attribute("element_count", len(elements))
    span.set_attribute("html_bytes", len(html) if html else 0)
    span.set_attribute("text_bytes", len(text_content) if text_content else 0)
    span.set_attribute("page_url", strip_query_params(url))
    span.set_attribute("take_screenshots", take_screenshots)
    span.set_attribute("draw_boxes", draw_boxes)
    span.set_attribute("scroll", scroll)
    span.set_attribute("max_screenshot_number", max_screenshot_number)
    span.set_attribute("screenshot_count", len(screenshots))
    span.set_attribute("screenshot_bytes", sum(len(s) for s in screenshots))
    span.set_attribute("frame_count", len(id_to_frame_dict))
    span.set_attribute("empty_page_retry", empty_page_retry)
    ctx = skyvern_context.current()
    span.set_attribute(
        "scrape_trigger",
        ctx.scrape_trigger if ctx and ctx.scrape_trigger else "unspecified",
    )
    if ctx and ctx.scrape_screenshots_consumed is not None:
        span.set_attribute("screenshots_consumed", ctx.scrape_screenshots_consumed)


@traced(name="skyvern.agent.scrape")
async def scrape_web_unsafe(
    browser_state: BrowserState,
    url: str,
    cleanup_element_tree: CleanupElementTreeFunc,
    scrape_exclude: ScrapeExcludeFunc | None = None,
    take_screenshots: bool = True,
    # DEPRECATED: visual bounding box overlays are no longer rendered during scraping.
    # The parameter is retained for backwards compatibility and is scheduled for removal.
    # New call sites must not pass ``draw_boxes=True``.
    draw_boxes: bool = False,
    max_screenshot_number: int = settings.MAX_NUM_SCREENSHOTS,
    scroll: bool = True,
    support_empty_page: bool = False,
    wait_seconds: float = 0,
    must_included_tags: list[str] | None = None,
    allow_transient_ui_suppression: bool = False,
) -> ScrapedPage:
    """
    Asynchronous function that performs web scraping without any built-in error handling. This function is intended
    for use cases where the caller handles exceptions or in controlled environments. It directly scrapes the provided
    URL or continues on the given page.

    :param browser_context: BrowserContext instance used for scraping.
    :param url: URL of the web page to be scraped. Used only when creating a new page.
    :param page: Optional Page instance for scraping, a new page is created if None.
    :return: Tuple containing Page instance, base64 encoded screenshot, and page elements.
    :note: This function does not handle exceptions. Ensure proper error handling in the calling context.
    """

    # browser state must have the page instance, otherwise we should not do scraping
    page = await browser_state.must_get_working_page()
    # Take screenshots of the page with the bounding boxes. We will remove the bounding boxes later.
    # Scroll to the top of the page and take a screenshot.
    # Scroll to the next page and take a screenshot until we reach the end of the page.
    # We check if the scroll_y_px_old is the same as scroll_y_px to determine if we have reached the end of the page.
    # This also solves the issue where we can't scroll due to a popup.(e.g. geico first popup on the homepage after
    # clicking start my quote)
    url = page.url
    if url == "about:blank" and not support_empty_page:
        # Allow scraping if the page has child frames with meaningful content
        # (e.g., Edge PDF interstitial pages render content via iframes on about:blank).
        # Filter out empty/blank frames (ad iframes, tracking pixels, detached frames).
        meaningful_frames = [f for f in page.main_frame.child_frames if f.url and f.url not in ("about:blank", "")]
        if not meaningful_frames:
            raise ScrapingFailedBlankPage()
        LOG.info(
            "about:blank page has meaningful child frames, proceeding with scraping",
            frame_count=len(meaningful_frames),
        )

    skyvern_frame = await SkyvernFrame.create_instance(page, engine_selection=browser_state.engine_selection)
    await _wait_for_scrape_ready(skyvern_frame)

    if wait_seconds > 0:
        LOG.info(f"Waiting for {wait_seconds} seconds before scraping the website.", wait_seconds=wait_seconds)
        await asyncio.sleep(wait_seconds)

    elements, element_tree, destinations = await get_interactable_element_tree(
        page,
        scrape_exclude,
        must_included_tags,
        engine_selection=browser_state.engine_selection,
    )
    empty_page_retry = False
    if not elements and not support_empty_page:
        LOG.warning("No elements found on the page, wait and retry")
        await empty_page_retry_wait()
        empty_page_retry = True
        elements, element_tree, destinations = await get_interactable_element_tree(
            page,
            scrape_exclude,
            must_included_tags,
            engine_selection=browser_state.engine_selection,
        )

    element_tree = await cleanup_element_tree(page, url, _deepcopy_element_tree(element_tree))
    element_tree_trimmed = trim_element_tree(_deepcopy_element_tree(element_tree))

    screenshots = []
    if take_screenshots:
        element_tree_trimmed_html_str = "".join(
            json_to_html(element, need_skyvern_attrs=False) for element in element_tree_trimmed
        )
        token_count = approx_count_tokens(element_tree_trimmed_html_str)
        if token_count > DEFAULT_MAX_TOKENS:
            max_screenshot_number = min(max_screenshot_number, 1)

        # Shadow-detect an open transient popup only on the agent-step scrape (opt-in via
        # allow_transient_ui_suppression); goal-verification / extraction / error-detection scrapes
        # keep legacy scrolling. Only the treatment arm suppresses the scroll so the popup survives
        # into the just-built tree's next action, and only up to a bounded number of consecutive
        # captures so a stale expanded trigger cannot pin the run at one viewport.
        popup_trigger: dict | None = None
        transient_ui_ctx = skyvern_context.current()
        arm = transient_ui_capture_arm(transient_ui_ctx)
        suppress_scroll = False
        suppression_capped = False
        if allow_transient_ui_suppression and scroll and arm != "off":
            popup_trigger = await skyvern_frame.get_open_aria_popup_trigger()
            decision = decide_transient_ui_suppression(transient_ui_ctx, arm, detected=popup_trigger is not None)
            suppress_scroll = decision.suppress
            suppression_capped = decision.capped
        effective_scroll = scroll and not suppress_scroll

        # get current x, y position of the page
        x: int | None = None
        y: int | None = None
        try:
            x, y = await skyvern_frame.get_scroll_x_y()
            LOG.debug("Current x, y position of the page before scraping", x=x, y=y)
        except Exception:
            LOG.warning("Failed to get current x, y position of the page", exc_info=True)

        _tracer = otel_trace.get_tracer("skyvern")
        with traced_span(_tracer, "skyvern.browser.scrape_screenshot") as _ss_span:
            apply_context_attrs(_ss_span)
            # Hardcoded since this is an inline span, not a @traced method.
            # Update if scrape_web_unsafe is renamed.
            _ss_span.set_attribute("code.function", "scrape_web_unsafe.screenshot")
            _ss_span.set_attribute("code.namespace", __name__)
            _ss_span.set_attribute("max_screenshot_number", max_screenshot_number)
            _ss_span.set_attribute("draw_boxes", draw_boxes)
            _ss_span.set_attribute("scroll", scroll)
            _ss_span.set_attribute("effective_scroll", effective_scroll)
            if arm != "off":
                _ss_span.set_attribute("transient_ui_arm", arm)
            if popup_trigger is not None:
                _ss_span.set_attribute("transient_ui_detected", True)
                emit_transient_ui_popup_telemetry(_ss_span, popup_trigger)
                if suppress_scroll:
                    _ss_span.set_attribute("transient_ui_scroll_suppressed", True)
                if suppression_capped:
                    _ss_span.set_attribute("transient_ui_suppression_capped", True)
            _scrape_ctx = skyvern_context.current()
            if _scrape_ctx:
                if _scrape_ctx.scrape_trigger:
                    _ss_span.set_attribute("scrape_trigger", _scrape_ctx.scrape_trigger)
                if _scrape_ctx.scrape_screenshots_consumed is not None:
                    _ss_span.set_attribute("screenshots_consumed", _scrape_ctx.scrape_screenshots_consumed)
            screenshots = await SkyvernFrame.take_split_screenshots(
                page=page,
                url=url,
                draw_boxes=draw_boxes,
                max_number=max_screenshot_number,
                scroll=effective_scroll,
                engine_selection=browser_state.engine_selection,
            )
            _ss_span.set_attribute("screenshot_count", len(screenshots))
            _ss_span.set_attribute("screenshot_bytes", sum(len(s) for s in screenshots))

        # scroll back to the original x, y position of the page
        if x is not None and y is not None:
            await skyvern_frame.safe_scroll_to_x_y(x, y)
            LOG.debug("Scrolled back to the original x, y position of the page after scraping", x=x, y=y)

    id_to_css_dict, id_to_element_dict, id_to_frame_dict, id_to_element_hash, hash_to_element_ids = build_element_dict(
        elements
    )

    # if there are no elements, fail the scraping unless support_empty_page is True
    if not elements and not support_empty_page:
        raise NoElementFound()

    text_content = await get_frame_text(page.main_frame, scrape_exclude)

    html = ""
    window_dimension = None
    try:
        skyvern_frame = await SkyvernFrame.create_instance(frame=page, engine_selection=browser_state.engine_selection)
        html = await skyvern_frame.get_content()
        if page.viewport_size:
            window_dimension = Resolution(width=page.viewport_size["width"], height=page.viewport_size["height"])
    except Exception:
        LOG.error(
            "Failed out to get HTML content",
            url=url,
            exc_info=True,
        )

    _record_scrape_span_attrs(
        elements=elements,
        html=html,
        text_content=text_content,
        url=url,
        take_screenshots=take_screenshots,
        draw_boxes=draw_boxes,
        scroll=scroll,
        max_screenshot_number=max_screenshot_number,
        screenshots=screenshots,
        id_to_frame_dict=id_to_frame_dict,
        empty_page_retry=empty_page_retry,
    )

    advance_observation_epoch(
        page, main_frame_url=page.main_frame.url, element_hashes=id_to_element_hash, destinations=destinations
    )

    return ScrapedPage(
        elements=elements,
        id_to_css_dict=id_to_css_dict,
        id_to_element_dict=id_to_element_dict,
        id_to_frame_dict=id_to_frame_dict,
        id_to_element_hash=id_to_element_hash,
        hash_to_element_ids=hash_to_element_ids,
        element_tree=element_tree,
        element_tree_trimmed=element_tree_trimmed,
        screenshots=screenshots,
        url=url,
        html=html,
        extracted_text=text_content,
        window_dimension=window_dimension,
        _browser_state=browser_state,
        _clean_up_func=cleanup_element_tree,
        _scrape_exclude=scrape_exclude,
    )


async def get_all_children_frames(page: Page) -> list[Frame]:
    start_index = 0
    frames = page.main_frame.child_frames

    while start_index < len(frames):
        frame = frames[start_index]
        start_index += 1
        frames.extend(frame.child_frames)

    return frames


async def filter_frames(
    frames: list[Frame], scrape_exclude: ScrapeExcludeFunc | None = None
) -> tuple[list[Frame], list[dict]]:
    """Split ``frames`` into the ones to scrape and any placeholder nodes to inject.

    Placeholder nodes come from ``scrape_exclude`` callbacks that skip a frame but want
    a non-interactable signal node left in its place (e.g. a cross-origin captcha the
    element tree cannot otherwise reach). Identical placeholders are de-duplicated so a
    vendor rendering the same widget across several frames only surfaces once.
    """
    filtered_frames: list[Frame] = []
    placeholder_nodes: list[dict] = []
    for frame in frames:
        if frame.is_detached():
            continue

        if scrape_exclude is None:
            filtered_frames.append(frame)
            continue

        try:
            frame_page = frame.page
        except AssertionError:
            # Playwright's Frame.page asserts self._page; a frame can detach between
            # the is_detached() check above and here, leaving _page unset.
            continue

        decision = await scrape_exclude(frame_page, frame)
        if decision.placeholder is not None and decision.placeholder not in placeholder_nodes:
            placeholder_nodes.append(decision.placeholder)
        if decision.exclude:
            continue

        filtered_frames.append(frame)
    return filtered_frames, placeholder_nodes


def _attach_frame_subtree(nodes: list[dict], skyvern_id: str, subtree: list[dict]) -> bool:
    """Give the nested tree's iframe node its frame's children. True when the node was found."""
    for node in nodes:
        if node.get("id") == skyvern_id:
            node["children"] = subtree
            return True
        if _attach_frame_subtree(node.get("children") or [], skyvern_id, subtree):
            return True
    return False


async def add_frame_interactable_elements(
    frame: Frame,
    frame_index: int,
    elements: list[dict],
    element_tree: list[dict],
    destinations: dict[str, dict],
    must_included_tags: list[str] | None = None,
    engine_selection: "BrowserEngineSelection | None" = None,
) -> tuple[list[dict], list[dict]]:
    """
    Add the interactable element of the frame to the elements and element_tree.
    """
    try:
        frame_element = await frame.frame_element()
        # it will get stuck when we `frame.evaluate()` on an invisible iframe
        if not await frame_element.is_visible():
            return elements, element_tree
        skyvern_id = await frame_element.get_attribute(SKYVERN_ID_ATTR)
        if not skyvern_id:
            LOG.info(
                "No Skyvern id found for frame, skipping",
                frame_index=frame_index,
                attr=SKYVERN_ID_ATTR,
            )
            return elements, element_tree
    except Exception:
        LOG.warning(
            "Unable to get Skyvern id from frame_element",
            attr=SKYVERN_ID_ATTR,
            exc_info=True,
        )
        return elements, element_tree

    try:
        skyvern_frame = await SkyvernFrame.create_instance(frame, engine_selection=engine_selection)
        await _wait_for_scrape_ready(skyvern_frame)

        frame_elements, frame_element_tree, frame_destinations = await skyvern_frame.build_tree_from_body(
            frame_name=skyvern_id, frame_index=frame_index, must_included_tags=must_included_tags
        )
        destinations.update(frame_destinations)

        # Both structures have to be written. `elements` is flat and `element_tree` is nested, and
        # buildTreeFromBody returns the same dict objects in both -- but only some engines preserve
        # that sharing across the evaluate boundary. Playwright's deserializer revives repeated
        # objects by reference, so one write used to reach both; a raw-CDP `returnByValue` is a JSON
        # round-trip, which copies them, so the flat write left the tree's iframe node empty and the
        # model was shown `<iframe></iframe>`. Writing both is a no-op on an aliasing engine.
        attached_to_tree = _attach_frame_subtree(element_tree, skyvern_id, frame_element_tree)
        for element in elements:
            if element["id"] == skyvern_id:
                element["children"] = frame_element_tree

        if not attached_to_tree:
            # The iframe is in the flat list but absent from the nested tree, so its contents would be
            # invisible to the model with nothing in the logs to say why. That is the failure this
            # whole function exists to avoid, so it is worth a line.
            LOG.warning(
                "Frame subtree could not be attached: no matching node in the element tree",
                frame_id=skyvern_id,
                frame_index=frame_index,
            )

        elements = elements + frame_elements
    except Exception:
        LOG.warning("Failed to build the tree of the frame, skipping frame", frame_id=skyvern_id, exc_info=True)

    return elements, element_tree


@traced(name="skyvern.agent.element_tree")
async def get_interactable_element_tree(
    page: Page,
    scrape_exclude: ScrapeExcludeFunc | None = None,
    must_included_tags: list[str] | None = None,
    engine_selection: "BrowserEngineSelection | None" = None,
) -> tuple[list[dict], list[dict], dict[str, dict]]:
    """
    Get the element tree of the page, including all the elements that are interactable.
    :param page: Page instance to get the element tree from.
    :return: Tuple of the interactable elements, the element tree, and the per-element
        destination-facts sidecar stripped out of them at the SkyvernFrame boundary.
    """
    # main page index is 0
    skyvern_page = await SkyvernFrame.create_instance(page, engine_selection=engine_selection)
    elements, element_tree, destinations = await skyvern_page.build_tree_from_body(
        frame_name="main.frame", frame_index=0, must_included_tags=must_included_tags
    )

    context = skyvern_context.ensure_context()
    all_frames = await get_all_children_frames(page)
    frames, placeholder_nodes = await filter_frames(all_frames, scrape_exclude)
    # Iframe-heavy pages dominate the 1.8s p95 here; frame_count lets us
    # slice element_tree latency by page complexity.
    otel_trace.get_current_span().set_attribute("frame_count", len(frames))

    for frame in frames:
        frame_index = context.frame_index_map.get(frame, None)
        if frame_index is None:
            frame_index = len(context.frame_index_map) + 1
            context.frame_index_map[frame] = frame_index

    for frame in frames:
        frame_index = context.frame_index_map[frame]
        elements, element_tree = await add_frame_interactable_elements(
            frame,
            frame_index,
            elements,
            element_tree,
            destinations,
            must_included_tags,
            engine_selection,
        )

    # Placeholder nodes stand in for frames the filter skipped but wants the LLM to
    # still see (e.g. a cross-origin captcha inside a closed shadow root). They join the
    # element tree only — never ``elements`` — so they can never become a click target.
    element_tree.extend(placeholder_nodes)

    return elements, element_tree, destinations


class IncrementalScrapePage(ElementTreeBuilder):
    def __init__(
        self,
        skyvern_frame: SkyvernFrame,
        engine_selection: "BrowserEngineSelection | None" = None,
    ) -> None:
        self.id_to_element_dict: dict[str, dict] = dict()
        self.id_to_css_dict: dict[str, str] = dict()
        self.elements: list[dict] = list()
        self.element_tree: list[dict] = list()
        self.element_tree_trimmed: list[dict] = list()
        self.skyvern_frame = skyvern_frame
        # The logical run's pinned engine, so the wait-until-finished retry recognizes THIS engine's
        # native analysis timeout; None (default) preserves the stock Playwright timeout identity.
        self.engine_selection = engine_selection
        self.last_used_element_tree_html: str | None = None

    def set_element_tree_trimmed(self, element_tree_trimmed: list[dict]) -> None:
        self.element_tree_trimmed = element_tree_trimmed

    def check_id_in_page(self, element_id: str) -> bool:
        css_selector = self.id_to_css_dict.get(element_id, "")
        if css_selector:
            return True
        return False

    @traced(name="skyvern.agent.incremental_element_tree")
    async def get_incremental_element_tree(
        self,
        cleanup_element_tree: CleanupElementTreeFunc,
    ) -> list[dict]:
        frame = self.skyvern_frame.get_frame()

        try:
            incremental_elements, incremental_tree = await self.skyvern_frame.get_incremental_element_tree(
                wait_until_finished=True
            )
        except Exception as e:
            if not _is_page_analysis_timeout(self.engine_selection, e):
                raise
            LOG.warning(
                "Timeout to get incremental elements with wait_until_finished, going to get incremental elements without waiting",
            )
            incremental_elements, incremental_tree = await self.skyvern_frame.get_incremental_element_tree(
                wait_until_finished=False
            )

        # we listen the incremental elements seperated by frames, so all elements will be in the same SkyvernFrame
        self.id_to_css_dict, self.id_to_element_dict, _, _, _ = build_element_dict(incremental_elements)

        self.elements = incremental_elements

        incremental_tree = await cleanup_element_tree(frame, frame.url, _deepcopy_element_tree(incremental_tree))
        trimmed_element_tree = trim_element_tree(_deepcopy_element_tree(incremental_tree))

        self.element_tree = incremental_tree
        self.element_tree_trimmed = trimmed_element_tree

        return self.element_tree_trimmed

    async def start_listen_dom_increment(self, element: ElementHandle | None = None) -> None:
        js_script = "async (element) => await startGlobalIncrementalObserver(element)"
        await SkyvernFrame.evaluate(frame=self.skyvern_frame.get_frame(), expression=js_script, arg=element)

    async def stop_listen_dom_increment(self) -> None:
        # check if the DOM has navigated away or refreshed
        js_script = "() => window.globalObserverForDOMIncrement === undefined"
        if await SkyvernFrame.evaluate(frame=self.skyvern_frame.get_frame(), expression=js_script):
            return
        js_script = "async () => await stopGlobalIncrementalObserver()"
        await SkyvernFrame.evaluate(
            frame=self.skyvern_frame.get_frame(),
            expression=js_script,
            timeout_ms=SettingsManager.get_settings().BROWSER_SCRAPING_BUILDING_ELEMENT_TREE_TIMEOUT_MS,
        )

    async def get_incremental_elements_num(self) -> int:
        # check if the DOM has navigated away or refreshed
        js_script = "() => window.globalOneTimeIncrementElements === undefined"
        if await SkyvernFrame.evaluate(frame=self.skyvern_frame.get_frame(), expression=js_script):
            return 0

        js_script = "() => window.globalOneTimeIncrementElements.length"
        return await SkyvernFrame.evaluate(frame=self.skyvern_frame.get_frame(), expression=js_script)

    async def __validate_element_by_value(self, value: str, element: dict) -> tuple[Locator | None, bool]:
        """
        Locator: the locator of the matched element. None if no valid element to interact;
        bool: is_matched. True, found an intercatable alternative one; False, not found  any alternative;

        If is_matched is True, but Locator is None. It means the value is matched, but the current element is non-interactable
        """

        interactable = element.get("interactable", False)
        element_id = element.get("id", "")

        parent_locator: Locator | None = None
        if element_id:
            parent_locator = self.skyvern_frame.get_frame().locator(f'[{SKYVERN_ID_ATTR}="{element_id}"]')

        # DFS to validate the children first:
        # if the child element matched and is interactable, return the child node directly
        # if the child element matched value but not interactable, try to interact with the parent node
        children = element.get("children", [])
        for child in children:
            child_locator, is_match = await self.__validate_element_by_value(value, child)
            if is_match:
                if child_locator:
                    return child_locator, True
                if interactable and parent_locator and await parent_locator.count() > 0:
                    return parent_locator, True
                return None, True

        if not parent_locator:
            return None, False

        text = element.get("text", "")
        if text != value:
            return None, False

        if await parent_locator.count() == 0:
            return None, False

        if not interactable:
            LOG.debug("Find the target element by text, but the element is not interactable", text=text)
            return None, True

        return parent_locator, True

    async def select_one_element_by_value(self, value: str) -> Locator | None:
        for element in self.element_tree:
            locator, _ = await self.__validate_element_by_value(value=value, element=element)
            if locator:
                return locator
        return None

    def build_html_tree(self, element_tree: list[dict] | None = None, need_skyvern_attrs: bool = True) -> str:
        return "".join(
            [
                json_to_html(element, need_skyvern_attrs=need_skyvern_attrs)
                for element in (element_tree or self.element_tree_trimmed)
            ]
        )

    def support_economy_elements_tree(self) -> bool:
        return False

    def support_lean_elements_tree(self) -> bool:
        return False

    def build_element_tree(
        self, fmt: ElementTreeFormat = ElementTreeFormat.HTML, html_need_skyvern_attrs: bool = True
    ) -> str:
        if fmt == ElementTreeFormat.HTML:
            return self.build_html_tree(
                element_tree=self.element_tree_trimmed, need_skyvern_attrs=html_need_skyvern_attrs
            )
        if fmt == ElementTreeFormat.JSON:
            return json.dumps(self.element_tree_trimmed)

        raise UnknownElementTreeFormat(fmt=fmt)

    def build_economy_elements_tree(
        self,
        fmt: ElementTreeFormat = ElementTreeFormat.HTML,
        html_need_skyvern_attrs: bool = True,
        percent_to_keep: float = 1,
    ) -> str:
        raise NotImplementedError("Not implemented")

    def build_lean_elements_tree(
        self,
        fmt: ElementTreeFormat = ElementTreeFormat.HTML,
        html_need_skyvern_attrs: bool = True,
        *,
        compress_long_href: bool = False,
        compress_image_src: bool = False,
        strip_url_query_strings: bool = False,
        compress_nonnavigable_href: bool = False,
    ) -> str:
        raise NotImplementedError("Not implemented")


def _should_keep_unique_id(element: dict) -> bool:
    # case where we shouldn't keep unique_id
    # 1. no readonly attr and not disable attr and no interactable
    # 2. readonly=false and disable=false and interactable=false

    if element.get("hoverOnly"):
        return True

    attributes = element.get("attributes", {})
    if (
        "disabled" not in attributes
        and "aria-disabled" not in attributes
        and "readonly" not in attributes
        and "aria-readonly" not in attributes
    ):
        return element.get("interactable", False)

    disabled = attributes.get("disabled")
    aria_disabled = attributes.get("aria-disabled")
    readonly = attributes.get("readonly")
    aria_readonly = attributes.get("aria-readonly")
    if disabled or aria_disabled or readonly or aria_readonly:
        return True
    return element.get("interactable", False)


def trim_element(element: dict) -> dict:
    queue = [element]
    while queue:
        queue_ele = queue.pop(0)
        if "frame" in queue_ele:
            del queue_ele["frame"]

        if "frame_index" in queue_ele:
            del queue_ele["frame_index"]

        if "id" in queue_ele and not _should_keep_unique_id(queue_ele):
            del queue_ele["id"]

        if "attributes" in queue_ele:
            new_attributes = _trimmed_base64_data(queue_ele["attributes"])
            if new_attributes:
                queue_ele["attributes"] = new_attributes
            else:
                del queue_ele["attributes"]

        if "attributes" in queue_ele and not queue_ele.get("keepAllAttr", False):
            has_pseudo = bool(queue_ele.get("beforePseudoText") or queue_ele.get("afterPseudoText"))
            is_icon_only = (
                queue_ele.get("interactable", False) and not str(queue_ele.get("text", "")).strip() and has_pseudo
            )
            new_attributes = _trimmed_attributes(queue_ele["attributes"], keep_class=is_icon_only)
            if new_attributes:
                queue_ele["attributes"] = new_attributes
            else:
                del queue_ele["attributes"]
        # remove the tag, don't need it in the HTML tree
        if "keepAllAttr" in queue_ele:
            del queue_ele["keepAllAttr"]

        if "children" in queue_ele:
            queue.extend(queue_ele["children"])
            if not queue_ele["children"]:
                del queue_ele["children"]
        if "text" in queue_ele:
            element_text = str(queue_ele["text"]).strip()
            if not element_text:
                del queue_ele["text"]

        if (
            "attributes" in queue_ele
            and "name" in queue_ele["attributes"]
            and len(queue_ele["attributes"]["name"]) > 500
        ):
            queue_ele["attributes"]["name"] = queue_ele["attributes"]["name"][:500]

        if "beforePseudoText" in queue_ele and not queue_ele.get("beforePseudoText"):
            del queue_ele["beforePseudoText"]

        if "afterPseudoText" in queue_ele and not queue_ele.get("afterPseudoText"):
            del queue_ele["afterPseudoText"]

    return element


def trim_element_tree(elements: list[dict]) -> list[dict]:
    for element in elements:
        trim_element(element)
    return elements


def _trimmed_base64_data(attributes: dict) -> dict:
    new_attributes: dict = {}

    for key in attributes:
        if key in BASE64_INCLUDE_ATTRIBUTES and "data:" in attributes.get(key, ""):
            continue
        new_attributes[key] = attributes[key]

    return new_attributes


def _trimmed_attributes(attributes: dict, *, keep_class: bool = False) -> dict:
    new_attributes: dict = {}
    reserved_attributes = _reserved_attributes_for_context()

    for key in attributes:
        if key == "role" and attributes[key] in ["listbox", "option"]:
            new_attributes[key] = attributes[key]
        if key in reserved_attributes:
            new_attributes[key] = attributes[key]

    if keep_class and "class" in attributes:
        cls = str(attributes["class"])
        if len(cls) > 100:
            last_space = cls.rfind(" ", 0, 100)
            cls = cls[: last_space if last_space > 0 else 100]
        new_attributes["class"] = cls

    return new_attributes


def _remove_unique_id(element: dict) -> None:
    if "attributes" not in element:
        return
    if SKYVERN_ID_ATTR in element["attributes"]:
        del element["attributes"][SKYVERN_ID_ATTR]


def _build_element_links(elements: list[dict]) -> None:
    """
    Build the links for listbox. A listbox could be mapped back to another element if:
        1. The listbox element's text matches context or text of an element
    """
    # first, build mapping between text/context and elements
    text_to_elements_map: dict[str, list[dict]] = defaultdict(list)
    context_to_elements_map: dict[str, list[dict]] = defaultdict(list)
    for element in elements:
        if "text" in element:
            text_to_elements_map[element["text"]].append(element)
        if "context" in element:
            context_to_elements_map[element["context"]].append(element)

    # then, build the links from element to listbox elements
    for element in elements:
        if not (
            "attributes" in element and "role" in element["attributes"] and "listbox" == element["attributes"]["role"]
        ):
            continue
        listbox_text = element["text"] if "text" in element else ""

        # WARNING: If a listbox has really little commont content (yes/no, etc.),
        #   it might have conflict and will connect to wrong element
        # if len(listbox_text) < 10:
        #     # do not support small listbox text for now as it's error proning. larger text match is more reliable
        #     LOG.info("Skip because too short listbox text", listbox_text=listbox_text)
        #     continue

        for text, linked_elements in text_to_elements_map.items():
            if listbox_text in text:
                for linked_element in linked_elements:
                    if linked_element["id"] != element["id"]:
                        LOG.info(
                            "Match listbox to target element text",
                            listbox_text=listbox_text,
                            text=text,
                            listbox_id=element["id"],
                            linked_element_id=linked_element["id"],
                        )
                        linked_element["linked_element"] = element["id"]

        for context, linked_elements in context_to_elements_map.items():
            if listbox_text in context:
                for linked_element in linked_elements:
                    if linked_element["id"] != element["id"]:
                        LOG.info(
                            "Match listbox to target element context",
                            listbox_text=listbox_text,
                            context=context,
                            listbox_id=element["id"],
                            linked_element_id=linked_element["id"],
                        )
                        linked_element["linked_element"] = element["id"]
