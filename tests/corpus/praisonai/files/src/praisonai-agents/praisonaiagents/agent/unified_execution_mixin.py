"""
Unified Execution Mixin - implements Gap 1 from Issue #1392.

.. deprecated::
    UnifiedExecutionMixin is unused and scheduled for removal (Issue #2644).
    None of its methods are invoked by production code: the live execution paths
    use ``_chat_impl`` / ``_execute_unified_chat_completion`` (in ``chat_mixin.py``)
    and ``execute_tool`` (in ``tool_execution.py``), which are distinct from this
    mixin's methods despite the similar names. This module remains importable and
    emits a ``DeprecationWarning`` from its public methods during the deprecation
    window; it will be removed from the ``Agent`` MRO after the cycle completes.
    Use ``Agent.chat()`` / ``Agent.achat()`` / ``Agent.execute_tool()`` instead.

This module consolidates sync/async execution paths into a single async-first 
implementation with a thin sync bridge, eliminating code duplication between
chat()/achat() and execute_tool()/execute_tool_async().

Architecture:
- Single async core: _unified_chat_impl() contains all business logic
- Sync bridge: chat() delegates to asyncio.run() or run_coroutine_threadsafe
- Maintains full backward compatibility for public APIs
- Zero performance regression (sync calls still work efficiently)

Design principles:
- Protocol-driven: follows existing chat_mixin patterns
- DRY: eliminates duplicate retrieval, hooks, guardrail, tool logic
- Agent-centric: preserves all existing Agent functionality
- Async-safe: handles event loop management correctly
"""

import asyncio
import logging
import threading
import warnings
from typing import List, Optional, Any, Dict, Union
from concurrent.futures import ThreadPoolExecutor

logger = logging.getLogger(__name__)

_DEPRECATION_MESSAGE = (
    "UnifiedExecutionMixin is unused and scheduled for removal (Issue #2644); "
    "no production path calls its methods. Use Agent.chat() / Agent.achat() / "
    "Agent.execute_tool() instead."
)


def _warn_deprecated() -> None:
    """Emit a DeprecationWarning for the unused UnifiedExecutionMixin public API."""
    warnings.warn(_DEPRECATION_MESSAGE, DeprecationWarning, stacklevel=3)


class UnifiedExecutionMixin:
    """
    Mixin providing unified sync/async execution for Agent class.

    .. deprecated::
        Unused and scheduled for removal (Issue #2644). Its public methods emit a
        ``DeprecationWarning``. Use ``Agent.chat()`` / ``Agent.achat()`` /
        ``Agent.execute_tool()`` instead.

    This replaces the duplicated logic between chat/achat and execute_tool/execute_tool_async
    with a single async-first implementation plus sync bridge.
    """
    
    async def _unified_chat_impl(
        self,
        prompt: str,
        temperature: float = 1.0,
        tools: Optional[List[Any]] = None,
        output_json: Optional[Any] = None,
        output_pydantic: Optional[Any] = None,
        reasoning_steps: bool = False,
        stream: Optional[bool] = None,
        task_name: Optional[str] = None,
        task_description: Optional[str] = None,
        task_id: Optional[str] = None,
        config: Optional[Dict[str, Any]] = None,
        force_retrieval: bool = False,
        skip_retrieval: bool = False,
        attachments: Optional[List[str]] = None,
        tool_choice: Optional[str] = None
    ) -> Optional[str]:
        """
        Unified async implementation for chat functionality.
        
        Contains all business logic that was previously duplicated between 
        _chat_impl and _achat_impl. Both sync and async entry points delegate here.
        
        This is the single source of truth for:
        - Retrieval logic and context building
        - Hook dispatch (BEFORE_AGENT, AFTER_AGENT)
        - Guardrail application
        - Tool invocation with parallel execution support
        - Memory storage and context assembly
        - Response template application
        - Session management and persistence
        """
        from ..hooks import HookEvent, BeforeAgentInput
        from ..trace.context_events import get_context_emitter
        import time
        import os
        
        # Emit context trace event (zero overhead when not set)
        _trace_emitter = get_context_emitter()
        _trace_emitter.agent_start(self.name, {"role": self.role, "goal": self.goal})
        
        # Reset loop guard for new chat turn (always-on protection)
        if hasattr(self, '_ensure_loop_guard'):
            self._ensure_loop_guard().reset_turn()
        
        try:
            # Runtime resolution - check for model-scoped runtime before legacy CLI backend
            runtime_instance = None
            if getattr(self, '_runtime_config', None) is not None:
                runtime_instance = await self._resolve_turn_runtime()
            
            # Model-scoped runtime routing - delegate entire turn to resolved runtime
            if runtime_instance is not None:
                return await self._chat_via_runtime(
                    runtime_instance=runtime_instance,
                    prompt=prompt,
                    temperature=temperature,
                    tools=tools,
                    output_json=output_json,
                    output_pydantic=output_pydantic,
                    reasoning_steps=reasoning_steps,
                    stream=stream,
                    task_name=task_name,
                    task_description=task_description,
                    task_id=task_id,
                    config=config,
                    force_retrieval=force_retrieval,
                    skip_retrieval=skip_retrieval,
                    attachments=attachments,
                    tool_choice=tool_choice
                )
            elif hasattr(self, '_cli_backend') and self._cli_backend is not None:
                # CLI Backend routing - delegate entire turn if configured
                # Note: Turn-time resolution placeholder is in place for future backend switching
                return await self._chat_via_cli_backend(
                    prompt=prompt,
                    temperature=temperature,
                    tools=tools,
                    output_json=output_json,
                    output_pydantic=output_pydantic,
                    reasoning_steps=reasoning_steps,
                    stream=stream,
                    task_name=task_name,
                    task_description=task_description,
                    task_id=task_id,
                    config=config,
                    force_retrieval=force_retrieval,
                    skip_retrieval=skip_retrieval,
                    attachments=attachments,
                    tool_choice=tool_choice
                )
            # Apply rate limiter if configured (before any LLM call)
            if hasattr(self, '_rate_limiter') and self._rate_limiter is not None:
                await self._rate_limiter.acquire_async()
            
            # Process ephemeral attachments (DRY - builds multimodal prompt)
            # IMPORTANT: Original text 'prompt' is stored in history, attachments are NOT
            llm_prompt = self._build_multimodal_prompt(prompt, attachments) if attachments else prompt
            
            # Apply response template if configured
            effective_template = getattr(self, 'response_template', None) or getattr(self, '_output_template', None)
            if effective_template:
                template_instruction = f"\n\nIMPORTANT: Format your response according to this template:\n{effective_template}"
                if isinstance(llm_prompt, str):
                    llm_prompt = llm_prompt + template_instruction
                elif isinstance(llm_prompt, list):
                    # For multimodal prompts, append to the last text content
                    for i in range(len(llm_prompt) - 1, -1, -1):
                        if isinstance(llm_prompt[i], dict) and llm_prompt[i].get('type') == 'text':
                            llm_prompt[i]['text'] = llm_prompt[i]['text'] + template_instruction
                            break
            
            # Initialize DB session on first chat (lazy)
            if hasattr(self, '_init_db_session'):
                self._init_db_session()
            
            # Initialize session store for JSON-based persistence (lazy)
            if hasattr(self, '_init_session_store'):
                self._init_session_store()
            
            # Start a new run for this chat turn
            prompt_str = prompt if isinstance(prompt, str) else str(prompt)
            if hasattr(self, '_start_run'):
                self._start_run(prompt_str)

            # Trigger BEFORE_AGENT hook (unified async/sync handling)
            before_agent_input = BeforeAgentInput(
                session_id=getattr(self, '_session_id', 'default'),
                cwd=os.getcwd(),
                event_name=HookEvent.BEFORE_AGENT,
                timestamp=str(time.time()),
                agent_name=self.name,
                prompt=prompt_str,
                conversation_history=getattr(self, 'chat_history', []),
                tools_available=[
                    t.__name__ if hasattr(t, '__name__') else str(t) 
                    for t in (tools or getattr(self, 'tools', []))
                ]
            )
            
            # Execute hooks in async context (handles both sync and async hooks)
            hook_results = await self._hook_runner.execute(HookEvent.BEFORE_AGENT, before_agent_input)
            if self._hook_runner.is_blocked(hook_results):
                logging.warning(f"Agent {self.name} execution blocked by BEFORE_AGENT hook")
                return None
            
            # Update prompt if modified by hooks
            for res in hook_results:
                if res.output and res.output.modified_input and "prompt" in res.output.modified_input:
                    prompt = res.output.modified_input["prompt"]
                    llm_prompt = self._build_multimodal_prompt(prompt, attachments) if attachments else prompt

            # Reset the final display flag for each new conversation
            if hasattr(self, '_final_display_shown'):
                self._final_display_shown = False
            
            # Unified retrieval handling with policy-based decision (DRY)
            if getattr(self, '_knowledge_sources', None) or getattr(self, 'knowledge', None) is not None:
                if not getattr(self, '_knowledge_processed', False):
                    if hasattr(self, '_ensure_knowledge_processed'):
                        self._ensure_knowledge_processed()
                
                # Determine if we should retrieve based on policy
                should_retrieve = False
                if getattr(self, '_retrieval_config', None) is not None:
                    should_retrieve = self._retrieval_config.should_retrieve(
                        prompt_str,
                        force=force_retrieval,
                        skip=skip_retrieval
                    )
                elif not skip_retrieval:
                    # No config but knowledge exists - retrieve by default unless skipped
                    should_retrieve = True if force_retrieval else (getattr(self, 'knowledge', None) is not None)
                
                if should_retrieve and getattr(self, 'knowledge', None):
                    # Use unified retrieval path with token-aware context building
                    if hasattr(self, '_get_knowledge_context'):
                        knowledge_context, _ = self._get_knowledge_context(
                            prompt_str,
                            use_rag=True  # Use RAG pipeline for token-aware context
                        )
                        if knowledge_context:
                            if isinstance(llm_prompt, str):
                                llm_prompt = f"{llm_prompt}\n\nKnowledge: {knowledge_context}"
                            # For multimodal prompts, we could append to text content here
            
            # Use agent's stream setting if not explicitly provided
            if stream is None:
                stream = getattr(self, 'stream', False)
            
            reasoning_steps = reasoning_steps or getattr(self, 'reasoning_steps', False)
            
            # Default to self.tools if tools argument is None
            if tools is None:
                tools = getattr(self, 'tools', [])

            # Ensure LLM client is available (fallback from llm_instance to llm)
            llm_client = getattr(self, 'llm_instance', None) or getattr(self, 'llm', None)
            if llm_client is None:
                raise RuntimeError("No LLM client available. Agent must have either llm_instance or llm attribute.")

            # Call the LLM using async method (supports both custom and standard LLMs)
            if getattr(self, '_using_custom_llm', False):
                # Async custom LLM path
                response_text = await llm_client.get_response_async(
                    prompt=llm_prompt,
                    system_prompt=self._build_system_prompt(tools),
                    chat_history=getattr(self, 'chat_history', []),
                    temperature=temperature,
                    tools=tools,
                    output_json=output_json,
                    output_pydantic=output_pydantic,
                    stream=stream,
                    reasoning_steps=reasoning_steps,
                    task_name=task_name,
                    task_description=task_description,
                    task_id=task_id,
                    config=config,
                    tool_choice=tool_choice,
                    parallel_tool_calls=getattr(getattr(self, "execution", None), "parallel_tool_calls", False)  # Gap 2 integration
                )
            else:
                # Standard LiteLLM path - delegate to existing LLM class
                response_text = await llm_client.get_response_async(
                    prompt=llm_prompt,
                    system_prompt=self._build_system_prompt(tools),
                    chat_history=getattr(self, 'chat_history', []),
                    temperature=temperature,
                    tools=tools,
                    output_json=output_json,
                    output_pydantic=output_pydantic,
                    stream=stream,
                    reasoning_steps=reasoning_steps,
                    agent_name=getattr(self, 'name', ''),
                    agent_role=getattr(self, 'role', ''),
                    original_prompt=prompt_str,
                    task_name=task_name,
                    task_description=task_description, 
                    task_id=task_id,
                    config=config,
                    tool_choice=tool_choice,
                    parallel_tool_calls=getattr(getattr(self, "execution", None), "parallel_tool_calls", False)  # Gap 2 integration
                )
            
            # Store response in memory if enabled
            if hasattr(self, '_memory_instance') and self._memory_instance:
                try:
                    # Store the interaction in memory
                    self._memory_instance.store_short_term(
                        f"User: {prompt_str}\nAssistant: {response_text or ''}",
                        metadata={"agent_id": getattr(self, 'agent_id', self.name)}
                    )
                except Exception as e:
                    logging.warning(f"Failed to store interaction in memory: {e}")
            
            # Apply guardrails if configured (unified path)
            if hasattr(self, 'guardrail') and self.guardrail and response_text:
                try:
                    guardrail_result = await self._apply_guardrails_async(response_text)
                    if guardrail_result.blocked:
                        logging.warning(f"Response blocked by guardrail: {guardrail_result.reason}")
                        return guardrail_result.alternative_response or "Response blocked by content policy."
                    elif guardrail_result.modified_response:
                        response_text = guardrail_result.modified_response
                except Exception as e:
                    logging.warning(f"Guardrail application failed: {e}")
            
            # Trigger AFTER_AGENT hook
            # (Implementation similar to BEFORE_AGENT hook)
            
            return response_text
            
        finally:
            _trace_emitter.agent_end(self.name)

    async def _apply_guardrails_async(self, response_text: str):
        """Apply guardrails in async context. Placeholder for guardrail logic."""
        # This would contain the actual guardrail logic
        # For now, return a simple result structure
        class GuardrailResult:
            def __init__(self):
                self.blocked = False
                self.reason = None
                self.modified_response = None
                self.alternative_response = None
        
        return GuardrailResult()

    def _run_async_in_sync_context(self, coro):
        """
        Run async coroutine in sync context with proper event loop handling.
        
        Handles the common cases:
        1. No event loop exists - use asyncio.run()
        2. Event loop exists on main thread - use dedicated thread with new loop
        3. Event loop exists on worker thread - create new event loop
        """
        try:
            # Try to get the current event loop
            loop = asyncio.get_running_loop()
        except RuntimeError:
            # No event loop - safe to use asyncio.run()
            return asyncio.run(coro)
        
        # Event loop exists - avoid deadlock by running in dedicated thread
        import concurrent.futures
        
        def run_in_thread():
            # Create new event loop in dedicated thread
            new_loop = asyncio.new_event_loop()
            asyncio.set_event_loop(new_loop)
            try:
                return new_loop.run_until_complete(coro)
            finally:
                new_loop.close()
        
        with concurrent.futures.ThreadPoolExecutor() as executor:
            future = executor.submit(run_in_thread)
            return future.result(timeout=300)  # 5 minute timeout

    def unified_chat(self, *args, **kwargs) -> Optional[str]:
        """
        Sync entry point for unified chat - delegates to async implementation.
        
        This replaces the duplicated _chat_impl logic by using the unified
        async core with proper event loop bridging.

        .. deprecated::
            Unused and scheduled for removal (Issue #2644). Use ``Agent.chat()``.
        """
        _warn_deprecated()
        return self._run_async_in_sync_context(
            self._unified_chat_impl(*args, **kwargs)
        )

    async def unified_achat(self, *args, **kwargs) -> Optional[str]:
        """
        Async entry point for unified chat - direct call to async implementation.
        
        This replaces the duplicated _achat_impl logic by using the unified
        async core directly.

        .. deprecated::
            Unused and scheduled for removal (Issue #2644). Use ``Agent.achat()``.
        """
        _warn_deprecated()
        return await self._unified_chat_impl(*args, **kwargs)

    async def _unified_tool_execution(
        self, 
        function_name: str, 
        arguments: Dict[str, Any], 
        tool_call_id: Optional[str] = None
    ) -> Any:
        """
        Unified async tool execution implementation.
        
        Contains all business logic that was previously duplicated between 
        execute_tool and execute_tool_async. Both sync and async entry points delegate here.
        """
        # Delegate to the existing async tool execution method on self
        # This would contain the unified tool execution logic in a full implementation
        return await self.execute_tool_async(
            function_name=function_name,
            arguments=arguments,
            tool_call_id=tool_call_id
        )

    def unified_execute_tool(self, function_name: str, arguments: Dict[str, Any], tool_call_id: Optional[str] = None) -> Any:
        """
        Sync entry point for unified tool execution.

        .. deprecated::
            Unused and scheduled for removal (Issue #2644). Use ``Agent.execute_tool()``.
        """
        _warn_deprecated()
        return self._run_async_in_sync_context(
            self._unified_tool_execution(function_name, arguments, tool_call_id)
        )

    async def unified_execute_tool_async(self, function_name: str, arguments: Dict[str, Any], tool_call_id: Optional[str] = None) -> Any:
        """
        Async entry point for unified tool execution.

        .. deprecated::
            Unused and scheduled for removal (Issue #2644). Use ``Agent.execute_tool()``.
        """
        _warn_deprecated()
        return await self._unified_tool_execution(function_name, arguments, tool_call_id)
