"""
Built-in approval backends for PraisonAI Agents.

Provides lightweight backends that ship with the core SDK:

- **AutoApproveBackend** — always approves (bots, trusted envs).
- **ConsoleBackend** — interactive Rich terminal prompt (CLI default).
- **AgentApproval** — delegates approval decision to another AI agent.
"""

from __future__ import annotations

import asyncio
from praisonaiagents._logging import get_logger
from typing import Any

from .protocols import ApprovalDecision, ApprovalRequest

logger = get_logger(__name__)

# Lazy Rich imports (same pattern as old approval.py)
_rich_console = None
_rich_panel = None
_rich_confirm = None

def _get_rich_console():
    global _rich_console
    if _rich_console is None:
        from rich.console import Console
        _rich_console = Console
    return _rich_console

def _get_rich_panel():
    global _rich_panel
    if _rich_panel is None:
        from rich.panel import Panel
        _rich_panel = Panel
    return _rich_panel

def _get_rich_confirm():
    global _rich_confirm
    if _rich_confirm is None:
        from rich.prompt import Confirm
        _rich_confirm = Confirm
    return _rich_confirm

_rich_prompt = None

def _get_rich_prompt():
    global _rich_prompt
    if _rich_prompt is None:
        from rich.prompt import Prompt
        _rich_prompt = Prompt
    return _rich_prompt

def _suggest_scope_pattern(request: ApprovalRequest) -> str:
    """Return a reusable "always" pattern for *request* (best-effort).

    Bridges the tool call to a :class:`PermissionManager`-style target and
    generalises shell commands into a reusable prefix glob. Never raises —
    falls back to the raw target so the prompt always has something to show.
    """
    from .utils import build_permission_target
    target = build_permission_target(request.tool_name, request.arguments)
    try:
        from ..permissions import PermissionManager
        return PermissionManager(agent_name=request.agent_name).suggest_scope_pattern(target)
    except Exception:  # noqa: BLE001 — suggestion is advisory only
        return target

class AutoApproveBackend:
    """Always approves.  Use for bots or trusted unattended environments."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(approved=True, reason="auto-approved", approver="system")

    def request_approval_sync(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(approved=True, reason="auto-approved", approver="system")

class ConsoleBackend:
    """Interactive Rich terminal prompt.  Default for CLI usage."""

    def _prompt_user(self, request: ApprovalRequest):
        """Show Rich panel and ask once/session/always/no/deny-with-guidance.

        Returns a ``(approved, scope, scope_pattern, feedback)`` tuple where
        ``scope`` is one of ``"once"`` / ``"session"`` / ``"always"`` and
        ``scope_pattern`` is the reusable target to persist for ``always``
        (``None`` otherwise). ``feedback`` carries optional free-text guidance
        captured by the "deny & redirect" choice (``None`` otherwise).
        A plain denial returns ``(False, "once", None, None)``.
        """
        Console = _get_rich_console()
        Panel = _get_rich_panel()
        Prompt = _get_rich_prompt()

        console = Console()

        risk_colors = {
            "critical": "bold red",
            "high": "red",
            "medium": "yellow",
            "low": "blue",
        }
        risk_color = risk_colors.get(request.risk_level, "white")

        tool_info = f"[bold]Function:[/] {request.tool_name}\n"
        tool_info += f"[bold]Risk Level:[/] [{risk_color}]{request.risk_level.upper()}[/{risk_color}]\n"
        if request.agent_name:
            tool_info += f"[bold]Agent:[/] {request.agent_name}\n"
        tool_info += "[bold]Arguments:[/]\n"
        for key, value in request.arguments.items():
            str_value = str(value)
            if len(str_value) > 100:
                str_value = str_value[:97] + "..."
            tool_info += f"  {key}: {str_value}\n"

        console.print(Panel(
            tool_info.strip(),
            title="🔒 Tool Approval Required",
            border_style=risk_color,
            title_align="left",
        ))

        suggested = _suggest_scope_pattern(request)
        always_label = f"always ({suggested})" if suggested else "always"

        try:
            console.print(
                f"[{risk_color}]Allow {request.tool_name}?[/{risk_color}]  "
                f"[o] once   [s] this session   [a] {always_label}   "
                f"[n] no   [d] deny & redirect"
            )
            choice = Prompt.ask(
                "Choice",
                choices=["o", "s", "a", "n", "d"],
                default="n",
            )
        except (KeyboardInterrupt, EOFError):
            return (False, "once", None, None)

        if choice == "n":
            return (False, "once", None, None)
        if choice == "d":
            try:
                feedback = Prompt.ask("What should the agent do instead?").strip()
            except (KeyboardInterrupt, EOFError):
                feedback = ""
            return (False, "once", None, feedback or None)
        if choice == "s":
            return (True, "session", None, None)
        if choice == "a":
            return (True, "always", suggested or None, None)
        return (True, "once", None, None)

    def request_approval_sync(self, request: ApprovalRequest) -> ApprovalDecision:
        """Synchronous approval via Rich console prompt."""
        try:
            approved, scope, scope_pattern, feedback = self._prompt_user(request)
            if approved:
                return ApprovalDecision(
                    approved=True,
                    reason=f"User approved ({scope})",
                    approver="console",
                    scope=scope,
                    scope_pattern=scope_pattern,
                )
            reason = f"User denied: {feedback}" if feedback else "User denied"
            return ApprovalDecision(
                approved=False,
                reason=reason,
                approver="console",
                feedback=feedback,
            )
        except Exception as e:
            logger.error("Console approval error: %s", e)
            return ApprovalDecision(approved=False, reason=f"Approval error: {e}")

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Async wrapper — runs the sync prompt in an executor."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.request_approval_sync, request)

class AgentApproval:
    """Delegates approval decisions to another AI agent.

    The approver agent receives a structured prompt describing the tool call
    and responds with ``APPROVE`` or ``DENY``.  This enables autonomous
    multi-agent approval workflows without human intervention.

    Lives in the core SDK because it only depends on the Agent class which
    is already in core — no external dependencies.

    Args:
        approver_agent: An Agent instance that will evaluate approval requests.
            If ``None``, a default approver agent is created with sensible
            instructions.
        llm: LLM model to use for the default approver agent (default ``gpt-4o-mini``).

    Example::

        from praisonaiagents import Agent
        from praisonaiagents.approval import AgentApproval

        approver = Agent(
            name="security-reviewer",
            instructions="Only approve low-risk read operations. Deny anything destructive.",
        )
        worker = Agent(
            name="worker",
            tools=[execute_command],
            approval=AgentApproval(approver_agent=approver),
        )
    """

    def __init__(
        self,
        approver_agent: Any = None,
        llm: str = "gpt-4o-mini",
    ):
        self._approver_agent = approver_agent
        self._llm = llm

    def __repr__(self) -> str:
        name = getattr(self._approver_agent, "name", None) or "default"
        return f"AgentApproval(approver={name!r})"

    def _get_approver(self) -> Any:
        """Lazily create or return the approver agent."""
        if self._approver_agent is not None:
            return self._approver_agent

        # Lazy import to avoid circular dependency at module level
        from praisonaiagents.agent.agent import Agent

        self._approver_agent = Agent(
            name="approval-reviewer",
            instructions=(
                "You are a security reviewer for tool execution requests. "
                "Evaluate each request and respond with exactly one word: "
                "APPROVE or DENY. Consider the tool name, arguments, and risk level. "
                "Deny anything that looks destructive, dangerous, or unauthorized. "
                "Approve safe read-only operations."
            ),
            llm=self._llm,
        )
        return self._approver_agent

    def _build_prompt(self, request: ApprovalRequest) -> str:
        """Build the evaluation prompt for the approver agent."""
        args_str = "\n".join(
            f"  {k}: {v}" for k, v in request.arguments.items()
        ) or "  (none)"

        return (
            f"Tool Approval Request:\n"
            f"  Tool: {request.tool_name}\n"
            f"  Risk Level: {request.risk_level.upper()}\n"
            f"  Agent: {request.agent_name or 'unknown'}\n"
            f"  Arguments:\n{args_str}\n\n"
            f"Respond with exactly one word: APPROVE or DENY"
        )

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask the approver agent to evaluate the request."""
        try:
            approver = self._get_approver()
            prompt = self._build_prompt(request)

            # Use the agent's chat method
            if hasattr(approver, "achat"):
                response = await approver.achat(prompt)
            elif hasattr(approver, "chat"):
                loop = asyncio.get_running_loop()
                response = await loop.run_in_executor(None, approver.chat, prompt)
            else:
                return ApprovalDecision(
                    approved=False,
                    reason="Approver agent has no chat method",
                )

            response_text = str(response).strip().upper()
            approved = "APPROVE" in response_text and "DENY" not in response_text

            return ApprovalDecision(
                approved=approved,
                reason=f"Agent {'approved' if approved else 'denied'}: {str(response).strip()[:200]}",
                approver=getattr(approver, "name", "agent"),
                metadata={"platform": "agent", "response": str(response).strip()[:500]},
            )

        except Exception as e:
            logger.error(f"AgentApproval error: {e}")
            return ApprovalDecision(
                approved=False,
                reason=f"Agent approval error: {e}",
            )

    def request_approval_sync(self, request: ApprovalRequest) -> ApprovalDecision:
        """Synchronous wrapper."""
        from .utils import run_coroutine_safely
        return run_coroutine_safely(self.request_approval(request), timeout=60)

class CallbackBackend:
    """Wraps a legacy ``(function_name, arguments, risk_level) -> ApprovalDecision`` callback
    into an :class:`ApprovalProtocol`-compatible backend.

    Used internally by :func:`set_approval_callback` for backward compatibility.
    """

    def __init__(self, callback):
        self._callback = callback

    def request_approval_sync(self, request: ApprovalRequest) -> ApprovalDecision:
        result = self._callback(request.tool_name, request.arguments, request.risk_level)
        if isinstance(result, ApprovalDecision):
            return result
        # Legacy callbacks may return dict-like or bool
        if isinstance(result, bool):
            return ApprovalDecision(approved=result)
        return ApprovalDecision(approved=bool(result))

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        if asyncio.iscoroutinefunction(self._callback):
            result = await self._callback(request.tool_name, request.arguments, request.risk_level)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(
                None, self._callback, request.tool_name, request.arguments, request.risk_level,
            )
        if isinstance(result, ApprovalDecision):
            return result
        if isinstance(result, bool):
            return ApprovalDecision(approved=result)
        return ApprovalDecision(approved=bool(result))
